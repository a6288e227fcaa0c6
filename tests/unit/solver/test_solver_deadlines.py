"""A solver claims only jobs it can finish before the commit deadline (measured step rate),
abandons one it can no longer finish, and does not re-examine a skipped job every poll."""

from __future__ import annotations

import logging
from pathlib import Path

from solver.node import Phase, SolverNode
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import SOLVER, SUBMITTER, tiny_spec
from veritrain.enums import JobStatus
from veritrain.spec import default_digits_spec

UINT32_MAX = 2**32 - 1


def test_a_job_nobody_can_finish_is_never_claimed(tmp_path: Path, caplog) -> None:
    chain = FakeChain()
    impossible = default_digits_spec(
        seed=1, total_steps=UINT32_MAX, checkpoint_interval=UINT32_MAX, hidden=(16,)
    )
    job_id = chain.post_job(SUBMITTER, impossible)
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    caplog.set_level(logging.INFO, logger="solver")
    node.step()
    node.step()
    assert chain.jobs[job_id].status is JobStatus.Open
    assert chain.count("claimJob") == 0
    assert job_id in node.state.read().skip
    skips = [r for r in caplog.records if "cannot finish" in r.getMessage()]
    assert len(skips) == 1  # examined once, not on every poll
    assert "steps/s" in skips[0].getMessage()
    spec_key = impossible.spec_hash().hex()
    assert node.state.read().step_rates[spec_key] > 0  # the measured rate is kept per spec


def test_a_feasible_job_is_still_claimed_and_trained(tmp_path: Path) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    node.step()
    node.step()
    assert chain.jobs[job_id].status is JobStatus.Committed


def test_training_stops_cleanly_when_the_deadline_cannot_be_met(tmp_path: Path, caplog) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    node.step()  # stake + claim
    assert chain.jobs[job_id].status is JobStatus.Claimed
    # the commit deadline is (now) too close to train, hash and commit with the margin
    chain.set_job(job_id, commit_deadline=chain.now + 2)
    caplog.set_level(logging.INFO, logger="solver")
    node.step()
    rec = node.job_record(job_id)
    assert rec is not None and rec.phase == Phase.ABANDONED
    assert chain.count("commitCheckpoints") == 0
    assert any("commit deadline" in r.getMessage() for r in caplog.records)
    assert not list(node.store.root_dir.glob("*.ckpt"))  # its checkpoints are freed
    node.step()  # an abandoned job is not trained again
    assert chain.count("commitCheckpoints") == 0
