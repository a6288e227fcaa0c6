"""The bisection game from the nodes' side, without a chain: a whole game
between a cheating solver's trajectory and an honest challenger's replay played through
`NodeBase.play_game` against an in-memory game (docs/DISPUTES.md), clocks, and a challenger
restarted mid-game that resumes from its persisted step hashes."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from adversary.solver import cheating_step_function
from noderuntime import NodeBase
from noderuntime.records import NodeRecords, RecordStore
from solver.trainer import train_job
from tests.utils.node_fixtures import tiny_spec
from veritrain.bisection import GameView, StepTrajectory, play_out
from veritrain.enums import GameStatus, Side
from veritrain.errors import (
    CheckpointFormatError,
    CheckpointHashMismatch,
    CheckpointUnavailable,
    MerkleProofInvalid,
    RemoteResponseError,
)
from veritrain.hexutil import from_hex
from veritrain.store import CheckpointStore
from veritrain.training import TrainingEngine

D, C = "0x" + "d" * 40, "0x" + "c" * 40
Z = b"\x00" * 32


class Revert(Exception):
    pass


def _as_view(g: dict[str, Any], dispute_id: int) -> GameView:
    """The chain bindings' decoding of struct `Game`, for the in-memory game below."""
    return GameView(
        dispute_id=dispute_id,
        **{**g, "turn": Side(int(g["turn"])), "status": GameStatus(int(g["status"]))},
    )


class FakeGame:
    """DISPUTES.md's game (one game, id 1) with chess clocks; the step adjudication is left
    pending (status AwaitingStep)."""

    def __init__(self, a: int, b: int, clock: int = 100) -> None:
        self.now = 1000
        self.g: dict[str, Any] = dict(
            job_id=1, segment=a // 10, defender=D, challenger=C, lo=a, hi=b, agreed_hash=Z,
            claimed_hash=Z, pending_hash=Z, turn=int(Side.Defender),
            status=int(GameStatus.AwaitingEndpoints), defender_clock=clock,
            challenger_clock=clock, turn_started_at=self.now, step_dispute_id=0,
        )  # fmt: skip
        self.moves: list[str] = []

    def _move(self, who: str, expect: Side, lo: int | None = None, hi: int | None = None) -> None:
        g = self.g
        side = Side.Defender if who == D else Side.Challenger
        if side is not expect or g["turn"] != int(side):
            raise Revert("OutOfTurn")
        if lo is not None and (lo, hi) != (g["lo"], g["hi"]):
            raise Revert("WrongInterval")
        clock = "defender_clock" if side is Side.Defender else "challenger_clock"
        spent = self.now - g["turn_started_at"]
        if spent > g[clock]:
            raise Revert("ClockExpired")
        g[clock] -= spent
        g["turn_started_at"] = self.now
        self.moves.append(who)

    def _next(self) -> None:
        g = self.g
        if g["hi"] - g["lo"] > 1:
            g["status"], g["turn"] = int(GameStatus.AwaitingBisection), int(Side.Defender)
        else:
            g["status"], g["turn"], g["step_dispute_id"] = int(GameStatus.AwaitingStep), 0, 7

    def post_endpoints(self, who: str, start: bytes, end: bytes, *_proofs: Any) -> None:
        self._move(who, Side.Defender)
        self.g.update(agreed_hash=start, claimed_hash=end)
        self._next()

    def bisect(self, who: str, lo: int, hi: int, mid_hash: bytes) -> None:
        self._move(who, Side.Defender, lo, hi)
        self.g.update(pending_hash=mid_hash, status=int(GameStatus.AwaitingResponse))
        self.g["turn"] = int(Side.Challenger)

    def respond(self, who: str, lo: int, hi: int, agree: bool) -> None:
        self._move(who, Side.Challenger, lo, hi)
        g = self.g
        mid = (g["lo"] + g["hi"]) // 2
        if agree:
            g.update(lo=mid, agreed_hash=g["pending_hash"])
        else:
            g.update(hi=mid, claimed_hash=g["pending_hash"])
        self._next()

    def escalate(self, who: str, lo: int, hi: int) -> None:
        self._move(who, Side.Challenger, lo, hi)
        self.g.update(status=int(GameStatus.AwaitingStep), turn=0, step_dispute_id=7)
        self.escalated = (lo, hi)

    def claim_timeout(self, who: str) -> None:
        view = _as_view(self.g, 1)
        if view.runs_out_at is None or self.now <= view.runs_out_at:
            raise Revert("ClockNotExpired")
        won = view.turn is Side.Challenger
        self.g.update(status=int(GameStatus.DefenderWon if won else GameStatus.ChallengerWon))
        self.g["turn"] = 0


class _GameFacade:
    """`client.game` of `GameClient`: the BisectionGame calls `NodeBase.play_game` makes."""

    def __init__(self, game: FakeGame, address: str) -> None:
        self.fake, self.address = game, address

    def get_game(self, _dispute_id: int) -> GameView:
        return _as_view(self.fake.g, 1)

    def move_bond(self) -> int:
        return 0

    def move_bond_due(self, _dispute_id: int) -> int:
        return 0

    def post_endpoints(self, _id: int, *args: Any) -> dict[str, int]:
        self.fake.post_endpoints(self.address, *args)
        return {"status": 1}

    def bisect(self, _id: int, *args: Any) -> dict[str, int]:
        self.fake.bisect(self.address, *args)
        return {"status": 1}

    def respond(self, _id: int, *args: Any) -> dict[str, int]:
        self.fake.respond(self.address, *args)
        return {"status": 1}

    def escalate(self, _id: int, *args: Any) -> dict[str, int]:
        self.fake.escalate(self.address, *args)
        return {"status": 1}

    def claim_timeout(self, _id: int) -> dict[str, int]:
        self.fake.claim_timeout(self.address)
        return {"status": 1}


class _Token:
    def balance_of(self, _account: str | None = None) -> int:
        return 10**30


class _Adjudicator:
    name = "bisection"


class GameClient:
    """The ChainClient subset `NodeBase.play_game` uses, for one account."""

    adjudicator = _Adjudicator()

    def __init__(self, game: FakeGame, address: str) -> None:
        self.fake, self.address = game, address
        self.game = _GameFacade(game, address)
        self.token = _Token()

    def timestamp(self) -> int:
        return self.fake.now


def _node(game: FakeGame, who: str) -> NodeBase:
    return NodeBase(GameClient(game, who), name=who[:4], revert_types=(Revert,))


@pytest.fixture(scope="module")
def cheat(tmp_path_factory: pytest.TempPathFactory) -> tuple[TrainingEngine, list[bytes], Any]:
    """A skip-steps cheater's committed leaves and its own (served) trajectory of segment 2."""
    engine = TrainingEngine(tiny_spec())
    store = CheckpointStore(tmp_path_factory.mktemp("cheat"))
    hashes: list[str] = []
    assert train_job(engine, store, hashes, step_fn=cheating_step_function(engine, "skip-steps"))
    leaves = [from_hex(h) for h in hashes]
    served = StepTrajectory(
        engine, store.get(leaves[2]), 30, step_fn=cheating_step_function(engine, "skip-steps")
    )
    return engine, leaves, served


def _challenger_traj(engine: TrainingEngine, leaves: list[bytes], tmp: Path, step_fn=None):
    blob = engine.state_bytes(engine.run(engine.init_state(), 20))  # honest state 20 == leaf 2
    traj = StepTrajectory(engine, blob, 30, step_fn=step_fn, cache_path=tmp / "c.json")
    assert traj.start_hash == leaves[2]
    return traj


def _drive(nodes: list[tuple[NodeBase, Any]], game: FakeGame, rounds: int = 40) -> None:
    for _ in range(rounds):
        for node, kw in nodes:
            node.play_game(1, **kw)
            game.now += 1
        if game.g["status"] >= GameStatus.AwaitingStep:
            return


def test_game_against_skip_steps_cheater_ends_at_first_bad_step(cheat, tmp_path: Path) -> None:
    engine, leaves, served = cheat
    game = FakeGame(20, 30)
    mine = _challenger_traj(engine, leaves, tmp_path)
    state = RecordStore(tmp_path / "c_state.json", NodeRecords)
    ends = lambda: (leaves[2], leaves[3], [], [])  # noqa: E731
    defender = (_node(game, D), {"hash_at": served.hash_at, "endpoints": ends})
    challenger_node = _node(game, C)
    view = _as_view(game.g, 1)
    challenger = (
        challenger_node,
        {"hash_at": mine.hash_at, "on_move": NodeBase.game_recorder(state, view)},
    )
    _drive([defender, challenger], game)
    g = _as_view(game.g, 1)
    assert g.in_adjudication and (g.lo, g.hi) == (21, 22)
    assert (21, g.agreed_hash, g.claimed_hash) == play_out(20, 30, served.hash_at, mine.hash_at)
    moves = state.read().games[1].moves
    # mids 25 (state 25 differs), 22 (differs), 21 (same): [20,30] -> [20,25] -> [20,22] -> [21,22]
    assert [(m.kind, m.step, m.agree) for m in moves] == [
        ("respond", 25, False),
        ("respond", 22, False),
        ("respond", 21, True),
    ]


def test_challenger_restarted_mid_game_resumes_without_replaying(cheat, tmp_path: Path) -> None:
    engine, leaves, served = cheat
    game = FakeGame(20, 30)
    ends = lambda: (leaves[2], leaves[3], [], [])  # noqa: E731
    defender = (_node(game, D), {"hash_at": served.hash_at, "endpoints": ends})
    first = _challenger_traj(engine, leaves, tmp_path)
    _drive([defender, (_node(game, C), {"hash_at": first.hash_at})], game, rounds=2)
    assert 0 < game.moves.count(C) < 4  # killed mid-game

    def no_replay(_state: Any) -> None:
        raise AssertionError("resumed node replayed again")

    again = _challenger_traj(engine, leaves, tmp_path, step_fn=no_replay)  # fresh process
    _drive([defender, (_node(game, C), {"hash_at": again.hash_at})], game)
    g = _as_view(game.g, 1)
    assert g.in_adjudication and (g.lo, g.hi) == (21, 22)


def test_party_that_stops_moving_loses_on_its_clock(cheat, tmp_path: Path) -> None:
    engine, leaves, served = cheat
    game = FakeGame(20, 30, clock=30)
    ends = lambda: (leaves[2], leaves[3], [], [])  # noqa: E731
    defender = _node(game, D)
    defender.play_game(1, served.hash_at, endpoints=ends)  # endpoints
    defender.play_game(1, served.hash_at)  # bisect at 25; the challenger never answers
    assert game.g["status"] == GameStatus.AwaitingResponse
    game.now += 29
    defender.play_game(1, served.hash_at)
    assert game.g["status"] == GameStatus.AwaitingResponse  # clock not out yet: no claim
    game.now += 5
    defender.play_game(1, served.hash_at)
    assert game.g["status"] == GameStatus.DefenderWon


def test_challenger_without_the_defenders_data_escalates_instead_of_timing_out(
    cheat, tmp_path: Path
) -> None:
    """P-6: the defender withholds the segment's data from the challenger; the challenger
    retries for half of its turn's clock, then escalates the whole interval to the step
    committee (before: it kept retrying until its clock ran out and lost; then it disputed every
    midpoint, which led to the segment's first step, honest when the cheat is later)."""
    _engine, leaves, served = cheat
    game = FakeGame(20, 30, clock=30)
    ends = lambda: (leaves[2], leaves[3], [], [])  # noqa: E731
    defender, challenger = _node(game, D), _node(game, C)

    def withheld(_job: Any, _segment: int) -> Any:
        raise CheckpointUnavailable("http://127.0.0.1:9/jobs/1/checkpoints: connection refused")

    challenger.segment_trajectory = withheld  # type: ignore[method-assign]
    state = RecordStore(tmp_path / "c_state.json", NodeRecords)
    job = SimpleNamespace(job_id=1, dispute_id=1)
    defender.play_game(1, served.hash_at, endpoints=ends)
    defender.play_game(1, served.hash_at)  # bisect at 25
    with pytest.raises(CheckpointUnavailable):
        challenger.play_challenger(job, state)  # early in its turn: retry later
    assert game.g["status"] == GameStatus.AwaitingResponse
    game.now += 16  # over half of its 30 s clock
    challenger.play_challenger(job, state)
    assert game.escalated == (20, 30)  # the committee replays all 10 steps
    assert game.g["status"] == GameStatus.AwaitingStep
    assert [(m.kind, m.lo, m.hi) for m in state.read().games[1].moves] == [("escalate", 20, 30)]


@pytest.mark.parametrize(
    "served",
    [
        CheckpointHashMismatch(
            b"\xab" * 32, b"\x12" * 32, "http://127.0.0.1:9/jobs/1/checkpoints/20"
        ),
        MerkleProofInvalid("job 1: bad proof of leaf 2"),
        RemoteResponseError("bad proof response from http://127.0.0.1:9/jobs/1/proofs/2"),
        CheckpointFormatError("checkpoint is not a veritrain state"),
    ],
    ids=["corrupt-bytes", "bad-proof", "malformed-response", "unparsable-state"],
)
def test_challenger_served_unusable_data_escalates_instead_of_timing_out(
    cheat, tmp_path: Path, served: Exception
) -> None:
    """N-24: the defender serves bytes that do not hash to its commitment (or a proof that does
    not verify, or a malformed answer): to the challenger that is withheld data, and it escalates
    once half of its turn's clock is spent, exactly as for an unreachable server. Before, only
    `CheckpointUnavailable` escalated: the mismatch propagated every round, the challenger never
    moved and lost on its clock (6 games lost, the cheater paid)."""
    _engine, leaves, traj = cheat
    game = FakeGame(20, 30, clock=30)
    ends = lambda: (leaves[2], leaves[3], [], [])  # noqa: E731
    defender, challenger = _node(game, D), _node(game, C)

    def corrupt(_job: Any, _segment: int) -> Any:
        raise served

    challenger.segment_trajectory = corrupt  # type: ignore[method-assign]
    state = RecordStore(tmp_path / "c_state.json", NodeRecords)
    job = SimpleNamespace(job_id=1, dispute_id=1)
    defender.play_game(1, traj.hash_at, endpoints=ends)
    defender.play_game(1, traj.hash_at)  # bisect at 25
    with pytest.raises(type(served)):
        challenger.play_challenger(job, state)  # early in its turn: the defender may repair it
    assert game.g["status"] == GameStatus.AwaitingResponse
    game.now += 16  # over half of its 30 s clock
    challenger.play_challenger(job, state)
    assert game.escalated == (20, 30)
    assert game.g["status"] == GameStatus.AwaitingStep
    assert [(m.kind, m.lo, m.hi) for m in state.read().games[1].moves] == [("escalate", 20, 30)]
