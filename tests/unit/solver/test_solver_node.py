"""`SolverNode.step()` against the in-memory fake protocol: lifecycle, resume, idempotence."""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi.testclient import TestClient

from chain.types import JobStatus
from solver.node import Phase, SolverNode
from solver.server import create_app
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import SOLVER, SUBMITTER, tiny_spec


def test_claims_trains_commits_and_serves(tmp_path: Path) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, "solver.example", 9000, serve=False)
    node.step()  # stake + claim
    assert chain.jobs[job_id].status is JobStatus.Claimed
    node.step()  # train + commit
    job = chain.jobs[job_id]
    assert job.status is JobStatus.Committed
    assert job.checkpoint_url == f"http://solver.example:9000/jobs/{job_id}"
    rec = node.job_record(job_id)
    assert rec is not None and rec["phase"] == Phase.COMMITTED and len(rec["hashes"]) == 5
    assert job.merkle_root.hex() == rec["root"][2:]
    chain.advance(blocks=2)
    node.step()  # assignVerifiers (anyone may)
    assert chain.jobs[job_id].status is JobStatus.Verifying
    manifest = TestClient(create_app(node.catalog)).get(f"/jobs/{job_id}/manifest").json()
    assert manifest["root"] == rec["root"]
    # finalize when due, then claim the reward
    chain.advance(seconds=10_000)
    node.step()
    assert chain.jobs[job_id].status is JobStatus.Finalized
    node.step()
    assert node.job_record(job_id)["phase"] == Phase.DONE
    assert chain.balances[SOLVER] >= 1000 and chain.count("claimCredit", SOLVER) == 1


def test_killed_mid_training_resumes_from_last_checkpoint(tmp_path: Path, caplog) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    first = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    first.step()  # claim
    puts = 0
    original = first.store.put

    def put_then_die(blob: bytes) -> bytes:
        nonlocal puts
        puts += 1
        if puts == 3:
            first._stop.set()  # the process "dies" after checkpoint 20
        return original(blob)

    first.store.put = put_then_die  # type: ignore[method-assign]
    first.step()
    rec = first.job_record(job_id)
    assert rec["phase"] == Phase.TRAINING and len(rec["hashes"]) == 3
    assert chain.jobs[job_id].status is JobStatus.Claimed

    second = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    with caplog.at_level(logging.INFO):
        second.step()
    assert "resuming from step 20" in caplog.text
    assert chain.jobs[job_id].status is JobStatus.Committed
    assert second.job_record(job_id)["hashes"][:3] == rec["hashes"]
    assert chain.count("claimJob") == 1


def test_restart_after_commit_reserves_and_does_not_recommit(tmp_path: Path) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    first = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    first.step()
    first.step()
    assert chain.jobs[job_id].status is JobStatus.Committed
    second = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    assert second.catalog.get(job_id) is not None  # re-served right away
    second.step()
    assert chain.count("commitCheckpoints") == 1 and chain.count("claimJob") == 1


def test_crash_between_commit_tx_and_state_write_is_recovered(tmp_path: Path) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    node.step()
    node.step()
    with node.state.transaction() as data:  # as if the process died before recording it
        data["jobs"][str(job_id)]["phase"] = Phase.TRAINED
    again = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    again.step()
    assert again.job_record(job_id)["phase"] == Phase.COMMITTED
    assert chain.count("commitCheckpoints") == 1


def test_a_spec_that_fails_its_hash_is_never_claimed(tmp_path: Path) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    chain.set_job(job_id, spec_hash=b"\x11" * 32)
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    node.step()
    assert chain.jobs[job_id].status is JobStatus.Open and chain.count("claimJob") == 0
