"""A leaver does not stall a run (docs/SECURITY.md N-27, docs/RUNS.md "A leaver's counted
state"): a solver counted in round 0 stops serving its final state, and the run still goes on.

Two real contributions of round 0 (digits-mlp, H = 4, k = 2) are served by their solvers'
servers (httpx transports over their states and a real Merkle tree); an honest keeper proves
them, proposes and finalizes the round into its `StateMirror`, served by the real mirror app
(`noderuntime.mirror.create_mirror_app` through FastAPI's test client). Then seat 1's solver
withholds everything.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from noderuntime.mirror import StateMirror, create_mirror_app
from noderuntime.runkeeper import RunKeeper
from noderuntime.runs import post_round, round_claim, run_state
from tests.unit.noderuntime.test_runs import RUN, FakeClient, FakeNode, FakeRegistry
from veritrain.diloco import OuterState, advance_round, contribution_init
from veritrain.enums import JobStatus
from veritrain.errors import CheckpointUnavailable
from veritrain.merkle import checkpoint_tree
from veritrain.runsim import train_contribution
from veritrain.state import state_hash

MIRROR = "http://mirror.test"


class Solver:
    """One solver's checkpoint server for one job: its final state and the proof of it."""

    def __init__(self, job_id: int, init_hash: bytes, final: bytes) -> None:
        self.job_id, self.final, self.serving = job_id, final, True
        self.hashes = [init_hash, b"\x11" * 32, state_hash(final)]  # steps 0, 2, 4
        self.tree = checkpoint_tree(self.hashes, 2)

    def answer(self, request: httpx.Request) -> httpx.Response:
        if not self.serving:
            raise httpx.ConnectError("connection refused", request=request)
        if request.url.path.endswith("/proofs/2"):
            body = {
                "job_id": self.job_id,
                "leaf_index": 2,
                "step": 4,
                "state_hash": "0x" + self.hashes[2].hex(),
                "proof": ["0x" + p.hex() for p in self.tree.proof(2)],
                "root": "0x" + self.tree.root.hex(),
            }
            return httpx.Response(200, json=body)
        if request.url.path.endswith("/checkpoints/4"):
            return httpx.Response(200, content=self.final)
        return httpx.Response(404)


class Chain(FakeClient):
    """`FakeClient` with the job views, checkpoint URLs and posts a run's rounds need."""

    def __init__(self, registry: FakeRegistry) -> None:
        super().__init__(registry)
        self.views: dict[int, dict[str, Any]] = {}
        self.posted: list[tuple[bytes, int]] = []  # (initHash, job id)
        self.jobs = SimpleNamespace(
            get_job=self._view,
            checkpoint_url=lambda job_id: f"http://solver{job_id}.test/jobs/{job_id}",
        )
        self.trainings: dict[tuple[bytes, bytes], int] = {}  # (initHash, specHash) -> job id
        self.shares = SimpleNamespace(
            training_job_of=lambda model, init, spec: self.trainings.get((init, spec), 0)
        )
        registry.post_contribution = self._post  # type: ignore[attr-defined]
        registry.job_id_from = lambda receipt: receipt  # type: ignore[attr-defined]

    def _view(self, job_id: int) -> SimpleNamespace:
        return SimpleNamespace(**vars(self._job(job_id)), **self.views.get(job_id, {}))

    def _post(self, run_id: int, seat: int, init_hash: bytes, *rest: Any) -> int:
        """`RunRegistry.postContribution`: the job is posted and its seat registered at once."""
        job_id = 100 + len(self.posted)
        self.posted.append((bytes(init_hash), job_id))
        t = self.runs.run.round
        self.trainings[(bytes(init_hash), RUN.contribution_spec_hash(t, seat))] = job_id
        self.register(t, seat, job_id, JobStatus.Open)
        return job_id


def _network(solvers: dict[int, Solver], mirror: StateMirror) -> httpx.Client:
    """An httpx client that reaches each solver's server and the mirror's real app."""
    app = TestClient(create_mirror_app(mirror))

    def route(request: httpx.Request) -> httpx.Response:
        if request.url.host == "mirror.test":
            answer = app.get(request.url.path)
            return httpx.Response(answer.status_code, content=answer.content)
        return solvers[int(request.url.host.removeprefix("solver").split(".")[0])].answer(request)

    return httpx.Client(transport=httpx.MockTransport(route))


@pytest.fixture(scope="module")
def round0() -> tuple[bytes, dict[int, tuple[bytes, bytes]]]:
    """The run's start and round 0's two honest contributions (seats 0 and 1)."""
    start = OuterState.from_bytes(FakeRegistry().start).to_bytes()
    return start, {seat: train_contribution(RUN, 0, seat, start, None) for seat in (0, 1)}


def _run_past_round0(
    tmp_path: Path, round0: tuple[bytes, dict[int, tuple[bytes, bytes]]]
) -> tuple[Chain, dict[int, Solver], StateMirror, Callable[[], httpx.Client]]:
    """Round 0 counted seats 0 (job 10) and 1 (job 11), proposed and finalized by a keeper whose
    store is a `StateMirror`."""
    start, contributions = round0
    registry = FakeRegistry()
    chain = Chain(registry)
    solvers = {}
    for seat, (init_hash, final) in contributions.items():
        job_id = 10 + seat
        chain.register(0, seat, job_id, JobStatus.Finalized)
        solvers[job_id] = Solver(job_id, init_hash, final)
        chain.views[job_id] = {
            "job_id": job_id,
            "total_steps": 4,
            "checkpoint_interval": 2,
            "merkle_root": solvers[job_id].tree.root,
            "init_hash": init_hash,
        }
    mirror = StateMirror(tmp_path / "keeper")
    node = FakeNode(chain)
    node.http_client = _network(solvers, mirror)
    keeper = RunKeeper(node, propose=True, challenge=True, store=mirror)
    registry.now = registry.deadline + 1  # two of three seats posted: registration closes by time
    keeper.tick()
    registry.now += 61
    keeper.tick()
    assert registry.run.round == 1 and registry.rounds[0].seats(registry.rounds[0].accepted) == [
        0,
        1,
    ]
    return chain, solvers, mirror, lambda: _network(solvers, mirror)


def test_a_leaver_withholding_its_counted_final_does_not_stop_the_run(
    tmp_path: Path, round0: tuple[bytes, dict[int, tuple[bytes, bytes]]]
) -> None:
    """Seat 1's solver stops serving its final after round 0 counted it. Without a mirror the
    owner cannot post round 1 (the stall of N-27); with the keeper's mirror the owner posts
    every seat of round 1, each from exactly the start an honest solver computes."""
    start, contributions = round0
    chain, solvers, _mirror, network = _run_past_round0(tmp_path, round0)
    solvers[11].serving = False  # the leaver
    owner = chain  # the model's owner posts round 1
    with pytest.raises(CheckpointUnavailable):
        post_round(owner, RUN, 1, start, reward=1, http=network())
    assert owner.posted == []
    posted = post_round(owner, RUN, 1, start, reward=1, http=network(), mirrors=[MIRROR])
    assert posted == [100, 101, 102]
    r0 = advance_round(RUN, OuterState.from_bytes(start), {}, contributions)
    g1 = r0.state.to_bytes()
    assert [init for init, _ in owner.posted] == [
        state_hash(contribution_init(g1, contributions[0][1])),
        state_hash(contribution_init(g1, contributions[1][1])),  # the leaver's private state
        state_hash(contribution_init(g1, None)),
    ]


def test_a_final_nobody_serves_leaves_its_seat_out_and_the_run_goes_on(
    tmp_path: Path, round0: tuple[bytes, dict[int, tuple[bytes, bytes]]]
) -> None:
    """No holder serves seat 1's final any more (the keeper lost it too), but the keeper's
    mirror still serves round 0's outer state by the final claim's hash: the run goes on from
    it, seat 1 is withheld (not posted: its start is unknown), the other seats are posted. When
    nobody serves the outer state either, the error says what is missing."""
    start, contributions = round0
    chain, solvers, mirror, network = _run_past_round0(tmp_path, round0)
    solvers[11].serving = False
    mirror.delete(state_hash(contributions[1][1]))
    state = run_state(chain, RUN, 1, start, http=network(), mirrors=[MIRROR])
    r0 = advance_round(RUN, OuterState.from_bytes(start), {}, contributions)
    assert state.state.state_hash() == r0.state.state_hash() == chain.runs.rounds[0].state_hash
    assert list(state.withheld) == [1] and state.seat_finals == {0: contributions[0][1]}
    with pytest.raises(CheckpointUnavailable, match="seat 1's start cannot be built"):
        state.seat_start(1)
    posted = post_round(chain, RUN, 1, start, reward=1, http=network(), mirrors=[MIRROR])
    g1 = r0.state.to_bytes()
    assert posted == [100, 101] and [init for init, _ in chain.posted] == [
        state_hash(contribution_init(g1, contributions[0][1])),
        state_hash(contribution_init(g1, None)),  # seat 2, never seated before
    ]
    chain.register(1, 1, 150, JobStatus.Finalized)  # someone posted the withheld seat anyway
    with pytest.raises(CheckpointUnavailable, match="seat 1 is registered, but its start"):
        round_claim(chain, RUN, 1, http=network(), settled=False, mirrors=[MIRROR])
    mirror.delete(r0.state.state_hash())
    with pytest.raises(CheckpointUnavailable, match="are served by no holder"):
        run_state(chain, RUN, 1, start, http=network(), mirrors=[MIRROR])


def test_a_verifier_keeps_a_finalized_contribution_and_serves_it_after_its_solver_left(
    tmp_path: Path, round0: tuple[bytes, dict[int, tuple[bytes, bytes]]]
) -> None:
    """A verifier of job 11 keeps its final once the job is Finalized (`keep_final`), before
    any round claim; after the solver leaves, the owner fetches it from the verifier's mirror."""
    from verifier.node import VerifierNode

    start, contributions = round0
    chain, solvers, _keeper, _network_ = _run_past_round0(tmp_path, round0)
    verifier = VerifierNode(chain, tmp_path / "verifier")  # type: ignore[arg-type]
    assert verifier.mirror is not None
    verifier.http_client = _network(solvers, verifier.mirror)
    assert verifier._kept_final(chain.jobs.get_job(11))
    solvers[11].serving = False
    posted = post_round(
        chain,
        RUN,
        1,
        start,
        reward=1,
        seats=[1],
        http=_network(solvers, verifier.mirror),
        mirrors=[MIRROR],
    )
    g1 = advance_round(RUN, OuterState.from_bytes(start), {}, contributions).state.to_bytes()
    assert posted == [100] and chain.posted == [
        (state_hash(contribution_init(g1, contributions[1][1])), 100)
    ]
