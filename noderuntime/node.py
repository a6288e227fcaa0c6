"""`NodeBase`: the shared plumbing of the three node roles (solver, verifier, whistleblower).

Log set-up and progress bars live in `noderuntime.logs`, the signal-driven run loop in
`noderuntime.lifecycle`.

One place for what every node does the same way:

- `NodeBase`: the polling loop (`run(stop_event)` calls `step()` until stopped, backing off
  on RPC or other errors so one failure never kills a node), `send` (one transaction, a decoded
  revert is logged and swallowed), the chain clock, and the duties anyone may perform:
  `finalize_if_due` (which waits for the verification round's outcome,
  docs/FORCED_ERRORS.md), `assign_verifiers_if_due`, `resolve_if_due`,
  `draw_committee_if_ready`, `claim_credit`, `ensure_stake`. Every node races the same duty,
  so each is sent through `duty`: the on-chain state is read again right before the send, a
  duty someone else already did is logged at INFO ("already done by ...") and nothing is sent,
  and a transaction that lost the race in the same block is logged the same way, never as a
  failure.
- The verification round as seen by verifiers and whistleblowers: `claim_check` (replay of
  one sampled segment from the solver's claimed start hash, compared with its claimed end
  hash; `veritrain.replay.check_claim`).
- The adjudication strategy (`adjudication`, picked once from ``client.adjudicator.name``;
  `noderuntime.adjudication`) and the n-way dissection game (docs/DISPUTES.md), for whichever
  side a node plays: `game_of`, `play_game` (one move of this node's side when it is its turn,
  or a timeout claim when the opponent's clock ran out; the decision is
  `veritrain.bisection.next_move`),
  `segment_trajectory` (the honest per-step replay of a committed segment, from its start
  checkpoint proven against the on-chain root, kept in the node's data dir), and
  `judge_step` (the step committee's one-step replay).

A node takes its chain client as a parameter typed by the `noderuntime.ports.ChainPort`
protocol (the real `ChainClient`, or the unit tests' in-memory fake); the revert exception type
it catches is passed in by the node (`chain.errors.ContractRevert`); the Solidity enums come from
`veritrain.enums`.

Run: not a script; `from noderuntime import NodeBase`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chain.events import MAX_BLOCK_RANGE
from noderuntime.adjudication import Adjudication, adjudication_for
from noderuntime.datadir import DataDirLock
from noderuntime.logs import progress_bar
from noderuntime.ports import ChainPort
from noderuntime.records import ChainBinding, GameMove, GameRecord, RecordStore, StartIndex
from veritrain.bisection import Chooser, GameView
from veritrain.enums import DisputePhase, DisputeStatus, JobStatus, Role, RoundOutcome
from veritrain.errors import (
    ChainMismatch,
    CheckpointFormatError,
    CheckpointHashMismatch,
    CheckpointUnavailable,
    MerkleProofInvalid,
    RemoteResponseError,
)
from veritrain.units import vtt

if TYPE_CHECKING:
    from chain.types import JobView
    from veritrain.bisection import StepTrajectory
    from veritrain.lineage import ModelCommitments
    from veritrain.replay import SegmentCheck
    from veritrain.selftest import SelftestReport
    from veritrain.spec import JobSpec
    from veritrain.training import TrainingEngine

logger = logging.getLogger(__name__)

__all__ = [
    "JOB_EVENTS",
    "SELFTEST_ENV",
    "TERMINAL_JOB_STATUSES",
    "UNUSABLE_DATA",
    "WITHHELD",
    "NodeBase",
]


TERMINAL_JOB_STATUSES = frozenset(
    {JobStatus.Finalized, JobStatus.Rejected, JobStatus.Cancelled, JobStatus.Expired}
)

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


SELFTEST_ENV = "VERITRAIN_NODE_SELFTEST"
"""Set to ``0`` to skip the machine selftest nodes run at start (`NodeBase.machine_selftest`;
tests that start many nodes): the node then takes repro2 jobs untested."""

JOB_EVENTS = ("CheckpointsCommitted", "VerifiersAssigned", "JobReclaimed")
"""The JobManager events `NodeBase.follow_jobs` indexes (Open jobs are never read: a node that
cannot act on them pays nothing for them)."""


STALLS = {
    "NoEligibleVerifiers": "the job waits in Committed until enough other accounts stake as "
    "verifiers (the job's solver and submitter cannot verify it; `veritrain stake verifier`)",
    "ERC20InsufficientBalance": "this account cannot pay the bond or stake: fund it with the "
    "payment token",
}
"""Reverts that mean a job is stuck until someone acts, with what to do: `send` logs them at
WARNING once per action, where other "not yet" reverts are INFO."""


# -------------------------------------------------------------------------------------- node
class NodeBase:
    """Base class of every node: a polling loop over `step()` plus shared chain duties.

    Subclasses implement `step()` (one round of work; it must be safe to call again after a
    crash at any point, i.e. it checks on-chain state before sending).

    Args:
        client: the injected chain port (`chain.client.ChainClient`, or a test fake).
        name: node name used in log lines (e.g. `"solver"`).
        revert_types: exception types meaning "the contract reverted" (logged, not fatal).
        poll_interval: seconds between two rounds when idle.
        max_backoff: upper bound (seconds) of the exponential back-off after errors.
        adjudication: the adjudication strategy; None picks it from ``client.adjudicator.name``.
        threads: CPU threads (>= 1) this node trains and replays repro jobs with (their
            results do not depend on it); None keeps torch's count at the first engine built.
            A native job always runs with the count its profile pins.
        device: where this node trains and replays repro jobs: `"cpu"` (default), `"cuda"` or
            `"auto"` (CUDA when torch sees a GPU, else CPU). Repro results do not depend on
            it; a native job always runs on the device its profile pins.

    Raises:
        ValueError: `threads` is below 1, or an unknown device.
        ProfileUnavailable: `device="cuda"` and torch sees no GPU.
    """

    def __init__(
        self,
        client: ChainPort,
        *,
        name: str,
        revert_types: tuple[type[BaseException], ...] = (),
        poll_interval: float = 1.0,
        max_backoff: float = 30.0,
        adjudication: Adjudication | None = None,
        threads: int | None = None,
        device: str = "cpu",
    ) -> None:
        from veritrain.training import resolve_device

        if threads is not None and threads < 1:
            raise ValueError(f"thread count must be >= 1, got {threads}")
        self.client = client
        self.threads = threads
        self.device = resolve_device(device)
        self.name = name
        self.revert_types = revert_types
        self.poll_interval = poll_interval
        self.max_backoff = max_backoff
        self.log = logging.getLogger(f"{name}")
        self._stop = threading.Event()
        self._warned: set[tuple[str, str]] = set()
        self._specs: dict[int, JobSpec] = {}
        self._models: dict[bytes, ModelCommitments | None] = {}
        self._engines: dict[str, TrainingEngine] = {}
        self._trajectories: dict[tuple[int, int], StepTrajectory] = {}
        self.http_client: Any = None  # an httpx.Client for checkpoint fetches (tests inject one)
        self.data_dir = Path(".")  # the node's directory; each role sets its own
        self._adjudication: Adjudication | None = adjudication
        self._constants: dict[str, Any] = {}  # deployment constants, read once
        self._stake_alarm: tuple[int, int, int] | None = None  # (role, staked, balance) logged
        self.selftest_enabled = os.environ.get(SELFTEST_ENV, "1") != "0"
        self._selftest: SelftestReport | None = None
        self._refusals: dict[int, str | None] = {}  # job id -> why it is not replayed here
        self.reset_state = False  # run(): discard state of another chain instead of refusing
        self.auto_stake = True  # ensure_stake: restore a missing stake from the balance
        self._chain_checked = 0.0  # monotonic time of the last chain identity check
        self._fatal: BaseException | None = None  # why the loop stopped on its own

    # ---------------------------------------------------------------------------- loop
    @property
    def stopping(self) -> bool:
        """True once the loop was asked to stop (long work should check it and return)."""
        return self._stop.is_set()

    def step(self) -> None:
        """Do one round of work. Subclasses override it."""
        raise NotImplementedError

    def run(self, stop_event: threading.Event | None = None) -> None:
        """Call `step()` until `stop_event` is set; errors are logged and retried with back-off.

        Args:
            stop_event: set it (from another thread or a signal handler) to stop the loop;
                a private event is used when None.
        """
        if stop_event is not None:
            self._stop = stop_event
        with DataDirLock(self.data_dir):
            self.bind_chain(reset=self.reset_state)
            self.on_start()
            try:
                self._loop()
            finally:
                self.on_stop()
        if self._fatal is not None:
            raise self._fatal

    def on_start(self) -> None:
        """Called by `run` once the data dir is locked and bound, before the first round
        (override: e.g. the solver starts its checkpoint server)."""

    def on_stop(self) -> None:
        """Called by `run` after the last round, even when it failed (override)."""

    def _loop(self) -> None:
        self.log.info("%s node running as %s", self.name, self.client.address)
        compute = self.compute()
        self.log.info(
            "compute: %d torch threads for repro jobs, CPU capability %s, device %s",
            compute["threads"],
            compute["cpu_capability"],
            compute["device"],
        )
        try:
            self.machine_selftest()
        except Exception as exc:  # noqa: BLE001 - retried at the first repro2 job
            self.log.warning("selftest could not run: %s: %s", type(exc).__name__, exc)
        failures = 0
        while not self._stop.is_set():
            try:
                if not self.check_chain():
                    break
                self.step()
                failures = 0
                delay = self.poll_interval
            except Exception as exc:  # noqa: BLE001 - a node must survive any single failure
                failures += 1
                delay = min(self.max_backoff, self.poll_interval * 2 ** min(failures, 6))
                if isinstance(exc, self.revert_types):
                    self.log.warning("round failed: %s (retry in %.1fs)", exc, delay)
                else:
                    self.log.warning(
                        "round failed: %s: %s (retry in %.1fs)",
                        type(exc).__name__,
                        exc,
                        delay,
                        exc_info=self.log.isEnabledFor(logging.DEBUG),
                    )
            self._stop.wait(delay)
        self.log.info("%s node stopped", self.name)

    # ----------------------------------------------------------------- chain binding
    chain_check_interval = 15.0
    """Seconds between two checks (two RPC calls) that the chain is still the one the node's
    state is bound to (`check_chain`)."""

    def state_stores(self) -> list[RecordStore[Any]]:
        """The record stores bound to the chain: each role's ``self.state`` (a `NodeRecords`)."""
        state = getattr(self, "state", None)
        return [state] if isinstance(state, RecordStore) else []

    def bind_chain(self, *, reset: bool = False) -> None:
        """Bind this node's persisted state to the chain it runs on, or refuse another chain's.

        The binding is the chain id, the deployment's JobManager address and the hash of the
        deployment block (`ChainPort.chain_identity`): a devnet restarted from genesis has the
        same chain id and addresses but another block hash. A data dir without a binding (new)
        is bound now. On a mismatch the node refuses to start, unless `reset`: then the state
        files and the job-keyed replay caches move to ``<data_dir>/stale/<block hash>/`` and
        the node starts afresh (its content-addressed checkpoint store is kept).

        Args:
            reset: discard a mismatched state instead of refusing.

        Raises:
            ChainMismatch: the state was made on another chain and `reset` is False.
            RpcUnavailable: the RPC cannot be reached.
        """
        stores = self.state_stores()
        if not stores:
            return
        current = ChainBinding.of(self.client.chain_identity())
        bound = stores[0].read().chain
        if bound is not None and bound != current:
            if not reset:
                raise ChainMismatch(
                    f"{self.data_dir} holds {self.name} state of {bound.describe()}, but the RPC "
                    f"serves {current.describe()}: start with --reset-state to discard it, or "
                    "use another --data-dir"
                )
            archive = self.data_dir / "stale" / (bound.block_hash[2:14] or "unknown")
            for store in stores:
                store.reset(archive)
            replay_cache = self.data_dir / "step_hashes"
            if replay_cache.exists():
                archive.mkdir(parents=True, exist_ok=True)
                replay_cache.replace(archive / "step_hashes")
            self.log.warning(
                "state of %s moved to %s: starting afresh on %s",
                bound.describe(),
                archive,
                current.describe(),
            )
            bound = None
        if bound is None:
            for store in stores:
                with store.transaction() as records:
                    records.chain = current
                    if records.index.cursor == 0:
                        records.index.cursor = current.block
        self._chain_checked = time.monotonic()

    def check_chain(self) -> bool:
        """Every `chain_check_interval` seconds, check that the chain still is the one the
        state is bound to; if not (the devnet was restarted under a running node), stop the
        node with a `ChainMismatch` that `run` raises, instead of acting on stale job ids and
        nonces. An unreachable RPC is left to the round's own back-off.

        Returns:
            False when the node must stop (the chain changed).
        """
        stores = self.state_stores()
        if not stores or time.monotonic() - self._chain_checked < self.chain_check_interval:
            return True
        bound = stores[0].read().chain
        current = ChainBinding.of(self.client.chain_identity())
        self._chain_checked = time.monotonic()
        if bound is None or bound == current:
            return True
        self._fatal = ChainMismatch(
            f"the chain changed under the running {self.name} node: its state belongs to "
            f"{bound.describe()}, the RPC now serves {current.describe()}: stopped; restart "
            "it with --reset-state"
        )
        self.log.error("%s", self._fatal)
        self._stop.set()
        return False

    # --------------------------------------------------------------------------- chain
    def send(
        self,
        action: str,
        fn: Callable[..., Any],
        *args: Any,
        quiet: bool = False,
        done: Callable[[], str | None] | None = None,
    ) -> Any:
        """Send one transaction; a decoded contract revert is logged, never raised.

        Args:
            action: what the transaction does, for the log (`"finalize job 3"`).
            fn: the bound `ChainClient` method.
            *args: its arguments.
            quiet: log a revert at DEBUG only after the first time (for "not ready yet"
                retries such as `assignVerifiers` or `finalize`).
            done: `duty`'s check: on a revert, when it names who did the duty, the revert is
                logged at INFO as a race lost to that transaction, not as a failure.

        Returns:
            The receipt, or None when the transaction reverted.

        Raises:
            Exception: anything that is not a revert (RPC errors), for the loop to retry.
        """
        try:
            receipt = fn(*args)
        except self.revert_types as exc:
            name = getattr(exc, "name", type(exc).__name__)
            key = (action, name)
            by = done() if done is not None else None
            if by is not None:
                self.log.info("%s: already done by %s (our transaction lost: %s)", action, by, exc)
            elif quiet and key in self._warned:
                self.log.debug("%s reverted: %s", action, exc)
            elif name in STALLS:
                self._warned.add(key)
                self.log.warning("%s reverted: %s: %s", action, exc, STALLS[name])
            else:
                self._warned.add(key)
                self.log.info("%s reverted: %s", action, exc)
            return None
        self.log.info("%s: ok", action)
        return receipt

    def duty(
        self,
        action: str,
        done: Callable[[], str | None],
        fn: Callable[..., Any],
        *args: Any,
    ) -> Any:
        """Send a duty transaction anyone may send (`assignVerifiers`, `finalize`, ...), unless
        someone else already did it.

        `done()` reads the on-chain state (view calls) right before the send; when it names who
        did the duty, nothing is sent and the skip is logged at INFO. A transaction that still
        loses the race (two senders in one block: mined, reverted) is checked with `done()`
        again and logged the same way instead of as a failure.

        Args:
            action: what the transaction does, for the log (`"finalize job 3"`).
            done: returns None while the duty is still to do, else who or what did it
                (`"another account (job 3 is Finalized)"`).
            fn: the bound `ChainClient` method.
            *args: its arguments.

        Returns:
            The receipt, or None when nothing was sent or the transaction reverted.

        Raises:
            Exception: a failure (RPC error, failed transaction) while the duty is still not
                done, for the loop to retry.
        """
        by = done()
        if by is not None:
            self.log.info("%s: already done by %s", action, by)
            return None
        try:
            return self.send(action, fn, *args, quiet=True, done=done)
        except Exception as exc:
            by = done()
            if by is None:
                raise
            self.log.info("%s: already done by %s (our transaction lost: %s)", action, by, exc)
            return None

    def _job_moved_on(self, job_id: int, expected: JobStatus) -> str | None:
        """`duty` check of a job duty: who moved the job on from `expected`, or None."""
        status = JobStatus(int(self.client.jobs.get_job(job_id).status))
        if status is expected:
            return None
        return f"another account (job {job_id} is now {status.name})"

    def assign_verifiers_if_due(self, job_id: int, job: JobView | None = None) -> bool:
        """Call `JobManager.assignVerifiers(job_id)` once the job is Committed and its
        randomness block is mined (anyone may; sent through `duty`).

        Args:
            job_id: the job.
            job: the job view, when the caller already has it (possibly stale).

        Returns:
            True if an assignVerifiers transaction of this node succeeded.
        """
        job = job if job is not None else self.client.jobs.get_job(job_id)
        if JobStatus(int(job.status)) is not JobStatus.Committed:
            return False
        if self.block_number() <= int(job.randomness_block):
            key = (f"assignVerifiers job {job_id}", "randomness")
            if key not in self._warned:
                self._warned.add(key)
                self.log.info(
                    "job %d: its verifiers are drawn once block %d is mined (head %d)",
                    job_id,
                    int(job.randomness_block) + 1,
                    self.block_number(),
                )
            return False
        receipt = self.duty(
            f"assignVerifiers job {job_id}",
            lambda: self._job_moved_on(job_id, JobStatus.Committed),
            self.client.jobs.assign_verifiers,
            job_id,
        )
        return receipt is not None

    # ------------------------------------------------------------------------ job index
    event_range = MAX_BLOCK_RANGE
    """Blocks per ``eth_getLogs`` (`chain.events.MAX_BLOCK_RANGE`)."""

    def follow_jobs(self, state: RecordStore[Any], *, max_ranges: int = 10) -> int:
        """Discovery: read the JobManager events (`JOB_EVENTS`) of the blocks since the
        cursor persisted in `state` (a `RecordStore` of a `NodeRecords`) and update its
        `JobIndex`. Cost per call: one block-number read plus one ``eth_getLogs`` per
        `event_range` new blocks (at most `max_ranges`), whatever the number of open jobs.

        Returns:
            The number of events read.
        """
        head = self.block_number()
        seen = 0
        for _ in range(max_ranges):
            start = int(state.read().index.cursor)
            if start > head:
                break
            end = min(head, start + self.event_range - 1)
            events = self.client.event_logs(self.client.jobs.contract, JOB_EVENTS, start, end)
            with state.transaction() as records:
                for event in events:
                    self.index_event(records.index, event)
                records.index.cursor = end + 1
            seen += len(events)
        return seen

    def index_event(self, index: Any, event: Any) -> None:
        """Apply one JobManager event to a `JobIndex` (`follow_jobs`); `watches` decides
        which assigned jobs this node keeps an eye on."""
        job_id = int(event.args["jobId"])
        if event.event == "CheckpointsCommitted":
            if job_id not in index.to_assign:
                index.to_assign.append(job_id)
        elif event.event == "VerifiersAssigned":
            if job_id in index.to_assign:
                index.to_assign.remove(job_id)
            if self.watches(event) and job_id not in index.watch:
                index.watch.append(job_id)
        elif event.event == "JobReclaimed" and job_id in index.to_assign:
            index.to_assign.remove(job_id)

    def watches(self, event: Any) -> bool:
        """Whether a `VerifiersAssigned` event concerns this node (override; default no)."""
        return False

    def unwatch(self, state: RecordStore[Any], job_id: int) -> None:
        """Drop a settled job from the index."""
        with state.transaction() as records:
            if job_id in records.index.watch:
                records.index.watch.remove(job_id)

    def assign_duties(self, state: RecordStore[Any]) -> None:
        """The `assignVerifiers` duty for every indexed job waiting for it (cost: the jobs
        waiting, not the open jobs); jobs that moved on leave the index."""
        for job_id in list(state.read().index.to_assign):
            if self.stopping:
                return
            job = self.client.jobs.get_job(job_id)
            if JobStatus(int(job.status)) is JobStatus.Committed:
                self.assign_verifiers_if_due(job_id, job)
                job = self.client.jobs.get_job(job_id)
            if JobStatus(int(job.status)) is not JobStatus.Committed:
                with state.transaction() as records:
                    if job_id in records.index.to_assign:
                        records.index.to_assign.remove(job_id)

    def chain_time(self) -> int:
        """Timestamp (seconds) of the latest block: the clock every deadline is compared to."""
        return int(self.client.timestamp())

    def block_number(self) -> int:
        """Number of the latest block."""
        return int(self.client.block_number())

    def ensure_stake(self, role: Role, amount: int | None = None) -> None:
        """Keep this account's stake for `role` at or above the role's minimum, when the
        operator allows it (`auto_stake`); call it every round (one view call while the stake
        is whole).

        A stake below the minimum (never staked, or slashed) is topped up to `amount` from the
        account's token balance (on a devnet the shortfall is minted with the faucet first);
        when the balance cannot cover that, as much as reaches the minimum; when it cannot
        even reach the minimum, the reason is logged at ERROR once per change of the figures.
        Nothing is staked while an unbond of the role is pending (the operator is leaving), nor
        when `auto_stake` is off: the node then says once what to run and gets no work.

        Args:
            role: the role to stake for.
            amount: the stake (wei) to restore; defaults to `default_stake(role)`.

        Raises:
            ContractRevert: the stake transaction reverted.
        """
        if self.client.stakes.is_active(self.client.address, int(role)):
            return
        minimum = self.min_stake(role)
        view = self.client.stakes.stake_of(self.client.address, int(role))
        staked = int(view.staked)
        word = role.name.lower()
        if int(view.unbonding) > 0 or not self.auto_stake:
            why = (
                f"an unbond of {vtt(int(view.unbonding))} is pending"
                if int(view.unbonding) > 0
                else "auto-staking is off (--no-auto-stake)"
            )
            alarm = (int(role), staked, -1 - int(view.unbonding))
            if alarm != self._stake_alarm:
                self._stake_alarm = alarm
                self.log.error(
                    "%s stake %s is below the minimum %s and %s: this node gets no %s work "
                    "until you run `veritrain stake %s AMOUNT`",
                    role.name,
                    vtt(staked),
                    vtt(minimum),
                    why,
                    word,
                    word,
                )
            return
        target = max(minimum, amount if amount is not None else self.default_stake(role))
        self.ensure_funds(target - staked)
        balance = int(self.client.token.balance_of(self.client.address))
        top_up = min(target - staked, balance)
        if staked + top_up < minimum:
            alarm = (int(role), staked, balance)
            if alarm != self._stake_alarm:
                self._stake_alarm = alarm
                self.log.error(
                    "%s stake %s is below the minimum %s and the free balance %s cannot "
                    "restore it: this node gets no %s work until it is funded",
                    role.name,
                    vtt(staked),
                    vtt(minimum),
                    vtt(balance),
                    word,
                )
            return
        self._stake_alarm = None
        self.log.info(
            "auto-staking %s as %s (stake %s, minimum %s; --no-auto-stake turns this off)",
            vtt(top_up),
            role.name,
            vtt(staked),
            vtt(minimum),
        )
        self.client.stakes.stake(int(role), top_up)

    def min_stake(self, role: Role) -> int:
        """`StakeManager.minStake(role)` (wei), read once: a deployment constant."""
        key = f"min_stake:{int(role)}"
        if key not in self._constants:
            self._constants[key] = int(self.client.stakes.min_stake(int(role)))
        return int(self._constants[key])

    def job_params(self) -> Any:
        """`JobManager.jobParams()` (a `JobParamsView`), read once: deployment constants."""
        if "job_params" not in self._constants:
            self._constants["job_params"] = self.client.jobs.job_params()
        return self._constants["job_params"]

    def ensure_funds(self, amount: int) -> None:
        """Make sure the account holds `amount` wei of the payment token (bonds, stakes).

        On a devnet the shortfall is minted with the VeriToken faucet; where there is no
        faucet the revert is logged and the following transaction fails on its own.

        Args:
            amount: wei needed.
        """
        balance = int(self.client.token.balance_of(self.client.address))
        if balance < amount:
            self.send(f"faucet {vtt(amount - balance)}", self.client.token.faucet, amount - balance)

    def default_stake(self, role: Role) -> int:
        """A stake that lets the node take several jobs: 4x the per-job lock, at least min.

        Args:
            role: the role to stake for.

        Returns:
            Stake amount in wei.
        """
        params = self.job_params()
        per_job = {
            Role.Solver: params.solver_stake,
            Role.Verifier: params.verifier_stake,
            Role.Whistleblower: params.challenge_bond,
        }[role]
        return max(self.min_stake(role), 4 * int(per_job))

    def finalize_if_due(self, job_id: int, job: JobView | None = None) -> bool:
        """Call `JobManager.finalize(job_id)` when the job is due (anyone may).

        Due means: Verifying, past the challenge deadline and with the verification round
        settled (`outcome` no longer `Pending`: the solver revealed its secret or its reveal
        window closed), or Disputed with its dispute resolved. A revert (someone else was
        first) is logged and ignored.

        Args:
            job_id: the job.
            job: the job view, when the caller already has it.

        Returns:
            True if a finalize transaction succeeded.
        """
        job = job if job is not None else self.client.jobs.get_job(job_id)
        status = JobStatus(int(job.status))
        if status is JobStatus.Verifying:
            if self.chain_time() <= int(job.challenge_deadline):
                return False
            submission = self.client.jobs.submission_of(job_id)
            outcome, _sample = self.client.round.outcome(submission)
            if RoundOutcome(int(outcome)) is RoundOutcome.Pending:
                return False
        elif status is JobStatus.Disputed:
            dispute_id = int(job.dispute_id)
            if dispute_id == 0:
                return False
            if not self.client.adjudicator.resolved(dispute_id):
                return False
        else:
            return False
        receipt = self.duty(
            f"finalize job {job_id}",
            lambda: self._job_moved_on(job_id, status),
            self.client.jobs.finalize,
            job_id,
        )
        return receipt is not None

    def draw_committee_if_ready(self, dispute_id: int) -> bool:
        """Call `ArbitrationCommittee.drawCommittee` once its randomness block is mined.

        Args:
            dispute_id: the dispute.

        Returns:
            True if the transaction succeeded.
        """
        dispute = self.client.committee.get_dispute(dispute_id)
        if DisputeStatus(int(dispute.status)) is not DisputeStatus.AwaitingCommittee:
            return False
        if self.block_number() <= int(dispute.randomness_block):
            return False
        receipt = self.duty(
            f"drawCommittee dispute {dispute_id}",
            lambda: self._dispute_moved_on(dispute_id, DisputeStatus.AwaitingCommittee),
            self.client.committee.draw_committee,
            dispute_id,
        )
        return receipt is not None

    def _dispute_moved_on(self, dispute_id: int, expected: DisputeStatus) -> str | None:
        """`duty` check of a dispute duty: who moved the dispute on from `expected`, or None."""
        status = DisputeStatus(int(self.client.committee.get_dispute(dispute_id).status))
        if status is expected:
            return None
        return f"another account (dispute {dispute_id} is now {status.name})"

    def resolve_if_due(self, dispute_id: int) -> bool:
        """Call `ArbitrationCommittee.resolve` when the dispute is resolvable (every vote
        revealed, or the reveal deadline passed); anyone may.

        Args:
            dispute_id: the dispute.

        Returns:
            True if the transaction succeeded.
        """
        if (
            DisputePhase(int(self.client.committee.dispute_phase(dispute_id)))
            is not DisputePhase.Resolvable
        ):
            return False
        receipt = self.duty(
            f"resolve dispute {dispute_id}",
            lambda: self._dispute_moved_on(dispute_id, DisputeStatus.Voting),
            self.client.committee.resolve,
            dispute_id,
        )
        return receipt is not None

    def claim_credit(self) -> int:
        """Claim everything the Escrow owes this account (job payouts, committee rewards, won
        move bonds), if anything: ONE pull payment.

        Returns:
            The amount claimed (wei), 0 when there was none.
        """
        credit = int(self.client.escrow.credit_of(self.client.address))
        if credit == 0:
            return 0
        if self.send(f"claimCredit {vtt(credit)}", self.client.escrow.claim_credit) is None:
            return 0
        return credit

    # --------------------------------------------------------------------------- replay
    def job_spec(self, job: JobView) -> JobSpec:
        """The job's spec, loaded from its `specURI` and checked against the on-chain
        `specHash` (cached per job).

        Raises:
            SpecHashMismatch: the bytes at the URI do not hash to `specHash`.
            SpecUnavailable: the URI cannot be read.
        """
        from veritrain.spec import load_spec

        job_id = int(job.job_id)
        if job_id not in self._specs:
            self._specs[job_id] = load_spec(self.spec_uri_of(job), bytes(job.spec_hash))
        return self._specs[job_id]

    # ------------------------------------------------------------------------- selftest
    def machine_selftest(self) -> SelftestReport | None:
        """Does this machine reproduce repro2 on this node's device and thread count?

        Runs `veritrain.selftest.node_selftest` once (golden state hashes of every preset and a
        short conformance run; cached in the data dir and in the process under the torch
        version, device, CPU capability, thread count and golden table, so a restart does not
        train again) and logs the outcome in one line. Called at the start of `run`, and on
        the first repro2 job when `step` is driven without `run`. A node that fails it
        refuses repro2 jobs (`repro_refusal`): a replay there would differ from every honest
        machine's and cost its stake. Native jobs are unaffected.

        Returns:
            The report, or None when the selftest is disabled (``VERITRAIN_NODE_SELFTEST=0``).
        """
        if not self.selftest_enabled:
            return None
        if self._selftest is None:
            from veritrain.selftest import node_selftest

            threads = int(self.compute()["threads"])
            report = node_selftest(self.data_dir, self.device, threads)
            self._selftest = report
            failure = report.failure_line()
            if failure is None:
                self.log.info(
                    "selftest: this machine reproduces %s on %s (%d checks%s)",
                    report.arith,
                    report.machine.device,
                    len(report.checks),
                    ", cached" if report.cached else f", {report.seconds:.1f} s",
                )
            else:
                self.log.warning("selftest: %s: refusing %s jobs", failure, report.arith)
        return self._selftest

    def repro_refusal(self, spec: JobSpec) -> str | None:
        """Why this node must not train, claim or replay `spec` here, or None.

        Only repro2 jobs can be refused: when this machine fails `machine_selftest`, the reason
        is its one failure line.
        """
        from veritrain.spec import REPRO_ARITH

        if spec.profile.arith != REPRO_ARITH:
            return None
        report = self.machine_selftest()
        if report is None or report.ok:
            return None
        return report.failure_line()

    def replay_refusal(self, job: JobView) -> str | None:
        """Why this node does not replay (or stake a verdict on) `job`, or None; a refusal is
        logged once per job, in one line.

        Refused: a repro2 job on a machine that fails the selftest (`repro_refusal`; such a
        verifier does not stake, so it is drawn for nothing). A spec in a retired arithmetic
        is not a refusal: nobody can replay it, so the replay paths treat it as data the
        solver withholds (`replay_spec`), and the solver loses. A spec that cannot be loaded
        for another reason (unreachable, wrong hash) is not one either: None, and the replay
        itself reports it (retried next time).
        """
        from veritrain.errors import VeritrainError

        job_id = int(job.job_id)
        if job_id in self._refusals:
            return self._refusals[job_id]
        try:
            spec = self.job_spec(job)
        except VeritrainError:
            return None
        reason = self.repro_refusal(spec)
        self._refusals[job_id] = reason
        if reason is not None:
            self.log.warning("job %d: not replaying it: %s", job_id, reason)
        return reason

    def model_mismatch(self, job: JobView, spec: JobSpec) -> str | None:
        """Why `spec` does not belong to `job`'s model, or None: its architecture, family or
        compute per step (`veritrain.lineage`) differ from what the model was registered with
        on chain (docs/SECURITY.md P-18). Such a job mints shares the model's trainers did not
        earn, so it is invalid: the solver refuses it, replayers treat it as unreplayable
        (`replay_spec`). None for a model with no registration on record."""
        from veritrain.lineage import ModelCommitments, mismatches

        model_id = bytes(job.model_id)
        if model_id not in self._models:
            registered = self.client.shares.registered_model(model_id)
            self._models[model_id] = (
                None if registered is None else ModelCommitments(**registered.model_dump())
            )
        commitments = self._models[model_id]
        if commitments is None:
            return None
        wrong = mismatches(spec, commitments)
        if not wrong:
            return None
        return (
            f"its spec's {', '.join(wrong)} differ from model 0x{model_id.hex()}'s registered "
            "commitments"
        )

    def replay_spec(self, job: JobView) -> JobSpec:
        """The spec of `job` for a replay (verdicts, games, committee votes).

        A spec in a retired arithmetic (the first "repro", whose hashes depend on the CPU
        vendor) cannot be replayed by anyone: a solver that committed to one withholds what a
        replay needs, so it raises `CheckpointUnavailable`, and the paths built for a
        withholding solver take over (verifiers reject near the verdict deadline, a
        challenger escalates, the step committee votes the solver's claim wrong): honest
        verifiers are never slashed for a job nobody can verify. A spec that does not match its
        model's registered architecture, family or compute (`model_mismatch`) is treated the
        same way: no valid run of the model exists for it.

        Raises:
            CheckpointUnavailable: the spec is in a retired arithmetic, or not of its model.
            SpecError, SpecUnavailable: see `job_spec`.
        """
        from veritrain.errors import CheckpointUnavailable, RetiredArithmetic

        try:
            spec = self.job_spec(job)
        except RetiredArithmetic as exc:
            raise CheckpointUnavailable(f"job {int(job.job_id)} cannot be replayed: {exc}") from exc
        mismatch = self.model_mismatch(job, spec)
        if mismatch is not None:
            raise CheckpointUnavailable(f"job {int(job.job_id)} cannot be replayed: {mismatch}")
        return spec

    def compute(self) -> dict[str, Any]:
        """What this process computes with: ``{"threads": int, "cpu_capability": str,
        "device": str}``.

        ``threads`` is the torch thread count used for repro jobs (`threads`, or torch's count
        when this is first called); ``cpu_capability`` is the SIMD level torch's CPU kernels
        dispatch to (``"DEFAULT"``, ``"AVX2"``, ``"AVX512"``...; the environment variable
        ``ATEN_CPU_CAPABILITY``, read when torch is imported, lowers it); ``device`` is where
        repro jobs run (``"cpu"``, or ``"cuda (NAME)"`` with the GPU's name).
        """
        import torch

        if self.threads is None:
            self.threads = int(torch.get_num_threads())
        device = self.device
        if device == "cuda":
            device = f"cuda ({torch.cuda.get_device_name(0)})"
        return {
            "threads": self.threads,
            "cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
            "device": device,
        }

    def engine_for(self, spec: JobSpec, initial: bytes | None = None) -> TrainingEngine:
        """A `TrainingEngine` for `spec` (cached per spec hash and initial state; building one
        loads the data), with the process configured for it: the thread count is
        process-global, so it is set again each time (the profile's pinned count for a native
        job, this node's `threads` for a repro job). A repro job runs on this node's `device`,
        a native job on its own. `initial`: the job's state 0 when it is not the spec's
        seed-initialised state (a run's contribution, `TrainingEngine(initial=...)`)."""
        import hashlib

        from veritrain.spec import NATIVE_ARITH
        from veritrain.training import TrainingEngine, apply_profile

        threads = int(self.compute()["threads"])
        device = None if spec.profile.arith == NATIVE_ARITH else self.device
        key = spec.spec_hash().hex()
        if initial is not None:
            key += ":" + hashlib.sha256(initial).hexdigest()
        engine = self._engines.get(key)
        if engine is None:
            engine = self._engines[key] = TrainingEngine(
                spec, device=device, threads=threads, initial=initial
            )
        else:
            apply_profile(spec.profile, device=device, threads=threads)
        return engine

    def replay_check(
        self, job: JobView, segment: int, *, unavailable_is_reject: bool
    ) -> SegmentCheck:
        """Check one committed segment of `job` by replay (`veritrain.replay.check_segment`).

        Args:
            job: the job view (its `merkle_root` is the on-chain commitment).
            segment: segment index s.
            unavailable_is_reject: turn an unreachable solver into a failed check instead of
                raising `CheckpointUnavailable`.

        Returns:
            The `SegmentCheck` (`ok`, `reason`).

        Raises:
            CheckpointUnavailable: the solver cannot be reached and `unavailable_is_reject`
                is False.
        """
        from veritrain.replay import check_segment

        return self._replay(
            job,
            segment,
            lambda spec, url, **kw: check_segment(
                spec,
                url,
                bytes(job.merkle_root),
                segment,
                init_hash=bytes(job.init_hash),
                **kw,
            ),
            unavailable_is_reject=unavailable_is_reject,
            matches="the commitment",
            mismatch="INVALID",
        )

    def claim_check(
        self,
        job: JobView,
        segment: int,
        start_hash: bytes,
        claimed_end: bytes,
        *,
        unavailable_is_reject: bool,
    ) -> SegmentCheck:
        """Check the solver's claim on one sampled segment by replay
        (`veritrain.replay.check_claim`): the start checkpoint must hash to `start_hash`, and
        k replayed steps must end at `claimed_end`.

        Args:
            job: the job view.
            segment: segment index s.
            start_hash: the claimed start state hash (`claims_of(sid).start_hashes[j]`).
            claimed_end: the claimed end state hash (`endHashes[j]`).
            unavailable_is_reject: turn an unreachable solver into a failed check instead of
                raising `CheckpointUnavailable`.

        Returns:
            The `SegmentCheck` (`ok`, `reason`).

        Raises:
            CheckpointUnavailable: the solver cannot be reached and `unavailable_is_reject`
                is False.
        """
        from veritrain.replay import check_claim

        return self._replay(
            job,
            segment,
            lambda spec, url, **kw: check_claim(spec, url, segment, start_hash, claimed_end, **kw),
            unavailable_is_reject=unavailable_is_reject,
            matches="the claim",
            mismatch="claim WRONG",
        )

    def _replay(
        self,
        job: JobView,
        segment: int,
        check: Callable[..., SegmentCheck],
        *,
        unavailable_is_reject: bool,
        matches: str,
        mismatch: str,
    ) -> SegmentCheck:
        """Run one segment check with the job's spec, engine and checkpoint URL behind a
        progress bar, and log its outcome (`replay_check` and `claim_check`).

        Args:
            check: ``check(spec, url, *, engine, on_step, client, unavailable_is_reject)``
                returning a `SegmentCheck`.
            matches: what a matching replay is logged as matching.
            mismatch: the log tag of a failed check.
        """
        from veritrain.errors import CheckpointUnavailable
        from veritrain.replay import SegmentCheck

        label = f"job {int(job.job_id)} segment {segment}"
        try:
            spec = self.replay_spec(job)
        except CheckpointUnavailable as exc:
            if not unavailable_is_reject:
                raise
            self.log.warning("%s: %s: unavailable: %s", label, mismatch, exc)
            k = int(job.checkpoint_interval)
            return SegmentCheck(
                segment=segment,
                start_step=segment * k,
                end_step=(segment + 1) * k,
                committed_end_hash=None,
                replayed_end_hash=None,
                ok=False,
                reason=f"unavailable: {exc}",
            )
        engine = self.engine_for(spec)
        url = self.checkpoint_url_of(job)
        with progress_bar(label, spec.checkpoint_interval) as advance:
            result = check(
                spec,
                url,
                engine=engine,
                on_step=lambda _state, _loss: advance(1),
                client=self.http_client,
                unavailable_is_reject=unavailable_is_reject,
            )
        if result.ok:
            self.log.info("%s: replay matches %s", label, matches)
        elif "unavailable" in result.reason:
            self.log.warning("%s: %s: %s", label, mismatch, result.reason)
        else:
            # Most mismatches of honest solvers' jobs are planted forced errors
            # (docs/FORCED_ERRORS.md): routine work, not an alarm. A real cheat shows as a
            # dispute once the secret is revealed, and that is logged as one.
            self.log.info(
                "%s: %s (a planted forced error or a cheat; the solver's secret tells): %s",
                label,
                mismatch,
                result.reason,
            )
        return result

    # ------------------------------------------------------------------------ bisection
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
                return bytes(self.segment_trajectory(job, game.segment).hash_at(step))
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

    def segment_trajectory(self, job: JobView, segment: int) -> StepTrajectory:
        """The honest per-step trajectory of a committed segment (`StepTrajectory`).

        The start checkpoint comes from the node's own store when it has it, else from the
        solver (`/checkpoints/{a}`), checked against leaf s whose Merkle proof is verified
        against the on-chain root; it is then kept in `<data_dir>/checkpoints` and the
        per-step hashes in `<data_dir>/step_hashes/`, so a restarted node neither needs the
        solver nor replays again.

        Raises:
            CheckpointUnavailable: the solver cannot be reached (and nothing is stored), or
                the spec is in a retired arithmetic (`replay_spec`).
            MerkleProofInvalid: the solver's proof of leaf s does not verify.
        """
        from veritrain.bisection import StepTrajectory
        from veritrain.errors import MerkleProofInvalid
        from veritrain.merkle import verify_checkpoint
        from veritrain.store import CheckpointStore
        from veritrain.wire import CheckpointClient

        job_id = int(job.job_id)
        key = (job_id, segment)
        if key in self._trajectories:
            return self._trajectories[key]
        spec = self.replay_spec(job)
        k = spec.checkpoint_interval
        data_dir = self.data_dir
        store = CheckpointStore(data_dir / "checkpoints")
        index = self._start_index(data_dir)
        url = self.checkpoint_url_of(job)
        known = index.read().starts.get(f"{job_id}:{segment}")
        if known is not None and store.has(known):
            start_blob = store.get(known)
        else:
            cap = self.engine_for(spec).max_state_bytes()
            solver = CheckpointClient(url, self.http_client, max_bytes=cap)
            proof = solver.proof(segment)
            start_hash = proof.state_hash_bytes()
            if proof.step != segment * k or not verify_checkpoint(
                proof.proof_bytes(),
                bytes(job.merkle_root),
                spec.total_steps,
                k,
                segment,
                start_hash,
            ):
                raise MerkleProofInvalid(f"job {job_id}: bad proof of leaf {segment}")
            start_blob = solver.checkpoint(segment * k, start_hash)
            store.put(start_blob)
            with index.transaction() as starts:
                starts.starts[f"{job_id}:{segment}"] = start_hash
        traj = StepTrajectory(
            self.engine_for(spec),
            start_blob,
            (segment + 1) * k,
            store=store,
            cache_path=data_dir / "step_hashes" / f"job{job_id}-seg{segment}.json",
        )
        self._trajectories[key] = traj
        return traj

    @staticmethod
    def _start_index(data_dir: Path) -> RecordStore[StartIndex]:
        return RecordStore(data_dir / "step_hashes" / "starts.json", StartIndex)

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

        spec = self.replay_spec(job)
        engine = self.engine_for(spec)
        url = self.checkpoint_url_of(job)
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
                return False
            blob = traj.state_at(step)
        end = state_hash(replay_segment(engine, blob, step + steps))
        return end == bytes(claimed_end)

    # ------------------------------------------------------------------------- views
    @staticmethod
    def spec_uri_of(job: JobView) -> str:
        """The job's `specURI` (read with the job by `ChainClient.get_job`)."""
        return str(job.spec_uri)

    def ballot_of(self, dispute_id: int) -> tuple[bytes, bool]:
        """This node's ballot on a dispute: (commitment, revealed) (`ballotOf`)."""
        commitment, revealed, _valid = self.client.committee.ballot_of(
            dispute_id, self.client.address
        )
        return bytes(commitment), bool(revealed)

    @staticmethod
    def checkpoint_url_of(job: JobView) -> str:
        """The job's committed `checkpointURL` ("" before the commit; read by `get_job`)."""
        return str(job.checkpoint_url)
