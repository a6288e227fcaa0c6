"""`NodeCore`: what every part of a node stands on: its attributes, one transaction (`send`),
a duty anyone may perform (`duty`), the chain clock and the job views.

A node is composed of parts, each in a file named for its concept (docs/ARCHITECTURE.md):
`noderuntime.binding` (the chain its state is bound to), `noderuntime.duties` (the duties
anyone may perform and the job index), `noderuntime.stakes` (stakes, funds, credit),
`noderuntime.specs` (job specs, the machine selftest, engines), `noderuntime.replay` (segment
replays and the honest trajectory), `noderuntime.games` (the dissection game and the step
committee) and `noderuntime.node` (the polling loop; `NodeBase` composes them all).

Every node races the same duty, so each is sent through `duty`: the on-chain state is read
again right before the send, a duty someone else already did is logged at INFO ("already done
by ...") and nothing is sent, and a transaction that lost the race in the same block is logged
the same way, never as a failure.

Run: not a script; `from noderuntime import NodeBase`.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noderuntime.adjudication import Adjudication
from noderuntime.metrics import NodeMetrics
from noderuntime.ports import ChainPort

if TYPE_CHECKING:
    from chain.types import JobView
    from noderuntime.mirror import StateMirror
    from noderuntime.serving import ServerThread
    from veritrain.bisection import StepTrajectory
    from veritrain.lineage import ModelCommitments
    from veritrain.selftest import SelftestReport
    from veritrain.spec import JobSpec
    from veritrain.training import TrainingEngine

__all__ = [
    "FULL_SELFTEST_RETRY",
    "FULL_SELFTEST_STOP_WAIT",
    "FULL_SELFTEST_WAIT",
    "SELFTEST_ENV",
    "SELFTEST_WAIT_LOG",
    "STAKE_GAUGE_INTERVAL",
    "STALLS",
    "NodeCore",
]


SELFTEST_ENV = "VERITRAIN_NODE_SELFTEST"
"""Set to ``0`` to skip the machine selftests nodes run (the quick one at start and the full one
after it, `SpecsMixin.machine_selftest`; tests that start many nodes): the node then takes
repro2 jobs untested."""

FULL_SELFTEST_WAIT = 60.0
"""Seconds a node's round waits at most for its full selftest before it commits to a repro2 job
(`SpecsMixin.full_selftest_ready`); still running then, the commit is retried next round."""

FULL_SELFTEST_RETRY = 600.0
"""Seconds before a full selftest that could not run (it raised: a full disk, no memory) is run
again; until then the node commits to no repro2 job."""

SELFTEST_WAIT_LOG = 15.0
"""Seconds between two log lines while a node waits for its full selftest."""

FULL_SELFTEST_STOP_WAIT = 60.0
"""Seconds a stopping node waits for its background full selftest to end at its next preset
(`SpecsMixin.stop_full_selftest`): a thread left inside torch at interpreter exit aborts the
process ("terminate called without an active exception", exit code 134)."""

STAKE_GAUGE_INTERVAL = 5.0
"""Seconds between two reads of the stake for the stake gauges, while metrics are served
(`StakesMixin.observe_stake`)."""

STALLS = {
    "NoEligibleVerifiers": "the job waits in Committed until enough other accounts stake as "
    "verifiers (the job's solver and submitter cannot verify it; `veritrain stake verifier`)",
    "ERC20InsufficientBalance": "this account cannot pay the bond or stake: fund it with the "
    "payment token",
}
"""Reverts that mean a job is stuck until someone acts, with what to do: `send` logs them at
WARNING once per action, where other "not yet" reverts are INFO."""


class NodeCore:
    """The attributes and primitives every part of a node uses (`NodeBase` composes the parts).

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
        self._full_selftest: SelftestReport | None = None  # the full check's report, once done
        self._full_thread: threading.Thread | None = None  # the full check in the background
        self.full_selftest_wait = FULL_SELFTEST_WAIT  # seconds a commit waits for it per round
        self.full_selftest_retry_s = FULL_SELFTEST_RETRY  # after the full check raised
        self._full_error_at: float | None = None  # time.monotonic() when it last raised
        self._full_stop = threading.Event()  # set when the node stops: the full check ends
        self._refusals: dict[int, str | None] = {}  # job id -> why it is not replayed here
        self.reset_state = False  # run(): discard state of another chain instead of refusing
        self.auto_stake = True  # ensure_stake: restore a missing stake from the balance
        self._chain_checked = 0.0  # monotonic time of the last chain identity check
        self._fatal: BaseException | None = None  # why the loop stopped on its own
        self.mirror: StateMirror | None = None  # the states this node proved (its role sets it)
        self.mirrors: list[str] = []  # holders asked after a job's solver (--mirror)
        self.serve_port: int | None = None  # the mirror's port (--serve-port); None: not served
        self.serve_host = "127.0.0.1"  # the mirror's interface (--serve-bind)
        self._mirror_server: ServerThread | None = None
        self.metrics = NodeMetrics()  # this node's Prometheus metrics (noderuntime.metrics)
        self.metrics_port: int | None = None  # --metrics-port; None or 0: not served
        self.metrics_host = "127.0.0.1"  # --metrics-bind
        self._stake_observed = float("-inf")  # monotonic time the stake gauges were last set
        self.stake_gauge_interval = STAKE_GAUGE_INTERVAL  # seconds between two stake reads

    @property
    def stopping(self) -> bool:
        """True once the loop was asked to stop (long work should check it and return)."""
        return self._stop.is_set()

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
                logged at INFO and counted (outcome ``lost``) as a race lost to that
                transaction, not as a failure.

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
            self.metrics.transaction(action, ok=False, lost=by is not None)
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
        self.metrics.transaction(action, ok=True)
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

    def chain_time(self) -> int:
        """Timestamp (seconds) of the latest block: the clock every deadline is compared to."""
        return int(self.client.timestamp())

    def block_number(self) -> int:
        """Number of the latest block."""
        return int(self.client.block_number())

    # ------------------------------------------------------------------------- views
    def job_params(self) -> Any:
        """`JobManager.jobParams()` (a `JobParamsView`), read once: deployment constants."""
        if "job_params" not in self._constants:
            self._constants["job_params"] = self.client.jobs.job_params()
        return self._constants["job_params"]

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
