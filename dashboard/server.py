"""`Dashboard`: the web app served by uvicorn in a thread, with the indexer following the chain
in another, so the pages update live.

    dash = Dashboard(index, client, host="127.0.0.1", port=0).start()   # port 0: a free one
    print(dash.url)
    ...
    dash.stop()

`serve` runs the same in the foreground until Ctrl-C (``veritrain dashboard``).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

from dashboard.app import create_app
from dashboard.metrics import MetricWorker
from indexer.follow import Indexer
from indexer.store import Index

logger = logging.getLogger(__name__)

__all__ = ["Dashboard", "PortInUse", "bind_socket"]


class PortInUse(OSError):
    """The dashboard's port is taken."""


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on (host, port); port 0 picks a free one.

    Raises:
        PortInUse: the port is taken.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise PortInUse(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.listen(128)
    return sock


class Dashboard:
    """The dashboard app and (optionally) the indexer behind it, in background threads.

    Args:
        index: the open index.
        client: a `ChainClient` bound to the index's deployment (None: serve the index as it is,
            no indexing, no metrics).
        host: interface to listen on.
        port: TCP port (0: a free one).
        poll_interval: seconds between two indexer passes.

    Attributes:
        url: ``http://host:port/`` once started.
        indexer: the `Indexer` (None without a client).
    """

    def __init__(
        self,
        index: Index,
        client: Any | None,
        *,
        host: str = "127.0.0.1",
        port: int = 8080,
        poll_interval: float = 1.0,
    ) -> None:
        self.index = index
        self.client = client
        self.host = host
        self.port = port
        self.indexer = (
            Indexer(index, client, poll_interval=poll_interval) if client is not None else None
        )
        self.app = create_app(index, metrics=MetricWorker(index, client))
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._server: Any = None
        self.url = ""

    def start(self) -> Dashboard:
        """Bind the port, then start the indexer and the web server threads.

        Raises:
            PortInUse: the port is taken.
        """
        import uvicorn

        sock = bind_socket(self.host, self.port)
        self.port = int(sock.getsockname()[1])
        self.url = f"http://{self.host}:{self.port}/"
        config = uvicorn.Config(self.app, log_level="warning", access_log=False)
        self._server = uvicorn.Server(config)
        web = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="dashboard-web", daemon=True
        )
        web.start()
        self._threads.append(web)
        if self.indexer is not None:
            follow = threading.Thread(target=self._follow, name="dashboard-indexer", daemon=True)
            follow.start()
            self._threads.append(follow)
        deadline = time.monotonic() + 10
        while not self._server.started and time.monotonic() < deadline and web.is_alive():
            time.sleep(0.02)
        return self

    def _follow(self) -> None:
        assert self.indexer is not None
        while not self._stop.is_set():
            try:
                self.indexer.follow(self._stop)
            except Exception as exc:  # noqa: BLE001 - keep serving what is indexed
                logger.warning("indexer stopped: %s; restarting in 5 s", exc)
                self._stop.wait(5.0)

    def sync(self) -> int:
        """One indexer pass now (in the caller's thread); 0 without a client."""
        return self.indexer.sync() if self.indexer is not None else 0

    def stop(self) -> None:
        """Stop the threads (waits up to 5 s)."""
        self._stop.set()
        if self._server is not None:
            self._server.should_exit = True
        for t in self._threads:
            t.join(timeout=5)

    def serve(self) -> None:
        """Run until Ctrl-C."""
        self.start()
        try:
            while any(t.is_alive() for t in self._threads):
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()
