"""`SpecsMixin`: what a node trains and replays with: a job's spec (loaded from its URI and
checked against the on-chain hash), the machine selftests that decide whether this machine may
take repro2 jobs (a quick one at start, the full one in the background before the first
commitment to a repro2 job), the checks that refuse a job (`replay_refusal`,
`model_mismatch`), and the training engines (`engine_for`) with the process's threads and device.

Run: not a script; `from noderuntime import NodeBase`.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from noderuntime.core import FULL_SELFTEST_STOP_WAIT, SELFTEST_WAIT_LOG, NodeCore

if TYPE_CHECKING:
    from chain.types import JobView
    from veritrain.selftest import SelftestReport
    from veritrain.spec import JobSpec
    from veritrain.training import TrainingEngine

__all__ = ["SpecsMixin"]


class SpecsMixin(NodeCore):
    """Job specs, the machine selftest, refusals and training engines."""

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

        The first call runs the QUICK check (`veritrain.selftest.node_selftest` of tier
        ``"quick"``: the conformance suite on few values and the cheapest golden preset, a few
        seconds; cached in the data dir, the machine-wide cache and the process under the
        machine key, so a restart does not check again) and logs the outcome in one line
        (``selftest: ...``). Called at the start of `run` (which then starts the full check in
        the background, `start_full_selftest`), and on the first repro2 job when `step` is
        driven without `run`. A node that fails it refuses repro2 jobs (`repro_refusal`): a
        replay there would differ from every honest machine's and cost its stake. Native jobs
        are unaffected.

        Returns:
            The full report once it is done, else the quick one; None when the selftest is
            disabled (``VERITRAIN_NODE_SELFTEST=0``).
        """
        if not self.selftest_enabled:
            return None
        if self._selftest is None:
            from veritrain.selftest import node_selftest

            threads = int(self.compute()["threads"])
            report = node_selftest(self.data_dir, self.device, threads, tier="quick")
            self._selftest = report
            self._log_selftest("selftest", report)
        return self._full_selftest or self._selftest

    def _log_selftest(self, what: str, report: SelftestReport) -> None:
        """One line: ``<what>: this machine reproduces ...`` or ``<what>: <failure>: refusing
        repro2 jobs``."""
        failure = report.failure_line()
        if failure is None:
            self.log.info(
                "%s: this machine reproduces %s on %s (%d checks%s)",
                what,
                report.arith,
                report.machine.device,
                len(report.checks),
                ", cached" if report.cached else f", {report.seconds:.1f} s",
            )
        else:
            self.log.warning("%s: %s: refusing %s jobs", what, failure, report.arith)

    def start_full_selftest(self) -> None:
        """Start the FULL check (every golden preset, `node_selftest` of tier ``"full"``) in a
        daemon thread, once, when the quick one passed; its errors are logged, never raised.
        Nothing when the selftest is disabled."""
        if not self.selftest_enabled or self._full_thread is not None:
            return
        quick = self.machine_selftest()
        if quick is None or not quick.ok:
            return  # repro2 jobs are refused already
        self._full_thread = threading.Thread(
            target=self._run_full_selftest, name=f"{self.name}-selftest", daemon=True
        )
        self._full_thread.start()

    def _run_full_selftest(self) -> None:
        """The full check, logged in one line (``selftest (full): ...``); an error is logged.
        It ends at its next preset once the node stops (`stop_full_selftest`)."""
        from veritrain.selftest import SelftestStopped, node_selftest

        try:
            threads = int(self.compute()["threads"])
            quick = self._selftest  # passed (else no full check starts): not run again
            report = node_selftest(
                self.data_dir,
                self.device,
                threads,
                tier="full",
                reuse=quick,
                should_stop=lambda: self.stopping or self._full_stop.is_set(),
            )
        except SelftestStopped:
            self.log.info("selftest (full): ended with the node, before it finished")
            return
        except Exception as exc:  # noqa: BLE001 - a background check never crashes the node
            self._full_error_at = time.monotonic()
            self.log.warning(
                "selftest (full) could not run: %s: %s (again in %.0f s; no repro2 commitment "
                "until it passes)",
                type(exc).__name__,
                exc,
                self.full_selftest_retry_s,
            )
            return
        self._full_error_at = None
        self._full_selftest = report
        self._log_selftest("selftest (full)", report)

    def stop_full_selftest(self, timeout: float = FULL_SELFTEST_STOP_WAIT) -> None:
        """At the node's stop: end the background full check at its next preset and wait up to
        `timeout` seconds for it (a thread left inside torch when the interpreter exits aborts
        the process). A check still running after that is logged; nothing else happens."""
        self._full_stop.set()
        thread = self._full_thread
        if thread is None or not thread.is_alive():
            return
        self.log.info("selftest (full): waiting for it to end at its next preset")
        thread.join(timeout)
        if thread.is_alive():
            self.log.warning("selftest (full) still running %.0f s after the stop", timeout)

    def full_selftest(self, wait: float) -> SelftestReport | None:
        """The full report: at once when it is done; else, while the background check runs,
        after waiting up to `wait` seconds for it (a log line every `SELFTEST_WAIT_LOG`
        seconds); when no check runs (`step` driven without `run`, or the last one raised at
        least `full_selftest_retry_s` seconds ago), it is run here.

        Returns:
            The report, or None when the check is still running after `wait` seconds, could
            not run (then it is not tried again before `full_selftest_retry_s`), or the
            selftest is disabled.
        """
        if not self.selftest_enabled:
            return None
        if self._full_selftest is not None:
            return self._full_selftest
        thread = self._full_thread
        if thread is None or not thread.is_alive():
            failed_at = self._full_error_at
            if failed_at is not None and time.monotonic() - failed_at < self.full_selftest_retry_s:
                return None
            self._run_full_selftest()
            return self._full_selftest
        deadline = time.monotonic() + wait
        started = time.monotonic()
        while thread.is_alive() and not self.stopping:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.log.info(
                "selftest: waiting for the full check before committing to a repro2 job "
                "(waited %.0f s of at most %.0f s this round)",
                time.monotonic() - started,
                wait,
            )
            thread.join(min(SELFTEST_WAIT_LOG, left))
        return self._full_selftest

    def full_selftest_ready(self, job: JobView) -> bool:
        """Whether this node may commit to `job` now (a verdict, a checkpoint root, a
        challenge): yes for a job that is not repro2, or with the selftest disabled; for a
        repro2 job only once the full check passed (`full_selftest`, waiting up to
        `full_selftest_wait` seconds). False: still running (retry next round), or it failed
        (logged once; the job is refused from then on, `replay_refusal`)."""
        from veritrain.errors import VeritrainError
        from veritrain.spec import REPRO_ARITH

        if not self.selftest_enabled:
            return True
        try:
            spec = self.job_spec(job)
        except VeritrainError:
            return True  # the replay paths report it
        if spec.profile.arith != REPRO_ARITH:
            return True
        report = self.full_selftest(self.full_selftest_wait)
        if report is None:
            return False
        failure = report.failure_line()
        if failure is None:
            return True
        job_id = int(job.job_id)
        if self._refusals.get(job_id) is None:
            self._refusals[job_id] = failure
            self.log.warning("job %d: not committing to it: %s", job_id, failure)
        return False

    def repro_refusal(self, spec: JobSpec) -> str | None:
        """Why this node must not train, claim or replay `spec` here, or None.

        Only repro2 jobs can be refused: when this machine fails `machine_selftest` (the full
        check once it is done, else the quick one), the reason is its one failure line.
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
