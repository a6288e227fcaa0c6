"""`VerifierNode.step()` against the fake protocol, replaying a real small run over HTTP
(FastAPI TestClient): honest approve, cheater reject, lazy approve, forced errors, sealed
verdicts (commit, then reveal the same after a restart), no double submission."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from adversary.verifier import LazyVerifierNode, verifier_node
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import VERIFIERS, http_for, run_solver_to_commit, tiny_spec
from verifier.node import UNAVAILABLE_ATTEMPTS, VerifierNode
from veritrain.commitments import verdict_commitment
from veritrain.enums import Verdict
from veritrain.errors import CheckpointUnavailable


def _setup(
    tmp: Path, adversary=None, lazy=False, rate_bps: int = 0
) -> tuple[FakeChain, VerifierNode]:
    chain = FakeChain(forced_error_rate_bps=rate_bps)
    chain.forced_segments = [1, 3]  # sample an honest and (for cheaters) a cheating segment
    verifier = verifier_node(chain.client(VERIFIERS[0]), tmp / "v", lazy=lazy)
    verifier.step()  # stakes before the assignment
    solver = run_solver_to_commit(chain, tmp, adversary)
    verifier.http_client = http_for(solver)
    return chain, verifier


def _seal_and_reveal(verifier: VerifierNode) -> None:
    verifier.step()  # check the claims, seal (commitVerdicts)
    verifier.step()  # every assigned verifier sealed: reveal


def test_honest_solver_is_approved(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path)
    verifier.step()
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.None_, Verdict.None_]  # still sealed
    rec = verifier.state.read().jobs[1]
    assert rec.approvals is not None and rec.salt is not None
    assert chain.sealed[(1, VERIFIERS[0])] == verdict_commitment(
        1, VERIFIERS[0], rec.approvals, rec.salt
    )
    verifier.step()
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Approve]


@pytest.mark.parametrize("mode", ["skip-steps", "perturb"])
def test_cheating_segment_is_rejected_with_a_reason(tmp_path: Path, mode: str) -> None:
    chain, verifier = _setup(tmp_path, adversary=mode)
    _seal_and_reveal(verifier)
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Reject]
    results = verifier.state.read().jobs[1].results
    assert results[1].ok is False and "replay of steps 30..40" in results[1].reason


def test_lazy_verifier_approves_a_cheater(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path, adversary="perturb", lazy=True)
    _seal_and_reveal(verifier)
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Approve]


def test_forced_error_is_rejected_by_a_replay_and_approved_by_a_lazy_verifier(
    tmp_path: Path,
) -> None:
    chain, verifier = _setup(tmp_path, rate_bps=10_000)  # samples [1, 3]: both eligible
    _seal_and_reveal(verifier)
    verdicts = chain.verdicts[(1, VERIFIERS[0])]
    assert verdicts.count(Verdict.Reject) == 1
    forced = verdicts.index(Verdict.Reject)
    reason = verifier.state.read().jobs[1].results[forced].reason
    assert "solver claimed" in reason
    lazy = LazyVerifierNode(chain.client(VERIFIERS[1]), tmp_path / "lazy")
    verdict = lazy.judge_claim(1, chain.jobs[1], 3, b"\x00" * 32, b"\x00" * 32)
    assert verdict is not None and verdict.ok is True


def test_restart_between_commit_and_reveal_reveals_the_same_verdicts(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path, adversary="perturb")
    verifier.step()  # sealed
    sealed = chain.sealed[(1, VERIFIERS[0])]
    again = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")  # no HTTP: no replay
    again.step()
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Reject]
    assert chain.sealed[(1, VERIFIERS[0])] == sealed
    assert chain.count("commitVerdicts") == 1 and chain.count("revealVerdicts") == 1


def test_crash_after_seal_before_record_is_not_resealed(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path)
    _seal_and_reveal(verifier)
    (tmp_path / "v" / "verifier_state.json").unlink()  # state lost entirely
    again = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    again.http_client = verifier.http_client
    again.step()
    assert chain.count("commitVerdicts") == 1 and chain.count("revealVerdicts") == 1


def test_unreachable_solver_is_rejected_after_retries(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path)
    verifier.http_client = None
    chain.set_job(1, checkpoint_url="http://127.0.0.1:9/jobs/1")  # nothing listens there
    for _ in range(UNAVAILABLE_ATTEMPTS + 1):
        verifier.step()  # early in the window: keep retrying
        assert chain.count("commitVerdicts") == 0
    chain.now = chain.jobs[1].verdict_deadline - 10  # last third of the window
    _seal_and_reveal(verifier)
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Reject, Verdict.Reject]
    reason = verifier.state.read().jobs[1].results[0].reason
    assert "unavailable" in reason


def test_job_index_follows_events_from_a_persisted_cursor(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path)
    verifier.step()  # discovers its assignment (and seals)
    index = verifier.state.read().index
    assert index.watch == [1] and index.to_assign == []
    assert index.cursor >= chain.block  # read up to the head (its own seal mined one more)
    for _ in range(5):  # open jobs nobody assigns: nothing for this verifier to watch
        chain.post_job("0x00000000000000000000000000000000000000a9", tiny_spec(seed=11))
    chain.advance(blocks=3)
    restarted = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    assert restarted.state.read().index.cursor == index.cursor  # resumes, no rescan
    restarted.step()
    again = restarted.state.read().index
    assert again.watch == [1] and again.cursor >= chain.block > index.cursor


def test_a_step_judge_votes_against_a_defender_that_withholds_its_data(tmp_path: Path) -> None:
    """P-6: the step's start state comes from the defender; when it stays unreachable into the
    last third of the vote window the member votes the claim wrong (before: it abstained
    forever and the committee kept the claim)."""
    chain = FakeChain()
    verifier = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")

    def withheld(*_args: object, **_kwargs: object) -> bool:
        raise CheckpointUnavailable("http://127.0.0.1:9/jobs/1/states/7: connection refused")

    verifier.judge_step = withheld  # type: ignore[method-assign]
    job = SimpleNamespace(job_id=1)
    dispute = SimpleNamespace(dispute_id=4, commit_deadline=chain.now + 300)
    claim = SimpleNamespace(step=7, start_hash=b"\x01" * 32, claimed_end_hash=b"\x02" * 32)
    for _ in range(UNAVAILABLE_ATTEMPTS + 1):
        assert verifier._judge_step(job, dispute, claim) is None  # early: keep retrying
    chain.now = dispute.commit_deadline - 10  # last third of the vote window
    assert verifier._judge_step(job, dispute, claim) is False
