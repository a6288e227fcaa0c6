"""The bisection game from a node's side (docs/DISPUTES.md): per-step replay and the moves.

Shared by every role that plays a game:

- `StepTrajectory`: the state hashes of every step of one segment, computed by replaying from
  the segment's start checkpoint (one pass, then cached in memory and optionally in a JSON
  file so a restarted node does not replay again), and the canonical bytes of any
  intermediate state (replayed on demand, kept in the content-addressed store). The solver
  builds it with its own step function (`solver.trainer.step_function`, adversary modes
  included, so it serves the trajectory it committed to); a challenger uses the honest
  `TrainingEngine.train_step`.
- `GameView` and `next_move`: a normalised view of a game and the pure decision of what one
  party should do now (post the endpoints, bisect, respond, claim a timeout), testable
  without a chain.
- `respond_agrees`, `bisect_interval`, `play_out`: the interval rule itself. `play_out`
  simulates a whole game between two hash functions and returns the single step handed to
  the step adjudicator: for an honest challenger that is the first step where the two
  trajectories diverge.

torch is imported lazily (only when a segment is replayed).

Run: not a script; `StepTrajectory(engine, start_blob, end_step).hash_at(17)`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veritrain.enums import GameStatus, Side
from veritrain.errors import CheckpointFormatError, NodeStateError
from veritrain.hexutil import as_bytes32, to_hex
from veritrain.state import read_header, state_hash
from veritrain.store import CheckpointStore, atomic_write_bytes

if TYPE_CHECKING:
    from veritrain.training import TrainingEngine, TrainState

logger = logging.getLogger(__name__)

__all__ = [
    "GameView",
    "Move",
    "MoveKind",
    "StepFn",
    "StepTrajectory",
    "bisect_interval",
    "mid_of",
    "next_move",
    "play_out",
    "respond_agrees",
]

StepFn = Callable[["TrainState"], None]
"""Advances a state by one step in place (honest: `engine.train_step`)."""

ZERO_HASH = b"\x00" * 32


# ------------------------------------------------------------------------- interval logic
def mid_of(lo: int, hi: int) -> int:
    """The step the defender must post a hash for: `lo + (hi - lo) // 2` (DISPUTES.md, Moves;
    the contract's formula, equal to `(lo + hi) // 2` for steps >= 0)."""
    return lo + (hi - lo) // 2


def respond_agrees(my_hash_at_mid: bytes, mid_hash: bytes) -> bool:
    """An honest challenger agrees iff its own state hash at mid equals the defender's."""
    return bytes(my_hash_at_mid) == bytes(mid_hash)


def bisect_interval(
    lo: int, hi: int, agreed: bytes, claimed: bytes, mid_hash: bytes, agree: bool
) -> tuple[int, int, bytes, bytes]:
    """Apply one bisect + respond round.

    Returns:
        The new `(lo, hi, agreed, claimed)`: agree -> `lo = mid`, disagree -> `hi = mid`.
    """
    mid = mid_of(lo, hi)
    if agree:
        return mid, hi, mid_hash, claimed
    return lo, mid, agreed, mid_hash


def play_out(
    start: int,
    end: int,
    defender_hash: Callable[[int], bytes],
    challenger_hash: Callable[[int], bytes],
) -> tuple[int, bytes, bytes]:
    """Simulate a whole game between two trajectories (no chain, no clocks).

    Args:
        start: a = s*k (both sides accept the committed hash there).
        end: b = (s+1)*k.
        defender_hash: the defender's state hash at a step (what it posts).
        challenger_hash: the challenger's state hash at a step (how it responds).

    Returns:
        `(t, agreed, claimed)`: the single step t (t -> t+1) handed to the step adjudicator,
        the start hash both accept and the defender's end hash.
    """
    lo, hi = start, end
    agreed, claimed = defender_hash(start), defender_hash(end)
    while hi - lo > 1:
        mid_hash = defender_hash(mid_of(lo, hi))
        agree = respond_agrees(challenger_hash(mid_of(lo, hi)), mid_hash)
        lo, hi, agreed, claimed = bisect_interval(lo, hi, agreed, claimed, mid_hash, agree)
    return lo, agreed, claimed


# ------------------------------------------------------------------------------- game view
class MoveKind(StrEnum):
    """What a party can do (DISPUTES.md, Moves / Clocks)."""

    POST_ENDPOINTS = "post_endpoints"
    BISECT = "bisect"
    RESPOND = "respond"
    ESCALATE = "escalate"
    """The challenger's alternative to RESPOND when it cannot compute its hash at mid (the
    defender withholds its states): the step committee replays the whole interval."""
    CLAIM_TIMEOUT = "claim_timeout"


@dataclass(frozen=True)
class Move:
    """A move to make now. `step` is the mid for bisect/respond, else None."""

    kind: MoveKind
    step: int | None = None


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
        pending_hash: the defender's hash at `mid` (meaningful while AwaitingResponse).
        turn: the side whose clock runs (`Side.None_` during adjudication or once resolved).
        status: lifecycle status.
        defender_clock, challenger_clock: seconds left at `turn_started_at`.
        turn_started_at: timestamp at which the side to move started thinking.
        moves: moves made so far (each posted one move bond).
        step_dispute_id: the step adjudicator's dispute once `hi = lo + 1` (0 before).
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

    @property
    def mid(self) -> int:
        """The step the next bisection posts a hash for (`mid_of(lo, hi)`)."""
        return mid_of(self.lo, self.hi)

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


def next_move(game: GameView, me: str, now: int) -> Move | None:
    """What `me` should do in `game` at chain time `now` (pure; no chain, no replay).

    A party claims the timeout when the *opponent's* clock ran out; on its own turn it moves
    (bisect at the mid, respond at the mid, or post the endpoints first). It never moves out
    of turn, after resolution or during adjudication.

    Args:
        game: the game.
        me: this node's address.
        now: latest block timestamp.

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
            return Move(MoveKind.BISECT, game.mid)
        return None
    if game.status is GameStatus.AwaitingResponse and game.hi - game.lo > 1:
        return Move(MoveKind.RESPOND, game.mid)
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
