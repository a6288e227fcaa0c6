"""`VerifierNode.step()` against the fake protocol, replaying a real small run over HTTP
(FastAPI TestClient): honest approve, cheater reject, lazy approve, no double submission."""

from __future__ import annotations

from pathlib import Path

import pytest

from chain.types import Verdict
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import VERIFIERS, http_for, run_solver_to_commit
from verifier.node import UNAVAILABLE_ATTEMPTS, VerifierNode


def _setup(tmp: Path, adversary=None, lazy=False) -> tuple[FakeChain, VerifierNode]:
    chain = FakeChain()
    chain.forced_segments = [1, 3]  # sample an honest and (for cheaters) a cheating segment
    verifier = VerifierNode(chain.client(VERIFIERS[0]), tmp / "v", lazy=lazy)
    verifier.step()  # stakes before the assignment
    solver = run_solver_to_commit(chain, tmp, adversary)
    verifier.http_client = http_for(solver)
    return chain, verifier


def test_honest_solver_is_approved(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path)
    verifier.step()
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Approve]


@pytest.mark.parametrize("mode", ["skip-steps", "perturb"])
def test_cheating_segment_is_rejected_with_a_reason(tmp_path: Path, mode: str) -> None:
    chain, verifier = _setup(tmp_path, adversary=mode)
    verifier.step()
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Reject]
    results = verifier.state.get("jobs")["1"]["results"]
    assert results["3"]["ok"] is False and "replay of steps 30..40" in results["3"]["reason"]


def test_lazy_verifier_approves_a_cheater(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path, adversary="perturb", lazy=True)
    verifier.step()
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Approve]


def test_restart_never_submits_twice(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path)
    verifier.step()
    again = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    again.step()
    again.step()
    assert chain.count("submitVerdicts") == 1


def test_crash_after_submit_before_record_reads_the_chain(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path)
    verifier.step()
    (tmp_path / "v" / "verifier_state.json").unlink()  # state lost entirely
    again = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    again.http_client = verifier.http_client
    again.step()
    assert chain.count("submitVerdicts") == 1


def test_unreachable_solver_is_rejected_after_retries(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path)
    verifier.http_client = None
    chain.set_job(1, checkpoint_url="http://127.0.0.1:9/jobs/1")  # nothing listens there
    for _ in range(UNAVAILABLE_ATTEMPTS + 1):
        verifier.step()  # early in the window: keep retrying
        assert chain.count("submitVerdicts") == 0
    chain.now = chain.jobs[1].verdict_deadline - 10  # last third of the window
    verifier.step()
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Reject, Verdict.Reject]
    reason = verifier.state.get("jobs")["1"]["results"]["1"]["reason"]
    assert "unavailable" in reason
