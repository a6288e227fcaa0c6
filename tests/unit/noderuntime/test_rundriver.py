"""`noderuntime.rundriver.drive_step`: a run's owner posting its rounds, against the in-memory
`RunRegistry` of the run tests (`tests.unit.noderuntime.test_runs`).

Restarts are new drivers over the same chain: a driver keeps nothing, so a restart at any
point is a fresh `drive_step` call. The other parties (solvers, proposers) are played by the
test: each posted job is cancelled (terminal, nothing to count) and the round's claim proposed
with the state every node computes (`noderuntime.runs.round_claim`).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from chain.contracts.runs import seat_mask
from chain.errors import ContractRevert
from noderuntime.rundriver import DriveStep, EscrowShort, drive_step
from noderuntime.runs import round_claim
from tests.unit.noderuntime.test_runs import RUN, FakeClient, FakeRegistry, _expected
from veritrain.diloco import contribution_init
from veritrain.enums import JobStatus, RunRoundPhase
from veritrain.state import state_hash

E18 = 10**18
REWARD = 20 * E18
COST = REWARD + 3 * E18  # the fake JobManager's postCost: reward + 3 verifier fees


class Chain(FakeClient):
    """`FakeClient` with what a poster's client adds: posts, postCost, a token balance."""

    def __init__(self, registry: FakeRegistry, balance: int = 10_000 * E18) -> None:
        super().__init__(registry)
        self.posted: list[tuple[int, int, bytes]] = []  # (round, seat, initHash) per post
        self.balance = balance
        self.jobs = SimpleNamespace(get_job=self._job, post_cost=lambda reward: reward + 3 * E18)
        self.token = SimpleNamespace(balance_of=lambda: self.balance)
        registry.post_contribution = self._post  # type: ignore[attr-defined]
        registry.job_id_from = lambda receipt: receipt  # type: ignore[attr-defined]

    def _post(self, run_id: int, seat: int, init_hash: bytes, k: int, reward: int) -> int:
        """`RunRegistry.postContribution`: reverts SeatTaken like the contract."""
        t = self.runs.run.round
        if (t, seat) in self.runs.jobs:
            raise ContractRevert("SeatTaken", {"runId": run_id, "round": t, "seat": seat})
        job_id = 100 + len(self.posted)
        self.posted.append((t, seat, bytes(init_hash)))
        self.balance -= reward + 3 * E18
        self.register(t, seat, job_id, JobStatus.Open)
        return job_id


def _settle_and_propose(chain: Chain) -> None:
    """The other parties: every registered job of the current round is cancelled, then the
    round's claim (no seat counted) is proposed with the state every node computes."""
    t = chain.runs.run.round
    for job_id in chain.runs.contributions(1, t).values():
        chain.statuses[job_id] = JobStatus.Cancelled
    _, result = round_claim(chain, RUN)
    chain.runs.propose_round(1, result.state.state_hash(), seat_mask(result.accepted))


def _step(chain: Chain, **kw: Any) -> DriveStep:
    return drive_step(chain, RUN, reward=REWARD, **kw)


def test_a_round_is_posted_once_then_waited_on_by_the_same_or_a_restarted_driver() -> None:
    chain = Chain(FakeRegistry())
    step = _step(chain)
    assert (step.action, step.round, step.seats) == ("posted", 0, [0, 1, 2])
    assert step.jobs == [100, 101, 102] and step.escrow_wei == 3 * COST
    for _ in range(3):  # the driver polling, or restarted: the round is posted already
        again = _step(chain)
        assert (again.action, again.reason) == ("waiting", "settling")
        assert again.detail == "3 of 3 seats registered"
    assert [(t, s) for t, s, _ in chain.posted] == [(0, 0), (0, 1), (0, 2)]


def test_a_driver_killed_mid_round_posts_only_the_missing_seats() -> None:
    chain = Chain(FakeRegistry())
    first = _step(chain, seats=[1])  # as if killed after seat 1's transaction
    assert first.seats == [1]
    step = _step(chain)
    assert (step.action, step.seats, step.jobs) == ("posted", [0, 2], [101, 102])
    assert step.escrow_wei == 2 * COST
    assert sorted((t, s) for t, s, _ in chain.posted) == [(0, 0), (0, 1), (0, 2)]


def test_a_claim_is_waited_on_until_its_window_is_over_then_finalized_then_the_next_round_posted():
    registry = FakeRegistry()
    chain = Chain(registry)
    _step(chain)
    _settle_and_propose(chain)
    waiting = _step(chain)
    assert (waiting.action, waiting.reason, waiting.until) == (
        "waiting",
        "challenge_window",
        registry.now + 60,
    )
    assert registry.sent == ["propose"]
    registry.now += 61
    assert _step(chain).action == "finalized" and registry.sent == ["propose", "finalize"]
    step = _step(chain)
    assert (step.action, step.round, step.seats) == ("posted", 1, [0, 1, 2])
    # round 1's seats start from the outer state of round 0's final claim (nothing counted)
    start = state_hash(contribution_init(_expected(1).to_bytes(), None))
    assert [init for _, _, init in chain.posted[3:]] == [start] * 3


def test_the_run_completes_with_every_seat_posted_once_whatever_the_restarts() -> None:
    registry = FakeRegistry()
    chain = Chain(registry)
    actions = []
    for _ in range(40):  # each iteration is a fresh driver: nothing carries over but the chain
        step = _step(chain)
        actions.append((step.action, step.round))
        if step.action == "complete":
            break
        if step.action == "waiting" and step.reason == "settling":
            _settle_and_propose(chain)
        elif step.action == "waiting" and step.reason == "challenge_window":
            registry.now += 61
        elif step.action == "finalized":  # the next round opens: its registration window
            registry.deadline = registry.now + 100
    assert actions[-1] == ("complete", 3)
    assert [a for a in actions if a[0] in ("posted", "finalized")] == [
        ("posted", 0),
        ("finalized", 0),
        ("posted", 1),
        ("finalized", 1),
        ("posted", 2),
        ("finalized", 2),
    ]
    assert sorted((t, s) for t, s, _ in chain.posted) == [
        (t, s) for t in range(3) for s in range(3)
    ]
    assert _step(chain).action == "complete"  # a driver started on an ended run exits at once


def test_a_balance_below_the_escrow_is_refused_before_any_post() -> None:
    chain = Chain(FakeRegistry(), balance=3 * COST - 1)
    with pytest.raises(EscrowShort, match=r"below the 69 VTT escrow of round 0's 3 contribution"):
        _step(chain)
    assert chain.posted == []
    chain.balance = 3 * COST
    assert _step(chain).action == "posted"


def test_missing_seats_after_the_registration_deadline_are_waited_on_not_posted() -> None:
    registry = FakeRegistry()
    chain = Chain(registry)
    _step(chain, seats=[0])
    registry.now = registry.deadline + 1
    step = _step(chain)
    assert (step.action, step.reason, step.until) == (
        "waiting",
        "registration_closed",
        registry.deadline,
    )
    assert step.detail == "1 of 3 seats registered" and len(chain.posted) == 1


def test_a_disputed_claim_is_waited_on() -> None:
    registry = FakeRegistry()
    chain = Chain(registry)
    _step(chain)
    _settle_and_propose(chain)
    registry.challenge_round(1)
    registry.now += 1_000
    step = _step(chain)
    assert (step.action, step.reason) == ("waiting", "disputed")
    assert registry.rounds[0].phase is RunRoundPhase.Disputed


def test_a_finalize_another_account_sent_first_is_a_race_and_other_reverts_are_raised() -> None:
    registry = FakeRegistry()
    chain = Chain(registry)
    _step(chain)
    _settle_and_propose(chain)
    registry.now += 61

    def lost(run_id: int) -> object:
        raise ContractRevert("UnexpectedRoundPhase", {"runId": run_id})

    registry.finalize_round = lost  # type: ignore[method-assign]
    step = _step(chain)
    assert (step.action, step.reason) == ("waiting", "raced")
    assert "UnexpectedRoundPhase" in step.detail

    def broken(run_id: int) -> object:
        raise ContractRevert("Paused", {})

    registry.finalize_round = broken  # type: ignore[method-assign]
    with pytest.raises(ContractRevert, match="Paused"):
        _step(chain)
