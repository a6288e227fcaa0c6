"""Duties anyone may perform (`assignVerifiers`, `finalize`): a node that finds the duty done
by someone else between its scan and its send sends nothing and logs it as routine."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from noderuntime.duties import SOLVER_ASSIGN_HEAD_START
from solver.node import SolverNode
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import SOLVER, SUBMITTER, VERIFIERS, run_solver_to_commit, tiny_spec
from verifier.node import VerifierNode
from veritrain.enums import JobStatus, Role


def _committed_job(chain: FakeChain) -> int:
    """A job committed by a solver whose randomness block is mined and whose solver's head start
    is over (assignVerifiers due for any node)."""
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    for v in VERIFIERS:
        chain.staked[(v, int(Role.Verifier))] = 100
    chain.set_job(
        job_id,
        status=JobStatus.Committed,
        solver=SOLVER,
        randomness_block=1,
        commit_deadline=chain.now,  # committed just now: its assign deadline is far off
    )
    chain.advance(blocks=2 + SOLVER_ASSIGN_HEAD_START)
    return job_id


def test_second_node_does_not_race_an_assignment_already_made(tmp_path: Path, caplog) -> None:
    chain = FakeChain()
    job_id = _committed_job(chain)
    first = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    second = SolverNode(chain.client(SOLVER), tmp_path / "s", serve=False)
    stale = chain.jobs[job_id]  # both nodes scanned the job while it was Committed
    caplog.set_level(logging.DEBUG)
    assert first.assign_verifiers_if_due(job_id, stale)
    assert not second.assign_verifiers_if_due(job_id, stale)
    assert chain.attempts == [(VERIFIERS[0], "assignVerifiers")]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("already done" in r.getMessage() for r in caplog.records if r.name == "solver")


def test_other_nodes_leave_the_solver_a_head_start_to_assign_with_its_claims(
    tmp_path: Path,
) -> None:
    """The first block the assignment can be mined in is the solver's (it assigns with its
    claims in one transaction); a verifier node does the duty only after it, so an absent solver
    delays the assignment by `SOLVER_ASSIGN_HEAD_START` blocks and no more."""
    chain = FakeChain()
    job_id = _committed_job(chain)
    chain.set_job(job_id, randomness_block=chain.block)  # mined: the next block may assign
    verifier = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    for _ in range(SOLVER_ASSIGN_HEAD_START):
        assert not verifier.assign_verifiers_if_due(job_id)
        chain.advance(blocks=1)
    assert not verifier.assign_verifiers_if_due(job_id)
    assert chain.attempts == []
    chain.advance(blocks=1)
    assert verifier.assign_verifiers_if_due(job_id)
    assert chain.attempts == [(VERIFIERS[0], "assignVerifiers")]
    # the solver itself may assign from the first block on
    other = FakeChain()
    second = _committed_job(other)
    other.set_job(second, randomness_block=other.block - 1)
    solver = SolverNode(other.client(SOLVER), tmp_path / "s", serve=False)
    assert solver.assign_verifiers_if_due(second)


def test_second_node_does_not_race_a_finalization_already_made(tmp_path: Path, caplog) -> None:
    chain = FakeChain()
    solver = run_solver_to_commit(chain, tmp_path)
    job_id = 1
    chain.now = chain.windows(job_id).secret_reveal_closes + 1  # the round is settled
    stale = chain.jobs[job_id]
    chain.attempts.clear()
    first = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    caplog.set_level(logging.DEBUG)
    assert first.finalize_if_due(job_id, stale)
    assert not solver.finalize_if_due(job_id, stale)
    assert [fn for _, fn in chain.attempts] == ["finalize"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("already done" in r.getMessage() for r in caplog.records if r.name == "solver")


@pytest.mark.parametrize("duty", ["assign", "finalize"])
def test_a_duty_nobody_did_is_still_sent(tmp_path: Path, duty: str) -> None:
    chain = FakeChain()
    if duty == "assign":
        job_id = _committed_job(chain)
        node = VerifierNode(chain.client(VERIFIERS[1]), tmp_path / "v")
        assert node.assign_verifiers_if_due(job_id, chain.jobs[job_id])
        assert chain.jobs[job_id].status is JobStatus.Verifying
    else:
        run_solver_to_commit(chain, tmp_path)
        chain.now = chain.windows(1).secret_reveal_closes + 1
        node = VerifierNode(chain.client(VERIFIERS[1]), tmp_path / "v")
        assert node.finalize_if_due(1)
        assert chain.jobs[1].status is JobStatus.Rejected


def test_a_duty_lost_to_a_transaction_mined_first_is_logged_as_done(tmp_path: Path, caplog) -> None:
    """Two nodes saw the duty undone and sent it in the same block: the one whose transaction
    reverts (here at estimation, a decoded `UnexpectedJobStatus`-like revert) says the duty was
    done by another account, as when its check sees it, never that its finalize "reverted"."""
    chain = FakeChain()
    solver = run_solver_to_commit(chain, tmp_path)
    chain.now = chain.windows(1).secret_reveal_closes + 1
    stale = chain.jobs[1]
    first = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    assert first.finalize_if_due(1, stale)
    checks = []
    moved_on = solver._job_moved_on

    def read_before_the_first_was_mined(job_id: int, expected: JobStatus) -> str | None:
        checks.append(job_id)
        return None if len(checks) == 1 else moved_on(job_id, expected)

    solver._job_moved_on = read_before_the_first_was_mined  # type: ignore[method-assign]
    caplog.clear()
    caplog.set_level(logging.DEBUG)
    assert not solver.finalize_if_due(1, stale)
    assert [fn for _, fn in chain.attempts][-2:] == ["finalize", "finalize"]  # it did send
    lines = [r.getMessage() for r in caplog.records if r.name == "solver"]
    assert any("already done by another account (job 1 is now " in m for m in lines), lines
    assert not [m for m in lines if "reverted" in m and "already done" not in m], lines
    # counted as a race lost, not as a reverted transaction
    sample = solver.metrics.registry.get_sample_value
    assert sample("veritrain_transactions_total", {"method": "finalize", "outcome": "lost"}) == 1
    assert not sample("veritrain_transactions_total", {"method": "finalize", "outcome": "reverted"})


def test_a_committed_job_nobody_can_seat_is_expired_past_its_deadline(tmp_path: Path) -> None:
    """P-35: a job still Committed past its assign deadline (commit_deadline + open_window: no
    draw seated it in time) is expired by any node instead of drawn again; at the deadline
    itself the draw is still what is sent."""
    chain = FakeChain()
    jobs = []
    for _ in range(2):
        job_id = chain.post_job(SUBMITTER, tiny_spec())
        chain.set_job(
            job_id,
            status=JobStatus.Committed,
            solver=SOLVER,
            randomness_block=1,
            commit_deadline=chain.now - chain.params.open_window - job_id + 1,
        )
        jobs.append(job_id)
    chain.advance(seconds=0, blocks=2)
    node = SolverNode(chain.client(SOLVER), tmp_path / "s", serve=False)
    chain.attempts.clear()
    assert node.assign_verifiers_if_due(jobs[0])  # at its deadline: drawn
    assert node.assign_verifiers_if_due(jobs[1])  # one second past it: expired
    assert [fn for _, fn in chain.attempts] == ["assignVerifiers", "expireUnassigned"]
    assert chain.jobs[jobs[1]].status is JobStatus.Expired
