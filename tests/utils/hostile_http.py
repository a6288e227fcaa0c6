"""A hostile HTTP server for tests of readers that must bound what they read.

Every GET is answered 200 with a body that never ends: 64 KiB writes as fast as the reader
takes them, or, when the path contains ``/drip``, one byte every 0.2 s (each byte well within
any read timeout, the body as a whole never done)::

    with hostile_server() as url:
        read_uri(url + "/drip", 1.0)   # must give up after about 1 s
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["hostile_server"]


class _Endless(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.end_headers()
        drip = "/drip" in self.path
        try:
            while True:
                if drip:
                    self.wfile.write(b"{")
                    self.wfile.flush()
                    time.sleep(0.2)
                else:
                    self.wfile.write(b"x" * 65536)
        except (BrokenPipeError, ConnectionResetError):
            return

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return


@contextmanager
def hostile_server() -> Iterator[str]:
    """Serve `_Endless` on a free local port; yields its base URL (``http://127.0.0.1:P``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
