"""`WhistleblowerNode.step()` against the fake protocol: challenges a lazy approval of a cheat
or of a forced error, replays each claim once, never challenges twice, leaves honest approvals
alone."""

from __future__ import annotations

from pathlib import Path

from adversary.verifier import LazyVerifierNode
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import (
    VERIFIERS,
    WHISTLEBLOWER,
    http_for,
    past_challenge_deadline,
    run_solver_to_commit,
)
from whistleblower.node import WhistleblowerNode


def _setup(tmp: Path, adversary=None, rate_bps: int = 0) -> tuple[FakeChain, WhistleblowerNode]:
    chain = FakeChain(forced_error_rate_bps=rate_bps)
    chain.forced_segments = [1, 3]
    lazy = [LazyVerifierNode(chain.client(v), tmp / v) for v in VERIFIERS]
    for v in lazy:
        v.step()
    solver = run_solver_to_commit(chain, tmp, adversary)
    for _ in range(2):
        for v in lazy:
            v.step()  # both seal, then reveal, approving everything without replaying
    wb = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp / "wb")
    wb.http_client = http_for(solver)
    wb.solver = solver  # type: ignore[attr-defined]
    return chain, wb


def test_lazy_approval_of_a_cheat_is_challenged_once_per_verifier(tmp_path: Path) -> None:
    chain, wb = _setup(tmp_path, adversary="perturb")
    replays = []
    original = wb.claim_check
    wb.claim_check = lambda job, s, *a, **kw: (replays.append(s), original(job, s, *a, **kw))[1]  # type: ignore[method-assign]
    wb.step()
    assert sorted(replays) == [1, 3]  # each claim replayed once, not once per verifier
    assert {k for k in chain.challengers} == {(1, 1, v) for v in VERIFIERS}
    again = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb")
    again.step()
    assert chain.count("challengeApproval") == 2


def test_lazy_approval_of_a_forced_error_is_challenged(tmp_path: Path) -> None:
    chain, wb = _setup(tmp_path, rate_bps=10_000)
    wb.step()
    forced = wb.solver.job_record(1).claims.forced_sample  # type: ignore[attr-defined]
    assert {k for k in chain.challengers} == {(1, forced, v) for v in VERIFIERS}
    past_challenge_deadline(chain)
    wb.solver.step()  # type: ignore[attr-defined]  # reveal: Forced, the job finalizes
    assert chain.forced_settled == {1: forced}
    assert chain.jobs[1].status.name == "Finalized"


def test_honest_approvals_are_not_challenged(tmp_path: Path) -> None:
    chain, wb = _setup(tmp_path)
    wb.step()
    assert chain.count("challengeApproval") == 0
    assert set(wb.state.read().checks) == {"1:0", "1:1"}


def test_finalizes_when_due(tmp_path: Path) -> None:
    chain, wb = _setup(tmp_path)
    wb.step()
    past_challenge_deadline(chain)
    wb.step()
    assert chain.jobs[1].status.name == "Verifying"  # the solver has not revealed yet
    wb.solver.step()  # type: ignore[attr-defined]  # reveals (and finalizes: anyone may)
    assert chain.jobs[1].status.name == "Finalized"
