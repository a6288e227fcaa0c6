"""`noderuntime.runs`: a run rebuilt from its `RunRegistry` records, and the keeper that
proposes, challenges and finalizes round claims, against an in-memory registry.

Rounds here have no registered job (or only unfinished ones), so every claim is computable
without a checkpoint server: the outer step over no pseudo-gradient still advances the state's
step, so each round has its own state hash.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from chain.types import RunRoundView, RunView
from noderuntime.runkeeper import RunKeeper
from noderuntime.runs import (
    RoundNotReady,
    RunMismatch,
    chain_rounds,
    find_run,
    round_claim,
    run_state,
)
from veritrain.diloco import OuterState, RunSpec, advance_round, contribution_uri
from veritrain.enums import JobStatus, RunRoundPhase
from veritrain.presets import preset
from veritrain.runsim import pretrained_start

RUN = RunSpec(
    inner=preset("digits-mlp", "native", total_steps=4, checkpoint_interval=2), seats=3, rounds=3
)
ZERO = "0x" + "00" * 20
OPEN_UNTIL = "registration is open until 1970-01-01 00:18:20 UTC"  # deadline 1100 s


class FakeRegistry:
    """`client.runs` over dicts: one run, its rounds, the claims proposed."""

    def __init__(self, run: RunSpec = RUN, *, seats: int | None = None) -> None:
        self.start = pretrained_start(run, 0)
        self.run = RunView(
            run_id=1,
            model_id=run.inner.model_id_hash(),
            run_hash=run.run_hash(),
            opener=ZERO,
            start_hash=OuterState.from_bytes(self.start).state_hash(),
            seats=seats or run.seats,
            rounds=chain_rounds(run),
            inner_steps=run.inner_steps,
            round=0,
        )
        self.rounds: dict[int, RunRoundView] = {0: self._round(0, RunRoundPhase.Open)}
        self.jobs: dict[tuple[int, int], int] = {}
        self.sent: list[str] = []
        self.now = 1_000
        self.deadline = 1_100  # round 0's registration deadline

    @staticmethod
    def _round(t: int, phase: RunRoundPhase) -> RunRoundView:
        return RunRoundView(1, t, phase, 0, 0, b"\x00" * 32, ZERO, ZERO, 0, 0)

    def run_count(self) -> int:
        return 1

    def run_id_of(self, run_hash: bytes) -> int:
        return 1 if run_hash == self.run.run_hash else 0

    def get_run(self, run_id: int) -> RunView:
        return self.run

    def get_round(self, run_id: int, t: int) -> RunRoundView:
        return self.rounds.get(t, self._round(t, RunRoundPhase.None_))

    def contribution_of(self, run_id: int, t: int, seat: int) -> int:
        return self.jobs.get((t, seat), 0)

    def contributions(self, run_id: int, t: int) -> dict[int, int]:
        return {seat: job for (r, seat), job in sorted(self.jobs.items()) if r == t}

    def registration_deadline(self, run_id: int, t: int) -> int:
        return self.deadline

    def claim_of(self, dispute_id: int) -> tuple[int, int]:
        return (0, 0)

    def claim_bond(self) -> int:
        return 10 * 10**18

    def propose_round(self, run_id: int, state_hash: bytes, accepted: int) -> object:
        self.sent.append("propose")
        t = self.run.round
        self.rounds[t] = replace(
            self.rounds[t],
            phase=RunRoundPhase.Proposed,
            state_hash=state_hash,
            accepted=accepted,
            proposer="0x" + "11" * 20,
            challenge_deadline=self.now + 60,
        )
        return {}

    def challenge_round(self, run_id: int) -> object:
        self.sent.append("challenge")
        t = self.run.round
        self.rounds[t] = replace(self.rounds[t], phase=RunRoundPhase.Disputed)
        return {}

    def finalize_round(self, run_id: int) -> object:
        self.sent.append("finalize")
        t = self.run.round
        self.rounds[t] = replace(self.rounds[t], phase=RunRoundPhase.Final)
        self.run = replace(self.run, round=t + 1)
        if t + 1 < self.run.rounds:
            self.rounds[t + 1] = self._round(t + 1, RunRoundPhase.Open)
        return {}


class FakeClient:
    def __init__(self, registry: FakeRegistry) -> None:
        self.runs = registry
        self.address = "0x" + "22" * 20
        self.statuses: dict[int, JobStatus] = {}
        self.jobs = SimpleNamespace(get_job=self._job)
        self.trainings: dict[tuple[bytes, bytes], int] = {}  # (initHash, specHash) -> job id
        self.shares = SimpleNamespace(
            training_job_of=lambda model, init, spec: self.trainings.get((bytes(init), spec), 0)
        )

    def timestamp(self) -> int:
        return self.runs.now

    def register(self, t: int, seat: int, job_id: int, status: JobStatus) -> None:
        """Register job `job_id` as contribution (t, seat) of RUN, in `status`."""
        self.runs.jobs[(t, seat)] = job_id
        self.statuses[job_id] = status

    def _job(self, job_id: int) -> SimpleNamespace:
        (t, seat) = next(k for k, j in self.runs.jobs.items() if j == job_id)
        return SimpleNamespace(
            status=self.statuses[job_id],
            spec_uri=contribution_uri(RUN.to_data_uri(), t, seat),
            spec_hash=RUN.contribution_spec_hash(t, seat),
        )


class FakeNode:
    def __init__(self, client: FakeClient) -> None:
        self.client = client
        self.log = logging.getLogger("test-keeper")
        self.stopping = False
        self.http_client = None

    def send(self, action: str, fn: Any, *args: Any, quiet: bool = False) -> object:
        return fn(*args)

    def ensure_funds(self, amount: int) -> None:
        self.client.runs.sent.append(f"fund {amount}")

    def chain_time(self) -> int:
        return self.client.runs.now


def _expected(rounds: int) -> OuterState:
    """The outer state after `rounds` rounds with no counted contribution."""
    state = OuterState.from_bytes(pretrained_start(RUN, 0))
    for _ in range(rounds):
        state = advance_round(RUN, state, {}, {}).state
    return state


def test_a_run_not_opened_or_opened_with_other_fields_is_refused() -> None:
    registry = FakeRegistry()
    other = RUN.model_copy(update={"seats": 2})
    with pytest.raises(RoundNotReady, match="not opened"):
        find_run(FakeClient(registry), other)
    with pytest.raises(RunMismatch, match="does not match"):
        find_run(FakeClient(FakeRegistry(seats=4)), RUN)


def test_a_round_cannot_be_claimed_while_a_registered_job_runs() -> None:
    registry = FakeRegistry()
    client = FakeClient(registry)
    with pytest.raises(RoundNotReady, match=rf"{OPEN_UNTIL} \(0 of 3 seats"):
        round_claim(client, RUN)  # else anyone could close an empty round at once
    client.register(0, 1, 7, JobStatus.Verifying)
    # a round posted in batches: no claim before every seat is registered or the deadline (P-28)
    with pytest.raises(RoundNotReady, match=rf"{OPEN_UNTIL} \(1 of 3 seats"):
        round_claim(client, RUN)
    registry.now = 1_101  # past the deadline: the round closes with the seats it has
    with pytest.raises(RoundNotReady, match="seat 1's job 7 is Verifying"):
        round_claim(client, RUN)
    registry.now = 1_000
    client.register(0, 0, 8, JobStatus.Cancelled)
    client.register(0, 2, 9, JobStatus.Cancelled)
    with pytest.raises(RoundNotReady, match="seat 1's job 7 is Verifying"):
        round_claim(client, RUN)
    client.statuses[7] = JobStatus.Expired  # settled, and nothing to count
    _, result = round_claim(client, RUN)
    assert result.accepted == [] and result.state.state_hash() == _expected(1).state_hash()


def test_the_keeper_proposes_finalizes_and_the_run_rebuilds_from_the_final_claims() -> None:
    registry = FakeRegistry()
    client = FakeClient(registry)
    keeper = RunKeeper(FakeNode(client), propose=True, challenge=True)
    client.register(0, 0, 3, JobStatus.Open)
    keeper.tick()  # the round's registration is open
    assert registry.sent == []
    client.register(0, 1, 4, JobStatus.Cancelled)
    client.register(0, 2, 5, JobStatus.Expired)
    keeper.tick()  # the round's job is not settled
    assert registry.sent == []
    client.statuses[3] = JobStatus.Cancelled
    keeper.tick()
    # the claim bond is made sure of first: the node's earnings are restaked, not in its wallet
    fund = f"fund {registry.claim_bond()}"
    assert registry.sent == [fund, "propose"]
    keeper.tick()  # its own claim, inside the window: nothing to do
    assert registry.sent == [fund, "propose"]
    registry.now += 61
    keeper.tick()
    assert registry.sent == [fund, "propose", "finalize"] and registry.run.round == 1
    state = run_state(client, RUN, 1)
    assert state.state.state_hash() == _expected(1).state_hash()
    with pytest.raises(RoundNotReady, match="round 1 is not final"):
        run_state(client, RUN, 2)


def test_the_keeper_challenges_a_wrong_claim_and_leaves_a_right_one() -> None:
    registry = FakeRegistry()
    client = FakeClient(registry)
    keeper = RunKeeper(FakeNode(client), propose=False, challenge=True)
    client.register(0, 0, 3, JobStatus.Rejected)
    registry.propose_round(1, _expected(1).state_hash(), 0)  # right
    keeper.tick()
    assert registry.sent == ["propose"]
    registry.rounds[0] = replace(registry.rounds[0], phase=RunRoundPhase.Open)
    registry.propose_round(1, b"\x01" * 32, 0)  # a wrong outer state
    keeper.tick()
    assert registry.sent[-1] == "challenge"
    registry.rounds[0] = replace(registry.rounds[0], phase=RunRoundPhase.Open)
    registry.propose_round(1, _expected(1).state_hash(), 0b10)  # counts a seat with no job
    keeper.tick()
    assert registry.sent[-1] == "challenge"


def test_a_final_claim_this_node_does_not_compute_stops_the_rebuild() -> None:
    registry = FakeRegistry()
    client = FakeClient(registry)
    registry.propose_round(1, b"\x01" * 32, 0)
    registry.finalize_round(1)  # a wrong claim that nobody challenged
    with pytest.raises(RunMismatch, match="round 0's final claim"):
        run_state(client, RUN, 1)


def test_a_final_state_proved_once_is_not_fetched_again(tmp_path) -> None:
    """After a final state was proved against its job's root and kept, rebuilding a run no
    longer needs its solver's server: a solver that restarts (or leaves) does not stall the
    parties that already hold its counted work."""
    import httpx

    from noderuntime.runs import verified_final
    from veritrain.errors import CheckpointUnavailable
    from veritrain.merkle import checkpoint_tree
    from veritrain.state import state_hash
    from veritrain.store import CheckpointStore

    blobs = [b"state 0", b"state 2", b"state 4"]
    hashes = [state_hash(b) for b in blobs]
    tree = checkpoint_tree(hashes, 2)
    job = SimpleNamespace(total_steps=4, checkpoint_interval=2, merkle_root=tree.root)
    up = {"serving": True}

    def serve(request: httpx.Request) -> httpx.Response:
        if not up["serving"]:
            raise httpx.ConnectError("connection refused", request=request)
        if request.url.path.endswith("/proofs/2"):
            body = {
                "job_id": 5,
                "leaf_index": 2,
                "step": 4,
                "state_hash": "0x" + hashes[2].hex(),
                "proof": ["0x" + p.hex() for p in tree.proof(2)],
                "root": "0x" + tree.root.hex(),
            }
            return httpx.Response(200, json=body)
        return httpx.Response(200, content=blobs[2])

    client = SimpleNamespace(
        jobs=SimpleNamespace(checkpoint_url=lambda job_id: "http://solver.test/jobs/5")
    )
    http = httpx.Client(transport=httpx.MockTransport(serve))
    store = CheckpointStore(tmp_path / "store")
    assert verified_final(client, 5, store, http, job=job) == blobs[2]
    up["serving"] = False
    assert verified_final(client, 5, store, http, job=job) == blobs[2]
    with pytest.raises(CheckpointUnavailable):  # without the bytes kept, the server is needed
        verified_final(client, 5, None, http, job=job)
