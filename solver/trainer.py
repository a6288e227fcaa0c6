"""Resumable training of one job into a content-addressed checkpoint store.

`train_job` runs `veritrain.training.TrainingEngine` from the last stored checkpoint to step N,
writing a checkpoint every k steps and reporting each new state hash, so a solver killed at
any point resumes from its last checkpoint instead of from scratch. After each checkpoint the
run continues from the *decoded* checkpoint bytes, i.e. from exactly the state a verifier
will load, so an honest solver's segments replay bit for bit.

The step function is a parameter (`step_fn`, default the honest `step_function`), so the
testing-only cheating solvers of `adversary.solver` train through the same code.

Run: not a script; `from solver.trainer import train_job`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from noderuntime import progress_bar
from veritrain.bisection import StepFn
from veritrain.hexutil import from_hex, to_hex
from veritrain.store import CheckpointStore
from veritrain.training import TrainingEngine, TrainState

logger = logging.getLogger(__name__)

__all__ = ["step_function", "train_job"]


def step_function(engine: TrainingEngine) -> StepFn:
    """The honest step function of a job: one optimizer step in place (`engine.train_step`).

    `train_job` trains with it and `veritrain.bisection.StepTrajectory(step_fn=...)` replays
    with it; a testing-only cheating solver (`adversary.solver`) passes its own instead.

    Args:
        engine: the job's engine.

    Returns:
        A function advancing a `TrainState` from step t to t + 1 in place.
    """

    def advance(state: TrainState) -> None:
        engine.train_step(state)

    return advance


def train_job(
    engine: TrainingEngine,
    store: CheckpointStore,
    hashes: list[str],
    *,
    step_fn: StepFn | None = None,
    initial: Callable[[], TrainState] | None = None,
    on_checkpoint: Callable[[list[str]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    label: str = "training",
) -> bool:
    """Train `engine.spec` to `total_steps`, resuming after the checkpoints in `hashes`.

    Args:
        engine: the engine of the job's spec (profile already applied).
        store: checkpoint store; every checkpoint (step 0, k, ..., N) is put here.
        hashes: 0x-hex state hashes of the checkpoints already made (steps 0, k, ...),
            extended in place; pass `[]` to start from scratch.
        step_fn: advances a state by one step (default: the honest `step_function`).
        initial: builds state 0 when starting from scratch (default: the spec's
            seed-initialised `engine.init_state()`, the only one `commitCheckpoints` accepts).
        on_checkpoint: called with `hashes` after each new checkpoint (persist it there).
        should_stop: polled between steps; when it returns True the run stops early.
        label: progress bar description.

    Returns:
        True when all N/k + 1 checkpoints exist, False if stopped early.

    Raises:
        CheckpointHashMismatch: the last stored checkpoint is corrupt (never trusted).
        CheckpointNotFound: a recorded checkpoint is missing from the store.
        ValueError: a stored checkpoint at the wrong step.
    """
    advance_one = step_fn if step_fn is not None else step_function(engine)
    spec = engine.spec
    k, total = spec.checkpoint_interval, spec.total_steps

    def checkpoint(state: TrainState) -> TrainState:
        blob = engine.state_bytes(state)
        hashes.append(to_hex(store.put(blob)))
        if on_checkpoint is not None:
            on_checkpoint(hashes)
        return engine.load_state(blob)  # continue from what verifiers will load

    if hashes:
        blob = store.get(from_hex(hashes[-1]))  # re-hashed: a corrupt file raises
        state = engine.load_state(blob)
        if state.step != (len(hashes) - 1) * k:
            raise ValueError(
                f"checkpoint {len(hashes) - 1} holds step {state.step}, "
                f"expected {(len(hashes) - 1) * k}"
            )
        logger.info("%s: resuming from step %d", label, state.step)
    else:
        state = checkpoint(initial() if initial is not None else engine.init_state())

    with progress_bar(label, total) as advance:
        advance(state.step)
        while state.step < total:
            if should_stop is not None and should_stop():
                logger.info("%s: stopped at step %d", label, state.step)
                return False
            advance_one(state)
            advance(1)
            if state.step % k == 0:
                state = checkpoint(state)
    return len(hashes) == total // k + 1
