"""The demo's live view: what the chain says right now, redrawn every poll.

Three parts, kept apart so the view is testable without a chain:

- the model: `Snapshot` (jobs, disputes, slashes, settled forced errors, elapsed time, dead
  node processes), frozen dataclasses of plain values;
- the view: `render(snapshot)` (a Rich renderable) and `changes(before, after)` (one plain log
  line per change, for when stdout is not a terminal);
- the polling: `ChainPoller` reads the client facades (``client.jobs``, ``client.round``,
  ``client.adjudicator``, ``client.game``, ``client.committee``) and tails the chain's events
  with `EventTail`, whose cursor delivers each log once.

`LiveView` shows snapshots: a Rich ``Live`` redrawn in place on a terminal, plain lines
otherwise (CI, ``--json`` piping), so the demo's logs stay readable.

Run: not a script; `cli.demo.run_demo` drives it (``veritrain demo``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

logger = logging.getLogger(__name__)

__all__ = [
    "ChainPoller",
    "DisputeRow",
    "EventTail",
    "ForcedErrorRow",
    "JobRow",
    "LiveView",
    "RunRoundRow",
    "SlashRow",
    "Snapshot",
    "changes",
    "render",
    "round_phase",
]

E18 = 10**18
ROLE_NAMES = {0: "solver", 1: "verifier", 2: "whistleblower"}


# ---------------------------------------------------------------------------------- model


@dataclass(frozen=True)
class JobRow:
    """One job as the chain has it.

    Attributes:
        job_id: the job.
        solver: the solver's process name (``"-"`` before a solver claimed it).
        status: `JobStatus` name.
        round: the verification round's phase (`round_phase`), ``""`` when none yet.
        segments: the sampled segment indices (empty before verifiers are assigned).
        dispute_id: the job's dispute (0: none).
        model: the job's model name (``"shakespeare-char"``; a short ``0x`` id when the
            poller does not know the name, ``""`` when the job has none).
    """

    job_id: int
    solver: str
    status: str
    round: str = ""
    segments: tuple[int, ...] = ()
    dispute_id: int = 0
    model: str = ""


@dataclass(frozen=True)
class DisputeRow:
    """One dispute opened by a job.

    Attributes:
        dispute_id: the JobManager's dispute id (``job.dispute_id``).
        job_id: the disputed job.
        adjudicator: ``"bisection"`` or ``"committee"``.
        moves: moves made so far (game moves, or committee commits + reveals).
        state: where it stands: the game's status and interval, or the committee's phase.
        clocks: (defender, challenger) seconds left while a game's clock runs, else None.
        resolved: the adjudicator has decided.
        winner: who won (process name and side), ``""`` until resolved.
    """

    dispute_id: int
    job_id: int
    adjudicator: str
    moves: int
    state: str
    clocks: tuple[int, int] | None = None
    resolved: bool = False
    winner: str = ""


@dataclass(frozen=True)
class SlashRow:
    """One ``StakeSlashed`` event.

    Attributes:
        block: the block it was emitted in.
        log_index: its position in the block.
        name: the slashed account's process name.
        role: ``"solver"``, ``"verifier"`` or ``"whistleblower"``.
        amount_wei: the amount actually taken (wei).
    """

    block: int
    log_index: int
    name: str
    role: str
    amount_wei: int


@dataclass(frozen=True)
class ForcedErrorRow:
    """One ``ForcedErrorSettled`` event (docs/FORCED_ERRORS.md).

    Attributes:
        job_id: the job whose forced error was settled.
        sample: the forced sample's index.
        slashed_wei: slashed from those who approved it (into the jackpot pool).
        paid_wei: paid out of the pool to those who caught it.
    """

    job_id: int
    sample: int
    slashed_wei: int
    paid_wei: int


@dataclass(frozen=True)
class RunRoundRow:
    """One round of a training run as the chain has it (docs/RUNS.md).

    Attributes:
        run_id: the run.
        round: t.
        phase: `RunRoundPhase` name (``"Open"``, ``"Proposed"``, ``"Disputed"``, ``"Final"``).
        registered: seats with a registered contribution job.
        accepted: seats the standing (or final) claim counts.
        metric: the global state's metric after the round when the caller measured it
            (validation bits per character for a GPT), else None.
    """

    run_id: int
    round: int
    phase: str
    registered: tuple[int, ...] = ()
    accepted: tuple[int, ...] = ()
    metric: float | None = None


@dataclass(frozen=True)
class Snapshot:
    """Everything the view shows at one poll.

    Attributes:
        elapsed_s: seconds since the demo started.
        jobs: one row per posted job, by id.
        disputes: one row per dispute opened, by id.
        slashes: every slash so far, in chain order.
        forced_errors: every forced error settled so far, in chain order.
        dead: node processes that exited early.
        rounds: every round of every training run reached so far.
    """

    elapsed_s: float
    jobs: tuple[JobRow, ...] = ()
    disputes: tuple[DisputeRow, ...] = ()
    slashes: tuple[SlashRow, ...] = ()
    forced_errors: tuple[ForcedErrorRow, ...] = ()
    dead: tuple[str, ...] = ()
    rounds: tuple[RunRoundRow, ...] = ()


def round_phase(
    *,
    claims_posted: bool,
    sealed: int,
    revealed: int,
    verifiers: int,
    secret_revealed: bool,
    outcome: str = "Pending",
    forced_sample: int = 0,
) -> str:
    """The furthest phase a verification round reached, as shown in the job's row.

    Args:
        claims_posted: the solver posted its claims on the sampled segments.
        sealed: verifiers that sealed their verdicts.
        revealed: verifiers that revealed them.
        verifiers: verifiers assigned.
        secret_revealed: the solver revealed its secret (the forced-error draw is known).
        outcome: `RoundOutcome` name (``"Pending"`` until decided).
        forced_sample: the forced sample's index (meaningful for ``"Forced"``).

    Returns:
        E.g. ``"verdicts sealed 3/5"`` or ``"outcome Forced (sample 2)"``; ``""`` before claims.
    """
    if outcome == "Forced":
        return f"outcome Forced (sample {forced_sample})"
    if outcome != "Pending":
        return f"outcome {outcome}"
    if secret_revealed:
        return "secret revealed"
    if revealed:
        return f"verdicts revealed {revealed}/{verifiers}"
    if sealed:
        return f"verdicts sealed {sealed}/{verifiers}"
    if claims_posted:
        return "claims posted"
    return ""


# ----------------------------------------------------------------------------------- view


def _tokens(wei: int) -> str:
    """Wei as VTT, integer arithmetic (`veritrain.units.vtt_number`: at most 4 decimals, cut
    toward zero), never through a float."""
    from veritrain.units import vtt_number

    return vtt_number(wei)


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


def _job_phase(job: JobRow) -> str:
    return f"{job.status} - {job.round}" if job.round else job.status


def _dispute_state(d: DisputeRow) -> str:
    if d.resolved:
        return f"{d.state}; winner {d.winner}" if d.winner else d.state
    if d.clocks is not None:
        return f"{d.state}; clocks {d.clocks[0]}s / {d.clocks[1]}s"
    return d.state


def render(snapshot: Snapshot) -> RenderableType:
    """The live view of one snapshot (a pure function: no chain, no clock).

    Args:
        snapshot: what to show.

    Returns:
        A Rich renderable: a header line, then tables of jobs, disputes, slashes and settled
        forced errors (the last three only once there is something in them).
    """
    header = Text.assemble(
        ("veritrain demo", "bold"),
        f"  elapsed {_elapsed(snapshot.elapsed_s)}  ",
        f"{len(snapshot.jobs)} jobs, {len(snapshot.disputes)} disputes, "
        f"{len(snapshot.slashes)} slashes",
    )
    parts: list[RenderableType] = [header]
    if snapshot.dead:
        parts.append(Text(f"node process(es) exited: {', '.join(snapshot.dead)}", style="red"))
    jobs = Table("job", "model", "solver", "phase", "sampled segments", "dispute", title="Jobs")
    for j in snapshot.jobs:
        jobs.add_row(
            str(j.job_id),
            j.model or "-",
            j.solver,
            _job_phase(j),
            ", ".join(map(str, j.segments)) or "-",
            str(j.dispute_id or "-"),
        )
    parts.append(jobs)
    if snapshot.rounds:
        rounds = Table("run", "round", "phase", "registered", "counted", "metric", title="Rounds")
        for r in snapshot.rounds:
            rounds.add_row(
                str(r.run_id),
                str(r.round),
                r.phase,
                ", ".join(map(str, r.registered)) or "-",
                ", ".join(map(str, r.accepted)) or "-",
                "-" if r.metric is None else f"{r.metric:.4f}",
            )
        parts.append(rounds)
    if snapshot.disputes:
        disputes = Table("dispute", "job", "adjudicator", "moves", "state", title="Disputes")
        for d in snapshot.disputes:
            disputes.add_row(
                str(d.dispute_id), str(d.job_id), d.adjudicator, str(d.moves), _dispute_state(d)
            )
        parts.append(disputes)
    if snapshot.slashes:
        slashes = Table("block", "who", "role", "slashed (VTT)", title="Slashes")
        for s in snapshot.slashes:
            slashes.add_row(str(s.block), s.name, s.role, _tokens(s.amount_wei))
        parts.append(slashes)
    if snapshot.forced_errors:
        forced = Table("job", "sample", "slashed / paid (VTT)", title="Forced errors settled")
        for f in snapshot.forced_errors:
            forced.add_row(
                str(f.job_id), str(f.sample), f"{_tokens(f.slashed_wei)} / {_tokens(f.paid_wei)}"
            )
        parts.append(forced)
    return Group(*parts)


def changes(before: Snapshot | None, after: Snapshot) -> list[str]:
    """One plain line per change from ``before`` to ``after`` (no markup, no escape codes).

    Args:
        before: the previous snapshot (None: everything in ``after`` is new).
        after: the current snapshot.

    Returns:
        Lines prefixed with the elapsed time, e.g. ``"[1:05] job 2 (solver-perturb): Disputed"``.
    """
    stamp = f"[{_elapsed(after.elapsed_s)}]"
    lines: list[str] = []
    old_jobs = {j.job_id: j for j in before.jobs} if before else {}
    for j in after.jobs:
        old = old_jobs.get(j.job_id)
        if old is None or (old.status, old.round, old.solver) != (j.status, j.round, j.solver):
            lines.append(f"{stamp} job {j.job_id} ({j.solver}): {_job_phase(j)}")
        if j.segments and (old is None or old.segments != j.segments):
            lines.append(
                f"{stamp} job {j.job_id}: sampled segments {', '.join(map(str, j.segments))}"
            )
    old_disputes = {d.dispute_id: d for d in before.disputes} if before else {}
    for d in after.disputes:
        prev = old_disputes.get(d.dispute_id)
        if prev is None:
            lines.append(
                f"{stamp} dispute {d.dispute_id} opened on job {d.job_id} ({d.adjudicator}): "
                f"{d.state}, moves {d.moves}"
            )
        elif (prev.state, prev.moves, prev.resolved) != (d.state, d.moves, d.resolved):
            outcome = f"; winner {d.winner}" if d.resolved and d.winner else ""
            lines.append(f"{stamp} dispute {d.dispute_id}: {d.state}, moves {d.moves}{outcome}")
    seen = {(s.block, s.log_index) for s in before.slashes} if before else set()
    for s in after.slashes:
        if (s.block, s.log_index) not in seen:
            lines.append(
                f"{stamp} slashed {s.name} ({s.role}): {_tokens(s.amount_wei)} VTT"
                f" (block {s.block})"
            )
    forced_seen = {f.job_id for f in before.forced_errors} if before else set()
    for f in after.forced_errors:
        if f.job_id not in forced_seen:
            lines.append(
                f"{stamp} forced error settled on job {f.job_id} (sample {f.sample}): "
                f"{_tokens(f.slashed_wei)} VTT slashed, {_tokens(f.paid_wei)} VTT paid"
            )
    old_rounds = {(r.run_id, r.round): r for r in before.rounds} if before else {}
    for r in after.rounds:
        last = old_rounds.get((r.run_id, r.round))
        if last is None or (last.phase, last.accepted, last.metric) != (
            r.phase,
            r.accepted,
            r.metric,
        ):
            counted = ", ".join(map(str, r.accepted)) or "none"
            shown = "" if r.metric is None else f", metric {r.metric:.4f}"
            lines.append(
                f"{stamp} run {r.run_id} round {r.round}: {r.phase}, registered seats "
                f"{', '.join(map(str, r.registered)) or 'none'}, counted {counted}{shown}"
            )
    old_dead = set(before.dead) if before else set()
    for name in after.dead:
        if name not in old_dead:
            lines.append(f"{stamp} node process exited: {name}")
    return lines


class LiveView:
    """Show snapshots as they come: redrawn in place on a terminal, plain lines otherwise.

    Use as a context manager around the polling loop and call `update` every poll.

    Args:
        console: where to draw (default: stdout). A console that is not a terminal gets one
            plain line per change (`changes`) instead of a redrawn view.
        refresh_per_second: how often Rich may redraw the live view.
    """

    def __init__(self, console: Console | None = None, refresh_per_second: float = 4.0) -> None:
        self.console = console or Console()
        self.live_mode = self.console.is_terminal
        self._refresh = refresh_per_second
        self._live: Live | None = None
        self._last: Snapshot | None = None

    def __enter__(self) -> LiveView:
        if self.live_mode:
            self._live = Live(
                render(Snapshot(elapsed_s=0.0)),
                console=self.console,
                refresh_per_second=self._refresh,
                transient=False,
            )
            self._live.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.__exit__(exc_type, exc, tb)
            self._live = None

    @property
    def last(self) -> Snapshot | None:
        """The last snapshot shown."""
        return self._last

    def update(self, snapshot: Snapshot) -> None:
        """Show a new snapshot.

        Args:
            snapshot: the chain's state at this poll.
        """
        if self._live is not None:
            self._live.update(render(snapshot))
        else:
            for line in changes(self._last, snapshot):
                self.console.print(line, markup=False, highlight=False, soft_wrap=True)
        self._last = snapshot


# -------------------------------------------------------------------------------- polling

LogSource = Callable[[str, str, int, int], Sequence[Mapping[str, Any]]]
"""``(contract, event, from_block, to_block) -> logs`` (both bounds inclusive); each log has
``args``, ``blockNumber`` and ``logIndex`` (web3's decoded event logs)."""


class EventTail:
    """The new logs of one contract event at each poll; a cursor delivers each log once.

    The cursor is a position (block, log index): the last log delivered, or (head, -1) once
    every block before the head scanned was done. Each poll scans from the cursor's block to
    the head (both inclusive: the head block is scanned again, as it may still be filling on
    a node that serves the pending block) and keeps only the logs strictly after the cursor.

    Args:
        source: how to read logs (`LogSource`).
        contract: contract name (``"StakeManager"``).
        event: event name (``"StakeSlashed"``).
        from_block: the first block to scan (the deployment block).
    """

    def __init__(self, source: LogSource, contract: str, event: str, from_block: int) -> None:
        self._source = source
        self.contract = contract
        self.event = event
        self._cursor: tuple[int, int] = (from_block, -1)

    @property
    def cursor(self) -> tuple[int, int]:
        """(block, log index) after which the next log is delivered (-1: from the block's start)."""
        return self._cursor

    def poll(self, head: int) -> list[Mapping[str, Any]]:
        """The logs after the cursor up to ``head``, in chain order; advances the cursor.

        Args:
            head: the latest block to scan.

        Returns:
            The logs not delivered before.
        """
        if head < self._cursor[0]:
            return []
        logs = self._source(self.contract, self.event, self._cursor[0], head)
        fresh = sorted(
            (log for log in logs if _position(log) > self._cursor),
            key=_position,
        )
        # Blocks before the head are done: the next scan starts at the head block, past
        # whatever of it was delivered.
        self._cursor = max((head, -1), _position(fresh[-1]) if fresh else self._cursor)
        return fresh


def _position(log: Mapping[str, Any]) -> tuple[int, int]:
    return int(log["blockNumber"]), int(log["logIndex"])


def web3_logs(client: Any) -> LogSource:
    """A `LogSource` reading through the client's bound contract handles.

    Args:
        client: a `chain.client.ChainClient` bound to a deployment.

    Returns:
        The source.
    """

    def source(contract: str, event: str, from_block: int, to_block: int) -> list[Any]:
        handle = client.contract_by_name(contract)
        return list(
            getattr(handle.events, event)().get_logs(from_block=from_block, to_block=to_block)
        )

    return source


@dataclass
class _Cache:
    """What no longer changes once reached, so a poll need not read it again."""

    segments: dict[int, tuple[int, ...]] = field(default_factory=dict)
    rounds: dict[int, str] = field(default_factory=dict)
    disputes: dict[int, DisputeRow] = field(default_factory=dict)


class ChainPoller:
    """Read one `Snapshot` from the chain per call (views and events only; never transacts).

    Args:
        client: a `chain.client.ChainClient` bound to the deployment.
        names: process name per address (``"solver-honest"``).
        from_block: the deployment block (events before it are not the demo's).
        logs: how to read event logs (default: `web3_logs` of ``client``).
        models: model name per on-chain model id (32 bytes, `veritrain.spec.model_id_hash`).
    """

    def __init__(
        self,
        client: Any,
        names: Mapping[str, str],
        from_block: int,
        logs: LogSource | None = None,
        models: Mapping[bytes, str] | None = None,
    ) -> None:
        self._client = client
        self._names = dict(names)
        self._models = dict(models or {})
        source = logs or web3_logs(client)
        self._slash_tail = EventTail(source, "StakeManager", "StakeSlashed", from_block)
        self._forced_tail = EventTail(source, "JobManager", "ForcedErrorSettled", from_block)
        self._slashes: list[SlashRow] = []
        self._forced: list[ForcedErrorRow] = []
        self._cache = _Cache()
        self.metrics: dict[tuple[int, int], float] = {}
        """(run, round) -> the global state's metric after the round, set by the caller."""

    def name(self, address: str) -> str:
        """The process name of an address (a short address if it is not the demo's)."""
        if not address or int(address, 16) == 0:
            return "-"
        return self._names.get(address, address[:10])

    def model(self, model_id: bytes) -> str:
        """The name of a model id (``0x`` + its first 4 bytes if unknown, ``""`` if empty)."""
        if not model_id:
            return ""
        return self._models.get(bytes(model_id), "0x" + bytes(model_id)[:4].hex())

    def poll(self, elapsed_s: float, dead: Iterable[str] = ()) -> Snapshot:
        """Read the chain now.

        Args:
            elapsed_s: seconds since the demo started.
            dead: node processes that exited.

        Returns:
            The snapshot; its slashes and forced errors accumulate over polls, each event once.
        """
        jobs: list[JobRow] = []
        disputes: list[DisputeRow] = []
        for job_id in range(1, int(self._client.jobs.job_count()) + 1):
            job = self._client.jobs.get_job(job_id, with_uris=False)
            status = job.status.name
            jobs.append(
                JobRow(
                    job_id=job_id,
                    solver=self.name(str(job.solver)),
                    status=status,
                    round=self._round(job_id, status),
                    segments=self._segments(job_id, status),
                    dispute_id=int(job.dispute_id),
                    model=self.model(bytes(job.model_id)),
                )
            )
            if job.dispute_id:
                disputes.append(self._dispute(int(job.dispute_id), job_id))
        # Events after the views: a job seen settled has its slashes in a block <= head.
        head = int(self._client.block_number())
        for log in self._slash_tail.poll(head):
            args = log["args"]
            self._slashes.append(
                SlashRow(
                    block=int(log["blockNumber"]),
                    log_index=int(log["logIndex"]),
                    name=self.name(str(args["account"])),
                    role=ROLE_NAMES.get(int(args["role"]), str(args["role"])),
                    amount_wei=int(args["slashed"]),
                )
            )
        for log in self._forced_tail.poll(head):
            args = log["args"]
            self._forced.append(
                ForcedErrorRow(
                    job_id=int(args["jobId"]),
                    sample=int(args["sampleIndex"]),
                    slashed_wei=int(args["slashed"]),
                    paid_wei=int(args["paid"]),
                )
            )
        return Snapshot(
            elapsed_s=elapsed_s,
            rounds=self._rounds(),
            jobs=tuple(jobs),
            disputes=tuple(sorted(disputes, key=lambda d: d.dispute_id)),
            slashes=tuple(self._slashes),
            forced_errors=tuple(self._forced),
            dead=tuple(dead),
        )

    def _rounds(self) -> tuple[RunRoundRow, ...]:
        """Every round reached by every run (none on a deployment without runs)."""
        runs = getattr(self._client, "runs", None)
        if runs is None:
            return ()
        rows = []
        for run_id in range(1, int(runs.run_count()) + 1):
            view = runs.get_run(run_id)
            for t in range(min(view.round + 1, view.rounds)):
                r = runs.get_round(run_id, t)
                rows.append(
                    RunRoundRow(
                        run_id=run_id,
                        round=t,
                        phase=r.phase.name,
                        registered=tuple(r.seats(r.registered)),
                        accepted=tuple(r.seats(r.accepted)),
                        metric=self.metrics.get((run_id, t)),
                    )
                )
        return tuple(rows)

    def _segments(self, job_id: int, status: str) -> tuple[int, ...]:
        if job_id in self._cache.segments:
            return self._cache.segments[job_id]
        if status in ("None_", "Open", "Claimed", "Committed", "Cancelled"):
            return ()
        segments = tuple(int(s) for s in self._client.jobs.get_assignment(job_id).segments)
        if segments:
            self._cache.segments[job_id] = segments
        return segments

    def _round(self, job_id: int, status: str) -> str:
        """The round's phase (read until its outcome is known, then cached)."""
        if job_id in self._cache.rounds:
            return self._cache.rounds[job_id]
        if status in ("None_", "Open", "Claimed", "Cancelled"):
            return ""
        from chain.errors import ChainError

        try:
            # The round belongs to the job's active submission (PROTOCOL.md 3.8).
            sid = self._client.jobs.submission_of(job_id)
            if not any(sid):
                return ""
            rnd = self._client.round
            claims_posted = rnd.claims_of(sid).posted
            view = rnd.round_of(sid)
            outcome, sample = rnd.outcome(sid)
            verifiers = self._client.jobs.get_assignment(job_id).verifiers
            revealed = sum(1 for v in verifiers if rnd.verdict_commitment_of(sid, v)[1])
        except ChainError as exc:  # e.g. a deployment without a VerificationRound
            logger.debug("job %d: no round phase: %s", job_id, exc)
            return ""
        phase = round_phase(
            claims_posted=claims_posted,
            sealed=int(view.committed),
            revealed=revealed,
            verifiers=len(verifiers),
            secret_revealed=bool(view.revealed),
            outcome=outcome.name,
            forced_sample=sample,
        )
        if outcome.name != "Pending":
            self._cache.rounds[job_id] = phase
        return phase

    def _dispute(self, dispute_id: int, job_id: int) -> DisputeRow:
        """A dispute's row (read until resolved, then cached; a read that reverts shows as
        unreadable for this poll)."""
        cached = self._cache.disputes.get(dispute_id)
        if cached is not None:
            return cached
        from chain.errors import ContractRevert

        adjudicator = str(self._client.adjudicator.name)
        # One row reader per adjudicator, picked by name like the demo's dispute tracers.
        rows = {"bisection": self._game_row}
        try:
            row = rows.get(adjudicator, self._committee_row)(dispute_id, job_id, adjudicator)
        except ContractRevert as exc:
            # A display read, not a protocol step: shown for this poll, read again at the next
            # (Anvil's eth_call can run at a time before the latest block).
            logger.warning("dispute %d: unreadable this poll: %s", dispute_id, exc)
            return DisputeRow(dispute_id, job_id, adjudicator, 0, f"unreadable: {exc}")
        if row.resolved:
            self._cache.disputes[dispute_id] = row
        return row

    def _game_row(self, dispute_id: int, job_id: int, adjudicator: str) -> DisputeRow:
        game = self._client.game.get_game(dispute_id)
        status = game.status.name
        if game.resolved:
            won = game.defender if status == "DefenderWon" else game.challenger
            side = "defender" if status == "DefenderWon" else "challenger"
            return DisputeRow(
                dispute_id,
                job_id,
                "bisection",
                int(game.moves),
                f"{status} at step {game.lo}" if game.hi == game.lo + 1 else status,
                resolved=True,
                winner=f"{self.name(str(won))} ({side})",
            )
        state = f"{status} [{game.lo}, {game.hi}]"
        if game.step_dispute_id:
            phase = self._client.committee.dispute_phase(int(game.step_dispute_id))
            state += f"; step committee {phase.name}"
        clocks = None
        if game.turn.name in ("Defender", "Challenger"):
            clocks = tuple(int(c) for c in self._client.game.clocks(dispute_id))
        return DisputeRow(
            dispute_id,
            job_id,
            "bisection",
            int(game.moves),
            state,
            clocks=(clocks[0], clocks[1]) if clocks else None,
        )

    def _committee_row(self, dispute_id: int, job_id: int, adjudicator: str) -> DisputeRow:
        committee = self._client.committee
        dispute = committee.get_dispute(dispute_id)
        moves = int(dispute.committed) + int(dispute.revealed)
        if dispute.status.name == "Resolved":
            verdict = "segment valid" if dispute.segment_valid else "segment invalid"
            return DisputeRow(
                dispute_id,
                job_id,
                adjudicator,
                moves,
                f"Resolved: {verdict} ({dispute.valid_votes}-{dispute.invalid_votes})",
                resolved=True,
                winner="solver (defender)" if dispute.segment_valid else "challenger",
            )
        phase = committee.dispute_phase(dispute_id).name
        return DisputeRow(dispute_id, job_id, adjudicator, moves, f"committee {phase}")
