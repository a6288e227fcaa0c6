"""`DeadlinesMixin`: whether a solver can train a job before its commit deadline.

A solver measures its training speed once per spec (`step_rate`: a timed trial with its own
step function, plus one checkpoint encoded and hashed; persisted in its state file), estimates
the time to train the remaining steps with a safety margin (`time_needed`), claims only jobs
that fit in the commit window (`_can_finish`) and, while training, gives up a job that can no
longer make its deadline (`_deadline_watch`, a `solver.trainer.train_job(give_up=...)`).

Run: not a script; `SolverNode` (solver/node.py) is built on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from noderuntime.core import NodeCore
from noderuntime.records import RecordStore, SolverRecords

if TYPE_CHECKING:
    from veritrain.bisection import StepFn
    from veritrain.training import TrainingEngine

__all__ = ["DeadlinesMixin"]


class DeadlinesMixin(NodeCore):
    """Step rates and commit deadlines of a solver (its attributes are set by `SolverNode`)."""

    state: RecordStore[SolverRecords]
    rate_trial_seconds: float
    deadline_margin: float
    deadline_margin_s: float
    _rates: dict[str, tuple[float, float]]  # spec hash hex -> (steps/s, s/ckpt)

    def step_function(self, engine: TrainingEngine) -> StepFn:
        """The step rule the solver trains with (`SolverNode.step_function`)."""
        raise NotImplementedError

    def step_rate(self, engine: TrainingEngine) -> tuple[float, float]:
        """This machine's training speed on `engine.spec`, measured once per spec.

        A timed trial from the spec's initial state with this solver's step function (at
        most `rate_trial_seconds` of wall clock and at most N steps; the first step's warm-up
        is included, which errs on the slow side), plus one checkpoint encoded and hashed.
        Persisted in the state file under the spec hash, so a restart does not measure again.

        Args:
            engine: the job's engine.

        Returns:
            (steps per second, seconds per checkpoint).
        """
        from veritrain.state import state_hash

        key = engine.spec.spec_hash().hex()
        known = self._rates.get(key)
        if known is not None:
            return known
        records = self.state.read()
        if key in records.step_rates and key in records.checkpoint_seconds:
            self._rates[key] = (records.step_rates[key], records.checkpoint_seconds[key])
            return self._rates[key]
        advance = self.step_function(engine)
        state = engine.init_state()
        steps = 0
        start = time.monotonic()
        while steps < engine.spec.total_steps:
            advance(state)
            steps += 1
            if time.monotonic() - start >= self.rate_trial_seconds:
                break
        elapsed = max(time.monotonic() - start, 1e-9)
        tick = time.monotonic()
        state_hash(engine.state_bytes(state))
        checkpoint = time.monotonic() - tick
        rate = steps / elapsed
        self._rates[key] = (rate, checkpoint)
        with self.state.transaction() as recs:
            recs.step_rates[key] = rate
            recs.checkpoint_seconds[key] = checkpoint
        self.log.info(
            "spec %s: measured %.1f steps/s, %.3f s per checkpoint", key[:10], rate, checkpoint
        )
        return rate, checkpoint

    def time_needed(self, engine: TrainingEngine, from_step: int) -> float:
        """Seconds (with the safety margin) to train from `from_step` to N, hash and store
        the remaining checkpoints and commit, at this solver's measured rate.

        Args:
            engine: the job's engine.
            from_step: the step training resumes from (0 for a new job).
        """
        spec = engine.spec
        rate, checkpoint = self.step_rate(engine)
        steps_left = spec.total_steps - from_step
        checkpoints_left = steps_left // spec.checkpoint_interval + (1 if from_step == 0 else 0)
        estimate = steps_left / rate + checkpoints_left * checkpoint
        return estimate * (1.0 + self.deadline_margin) + self.deadline_margin_s

    def _can_finish(self, job_id: int, engine: TrainingEngine, commit_window: int) -> bool:
        """Whether a new job fits in the commit window (logged once when it does not)."""
        need = self.time_needed(engine, 0)
        if need <= commit_window:
            return True
        rate, _ = self.step_rate(engine)
        self.log.info(
            "job %d: cannot finish before the commit deadline: N=%d steps at %.1f steps/s "
            "needs ~%.3g s with the margin, the commit window is %d s; skipping it",
            job_id,
            engine.spec.total_steps,
            rate,
            need,
            commit_window,
        )
        return False

    def _deadline_watch(
        self, job_id: int, engine: TrainingEngine, commit_deadline: int
    ) -> Callable[[int], str | None]:
        """A `train_job(give_up=...)` that says why once the commit deadline (chain time,
        mapped to this process's monotonic clock) can no longer be met."""
        ends_at = time.monotonic() + (commit_deadline - self.chain_time())
        rate, _ = self.step_rate(engine)

        def give_up(step: int) -> str | None:
            left = ends_at - time.monotonic()
            need = self.time_needed(engine, step)
            if need <= left:
                return None
            return (
                f"job {job_id}: cannot make the commit deadline: {engine.spec.total_steps - step} "
                f"steps left at {rate:.1f} steps/s need ~{need:.0f} s with the margin, "
                f"{max(left, 0):.0f} s left"
            )

        return give_up
