"""Shared plumbing of the three node roles (solver, verifier, whistleblower).

One place for what every node does the same way:

- `setup_logging`: plain or JSON-lines log output.
- `NodeBase`: the polling loop (`run(stop_event)` calls `step()` until stopped, backing off
  on RPC or other errors so one failure never kills a node), `send` (one transaction, a decoded
  revert is logged and swallowed), the chain clock, and the duties anyone may perform:
  `finalize_if_due`, `resolve_if_due`, `draw_committee_if_ready`, `claim_credit`,
  `ensure_stake`.
- `progress_bar`: a Rich progress bar that is disabled when stderr is not a terminal.

This module belongs to the node packages: it takes the chain client as a parameter (duck-typed,
so unit tests pass an in-memory fake), the revert exception type a node catches is passed in by
the node (`chain.errors.ContractRevert`), and it shares the Solidity enum mirrors of
`chain.types`.

Run: not a script; `from veritrain.noderuntime import NodeBase`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

# The Solidity enums are mirrored once, in chain.types (pure Python, no RPC).
from chain.types import DisputePhase, DisputeStatus, JobStatus, Role, Verdict

logger = logging.getLogger(__name__)

__all__ = [
    "JobStatus",
    "DisputeStatus",
    "DisputePhase",
    "Verdict",
    "Role",
    "TERMINAL_JOB_STATUSES",
    "NodeBase",
    "JsonLogFormatter",
    "setup_logging",
    "progress_bar",
    "run_until_signalled",
    "sleep_until",
]


TERMINAL_JOB_STATUSES = frozenset({JobStatus.Finalized, JobStatus.Rejected, JobStatus.Cancelled})


# ----------------------------------------------------------------------------------- logging
class JsonLogFormatter(logging.Formatter):
    """Formats each record as one JSON object per line (`ts`, `level`, `logger`, `msg`)."""

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str)


def setup_logging(*, json_logs: bool = False, level: int | str = logging.INFO) -> None:
    """Configure the root logger for a node process.

    Args:
        json_logs: emit JSON lines instead of the human-readable format.
        level: logging level (name or number).
    """
    handler = logging.StreamHandler(sys.stderr)
    if json_logs:
        handler.setFormatter(JsonLogFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")
        )
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for noisy in ("urllib3", "httpx", "httpcore", "web3", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


@contextlib.contextmanager
def progress_bar(
    description: str, total: int, *, enabled: bool | None = None
) -> Iterator[Callable[[int], None]]:
    """A Rich progress bar over `total` steps; disabled when stderr is not a TTY.

    Args:
        description: label shown left of the bar.
        total: number of steps.
        enabled: force on/off; None means "only on a terminal".

    Yields:
        `advance(n)`: call it with the number of steps just done.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    show = sys.stderr.isatty() if enabled is None else enabled
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        disable=not show,
        transient=True,
    )
    with progress:
        task = progress.add_task(description, total=total)
        yield lambda n=1: progress.advance(task, n)


# -------------------------------------------------------------------------------------- node
class NodeBase:
    """Base class of every node: a polling loop over `step()` plus shared chain duties.

    Subclasses implement `step()` (one round of work; it must be safe to call again after a
    crash at any point, i.e. it checks on-chain state before sending).

    Args:
        client: the injected `chain.client.ChainClient` (duck-typed here).
        name: node name used in log lines (e.g. `"solver"`).
        revert_types: exception types meaning "the contract reverted" (logged, not fatal).
        poll_interval: seconds between two rounds when idle.
        max_backoff: upper bound (seconds) of the exponential back-off after errors.
    """

    def __init__(
        self,
        client: Any,
        *,
        name: str,
        revert_types: tuple[type[BaseException], ...] = (),
        poll_interval: float = 1.0,
        max_backoff: float = 30.0,
    ) -> None:
        self.client = client
        self.name = name
        self.revert_types = revert_types
        self.poll_interval = poll_interval
        self.max_backoff = max_backoff
        self.log = logging.getLogger(f"{name}")
        self._stop = threading.Event()
        self._warned: set[tuple[str, str]] = set()
        self._specs: dict[int, Any] = {}
        self._engines: dict[str, Any] = {}
        self.http_client: Any = None  # an httpx.Client for checkpoint fetches (tests inject one)

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
        self.log.info("%s node running as %s", self.name, self.client.address)
        failures = 0
        while not self._stop.is_set():
            try:
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

    # --------------------------------------------------------------------------- chain
    def send(self, action: str, fn: Callable[..., Any], *args: Any, quiet: bool = False) -> Any:
        """Send one transaction; a decoded contract revert is logged, never raised.

        Args:
            action: what the transaction does, for the log (`"finalize job 3"`).
            fn: the bound `ChainClient` method.
            *args: its arguments.
            quiet: log a revert at DEBUG only after the first time (for "not ready yet"
                retries such as `assignVerifiers` or `finalize`).

        Returns:
            The receipt, or None when the transaction reverted.

        Raises:
            Exception: anything that is not a revert (RPC errors), for the loop to retry.
        """
        try:
            receipt = fn(*args)
        except self.revert_types as exc:
            key = (action, getattr(exc, "name", type(exc).__name__))
            if quiet and key in self._warned:
                self.log.debug("%s reverted: %s", action, exc)
            else:
                self._warned.add(key)
                self.log.info("%s reverted: %s", action, exc)
            return None
        self.log.info("%s: ok", action)
        return receipt

    def chain_time(self) -> int:
        """Timestamp (seconds) of the latest block: the clock every deadline is compared to."""
        return int(self.client.timestamp())

    def block_number(self) -> int:
        """Number of the latest block."""
        return int(self.client.block_number())

    def ensure_stake(self, role: Role, amount: int | None = None) -> None:
        """Stake for `role` when the account is not active yet.

        On a devnet the missing tokens come from the VeriToken faucet; elsewhere the account
        must already hold them.

        Args:
            role: the role to stake for.
            amount: tokens (wei) to stake; defaults to `default_stake(role)`.

        Raises:
            ContractRevert: the stake transaction reverted (e.g. not enough tokens).
        """
        if self.client.is_active(self.client.address, int(role)):
            return
        if amount is None:
            amount = self.default_stake(role)
        self.ensure_funds(amount)
        self.log.info("staking %d wei as %s", amount, role.name)
        self.client.stake(int(role), amount)

    def ensure_funds(self, amount: int) -> None:
        """Make sure the account holds `amount` wei of the payment token (bonds, stakes).

        On a devnet the shortfall is minted with the VeriToken faucet; where there is no
        faucet the revert is logged and the following transaction fails on its own.

        Args:
            amount: wei needed.
        """
        balance = int(self.client.balance_of(self.client.address))
        if balance < amount:
            self.send(f"faucet {amount - balance} wei", self.client.faucet, amount - balance)

    def default_stake(self, role: Role) -> int:
        """A stake that lets the node take several jobs: 4x the per-job lock, at least min.

        Args:
            role: the role to stake for.

        Returns:
            Stake amount in wei.
        """
        params = self.client.job_params()
        per_job = {
            Role.Solver: params.solver_stake,
            Role.Verifier: params.verifier_stake,
            Role.Whistleblower: params.challenge_bond,
        }[role]
        minimum = int(self.client.min_stake(int(role)))
        return max(minimum, 4 * int(per_job))

    def finalize_if_due(self, job_id: int, job: Any | None = None) -> bool:
        """Call `JobManager.finalize(job_id)` when the job is due (anyone may).

        Due means: Verifying and past the challenge deadline, or Disputed with its dispute
        resolved. A revert (someone else was first) is logged and ignored.

        Args:
            job_id: the job.
            job: the job view, when the caller already has it.

        Returns:
            True if a finalize transaction succeeded.
        """
        job = job if job is not None else self.client.get_job(job_id)
        status = JobStatus(int(job.status))
        if status is JobStatus.Verifying:
            if self.chain_time() <= int(job.challenge_deadline):
                return False
        elif status is JobStatus.Disputed:
            dispute_id = int(job.dispute_id)
            if dispute_id == 0:
                return False
            dispute = self.client.get_dispute(dispute_id)
            if DisputeStatus(int(dispute.status)) is not DisputeStatus.Resolved:
                return False
        else:
            return False
        receipt = self.send(f"finalize job {job_id}", self.client.finalize, job_id, quiet=True)
        return receipt is not None

    def draw_committee_if_ready(self, dispute_id: int) -> bool:
        """Call `ArbitrationCommittee.drawCommittee` once its randomness block is mined.

        Args:
            dispute_id: the dispute.

        Returns:
            True if the transaction succeeded.
        """
        dispute = self.client.get_dispute(dispute_id)
        if DisputeStatus(int(dispute.status)) is not DisputeStatus.AwaitingCommittee:
            return False
        if self.block_number() <= int(dispute.randomness_block):
            return False
        receipt = self.send(
            f"drawCommittee dispute {dispute_id}",
            self.client.draw_committee,
            dispute_id,
            quiet=True,
        )
        return receipt is not None

    def resolve_if_due(self, dispute_id: int) -> bool:
        """Call `ArbitrationCommittee.resolve` when the dispute is resolvable (every vote
        revealed, or the reveal deadline passed); anyone may.

        Args:
            dispute_id: the dispute.

        Returns:
            True if the transaction succeeded.
        """
        if DisputePhase(int(self.client.dispute_phase(dispute_id))) is not DisputePhase.Resolvable:
            return False
        receipt = self.send(
            f"resolve dispute {dispute_id}", self.client.resolve, dispute_id, quiet=True
        )
        return receipt is not None

    def claim_credit(self) -> int:
        """Claim this account's pull-payment credit, if any.

        Returns:
            The amount claimed (wei), 0 when there was none.
        """
        credit = int(self.client.credit_of(self.client.address))
        if credit == 0:
            return 0
        if self.send(f"claimCredit {credit} wei", self.client.claim_credit) is None:
            return 0
        return credit

    # --------------------------------------------------------------------------- replay
    def job_spec(self, job: Any) -> Any:
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

    def engine_for(self, spec: Any) -> Any:
        """A `TrainingEngine` for `spec` (cached per spec hash; building one loads the data)."""
        from veritrain.training import TrainingEngine

        key = spec.spec_hash().hex()
        if key not in self._engines:
            self._engines[key] = TrainingEngine(spec)
        return self._engines[key]

    def replay_check(self, job: Any, segment: int, *, unavailable_is_reject: bool) -> Any:
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

        spec = self.job_spec(job)
        engine = self.engine_for(spec)
        url = self.checkpoint_url_of(job)
        label = f"job {int(job.job_id)} segment {segment}"
        with progress_bar(label, spec.checkpoint_interval) as advance:
            result = check_segment(
                spec,
                url,
                bytes(job.merkle_root),
                segment,
                engine=engine,
                on_step=lambda _state, _loss: advance(1),
                client=self.http_client,
                unavailable_is_reject=unavailable_is_reject,
            )
        if result.ok:
            self.log.info("%s: replay matches the commitment", label)
        else:
            self.log.warning("%s: INVALID: %s", label, result.reason)
        return result

    # ------------------------------------------------------------------------- views
    @staticmethod
    def spec_uri_of(job: Any) -> str:
        """The job's `specURI` (read with the job by `ChainClient.get_job`)."""
        return str(job.spec_uri)

    def ballot_of(self, dispute_id: int) -> tuple[bytes, bool]:
        """This node's ballot on a dispute: (commitment, revealed) (`ballotOf`)."""
        commitment, revealed, _valid = self.client.ballot_of(dispute_id, self.client.address)
        return bytes(commitment), bool(revealed)

    @staticmethod
    def checkpoint_url_of(job: Any) -> str:
        """The job's committed `checkpointURL` ("" before the commit; read by `get_job`)."""
        return str(job.checkpoint_url)


def run_until_signalled(node: NodeBase) -> None:
    """Run `node` in the current thread until SIGINT or SIGTERM (CLI entry point helper).

    Args:
        node: any node; its `run(stop_event)` returns after the signal.
    """
    import signal

    stop = threading.Event()

    def _handler(signum: int, _frame: Any) -> None:
        logger.info("signal %d received, stopping", signum)
        stop.set()

    previous = {sig: signal.signal(sig, _handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        node.run(stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def sleep_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.2) -> bool:
    """Poll `predicate` until it holds or `timeout` seconds pass (test and CLI helper).

    Args:
        predicate: condition to wait for.
        timeout: seconds.
        interval: seconds between polls.

    Returns:
        Whether the predicate became true.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
