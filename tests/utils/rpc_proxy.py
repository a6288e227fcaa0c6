"""A restartable JSON-RPC proxy in front of Anvil, for tests of RPC faults.

`stop()` simulates the endpoint going away (and `start()` brings it back on the same port);
with `send_limit`, every ``eth_sendRawTransaction`` past that many is answered HTTP 503, so a
command fails on the wire after its first transactions were mined.

Run: not a script; ``proxy = RpcProxy(anvil.rpc_url); proxy.start(); ... proxy.url``.
"""

from __future__ import annotations

import http.server
import json
import threading
import urllib.request


class RpcProxy:
    """Forwards JSON-RPC POSTs to `target`.

    Args:
        target: the upstream JSON-RPC URL.
        send_limit: refuse ``eth_sendRawTransaction`` after this many (None: never).
    """

    def __init__(self, target: str, *, send_limit: int | None = None) -> None:
        self.target = target
        self.send_limit = send_limit
        self.sends = 0
        self.server: http.server.ThreadingHTTPServer | None = None
        self.port = 0

    def start(self) -> None:
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if json.loads(body).get("method") == "eth_sendRawTransaction":
                    outer.sends += 1
                    if outer.send_limit is not None and outer.sends > outer.send_limit:
                        self.send_response(503)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                req = urllib.request.Request(
                    outer.target, data=body, headers={"Content-Type": "application/json"}
                )
                with urllib.request.urlopen(req, timeout=30) as resp:
                    data = resp.read()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"
