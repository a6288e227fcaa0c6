"""`WhistleblowerNode.step()` against the fake protocol: challenges a lazy approval of a cheat,
replays each segment once, never challenges twice, leaves honest approvals alone."""

from __future__ import annotations

from pathlib import Path

from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import VERIFIERS, WHISTLEBLOWER, http_for, run_solver_to_commit
from verifier.node import VerifierNode
from whistleblower.node import WhistleblowerNode


def _setup(tmp: Path, adversary=None) -> tuple[FakeChain, WhistleblowerNode]:
    chain = FakeChain()
    chain.forced_segments = [1, 3]
    lazy = [VerifierNode(chain.client(v), tmp / v, lazy=True) for v in VERIFIERS]
    for v in lazy:
        v.step()
    solver = run_solver_to_commit(chain, tmp, adversary)
    for v in lazy:
        v.step()  # both approve everything without replaying
    wb = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp / "wb")
    wb.http_client = http_for(solver)
    return chain, wb


def test_lazy_approval_of_a_cheat_is_challenged_once_per_verifier(tmp_path: Path) -> None:
    chain, wb = _setup(tmp_path, adversary="perturb")
    replays = []
    original = wb.replay_check
    wb.replay_check = lambda job, s, **kw: (replays.append(s), original(job, s, **kw))[1]  # type: ignore[method-assign]
    wb.step()
    assert sorted(replays) == [1, 3]  # each segment replayed once, not once per verifier
    assert {k for k in chain.challengers} == {(1, 1, v) for v in VERIFIERS}
    again = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb")
    again.step()
    assert chain.count("challengeApproval") == 2


def test_honest_approvals_are_not_challenged(tmp_path: Path) -> None:
    chain, wb = _setup(tmp_path)
    wb.step()
    assert chain.count("challengeApproval") == 0
    assert set(wb.state.get("checks")) == {"1:1", "1:3"}


def test_finalizes_when_due(tmp_path: Path) -> None:
    chain, wb = _setup(tmp_path)
    wb.step()
    chain.advance(seconds=10_000)
    wb.step()
    assert chain.jobs[1].status.name == "Finalized"
