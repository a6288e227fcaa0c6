"""`GamesMixin`: the n-way dissection game (docs/DISPUTES.md) for whichever side a node plays,
and the step committee's check.

The adjudication strategy (`adjudication`, picked once from ``client.adjudicator.name``;
`noderuntime.adjudication`); `game_of`; `play_game` (one move of this node's side when it is
its turn, or a timeout claim when the opponent's clock ran out; the decision is
`veritrain.bisection.next_move`); `play_challenger` (a challenger's replay-driven responses, or
an escalation when the defender withholds its data: `UNUSABLE_DATA`, `WITHHELD`); and
`judge_step` (the step committee's replay of one step or an escalated interval).

Run: not a script; `from noderuntime import NodeBase`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from noderuntime.adjudication import Adjudication, adjudication_for
from noderuntime.duties import DutiesMixin
from noderuntime.records import GameMove, GameRecord, RecordStore
from noderuntime.replay import ReplayMixin
from noderuntime.stakes import StakesMixin
from veritrain.bisection import Chooser, GameView
from veritrain.errors import (
    CheckpointFormatError,
    CheckpointHashMismatch,
    CheckpointUnavailable,
    MerkleProofInvalid,
    RemoteResponseError,
)

if TYPE_CHECKING:
    from chain.types import JobView

__all__ = ["UNUSABLE_DATA", "WITHHELD", "GamesMixin"]

UNUSABLE_DATA: tuple[type[Exception], ...] = (
    CheckpointUnavailable,
    CheckpointHashMismatch,
    CheckpointFormatError,
    MerkleProofInvalid,
    RemoteResponseError,
)
"""What a challenger gets when the defender's data cannot be used: unreachable, bytes that do
not hash to the commitment, a proof that does not verify, a malformed answer or a state that
does not parse. Each counts as withheld (`WITHHELD`): the challenger escalates (P-6, N-24)."""

WITHHELD = b"\x00" * 32
"""What a challenger's `hash_at` gives when the defender withholds the data to compute it: the
challenger then escalates the game's interval to the step committee instead of responding (P-6)."""


def _hashes_until_withheld(hash_at: Callable[[int], bytes], steps: list[int]) -> list[bytes]:
    """``[hash_at(s) for s in steps]``, cut after the first `WITHHELD` (one failed fetch is
    enough to escalate; the rest would only fail again)."""
    out: list[bytes] = []
    for step in steps:
        out.append(hash_at(step))
        if out[-1] == WITHHELD:
            break
    return out


class GamesMixin(ReplayMixin, DutiesMixin, StakesMixin):
    """The dissection game's moves and the step committee's check (stands on replays, the
    dispute duties and the move bonds' funds)."""

    @property
    def adjudication(self) -> Adjudication:
        """This node's adjudication strategy, picked once from the deployment's adjudicator
        (``client.adjudicator.name``; `noderuntime.adjudication`)."""
        if self._adjudication is None:
            self._adjudication = adjudication_for(self.client.adjudicator.name)
        return self._adjudication

    def game_of(self, dispute_id: int) -> GameView:
        """The game `dispute_id` (the job's `disputeId`) as a `veritrain.bisection.GameView`."""
        return self.client.game.get_game(dispute_id)

    def play_game(
        self,
        dispute_id: int,
        hash_at: Callable[[int], bytes],
        *,
        endpoints: Callable[[], tuple[bytes, bytes, list[bytes], list[bytes]]] | None = None,
        choose: Chooser | None = None,
        on_move: Callable[[GameMove], None] | None = None,
    ) -> Any:
        """Make this node's move in a game, if any is due (safe to call every round).

        Reads the game, decides with `veritrain.bisection.next_move` and sends at most one
        transaction: `postEndpoints` / `bisect` (defender: its hashes at the interval's
        interior dissection points), `respond` (challenger: its own hashes at points
        ``1..parts`` against the defender's posted ones and claimed end, read back from the
        ``Bisected`` log; the part is ``choose_index``'s, the first one whose end it
        disputes), `escalate` (challenger without the data to compute its hashes), or
        `claimTimeout` once the opponent's clock ran out. Moves carry the interval they were
        computed for, so a stale move reverts (`WrongInterval`) instead of landing on another
        interval.

        Args:
            dispute_id: the game.
            hash_at: this node's state hash at a step of the disputed segment (`WITHHELD`
                when the challenger cannot compute it).
            endpoints: the defender's `(startHash, endHash, startProof, endProof)`.
            choose: the challenger's rule ``(mine, theirs) -> index`` over the hashes at
                points ``1..parts``; honest `choose_index` by default (a test adversary may
                replace it).
            on_move: called with the record of each move that succeeded (persist it).

        Returns:
            The `GameView` read before the move.

        Raises:
            chain.errors.EventLogMissing: the defender's posted hashes cannot be read back
                (the node's loop retries next round).
        """
        from veritrain.bisection import MoveKind, choose_index, next_move

        game = self.game_of(dispute_id)
        move = next_move(
            game, self.client.address, self.chain_time(), arity=self.client.game.arity()
        )
        if move is None:
            return game
        label = f"game {dispute_id} [{game.lo}, {game.hi}]"
        record = GameMove(kind=str(move.kind), lo=game.lo, hi=game.hi)
        if move.kind is MoveKind.CLAIM_TIMEOUT:
            receipt = self.send(
                f"claimTimeout {label} (opponent's clock ran out)",
                self.client.game.claim_timeout,
                dispute_id,
            )
        else:
            self.ensure_funds(self.client.game.move_bond_due(dispute_id))
            steps = list(move.steps)
            if move.kind is MoveKind.POST_ENDPOINTS:
                if endpoints is None:
                    return game
                start_hash, end_hash, start_proof, end_proof = endpoints()
                record.start, record.end = start_hash, end_hash
                receipt = self.send(
                    f"postEndpoints {label}",
                    self.client.game.post_endpoints,
                    dispute_id,
                    start_hash,
                    end_hash,
                    start_proof,
                    end_proof,
                )
            elif move.kind is MoveKind.BISECT:
                hashes = [hash_at(step) for step in steps]
                record.steps, record.hashes = steps, hashes
                receipt = self.send(
                    f"bisect {label} at {len(steps)} points {steps}",
                    self.client.game.bisect,
                    dispute_id,
                    game.lo,
                    game.hi,
                    hashes,
                )
            elif WITHHELD in (mine := _hashes_until_withheld(hash_at, steps)):
                # No data to compute the response from: the judges replay [lo, hi] themselves.
                record.kind, record.steps = str(MoveKind.ESCALATE), steps
                receipt = self.send(
                    f"escalate {label}: the defender's states are unreachable; the step "
                    f"committee replays all {game.hi - game.lo} steps",
                    self.client.game.escalate,
                    dispute_id,
                    game.lo,
                    game.hi,
                )
            else:
                posted = self.client.game.pending_hashes(game)
                theirs = [*posted, bytes(game.claimed_hash)]
                index = (choose or choose_index)(mine, theirs)
                bounds = [game.lo, *steps]
                part = (
                    f"[{bounds[index]}, {bounds[index + 1]}]"
                    if 0 <= index < len(steps)
                    else "(no such part)"
                )
                record.steps, record.hashes, record.index = steps, mine, index
                first_bad = next(
                    (s for s, a, b in zip(steps, mine, theirs, strict=True) if a != b), None
                )
                why = "agrees everywhere" if first_bad is None else f"disputes {first_bad} first"
                receipt = self.send(
                    f"respond {label}: part {index} {part} ({why})",
                    self.client.game.respond,
                    dispute_id,
                    game.lo,
                    game.hi,
                    index,
                    posted,
                )
        if receipt is not None and on_move is not None:
            on_move(record)
        return game

    def play_challenger(
        self,
        job: Any,
        state: RecordStore[Any],
        *,
        choose: Chooser | None = None,
    ) -> Any:
        """Play the challenger's side of the job's game when this node is the challenger.

        Responses compare the defender's posted hashes with this node's own replay
        (`segment_trajectory`, built only when a response is due, from the local store or the
        solver's server); when the defender's data stays unreachable for half of this turn's
        clock, the challenger escalates instead of timing out (`hash_at` gives `WITHHELD`): the
        step committee replays the whole interval, fetching the defender's states itself, so a
        defender that withholds from the challenger alone gains nothing (P-6). Each
        move is persisted
        under `games[disputeId]` of `state` (a `RecordStore` of `NodeRecords`), and the step
        dispute is helped along (`drawCommittee`, `resolve`) once the game is in adjudication.

        Args:
            job: the job view (Disputed).
            state: the node's record store (its model has `NodeRecords.games`).
            choose: override of the honest response rule ``(mine, theirs) -> index``
                (test adversaries only).

        Returns:
            The `GameView`, or None when this node is not the challenger.
        """
        dispute_id = int(job.dispute_id)
        game = self.game_of(dispute_id)
        if game.challenger.lower() != self.client.address.lower():
            return None

        def hash_at(step: int) -> bytes:
            try:
                traj = self.segment_trajectory(job, game.segment)
                if traj.complete:
                    return bytes(traj.hash_at(step))
                started = time.monotonic()
                digest = bytes(traj.hash_at(step))  # replays the segment, once
                self.metrics.trajectory(time.monotonic() - started)
                return digest
            except UNUSABLE_DATA as exc:
                # Unreachable, or bytes that do not hash to the commitment, a proof that does not
                # verify, a malformed answer (N-24): all are withheld data. Retry while at most
                # half of this turn's clock is spent (the defender may repair a flipped bit);
                # then escalate rather than time out: the step committee replays the whole
                # interval from states it fetches from the defender, and votes against a
                # defender that withholds them.
                if self.chain_time() < int(game.turn_started_at) + int(game.challenger_clock) // 2:
                    raise
                self.log.warning(
                    "game %d: the defender's data is unusable (%s): escalating [%d, %d]",
                    dispute_id,
                    exc,
                    game.lo,
                    game.hi,
                )
                return WITHHELD

        game = self.play_game(
            dispute_id, hash_at, choose=choose, on_move=self.game_recorder(state, game)
        )
        self.help_step_dispute(game)
        return game

    @staticmethod
    def game_recorder(state: RecordStore[Any], game: GameView) -> Callable[[GameMove], None]:
        """An `on_move` that appends each move to ``games[disputeId]`` of a record store whose
        model is a `NodeRecords`."""

        def record(move: GameMove) -> None:
            with state.transaction() as records:
                rec = records.games.setdefault(
                    int(game.dispute_id), GameRecord(job_id=game.job_id, segment=game.segment)
                )
                rec.moves.append(move)

        return record

    def help_step_dispute(self, game: GameView) -> None:
        """Draw and resolve the game's step dispute when due (anyone may)."""
        if game.in_adjudication and int(game.step_dispute_id) > 0:
            self.draw_committee_if_ready(int(game.step_dispute_id))
            self.resolve_if_due(int(game.step_dispute_id))

    def judge_step(
        self, job: JobView, step: int, start_hash: bytes, claimed_end: bytes, steps: int = 1
    ) -> bool:
        """The step committee's check: is `claimed_end` the state after `steps` steps (one, or
        the interval a challenger escalated) from the state at `step` whose hash is `start_hash`?

        The start state comes from the solver's `/states/{step}` (checked by hash); if that
        fails, from this node's own replay of the segment from its committed start checkpoint
        (which must reach `start_hash`; if it does not, the defender withheld a state nobody
        else can rebuild and the claim is judged wrong).

        Returns:
            True iff `steps` replayed steps from the start state hash to `claimed_end`.

        Raises:
            CheckpointUnavailable: neither the state nor the segment start can be fetched.
            CheckpointHashMismatch, MerkleProofInvalid, RemoteResponseError: the segment start
                the defender serves is unusable (see `UNUSABLE_DATA`; judges treat it as
                withheld).
        """
        from veritrain.replay import replay_segment
        from veritrain.state import state_hash
        from veritrain.wire import CheckpointClient

        try:
            spec = self.replay_spec(job)
        except CheckpointUnavailable:
            self.metrics.unavailable(purpose="step")
            raise
        engine = self.engine_for(spec)
        url = self.checkpoint_url_of(job)
        started = time.monotonic()
        try:
            blob = CheckpointClient(
                url, self.http_client, max_bytes=engine.max_state_bytes()
            ).state(step, start_hash)
        except (CheckpointUnavailable, CheckpointHashMismatch) as exc:
            self.log.info("step %d: solver state unusable (%s); replaying the segment", step, exc)
            traj = self.segment_trajectory(job, step // spec.checkpoint_interval)
            if traj.hash_at(step) != bytes(start_hash):
                self.log.warning(
                    "step %d: agreed state withheld and not on the honest trajectory", step
                )
                self.metrics.replay(
                    time.monotonic() - started, ok=False, purpose="step", unavailable=True
                )
                return False
            blob = traj.state_at(step)
        end = state_hash(replay_segment(engine, blob, step + steps))
        ok = end == bytes(claimed_end)
        self.metrics.replay(time.monotonic() - started, ok=ok, purpose="step")
        return ok
