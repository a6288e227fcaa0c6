"""The dissection game from a node's side (docs/DISPUTES.md): per-step replay and the moves.

Shared by every role that plays a game:

- `StepTrajectory`: the state hashes of every step of one segment, computed by replaying from
  the segment's start checkpoint (one pass, then cached in memory and optionally in a JSON
  file so a restarted node does not replay again), and the canonical bytes of any
  intermediate state (replayed on demand, kept in the content-addressed store). The solver
  builds it with its own step function (`solver.trainer.step_function`, adversary modes
  included, so it serves the trajectory it committed to); a challenger uses the honest
  `TrainingEngine.train_step`.
- `GameView` and `next_move`: a normalised view of a game and the pure decision of what one
  party should do now (post the endpoints, dissect, respond, claim a timeout), testable
  without a chain.
- `dissection_points`, `choose_index`, `dissect_interval`, `depth_of`, `play_out`: the
  n-way dissection rule itself (Truebit's n-way dissection; Arbitrum classic's challenge
  dissection). Each defender move posts the state hashes at the ``parts - 1`` interior points
  of the interval (``parts = min(arity, hi - lo)``), the challenger keeps the one part whose
  start it agrees with and whose end it disputes. `play_out` simulates a whole game between
  two hash functions and returns the single step handed to the step adjudicator: for an
  honest challenger that is the first step where the two trajectories diverge.

torch is imported lazily (only when a segment is replayed).

Run: not a script; `StepTrajectory(engine, start_blob, end_step).hash_at(17)`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from veritrain._keccak import keccak256
from veritrain.enums import GameStatus, Side
from veritrain.errors import CheckpointFormatError, NodeStateError
from veritrain.hexutil import as_bytes32, to_hex
from veritrain.state import read_header, state_hash
from veritrain.store import CheckpointStore, atomic_write_bytes

if TYPE_CHECKING:
    from veritrain.training import TrainingEngine, TrainState

logger = logging.getLogger(__name__)

__all__ = [
    "Chooser",
    "GameView",
    "Move",
    "MoveKind",
    "PlayOutcome",
    "StepFn",
    "StepTrajectory",
    "choose_index",
    "depth_of",
    "dissect_interval",
    "dissection_points",
    "hashes_digest",
    "next_move",
    "play_out",
    "posted_points",
]

StepFn = Callable[["TrainState"], None]
"""Advances a state by one step in place (honest: `engine.train_step`)."""

ZERO_HASH = b"\x00" * 32


# ------------------------------------------------------------------------- interval logic
def dissection_points(lo: int, hi: int, arity: int) -> list[int]:
    """The points that split [lo, hi] into ``parts = min(arity, hi - lo)`` near-equal parts.

    ``point(j) = lo + (hi - lo) * j // parts`` for ``j = 0..parts`` (the contract's formula,
    DISPUTES.md): ``point(0) = lo``, ``point(parts) = hi``, strictly increasing, and each part
    is ``floor`` or ``ceil`` of ``(hi - lo) / parts`` steps long. The defender posts its state
    hashes at the interior points ``j = 1..parts-1``; for ``hi - lo == 2`` that is one hash,
    the old bisection midpoint. This is Truebit's n-way dissection (Teutsch & Reitwiessner,
    "A scalable verification solution for blockchains", 2017, section 4) as run by Arbitrum
    classic's challenge dissection (one bisection of n segments per move).

    Args:
        lo: first step of the interval.
        hi: last step (``hi > lo``).
        arity: most parts per round (``DISSECTION_ARITY``, >= 2).

    Returns:
        ``parts + 1`` steps, ``lo`` first and ``hi`` last.

    Raises:
        ValueError: ``hi <= lo`` (nothing to dissect) or ``arity < 2``.
    """
    if hi <= lo:
        raise ValueError(f"interval [{lo}, {hi}] has no step to dissect")
    if arity < 2:
        raise ValueError(f"dissection arity {arity} is below 2")
    parts = min(arity, hi - lo)
    return [lo + (hi - lo) * j // parts for j in range(parts + 1)]


def depth_of(k: int, arity: int) -> int:
    """Most dissection rounds a game over ``k`` steps can take (the contract's ``depth``).

    ``w = k; while w > 1: w = ceil(w / min(arity, w)); depth += 1``: each round keeps one part,
    at most ``ceil(w / parts)`` steps long (k=1024, arity 8 -> 4 rounds; k=64 -> 2; arity 2
    is binary bisection, ``ceil(log2 k)``). Move bonds are prepaid for this many rounds.

    Args:
        k: steps of a segment (>= 1).
        arity: most parts per round (>= 2).

    Raises:
        ValueError: ``k < 1`` or ``arity < 2``.
    """
    if k < 1 or arity < 2:
        raise ValueError(f"depth_of needs k >= 1 and arity >= 2, got k={k}, arity={arity}")
    depth, w = 0, k
    while w > 1:
        parts = min(arity, w)
        w = -(-w // parts)
        depth += 1
    return depth


def posted_points(lo: int, hi: int, count: int) -> list[int]:
    """The interior points of [lo, hi] at which a dissection posted ``count`` hashes (what a
    ``Bisected`` event's ``lo``, ``hi`` and ``hashes`` describe, without the arity: the count is
    ``parts - 1`` and ``parts = min(arity, hi - lo)``).

    Returns:
        ``count`` steps, ``point(1..parts-1)`` of `dissection_points`; empty for ``count = 0``.
    """
    return dissection_points(lo, hi, count + 1)[1:-1] if count else []


def hashes_digest(hashes: Sequence[bytes]) -> bytes:
    """``keccak256(abi.encodePacked(hashes))``: the game's ``pendingHash`` of a posted list
    (the 32-byte hashes concatenated, in point order).

    Raises:
        ValueError: a hash is not 32 bytes.
    """
    for h in hashes:
        if len(h) != 32:
            raise ValueError(f"a state hash is 32 bytes, got {len(h)}")
    return keccak256(b"".join(bytes(h) for h in hashes))


def choose_index(mine: Sequence[bytes], theirs: Sequence[bytes]) -> int:
    """The honest challenger's part: the first one whose end it disputes.

    Both lists hold the hashes at points ``j = 1..parts`` (list position ``j - 1``): ``mine``
    the challenger's own, ``theirs`` the defender's posted interior hashes followed by its
    ``claimedHash`` at ``hi``. The part ``index`` spans ``[point(index), point(index + 1)]``;
    taking the first disagreement keeps "agreed at lo, disputed at hi" (the challenger agreed
    at ``point(index)``). When it agrees everywhere (a griefer's position, or an honest
    defender) it takes the last part, ``parts - 1``, where the step adjudicator rules
    against the challenger.

    Args:
        mine: ``parts`` hashes, the challenger's.
        theirs: ``parts`` hashes, the defender's (posted + claimed).

    Returns:
        ``index`` in ``0..parts-1``.

    Raises:
        ValueError: the lists are empty or of different lengths.
    """
    if not mine or len(mine) != len(theirs):
        raise ValueError(
            f"choose_index needs two equal non-empty lists, got {len(mine)} and {len(theirs)}"
        )
    for j, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        if bytes(a) != bytes(b):
            return j
    return len(mine) - 1


def dissect_interval(
    lo: int,
    hi: int,
    agreed: bytes,
    claimed: bytes,
    hashes: Sequence[bytes],
    index: int,
    arity: int,
) -> tuple[int, int, bytes, bytes]:
    """Apply one dissection round (the defender posted ``hashes``, the challenger picked
    ``index``), as ``BisectionGame.respond`` does.

    Args:
        lo, hi: the interval (steps, ``hi - lo >= 2``).
        agreed: hash at ``lo`` both accept.
        claimed: the defender's hash at ``hi``.
        hashes: the defender's ``parts - 1`` hashes at the interior points.
        index: the part picked, ``0..parts-1``.
        arity: most parts per round.

    Returns:
        The new ``(lo, hi, agreed, claimed)``: ``[point(index), point(index + 1)]``, agreed
        ``hashes[index - 1]`` (unchanged for index 0), claimed ``hashes[index]`` (unchanged
        for the last part).

    Raises:
        ValueError: wrong number of hashes (``WrongHashCount``) or index out of range
            (``InvalidIndex``).
    """
    points = dissection_points(lo, hi, arity)
    parts = len(points) - 1
    if len(hashes) != parts - 1:
        raise ValueError(f"[{lo}, {hi}] takes {parts - 1} hashes, got {len(hashes)}")
    if not 0 <= index < parts:
        raise ValueError(f"index {index} is not a part of [{lo}, {hi}] ({parts} parts)")
    new_agreed = bytes(hashes[index - 1]) if index > 0 else agreed
    new_claimed = bytes(hashes[index]) if index < parts - 1 else claimed
    return points[index], points[index + 1], new_agreed, new_claimed


Chooser = Callable[[list[bytes], list[bytes]], int]
"""A challenger's rule ``(mine, theirs) -> index`` (honest: `choose_index`); both lists are the
hashes at points ``1..parts``."""


class PlayOutcome(NamedTuple):
    """The end of a simulated game (`play_out`).

    Attributes:
        step: t, the single step (t -> t+1) handed to the step adjudicator.
        agreed: the hash at t both accept.
        claimed: the defender's hash at t + 1.
        rounds: dissection rounds played (at most ``depth_of(end - start, arity)``).
    """

    step: int
    agreed: bytes
    claimed: bytes
    rounds: int


def play_out(
    start: int,
    end: int,
    defender_hash: Callable[[int], bytes],
    challenger_hash: Callable[[int], bytes],
    arity: int,
    *,
    choose: Chooser | None = None,
) -> PlayOutcome:
    """Simulate a whole game between two trajectories (no chain, no clocks).

    Args:
        start: a = s*k (both sides accept the committed hash there).
        end: b = (s+1)*k.
        defender_hash: the defender's state hash at a step (what it posts).
        challenger_hash: the challenger's state hash at a step (what it compares).
        arity: most parts per round (``DISSECTION_ARITY``).
        choose: the challenger's rule; honest `choose_index` by default.

    Returns:
        `PlayOutcome`: for an honest challenger whose trajectory agrees at ``start`` and
        differs at ``end``, ``step`` is the first step whose successor differs.

    Raises:
        ValueError: ``end <= start``, ``arity < 2``, or ``choose`` returns an invalid index.
    """
    if end <= start:
        raise ValueError(f"segment [{start}, {end}] has no step")
    pick = choose if choose is not None else choose_index
    lo, hi = start, end
    agreed, claimed = defender_hash(start), defender_hash(end)
    rounds = 0
    while hi - lo > 1:
        points = dissection_points(lo, hi, arity)
        posted = [defender_hash(p) for p in points[1:-1]]
        mine = [challenger_hash(p) for p in points[1:]]
        index = pick(mine, [*posted, claimed])
        lo, hi, agreed, claimed = dissect_interval(lo, hi, agreed, claimed, posted, index, arity)
        rounds += 1
    return PlayOutcome(lo, agreed, claimed, rounds)


# ------------------------------------------------------------------------------- game view
class MoveKind(StrEnum):
    """What a party can do (DISPUTES.md, Moves / Clocks)."""

    POST_ENDPOINTS = "post_endpoints"
    BISECT = "bisect"
    """The defender posts its hashes at the interval's interior points (``bisect``)."""
    RESPOND = "respond"
    """The challenger picks the part it disputes (``respond``)."""
    ESCALATE = "escalate"
    """The challenger's alternative to RESPOND when it cannot compute its hashes (the
    defender withholds its states): the step committee replays the whole interval."""
    CLAIM_TIMEOUT = "claim_timeout"


@dataclass(frozen=True)
class Move:
    """A move to make now.

    Attributes:
        kind: what to do.
        steps: the steps whose state hashes the move needs: for BISECT the interior points
            ``point(1..parts-1)`` (the hashes it posts), for RESPOND ``point(1..parts)`` (the
            challenger's own hashes, compared with the posted ones and the claimed end);
            empty otherwise.
    """

    kind: MoveKind
    steps: tuple[int, ...] = ()


@dataclass(frozen=True)
class GameView:
    """A game as the nodes see it (`BisectionGame.getGame(disputeId)`, struct `Game`).

    The chain bindings decode the struct into this view (``client.game.get_game``); the game
    logic below reads it. Steps are ints, hashes 32-byte ``bytes``, clocks seconds.

    Attributes:
        dispute_id: the game's id (the JobManager's `job.disputeId`).
        job_id: the job.
        segment: s (steps `s*k .. (s+1)*k`).
        defender: the job's solver.
        challenger: whoever opened the dispute.
        lo, hi: the current interval (steps).
        agreed_hash: hash at `lo` both accept.
        claimed_hash: the defender's hash at `hi`.
        pending_hash: ``keccak256`` of the defender's posted hashes, concatenated
            (`hashes_digest`; meaningful while AwaitingResponse).
        turn: the side whose clock runs (`Side.None_` during adjudication or once resolved).
        status: lifecycle status.
        defender_clock, challenger_clock: seconds left at `turn_started_at`.
        turn_started_at: timestamp at which the side to move started thinking.
        moves: moves made so far (each posted one move bond).
        step_dispute_id: the step adjudicator's dispute once `hi = lo + 1` (0 before).
        pending_block: block of the latest dissection (its ``Bisected`` log carries the
            posted hashes; 0 before the first).
    """

    dispute_id: int
    job_id: int
    segment: int
    defender: str
    challenger: str
    lo: int
    hi: int
    agreed_hash: bytes
    claimed_hash: bytes
    pending_hash: bytes
    turn: Side
    status: GameStatus
    defender_clock: int
    challenger_clock: int
    turn_started_at: int
    moves: int = 0
    step_dispute_id: int = 0
    pending_block: int = 0

    def points(self, arity: int) -> list[int]:
        """The current interval's dissection points (`dissection_points(lo, hi, arity)`).

        Raises:
            ValueError: the interval is a single step or less (``hi - lo < 1``).
        """
        return dissection_points(self.lo, self.hi, arity)

    @property
    def resolved(self) -> bool:
        """The game has an outcome."""
        return self.status in (GameStatus.DefenderWon, GameStatus.ChallengerWon)

    @property
    def in_adjudication(self) -> bool:
        """The interval is a single step and the step adjudicator decides."""
        return self.status is GameStatus.AwaitingStep

    @property
    def runs_out_at(self) -> int | None:
        """Timestamp after which the side to move has spent its clock (None: no clock runs)."""
        if self.turn is Side.Defender:
            return self.turn_started_at + self.defender_clock
        if self.turn is Side.Challenger:
            return self.turn_started_at + self.challenger_clock
        return None

    def side_of(self, account: str) -> Side:
        """Which side `account` plays (`Side.None_` if neither)."""
        a = account.lower()
        if a == self.defender.lower():
            return Side.Defender
        if a == self.challenger.lower():
            return Side.Challenger
        return Side.None_


def next_move(game: GameView, me: str, now: int, *, arity: int) -> Move | None:
    """What `me` should do in `game` at chain time `now` (pure; no chain, no replay).

    A party claims the timeout when the *opponent's* clock ran out; on its own turn it moves
    (dissect at the interior points, respond with its hashes at points 1..parts, or post the
    endpoints first). It never moves out of turn, after resolution or during adjudication.

    Args:
        game: the game.
        me: this node's address.
        now: latest block timestamp.
        arity: the game's ``DISSECTION_ARITY``.

    Returns:
        The move, or None when there is nothing to do.
    """
    side = game.side_of(me)
    if side is Side.None_ or game.resolved or game.turn is Side.None_:
        return None
    if game.turn is not side:
        runs_out = game.runs_out_at
        if runs_out is not None and now > runs_out:
            return Move(MoveKind.CLAIM_TIMEOUT)
        return None
    if side is Side.Defender:
        if game.status is GameStatus.AwaitingEndpoints:
            return Move(MoveKind.POST_ENDPOINTS)
        if game.status is GameStatus.AwaitingBisection and game.hi - game.lo > 1:
            return Move(MoveKind.BISECT, tuple(game.points(arity)[1:-1]))
        return None
    if game.status is GameStatus.AwaitingResponse and game.hi - game.lo > 1:
        return Move(MoveKind.RESPOND, tuple(game.points(arity)[1:]))
    return None


# ------------------------------------------------------------------------- per-step replay
class StepTrajectory:
    """Per-step state hashes and states of one segment, by replay from its start checkpoint.

    Args:
        engine: the job's `TrainingEngine`.
        start_blob: canonical checkpoint bytes of step a (its hash checked by the caller
            against the committed leaf).
        end_step: b (inclusive).
        step_fn: one-step function; defaults to the honest `engine.train_step`. A solver
            passes its own (`solver.trainer.step_function`) so it serves what it committed.
        store: where intermediate states are kept (content-addressed); without one they are
            recomputed on every `state_at`.
        cache_path: JSON file persisting the per-step hashes (resume after restart).

    Raises:
        CheckpointFormatError: the start checkpoint is malformed or past `end_step`.
    """

    def __init__(
        self,
        engine: TrainingEngine,
        start_blob: bytes,
        end_step: int,
        *,
        step_fn: StepFn | None = None,
        store: CheckpointStore | None = None,
        cache_path: str | Path | None = None,
    ) -> None:
        self.engine = engine
        self.start_step = int(read_header(start_blob)["step"])
        if not self.start_step <= end_step <= engine.spec.total_steps:
            raise CheckpointFormatError(
                f"segment {self.start_step}..{end_step} is out of range "
                f"(total steps {engine.spec.total_steps})"
            )
        self.end_step = end_step
        self.start_hash = state_hash(start_blob)
        self._start_blob = start_blob
        self._step_fn: StepFn = step_fn if step_fn is not None else self._honest_step
        self.store = store
        self.cache_path = Path(cache_path) if cache_path is not None else None
        self._hashes: dict[int, bytes] = {self.start_step: self.start_hash}
        self._lock = threading.RLock()
        self._load_cache()

    def _honest_step(self, state: TrainState) -> None:
        self.engine.train_step(state)

    # ------------------------------------------------------------------------- hashes
    def _check_step(self, step: int) -> None:
        if not self.start_step <= step <= self.end_step:
            raise ValueError(
                f"step {step} is outside the segment {self.start_step}..{self.end_step}"
            )

    @property
    def complete(self) -> bool:
        """Every step's hash is known."""
        return len(self._hashes) == self.end_step - self.start_step + 1

    def hash_at(self, step: int) -> bytes:
        """The state hash at `step` (the whole segment is replayed once, on first use).

        Raises:
            ValueError: `step` outside the segment.
        """
        self._check_step(step)
        with self._lock:
            if step not in self._hashes:
                self._replay_all()
            return self._hashes[step]

    def hashes(self) -> dict[int, bytes]:
        """Every step's hash, `{step: hash}` (replays once if needed)."""
        with self._lock:
            if not self.complete:
                self._replay_all()
            return dict(self._hashes)

    def _replay_all(self) -> None:
        state = self.engine.load_state(self._start_blob)
        logger.info("replaying steps %d..%d for per-step hashes", self.start_step, self.end_step)
        while state.step < self.end_step:
            self._step_fn(state)
            self._hashes[state.step] = self.engine.state_hash(state)
        self._save_cache()

    # ------------------------------------------------------------------------- states
    def state_at(self, step: int) -> bytes:
        """Canonical checkpoint bytes of the state at `step`.

        Served from the store when this step's state is there (its hash known), else replayed
        from the start checkpoint, put in the store and returned.

        Raises:
            ValueError: `step` outside the segment.
        """
        self._check_step(step)
        with self._lock:
            if step == self.start_step:
                return self._start_blob
            known = self._hashes.get(step)
            if known is not None and self.store is not None and self.store.has(known):
                return self.store.get(known)
            state = self.engine.load_state(self._start_blob)
            while state.step < step:
                self._step_fn(state)
                self._hashes.setdefault(state.step, self.engine.state_hash(state))
            blob = self.engine.state_bytes(state)
            digest = state_hash(blob)
            if known is not None and digest != known:
                raise CheckpointFormatError(
                    f"replay of step {step} gives {to_hex(digest)}, earlier {to_hex(known)}: "
                    "the execution is not deterministic"
                )
            self._hashes[step] = digest
            if self.store is not None:
                self.store.put(blob)
            if self.complete:
                self._save_cache()
            return blob

    # -------------------------------------------------------------------------- cache
    def _load_cache(self) -> None:
        if self.cache_path is None or not self.cache_path.exists():
            return
        try:
            data: dict[str, Any] = json.loads(self.cache_path.read_text(encoding="utf-8"))
            if as_bytes32(data["start_hash"]) != self.start_hash or (
                int(data["start_step"]),
                int(data["end_step"]),
            ) != (self.start_step, self.end_step):
                logger.warning("ignoring step-hash cache %s (other segment)", self.cache_path)
                return
            hashes = [as_bytes32(h) for h in data["hashes"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("ignoring unreadable step-hash cache %s: %s", self.cache_path, exc)
            return
        if len(hashes) != self.end_step - self.start_step + 1:
            return
        self._hashes = {self.start_step + i: h for i, h in enumerate(hashes)}

    def _save_cache(self) -> None:
        if self.cache_path is None or not self.complete:
            return
        payload = {
            "start_step": self.start_step,
            "end_step": self.end_step,
            "start_hash": to_hex(self.start_hash),
            "hashes": [to_hex(self._hashes[s]) for s in range(self.start_step, self.end_step + 1)],
        }
        try:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self.cache_path, json.dumps(payload).encode("utf-8"))
        except OSError as exc:
            raise NodeStateError(f"cannot write step-hash cache {self.cache_path}: {exc}") from exc
