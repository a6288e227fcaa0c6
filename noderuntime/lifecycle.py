"""Running a node until it is told to stop, and waiting for a condition (CLI and tests).

Run: not a script; ``run_until_signalled(node)``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from noderuntime.node import NodeBase

logger = logging.getLogger(__name__)

__all__ = ["run_until_signalled", "sleep_until"]


def run_until_signalled(node: NodeBase) -> None:
    """Run `node` in the current thread until SIGINT or SIGTERM (CLI entry point helper).

    Args:
        node: any node; its `run(stop_event)` returns after the signal.
    """
    import signal

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
