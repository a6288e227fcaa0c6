"""`noderuntime.mirror`: a node keeps the states it proved and serves them by hash, bounded;
a fetch tries its holders in order and takes only bytes of the hash asked for."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from noderuntime.mirror import MirrorClient, StateMirror, create_mirror_app, fetch_from_holders
from noderuntime.serving import ServerThread
from tests.utils.node_harness import free_port
from veritrain.errors import CheckpointHashMismatch, CheckpointUnavailable
from veritrain.state import state_hash
from veritrain.wire import ProofResponse

BLOB = b"a state this node proved" * 10


def _proof(root: bytes) -> ProofResponse:
    return ProofResponse(
        job_id=3,
        leaf_index=2,
        step=4,
        state_hash="0x" + state_hash(BLOB).hex(),
        proof=["0x" + "22" * 32],
        root="0x" + "99" * 32,  # what the sender said: kept under the chain's root instead
    )


def test_a_mirror_serves_what_it_holds_by_hash_and_404_otherwise(tmp_path: Path) -> None:
    mirror = StateMirror(tmp_path / "m", max_bytes=1000)
    digest = mirror.keep(BLOB)
    assert digest == state_hash(BLOB)
    assert mirror.keep(b"x" * 1001) is None  # over the bound: never kept, never served
    root = b"\x11" * 32
    mirror.keep_proof(root, _proof(root))
    app = TestClient(create_mirror_app(mirror))
    got = app.get(f"/mirror/states/0x{digest.hex()}")
    assert got.status_code == 200 and got.content == BLOB
    assert got.headers["X-State-Hash"] == "0x" + digest.hex()
    assert app.get(f"/mirror/states/0x{'ab' * 32}").status_code == 404
    assert app.get("/mirror/states/not-a-hash").status_code == 404
    proof = app.get(f"/mirror/proofs/0x{root.hex()}/2")
    assert proof.status_code == 200 and proof.json()["root"] == "0x" + root.hex()
    assert app.get(f"/mirror/proofs/0x{root.hex()}/1").status_code == 404
    assert app.get("/health").json() == {"status": "ok"}


def test_a_fetch_skips_a_lying_or_silent_holder_and_takes_the_right_bytes(tmp_path: Path) -> None:
    honest = StateMirror(tmp_path / "honest")
    honest.keep(BLOB)
    app = TestClient(create_mirror_app(honest))

    def route(request: httpx.Request) -> httpx.Response:
        if request.url.host == "liar.test":
            return httpx.Response(200, content=b"other bytes")
        if request.url.host == "down.test":
            raise httpx.ConnectError("refused", request=request)
        answer = app.get(request.url.path)
        return httpx.Response(answer.status_code, content=answer.content)

    http = httpx.Client(transport=httpx.MockTransport(route))
    digest = state_hash(BLOB)
    holders = [MirrorClient(f"http://{h}.test", http) for h in ("down", "liar", "honest")]
    with pytest.raises(CheckpointHashMismatch):
        holders[1].state_by_hash(digest)
    attempts = [(m.base_url, lambda m=m: m.state_by_hash(digest)) for m in holders]
    assert fetch_from_holders("the state", attempts) == BLOB
    with pytest.raises(CheckpointUnavailable, match="none of its 2 holders"):
        fetch_from_holders("the state", attempts[:2])
    bounded = MirrorClient("http://honest.test", http, max_bytes=len(BLOB) - 1)
    with pytest.raises(CheckpointUnavailable, match="more than"):
        bounded.state_by_hash(digest)


def test_a_node_serves_its_mirror_over_http_while_it_runs(tmp_path: Path) -> None:
    """The verifier's `--serve-port`: a real uvicorn server over its mirror."""
    mirror = StateMirror(tmp_path / "m")
    digest = mirror.keep(BLOB)
    port = free_port()
    server = ServerThread(create_mirror_app(mirror), "127.0.0.1", port, what="mirror")
    server.start()
    try:
        with MirrorClient(f"http://127.0.0.1:{port}", timeout=5.0) as client:
            assert client.state_by_hash(digest or b"") == BLOB
            with pytest.raises(CheckpointUnavailable, match="404"):
                client.state_by_hash(b"\x01" * 32)
    finally:
        server.stop()
