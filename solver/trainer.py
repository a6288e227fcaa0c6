"""Resumable training of one job into a content-addressed checkpoint store.

`train_job` runs `veritrain.training.TrainingEngine` from the last stored checkpoint to step N,
writing a checkpoint every k steps and reporting each new state hash, so a solver killed at
any point resumes from its last checkpoint instead of from scratch. After each checkpoint the
run continues from the *decoded* checkpoint bytes, i.e. from exactly the state a verifier
will load, so an honest solver's segments replay bit for bit.

ADVERSARY MODES (for testing the protocol only; an honest solver uses `adversary=None`):

- `"skip-steps"`: in every segment with index >= 2 the solver skips every other optimizer
  step (odd steps only advance the step counter: it saves compute and claims full work).
- `"perturb"`: at the end of every segment with index >= 2 the solver adds gaussian noise
  (std 1e-3) to the weights before checkpointing (a forged/tampered state).

Both still commit a *consistent* Merkle tree over the states they actually produced, so only
replay catches them, not a proof check.

Run: not a script; `from solver.trainer import train_job`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal

from noderuntime import progress_bar
from veritrain.hexutil import from_hex, to_hex
from veritrain.spec import JobSpec
from veritrain.store import CheckpointStore
from veritrain.training import TrainingEngine, TrainState

logger = logging.getLogger(__name__)

__all__ = [
    "Adversary",
    "ADVERSARIES",
    "CHEAT_FROM_SEGMENT",
    "PERTURB_STD",
    "advance_one",
    "step_function",
    "train_job",
]

Adversary = Literal["skip-steps", "perturb"]
ADVERSARIES: tuple[str, ...] = ("skip-steps", "perturb")
CHEAT_FROM_SEGMENT = 2
"""Adversaries behave honestly in segments 0 and 1 and cheat from this segment on."""
PERTURB_STD = 1e-3
"""Standard deviation of the `"perturb"` adversary's noise (parameter units)."""


def _perturb_seed(spec: JobSpec, segment: int) -> int:
    # Deterministic per (job seed, segment): a restarted cheater produces the same states.
    return (spec.seed * 1_000_003 + segment) % (2**63)


def _one_step(engine: TrainingEngine, state: TrainState, adversary: Adversary | None) -> None:
    segment = state.step // engine.spec.checkpoint_interval
    if adversary == "skip-steps" and segment >= CHEAT_FROM_SEGMENT and state.step % 2 == 1:
        from adversary.training import skip_step

        skip_step(state)  # ADVERSARY: no optimizer update, the counter still advances
        return
    engine.train_step(state)


def advance_one(engine: TrainingEngine, state: TrainState, adversary: Adversary | None) -> None:
    """Advance `state` by one step exactly as `train_job` does, tampering included.

    Honest: one optimizer step. ADVERSARY modes: `"skip-steps"` skips the update on odd steps
    of cheating segments; `"perturb"` adds its seeded noise when the step lands on the end of a
    cheating segment. Replaying a segment with this function therefore reproduces the states
    the solver actually committed (and serves under `/states/{step}`).

    Args:
        engine: the job's engine.
        state: state t, advanced in place to t + 1.
        adversary: None (honest) or an ADVERSARY mode.
    """
    _one_step(engine, state, adversary)
    k = engine.spec.checkpoint_interval
    if adversary == "perturb" and state.step % k == 0:
        segment = state.step // k - 1
        if segment >= CHEAT_FROM_SEGMENT:
            from adversary.training import perturb_weights

            # ADVERSARY: tamper with the weights before committing them
            perturb_weights(state, PERTURB_STD, seed=_perturb_seed(engine.spec, segment))


def step_function(
    engine: TrainingEngine, adversary: Adversary | None
) -> Callable[[TrainState], None]:
    """`advance_one` bound to an engine and a mode: the step function of the states this
    solver produces (`veritrain.bisection.StepTrajectory(step_fn=...)`)."""
    return lambda state: advance_one(engine, state, adversary)


def train_job(
    engine: TrainingEngine,
    store: CheckpointStore,
    hashes: list[str],
    *,
    adversary: Adversary | None = None,
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
        adversary: None for honest training, else an ADVERSARY mode (module docstring).
        on_checkpoint: called with `hashes` after each new checkpoint (persist it there).
        should_stop: polled between steps; when it returns True the run stops early.
        label: progress bar description.

    Returns:
        True when all N/k + 1 checkpoints exist, False if stopped early.

    Raises:
        CheckpointHashMismatch: the last stored checkpoint is corrupt (never trusted).
        CheckpointNotFound: a recorded checkpoint is missing from the store.
        ValueError: unknown adversary mode or a stored checkpoint at the wrong step.
    """
    if adversary is not None and adversary not in ADVERSARIES:
        raise ValueError(f"unknown adversary mode {adversary!r}; choose from {ADVERSARIES}")
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
        state = checkpoint(engine.init_state())
    if adversary is not None:
        logger.warning("%s: ADVERSARY mode %r active (testing only)", label, adversary)

    with progress_bar(label, total) as advance:
        advance(state.step)
        while state.step < total:
            if should_stop is not None and should_stop():
                logger.info("%s: stopped at step %d", label, state.step)
                return False
            advance_one(engine, state, adversary)
            advance(1)
            if state.step % k == 0:
                state = checkpoint(state)
    return len(hashes) == total // k + 1
