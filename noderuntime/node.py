"""`NodeBase`: the shared plumbing of the three node roles (solver, verifier, whistleblower),
composed of parts each in a file named for its concept:

- `noderuntime.core.NodeCore`: the attributes, `send` (one transaction, a decoded revert is
  logged and swallowed), `duty` (a duty anyone may perform, read again right before the send),
  the chain clock and the job views.
- `noderuntime.binding.BindingMixin`: the chain the node's persisted state is bound to.
- `noderuntime.duties.DutiesMixin`: `assign_verifiers_if_due`, `finalize_if_due`,
  `draw_committee_if_ready`, `resolve_if_due`, and the job index (`follow_jobs`).
- `noderuntime.stakes.StakesMixin`: `ensure_stake`, `ensure_funds`, `claim_credit`.
- `noderuntime.specs.SpecsMixin`: job specs, the machine selftest, refusals, engines.
- `noderuntime.replay.ReplayMixin`: `replay_check`, `claim_check` (the verification round as
  seen by verifiers and whistleblowers), `segment_trajectory`.
- `noderuntime.games.GamesMixin`: the adjudication strategy, the dissection game
  (`play_game`, `play_challenger`) and the step committee's `judge_step`.

This module holds the polling loop: `run(stop_event)` calls `step()` until stopped, backing off
on RPC or other errors so one failure never kills a node. Log set-up and progress bars live in
`noderuntime.logs`, the signal-driven run loop in `noderuntime.lifecycle`.

A node takes its chain client as a parameter typed by the `noderuntime.ports.ChainPort`
protocol (the real `ChainClient`, or the unit tests' in-memory fake); the revert exception type
it catches is passed in by the node (`chain.errors.ContractRevert`); the Solidity enums come from
`veritrain.enums`.

Run: not a script; `from noderuntime import NodeBase`.
"""

from __future__ import annotations

import logging
import threading

from noderuntime.binding import BindingMixin
from noderuntime.core import SELFTEST_ENV, STALLS
from noderuntime.datadir import DataDirLock
from noderuntime.duties import JOB_EVENTS
from noderuntime.games import UNUSABLE_DATA, WITHHELD, GamesMixin
from noderuntime.mirror import MirrorMixin
from veritrain.enums import JobStatus

__all__ = [
    "JOB_EVENTS",
    "SELFTEST_ENV",
    "STALLS",
    "TERMINAL_JOB_STATUSES",
    "UNUSABLE_DATA",
    "WITHHELD",
    "NodeBase",
]


TERMINAL_JOB_STATUSES = frozenset(
    {JobStatus.Finalized, JobStatus.Rejected, JobStatus.Cancelled, JobStatus.Expired}
)


# -------------------------------------------------------------------------------------- node
class NodeBase(GamesMixin, BindingMixin, MirrorMixin):
    """Base class of every node: a polling loop over `step()` plus the shared parts (see the
    module docstring; the constructor's arguments are `NodeCore`'s).

    Subclasses implement `step()` (one round of work; it must be safe to call again after a
    crash at any point, i.e. it checks on-chain state before sending).
    """

    # ---------------------------------------------------------------------------- loop
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
        self._full_stop.clear()  # a node run again checks its machine again
        with DataDirLock(self.data_dir):
            self.bind_chain(reset=self.reset_state)
            self.metrics.serve(self.metrics_port, self.metrics_host)
            try:
                self.on_start()
                try:
                    self._loop()
                finally:
                    self.stop_full_selftest()
                    self.on_stop()
            finally:
                self.metrics.stop()
        if self._fatal is not None:
            raise self._fatal

    def on_start(self) -> None:
        """Called by `run` once the data dir is locked and bound, before the first round: serves
        the node's mirror when it has a port (override: e.g. the solver starts its checkpoint
        server, which serves its mirror too)."""
        self.start_mirror()

    def on_stop(self) -> None:
        """Called by `run` after the last round, even when it failed (override)."""
        self.stop_mirror()

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
            self.machine_selftest()  # the quick check, in the foreground
            self.start_full_selftest()  # the full one, before the first repro2 commitment
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
                self.metrics.error(exc)
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
