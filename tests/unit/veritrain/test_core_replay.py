"""check_segment / CheckpointClient against a fake solver served through httpx.MockTransport."""

from __future__ import annotations

import httpx
import pytest

from adversary.training import perturb_weights
from veritrain.errors import CheckpointHashMismatch, CheckpointUnavailable, RemoteResponseError
from veritrain.hexutil import to_hex
from veritrain.replay import check_final, check_segment
from veritrain.wire import CheckpointClient

BASE = "http://solver.test/jobs/1"


def _solver(run, *, tamper=None):
    """A PROTOCOL.md 2.4 server over `run`; `tamper(kind, index, payload)` may alter replies."""
    k = run.spec.checkpoint_interval

    def handler(request: httpx.Request) -> httpx.Response:
        parts = request.url.path.strip("/").split("/")
        if parts[:2] != ["jobs", "1"]:
            return httpx.Response(404)
        kind = parts[2]
        if kind == "checkpoints":
            step = int(parts[3])
            if step % k or not 0 <= step // k < len(run.blobs):
                return httpx.Response(404)
            blob = run.blobs[step // k]
            if tamper:
                blob = tamper("checkpoint", step // k, blob)
            return httpx.Response(200, content=blob, headers={"X-State-Hash": to_hex(blob)})
        if kind == "proofs":
            i = int(parts[3])
            body = {
                "job_id": 1,
                "leaf_index": i,
                "step": i * k,
                "state_hash": to_hex(run.hashes[i]),
                "proof": [to_hex(p) for p in run.tree.proof(i)],
                "root": to_hex(run.tree.root),
            }
            if tamper:
                body = tamper("proof", i, body)
            return httpx.Response(200, json=body)
        if kind == "manifest":
            return httpx.Response(
                200,
                json={
                    "job_id": 1,
                    "root": to_hex(run.tree.root),
                    "interval": k,
                    "total_steps": run.spec.total_steps,
                    "leaves": [to_hex(h) for h in run.hashes],
                },
            )
        return httpx.Response(404)

    return httpx.Client(transport=httpx.MockTransport(handler))


def test_fetchers(honest_run):
    client = _solver(honest_run)
    solver = CheckpointClient(BASE, client)
    m = solver.manifest()
    assert m.leaves_bytes() == honest_run.hashes and m.interval == 10
    p = solver.proof(2)
    assert p.state_hash_bytes() == honest_run.hashes[2] and p.root_bytes() == honest_run.tree.root
    assert solver.checkpoint(20, honest_run.hashes[2]) == honest_run.blobs[2]
    with pytest.raises(CheckpointHashMismatch):
        solver.checkpoint(20, honest_run.hashes[1])
    with pytest.raises(CheckpointUnavailable):
        solver.checkpoint(25, honest_run.hashes[1])


def test_bad_proof_body():
    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json={})))
    with pytest.raises(RemoteResponseError):
        CheckpointClient(BASE, client).proof(0)


def test_honest_segments_pass(engine, honest_run):
    client = _solver(honest_run)
    for s in range(honest_run.spec.num_segments):
        check = check_segment(
            honest_run.spec, BASE, honest_run.tree.root, s, engine=engine, client=client
        )
        assert check.ok, check.reason
        assert check.replayed_end_hash == check.committed_end_hash == honest_run.hashes[s + 1]
        assert (check.start_step, check.end_step) == (10 * s, 10 * s + 10)


def test_cheating_solver_caught(engine, train_run):
    def cheat(state):
        if state.step == 25:
            engine.train_step(state)
            perturb_weights(state, std=1e-2, seed=3)
            return True
        return False

    run = train_run(engine, cheat=cheat)
    client = _solver(run)
    results = [
        check_segment(run.spec, BASE, run.tree.root, s, engine=engine, client=client)
        for s in range(run.spec.num_segments)
    ]
    assert [r.ok for r in results] == [True, True, False, True]
    assert "replay" in results[2].reason


def test_proof_not_matching_onchain_root(engine, honest_run):
    client = _solver(honest_run)
    check = check_segment(honest_run.spec, BASE, b"\x11" * 32, 1, engine=engine, client=client)
    assert not check.ok and "does not verify against the on-chain root" in check.reason
    assert check.replayed_end_hash is None


def test_proof_for_other_leaf(engine, honest_run):
    def tamper(kind, i, payload):
        if kind == "proof" and i == 2:
            payload = {**payload, "step": 99}
        return payload

    check = check_segment(
        honest_run.spec,
        BASE,
        honest_run.tree.root,
        1,
        engine=engine,
        client=_solver(honest_run, tamper=tamper),
    )
    assert not check.ok and "expected step 20" in check.reason


def test_wrong_checkpoint_bytes(engine, honest_run):
    def tamper(kind, i, payload):
        return payload[:-1] + bytes([payload[-1] ^ 1]) if kind == "checkpoint" else payload

    check = check_segment(
        honest_run.spec,
        BASE,
        honest_run.tree.root,
        0,
        engine=engine,
        client=_solver(honest_run, tamper=tamper),
    )
    assert not check.ok and "checkpoint hash mismatch" in check.reason


def test_unreachable_solver(engine, honest_run):
    def down(request):
        raise httpx.ConnectError("connection refused", request=request)

    client = httpx.Client(transport=httpx.MockTransport(down))
    with pytest.raises(CheckpointUnavailable):
        check_segment(honest_run.spec, BASE, honest_run.tree.root, 0, engine=engine, client=client)
    check = check_segment(
        honest_run.spec,
        BASE,
        honest_run.tree.root,
        0,
        engine=engine,
        client=client,
        unavailable_is_reject=True,
    )
    assert not check.ok and "unavailable" in check.reason


def test_check_final_fetches_the_final_state_against_the_claim(honest_run):
    """One seat's availability duty (docs/SECURITY.md P-39): the final checkpoint must hash to
    the claimed end; it is handed to `on_end` to keep, and nothing is replayed."""
    final = honest_run.hashes[-1]
    kept: list[bytes] = []
    check = check_final(
        honest_run.spec, BASE, final, client=_solver(honest_run), on_end=kept.append
    )
    assert check.ok and check.replayed_end_hash is None and check.committed_end_hash == final
    assert kept == [honest_run.blobs[-1]]
    assert (check.start_step, check.end_step) == (
        honest_run.spec.total_steps - honest_run.spec.checkpoint_interval,
        honest_run.spec.total_steps,
    )
    # a forced claim (or any claim other than the served state): not confirmed, nothing kept
    kept.clear()
    forced = check_final(
        honest_run.spec, BASE, b"\x01" * 32, client=_solver(honest_run), on_end=kept.append
    )
    assert not forced.ok and "does not match the claimed end" in forced.reason and not kept

    def tamper(kind, i, payload):
        return payload[:-1] + bytes([payload[-1] ^ 1]) if kind == "checkpoint" else payload

    wrong = check_final(honest_run.spec, BASE, final, client=_solver(honest_run, tamper=tamper))
    assert not wrong.ok and wrong.replayed_end_hash is None

    def down(request):
        raise httpx.ConnectError("connection refused", request=request)

    client = httpx.Client(transport=httpx.MockTransport(down))
    with pytest.raises(CheckpointUnavailable):
        check_final(honest_run.spec, BASE, final, client=client)
    gone = check_final(honest_run.spec, BASE, final, client=client, unavailable_is_reject=True)
    assert not gone.ok and "unavailable" in gone.reason


def test_segment_out_of_range(engine, honest_run):
    with pytest.raises(ValueError):
        check_segment(honest_run.spec, BASE, honest_run.tree.root, 4, engine=engine)


def test_segment_zero_must_start_from_the_jobs_initial_state(engine, honest_run):
    """P-7's gap: a tree may hold the leaf (0, initHash) somewhere for the commit check while
    segment 0 is served from another step-0 leaf; a replay checked against the job's initHash
    rejects a segment 0 whose proven start is not it (here: a job whose initHash differs)."""
    client = _solver(honest_run)
    args = (honest_run.spec, BASE, honest_run.tree.root, 0)
    other_init = b"\x42" * 32
    check = check_segment(*args, engine=engine, client=client, init_hash=other_init)
    assert not check.ok and "not from the job's initial state" in check.reason
    assert check.replayed_end_hash is None  # refused before any replay
    same = check_segment(*args, engine=engine, client=client, init_hash=honest_run.hashes[0])
    assert same.ok, same.reason
    later = check_segment(
        honest_run.spec, BASE, honest_run.tree.root, 1, engine=engine, client=client,
        init_hash=other_init,
    )  # fmt: skip
    assert later.ok, later.reason  # only segment 0 starts from the initial state
