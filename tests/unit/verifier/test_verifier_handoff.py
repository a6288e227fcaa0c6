"""A verifier hands its seal and its reveal to the job's solver (`verifier.handoff`,
`solver.aggregation`) against the fake protocol: an honest solver submits both seats in one
``commitVerdictsFor`` and one ``revealVerdictsFor`` and each seat counts its verdicts from the
chain; an aggregator that drops hand-offs costs a seat its own ``commitVerdicts`` after the
hand-off wait (sooner near the deadline), never its verdicts; a reveal is never handed before
the reveal window is open; ``hand_off=False`` seals at once.

Run: ``.venv/bin/python -m pytest tests/unit/verifier/test_verifier_handoff.py -q``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from solver.node import SolverNode
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import aggregating_http, run_solver_to_commit, seat_accounts
from verifier.handoff import HANDOFF_WAIT
from verifier.node import VerifierNode
from veritrain.enums import Verdict


class _Recording:
    """An HTTP client that records the URLs it POSTs to and forwards everything."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.posts: list[str] = []

    def post(self, url: str, **kwargs: Any) -> Any:
        self.posts.append(url)
        return self.inner.post(url, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _setup(tmp: Path) -> tuple[FakeChain, list[VerifierNode], SolverNode, _Recording]:
    """Two seats with real keys, a committed job with its claims posted, and each seat's HTTP
    client routed to the solver's app with its hand-off routes."""
    chain = FakeChain()
    chain.forced_segments = [1, 3]
    seats = [
        VerifierNode(chain.client(a.address), tmp / f"v{i}")
        for i, a in enumerate(seat_accounts(chain))
    ]
    for seat in seats:
        seat.step()  # stakes before the assignment
    solver = run_solver_to_commit(chain, tmp)
    http = _Recording(aggregating_http(solver))
    for seat in seats:
        seat.http_client = http
    return chain, seats, solver, http


def _verdicts(node: VerifierNode, verdict: str) -> float:
    value = node.metrics.registry.get_sample_value("veritrain_verdicts_total", {"verdict": verdict})
    return float(value or 0.0)


def test_seats_hand_off_and_the_solver_batches_seals_and_reveals(tmp_path: Path) -> None:
    chain, seats, solver, _ = _setup(tmp_path)
    for seat in seats:
        seat.step()  # replay, sign, hand the seal to the solver
        rec = seat.state.read().jobs[1]
        assert rec.seal_handed_at is not None
    assert chain.sealed == {} and chain.count("commitVerdicts") == 0
    assert solver.aggregator.pending(1) == (2, 0)
    solver.step()  # every seat is in: one commitVerdictsFor
    assert chain.count("commitVerdictsFor") == 1
    assert {v for (_, v) in chain.sealed} == {s.client.address for s in seats}
    for seat in seats:
        seat.step()  # every seat sealed: the reveal window is open, hand the reveal
        assert seat.state.read().jobs[1].reveal_handed_at is not None
    solver.step()  # one revealVerdictsFor
    assert chain.count("revealVerdictsFor") == 1
    assert chain.count("commitVerdicts") == 0 and chain.count("revealVerdicts") == 0
    for seat in seats:
        seat.step()  # the chain shows the reveal: recorded and counted once
        seat.step()
        addr = seat.client.address
        assert Verdict.Approve in chain.verdicts[(1, addr)]
        own = bin(chain.sample_masks[(1, addr)]).count("1")
        assert _verdicts(seat, "approve") == own and _verdicts(seat, "reject") == 0
        assert seat.state.read().jobs[1].submitted is True


def test_a_dropped_hand_off_falls_back_to_its_own_seal_after_the_wait(tmp_path: Path) -> None:
    """The solver takes the seal and never submits it: the seat sends `commitVerdicts` itself
    once `HANDOFF_WAIT` seconds of chain time passed, not before."""
    chain, seats, _, _ = _setup(tmp_path)
    seat = seats[0]
    seat.step()
    handed = seat.state.read().jobs[1].seal_handed_at
    assert handed is not None and chain.count("commitVerdicts") == 0
    chain.now = handed + HANDOFF_WAIT - 1
    seat.step()
    assert chain.count("commitVerdicts") == 0  # still waiting for the batch
    chain.now = handed + HANDOFF_WAIT
    seat.step()
    assert chain.count("commitVerdicts", seat.client.address) == 1
    assert (1, seat.client.address) in chain.sealed


def test_the_fallback_keeps_a_third_of_the_verdict_window(tmp_path: Path) -> None:
    """Handed off late, a seat falls back at ``deadline - window // 3``, before the wait ends;
    past that point it does not hand off at all."""
    chain, seats, _, http = _setup(tmp_path)
    deadline = chain.jobs[1].verdict_deadline
    latest = deadline - chain.params.verdict_window // 3
    chain.now = latest - 5
    seats[0].step()
    assert seats[0].state.read().jobs[1].seal_handed_at == latest - 5
    chain.now = latest
    seats[0].step()
    assert chain.count("commitVerdicts", seats[0].client.address) == 1
    posts = len(http.posts)
    seats[1].step()  # at the latest fallback time: no hand-off, its own seal at once
    assert len(http.posts) == posts
    assert chain.count("commitVerdicts", seats[1].client.address) == 1


def test_a_reveal_is_never_handed_off_before_the_reveal_window_opens(tmp_path: Path) -> None:
    """One seat sealed, the other not: its ends stay with it until the verdict deadline has
    passed (a seat still sealing must not see them), then they are handed off."""
    chain, seats, solver, http = _setup(tmp_path)
    seat = seats[0]
    seat.hand_off = False
    seat.step()  # seals itself
    seat.hand_off = True
    assert chain.count("commitVerdicts") == 1
    deadline = chain.jobs[1].verdict_deadline
    for now in (chain.now, deadline - 1, deadline):
        chain.now = now
        seat.step()
        assert not any(u.endswith("/reveals") for u in http.posts), now
        assert seat.state.read().jobs[1].reveal_handed_at is None
    chain.now = deadline + 2
    seat.step()
    assert any(u.endswith("/reveals") for u in http.posts)
    assert seat.state.read().jobs[1].reveal_handed_at == deadline + 2
    assert solver.aggregator.pending(1) == (0, 1)
    assert chain.count("revealVerdicts") == 0


def test_no_hand_off_seals_and_reveals_itself(tmp_path: Path) -> None:
    chain, seats, _, http = _setup(tmp_path)
    for seat in seats:
        seat.hand_off = False
        seat.step()
    for seat in seats:
        seat.step()
    assert http.posts == []
    assert chain.count("commitVerdicts") == 2 and chain.count("revealVerdicts") == 2
    assert chain.count("commitVerdictsFor") == 0
