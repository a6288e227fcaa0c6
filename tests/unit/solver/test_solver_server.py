"""The solver's checkpoint server (PROTOCOL.md 2.4) on a real small run, via TestClient."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from solver.server import CheckpointCatalog, JobCheckpoints, create_app
from solver.trainer import train_job
from tests.utils.node_fixtures import tiny_spec
from veritrain.hexutil import from_hex
from veritrain.merkle import verify_checkpoint
from veritrain.replay import check_segment
from veritrain.state import state_hash
from veritrain.store import CheckpointStore
from veritrain.training import TrainingEngine


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[TestClient, JobCheckpoints, Path]:
    spec = tiny_spec()
    root = tmp_path_factory.mktemp("store")
    store = CheckpointStore(root)
    hashes: list[str] = []
    assert train_job(TrainingEngine(spec), store, hashes)
    entry = JobCheckpoints.build(7, 10, 40, [from_hex(h) for h in hashes])
    catalog = CheckpointCatalog(store)
    catalog.publish(entry)
    return TestClient(create_app(catalog)), entry, root


def test_health(served) -> None:
    client, _, _ = served
    assert client.get("/health").json() == {"status": "ok"}


def test_checkpoint_bytes_hash_to_header_and_leaf(served) -> None:
    client, entry, _ = served
    for i, step in enumerate(range(0, 41, 10)):
        r = client.get(f"/jobs/7/checkpoints/{step}")
        assert r.status_code == 200
        assert r.headers["content-type"] == "application/octet-stream"
        assert from_hex(r.headers["X-State-Hash"]) == state_hash(r.content) == entry.hashes[i]


def test_proofs_verify_against_root(served) -> None:
    client, entry, _ = served
    for i in range(5):
        body = client.get(f"/jobs/7/proofs/{i}").json()
        assert body["leaf_index"] == i and body["step"] == i * 10 and body["job_id"] == 7
        proof = [from_hex(p) for p in body["proof"]]
        state = from_hex(body["state_hash"])
        assert verify_checkpoint(proof, from_hex(body["root"]), 40, 10, i, state)
        assert from_hex(body["root"]) == entry.tree.root


def test_manifest(served) -> None:
    client, entry, _ = served
    body = client.get("/jobs/7/manifest").json()
    assert body["interval"] == 10 and body["total_steps"] == 40
    assert [from_hex(h) for h in body["leaves"]] == list(entry.hashes)


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("/jobs/8/manifest", "unknown job 8"),
        ("/jobs/8/checkpoints/0", "unknown job 8"),
        ("/jobs/7/checkpoints/5", "no checkpoint at step 5"),
        ("/jobs/7/checkpoints/50", "no checkpoint at step 50"),
        ("/jobs/7/proofs/5", "not 5"),
    ],
)
def test_unknown_job_or_step_is_404_with_detail(served, path: str, needle: str) -> None:
    client, _, _ = served
    r = client.get(path)
    assert r.status_code == 404
    assert needle in r.json()["detail"]


def test_replay_through_the_server_accepts_every_honest_segment(served) -> None:
    client, entry, _ = served
    spec = tiny_spec()
    engine = TrainingEngine(spec)
    for s in range(4):
        check = check_segment(
            spec, "http://solver/jobs/7", entry.tree.root, s, engine=engine, client=client
        )
        assert check.ok, check.reason


def test_corrupt_checkpoint_is_never_served(served, tmp_path: Path) -> None:
    _, entry, root = served
    # copy the store, corrupt one file, serve the copy
    store = CheckpointStore(tmp_path)
    for h in entry.hashes:
        store.path(h).write_bytes(CheckpointStore(root).get(h))
    target = store.path(entry.hashes[2])
    blob = bytearray(target.read_bytes())
    blob[-1] ^= 0xFF
    target.write_bytes(bytes(blob))
    catalog = CheckpointCatalog(store)
    catalog.publish(entry)
    client = TestClient(create_app(catalog))
    r = client.get("/jobs/7/checkpoints/20")
    assert r.status_code == 500 and "corrupt" in r.json()["detail"]
    assert client.get("/jobs/7/checkpoints/10").status_code == 200


def test_a_sealed_job_serves_only_its_sampled_starts(served) -> None:
    """docs/FORCED_ERRORS.md: before the secret is revealed nothing but the sampled start
    checkpoints is served, so no proof, leaf or state tells a forced claim apart."""
    client, entry, _ = served
    catalog: CheckpointCatalog = client.app.state.catalog  # type: ignore[attr-defined]
    catalog.seal(7, [10, 30])  # samples: segments 1 and 3
    try:
        assert client.get("/jobs/7/checkpoints/10").status_code == 200
        assert client.get("/jobs/7/checkpoints/30").status_code == 200
        assert client.get("/jobs/7/state-hashes/10").status_code == 200
        for path in (
            "/jobs/7/checkpoints/20",
            "/jobs/7/checkpoints/40",
            "/jobs/7/proofs/1",
            "/jobs/7/manifest",
            "/jobs/7/states/20",
            "/jobs/7/states/15",
            "/jobs/7/state-hashes/40",
        ):
            resp = client.get(path)
            assert resp.status_code == 403, path
            assert "sealed" in resp.json()["detail"]
        assert client.get("/jobs/8/manifest").status_code == 404  # unknown job: still 404
    finally:
        catalog.unseal(7)
    assert client.get("/jobs/7/manifest").status_code == 200
    assert client.get("/jobs/7/proofs/2").status_code == 200
