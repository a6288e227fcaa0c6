"""The n-way dissection game from the nodes' side, without a chain: whole games between a
cheating solver's trajectory and an honest (or griefing) challenger's replay played through
`NodeBase.play_game` against an in-memory game that follows the contract's rules
(docs/DISPUTES.md) at several arities, clocks, a refused index, escalation on withheld data,
and a challenger restarted mid-game that resumes from its persisted step hashes."""

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
from veritrain._keccak import keccak256
from veritrain.bisection import GameView, StepTrajectory, depth_of, play_out
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
    """DISPUTES.md's n-way dissection game (one game, id 1) with chess clocks, written from the
    contract's rules (not from `veritrain.bisection`, which it checks): the defender posts the
    hashes at the interior points, the game keeps their keccak and the block of the
    ``Bisected`` log that carries them, the challenger passes them back with the part it
    disputes. Every move is one block. The step adjudication is left pending (AwaitingStep)."""

    def __init__(self, a: int, b: int, clock: int = 100, arity: int = 8) -> None:
        self.now, self.block, self.arity = 1000, 1, arity
        self.g: dict[str, Any] = dict(
            job_id=1, segment=a // 10, defender=D, challenger=C, lo=a, hi=b, agreed_hash=Z,
            claimed_hash=Z, pending_hash=Z, pending_block=0, turn=int(Side.Defender),
            status=int(GameStatus.AwaitingEndpoints), defender_clock=clock,
            challenger_clock=clock, turn_started_at=self.now, step_dispute_id=0,
        )  # fmt: skip
        self.moves: list[str] = []
        self.logs: list[tuple[int, int, list[bytes]]] = []  # Bisected: (block, game, hashes)

    def _point(self, j: int) -> int:
        lo, hi = self.g["lo"], self.g["hi"]
        return lo + (hi - lo) * j // min(self.arity, hi - lo)

    def _check(self, who: str, expect: Side, lo: int | None = None, hi: int | None = None) -> None:
        g = self.g
        side = Side.Defender if who == D else Side.Challenger
        if side is not expect or g["turn"] != int(side):
            raise Revert("OutOfTurn")
        if lo is not None and (lo, hi) != (g["lo"], g["hi"]):
            raise Revert("WrongInterval")
        clock = "defender_clock" if side is Side.Defender else "challenger_clock"
        if self.now - g["turn_started_at"] > g[clock]:
            raise Revert("ClockExpired")

    def _spend(self, who: str) -> None:
        g = self.g
        clock = "defender_clock" if who == D else "challenger_clock"
        g[clock] -= self.now - g["turn_started_at"]
        g["turn_started_at"] = self.now
        self.moves.append(who)
        self.block += 1

    def _next(self) -> None:
        g = self.g
        if g["hi"] - g["lo"] > 1:
            g["status"], g["turn"] = int(GameStatus.AwaitingBisection), int(Side.Defender)
        else:
            g["status"], g["turn"], g["step_dispute_id"] = int(GameStatus.AwaitingStep), 0, 7

    def post_endpoints(self, who: str, start: bytes, end: bytes, *_proofs: Any) -> None:
        self._check(who, Side.Defender)
        self._spend(who)
        self.g.update(agreed_hash=start, claimed_hash=end)
        self._next()

    def bisect(self, who: str, lo: int, hi: int, hashes: list[bytes]) -> None:
        self._check(who, Side.Defender, lo, hi)
        if self.g["status"] != GameStatus.AwaitingBisection:
            raise Revert("OutOfTurn")
        parts = min(self.arity, hi - lo)
        if len(hashes) != parts - 1:
            raise Revert(f"WrongHashCount(1, {parts - 1}, {len(hashes)})")
        self.logs.append((self.block, 1, list(hashes)))
        self.g.update(
            pending_hash=keccak256(b"".join(hashes)),
            pending_block=self.block,
            status=int(GameStatus.AwaitingResponse),
        )
        self._spend(who)
        self.g["turn"] = int(Side.Challenger)

    def respond(self, who: str, lo: int, hi: int, index: int, hashes: list[bytes]) -> None:
        self._check(who, Side.Challenger, lo, hi)
        g = self.g
        if keccak256(b"".join(hashes)) != g["pending_hash"]:
            raise Revert("HashesMismatch(1)")
        parts = min(self.arity, hi - lo)
        if not 0 <= index < parts:
            raise Revert(f"InvalidIndex(1, {index}, {parts})")
        self._spend(who)
        new_lo, new_hi = self._point(index), self._point(index + 1)
        if index > 0:
            g["agreed_hash"] = hashes[index - 1]
        if index < parts - 1:
            g["claimed_hash"] = hashes[index]
        g.update(lo=new_lo, hi=new_hi)
        self._next()

    def escalate(self, who: str, lo: int, hi: int) -> None:
        self._check(who, Side.Challenger, lo, hi)
        self._spend(who)
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

    def arity(self) -> int:
        return self.fake.arity

    def pending_hashes(self, game: GameView) -> list[bytes]:
        """As the chain facade: this game's log at its pending block that hashes right."""
        for block, dispute_id, hashes in self.fake.logs:
            if (block, dispute_id) == (game.pending_block, game.dispute_id):
                if keccak256(b"".join(hashes)) == game.pending_hash:
                    return list(hashes)
        raise LookupError(f"no Bisected log at block {game.pending_block}")

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


@pytest.mark.parametrize(
    ("arity", "responses"),
    [
        # [20,30] -> part 1 of 21 22 23 25 26 27 28 30 (22 is the first disputed point)
        (8, [([21, 22, 23, 25, 26, 27, 28, 30], 1)]),
        # [20,30] -> 23 disputed: [20,23] -> 21 agreed, 22 disputed: [21,22]
        (3, [([23, 26, 30], 0), ([21, 22, 23], 1)]),
        # binary: 25 disputed, 22 disputed, 21 agreed
        (2, [([25, 30], 0), ([22, 25], 0), ([21, 22], 1)]),
    ],
    ids=["arity8", "arity3", "arity2"],
)
def test_game_against_skip_steps_cheater_ends_at_first_bad_step(
    cheat, tmp_path: Path, arity: int, responses: list[tuple[list[int], int]]
) -> None:
    engine, leaves, served = cheat
    game = FakeGame(20, 30, arity=arity)
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
    assert g.agreed_hash == mine.hash_at(21) == served.hash_at(21)
    assert g.claimed_hash == served.hash_at(22) != mine.hash_at(22)
    out = play_out(20, 30, served.hash_at, mine.hash_at, arity)
    assert (out.step, out.agreed, out.claimed) == (21, g.agreed_hash, g.claimed_hash)
    assert out.rounds == len(responses) <= depth_of(10, arity)
    moves = state.read().games[1].moves
    assert [(m.kind, m.steps, m.index) for m in moves] == [
        ("respond", steps, index) for steps, index in responses
    ]
    assert all(m.hashes == [mine.hash_at(p) for p in m.steps] for m in moves)
    # the defender posted its own hashes at every interior point, one log per round
    first_points = responses[0][0][:-1]
    assert game.logs[0][2] == [served.hash_at(p) for p in first_points]
    assert len(game.logs) == len(responses)


def test_griefing_challenger_that_always_takes_the_first_part_pins_an_honest_step(
    cheat, tmp_path: Path
) -> None:
    """A wrong index leads to the wrong step: disputing part 0 every round ends at step 20,
    whose successor the cheater computed right (the step committee rules for the defender)."""
    engine, leaves, served = cheat
    game = FakeGame(20, 30, arity=3)
    mine = _challenger_traj(engine, leaves, tmp_path)
    ends = lambda: (leaves[2], leaves[3], [], [])  # noqa: E731
    griefer = {"hash_at": mine.hash_at, "choose": lambda _mine, _theirs: 0}
    _drive([(_node(game, D), {"hash_at": served.hash_at, "endpoints": ends}),
            (_node(game, C), griefer)], game)  # fmt: skip
    g = _as_view(game.g, 1)
    assert g.in_adjudication and (g.lo, g.hi) == (20, 21)
    assert g.claimed_hash == served.hash_at(21) == mine.hash_at(21)


def test_a_part_outside_the_interval_is_refused(cheat, tmp_path: Path) -> None:
    """The game reverts an index past the last part (``InvalidIndex``): the node logs the
    revert, records no move, and the game waits for a valid response."""
    engine, leaves, served = cheat
    game = FakeGame(20, 30)
    mine = _challenger_traj(engine, leaves, tmp_path)
    state = RecordStore(tmp_path / "c_state.json", NodeRecords)
    ends = lambda: (leaves[2], leaves[3], [], [])  # noqa: E731
    defender = _node(game, D)
    defender.play_game(1, served.hash_at, endpoints=ends)
    defender.play_game(1, served.hash_at)
    challenger = _node(game, C)
    on_move = NodeBase.game_recorder(state, _as_view(game.g, 1))
    challenger.play_game(1, mine.hash_at, choose=lambda m, _t: len(m), on_move=on_move)
    assert game.g["status"] == GameStatus.AwaitingResponse and (game.g["lo"], game.g["hi"]) == (
        20,
        30,
    )
    assert 1 not in state.read().games
    challenger.play_game(1, mine.hash_at, on_move=on_move)
    assert (game.g["lo"], game.g["hi"]) == (21, 22)


def test_challenger_restarted_mid_game_resumes_without_replaying(cheat, tmp_path: Path) -> None:
    engine, leaves, served = cheat
    game = FakeGame(20, 30, arity=2)
    ends = lambda: (leaves[2], leaves[3], [], [])  # noqa: E731
    defender = (_node(game, D), {"hash_at": served.hash_at, "endpoints": ends})
    first = _challenger_traj(engine, leaves, tmp_path)
    _drive([defender, (_node(game, C), {"hash_at": first.hash_at})], game, rounds=2)
    assert 0 < game.moves.count(C) < 3  # killed mid-game

    def no_replay(_state: Any) -> None:
        raise AssertionError("resumed node replayed again")

    again = _challenger_traj(engine, leaves, tmp_path, step_fn=no_replay)  # fresh process
    _drive([defender, (_node(game, C), {"hash_at": again.hash_at})], game)
    g = _as_view(game.g, 1)
    assert g.in_adjudication and (g.lo, g.hi) == (21, 22)
    assert game.moves.count(C) == 3


def test_party_that_stops_moving_loses_on_its_clock(cheat, tmp_path: Path) -> None:
    engine, leaves, served = cheat
    game = FakeGame(20, 30, clock=30)
    ends = lambda: (leaves[2], leaves[3], [], [])  # noqa: E731
    defender = _node(game, D)
    defender.play_game(1, served.hash_at, endpoints=ends)  # endpoints
    defender.play_game(1, served.hash_at)  # dissect [20, 30]; the challenger never answers
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
    first part, which led to the segment's first step, honest when the cheat is later)."""
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
    defender.play_game(1, served.hash_at)  # dissect [20, 30]
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
    defender.play_game(1, traj.hash_at)  # dissect [20, 30]
    with pytest.raises(type(served)):
        challenger.play_challenger(job, state)  # early in its turn: the defender may repair it
    assert game.g["status"] == GameStatus.AwaitingResponse
    game.now += 16  # over half of its 30 s clock
    challenger.play_challenger(job, state)
    assert game.escalated == (20, 30)
    assert game.g["status"] == GameStatus.AwaitingStep
    assert [(m.kind, m.lo, m.hi) for m in state.read().games[1].moves] == [("escalate", 20, 30)]
