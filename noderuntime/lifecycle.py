"""Running a node until it is told to stop, and waiting for a condition (CLI and tests).

Run: not a script; ``run_until_signalled(node)``.
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from noderuntime.node import NodeBase

logger = logging.getLogger(__name__)

__all__ = ["NodeStartError", "check_port_free", "run_until_signalled", "sleep_until"]


class NodeStartError(RuntimeError):
    """A node cannot start: its HTTP port is taken (its state file errors are
    `veritrain.errors.NodeStateError`, raised when the node is built)."""


def check_port_free(host: str, port: int) -> None:
    """Refuse to start a node whose HTTP server could not bind ``host:port``.

    Args:
        host: the interface the server binds.
        port: TCP port.

    Raises:
        NodeStartError: the port is taken (or the host cannot be bound), with the option to
            change in the message.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise NodeStartError(
                    f"port {port} on {host} is already in use: pick another --port"
                ) from None
            raise NodeStartError(f"cannot bind {host}:{port}: {exc.strerror or exc}") from None


def run_until_signalled(node: NodeBase) -> None:
    """Run `node` in the current thread until SIGINT or SIGTERM (CLI entry point helper).

    A node that serves HTTP (attributes ``serve``, ``bind_host`` and ``port``, as the solver
    has) is refused first if its port is taken, so the failure is one clear error instead of
    the server thread's log.

    Args:
        node: any node; its `run(stop_event)` returns after the signal.

    Raises:
        NodeStartError: the node's HTTP port is taken.
    """
    import signal

    port = getattr(node, "port", None)
    if getattr(node, "serve", False) and isinstance(port, int):
        check_port_free(str(getattr(node, "bind_host", "127.0.0.1")), port)

    stop = threading.Event()

    def _handler(signum: int, _frame: Any) -> None:
        logger.info("signal %d received, stopping", signum)
        stop.set()

    previous = {sig: signal.signal(sig, _handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        node.run(stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def sleep_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.2) -> bool:
    """Poll `predicate` until it holds or `timeout` seconds pass (test and CLI helper).

    Args:
        predicate: condition to wait for.
        timeout: seconds.
        interval: seconds between polls.

    Returns:
        Whether the predicate became true.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
