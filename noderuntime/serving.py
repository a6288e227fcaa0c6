"""`ServerThread`: a FastAPI app served by uvicorn in a daemon thread of the node's process
(the solver's checkpoint server, a node's mirror).

Run: not a script; ``ServerThread(app, "127.0.0.1", 8700).start()``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["ServerThread"]


class ServerThread:
    """Runs a FastAPI app with uvicorn in a daemon thread of the current process.

    Args:
        app: the ASGI app.
        host: interface to bind (e.g. `"127.0.0.1"` or `"0.0.0.0"`).
        port: TCP port.
        what: what is served, for the log and the error (`"checkpoint server"`).
    """

    def __init__(self, app: Any, host: str, port: int, *, what: str = "checkpoint server") -> None:
        import uvicorn

        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        name = what.replace(" ", "-")
        self._thread = threading.Thread(target=self._server.run, name=name, daemon=True)
        self.host = host
        self.port = port
        self.what = what

    def start(self, timeout: float = 10.0) -> None:
        """Start serving and wait until the socket is bound.

        Raises:
            RuntimeError: if the server did not start within `timeout` seconds (e.g. the port
                is taken).
        """
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{self.what} did not start on {self.host}:{self.port}")
            time.sleep(0.05)
        logger.info("%s listening on %s:%d", self.what, self.host, self.port)

    def stop(self, timeout: float = 5.0) -> None:
        """Ask uvicorn to exit and join the thread."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
