"""`SpecsMixin`: what a node trains and replays with: a job's spec (loaded from its URI and
checked against the on-chain hash), the machine selftest that decides whether this machine may
take repro2 jobs, the checks that refuse a job (`replay_refusal`, `model_mismatch`), and the
training engines (`engine_for`) with the process's threads and device.

Run: not a script; `from noderuntime import NodeBase`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from noderuntime.core import NodeCore

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
