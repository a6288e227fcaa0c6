"""Resumable training of one job into a content-addressed checkpoint store.

`train_job` runs `veritrain.training.TrainingEngine` from the last stored checkpoint to step N,
writing a checkpoint every k steps and reporting each new state hash, so a solver killed at
any point resumes from its last checkpoint instead of from scratch. The checkpoint bytes are
made in the training loop (one copy of each tensor, into one buffer reused for every
checkpoint: `veritrain.state.StateBuffer`); hashing and the file write run on a writer thread
while the next segment trains. The canonical bytes hold the whole training
state, so training on from memory is training on from what a verifier loads: an honest
solver's segments replay bit for bit (the unit tests pin it for every preset and arithmetic).

A stored checkpoint that fails its hash check (a flipped bit on disk) is never trusted and
never a dead end: training is deterministic, so `restore_checkpoint` recomputes it by replay
from the last checkpoint that is still good (step 0 from the spec's seed) and overwrites the
bad file; `train_job` resumes through it.

The step function is a parameter (`step_fn`, default the honest `step_function`), so the
testing-only cheating solvers of `adversary.solver` train through the same code.

Run: not a script; `from solver.trainer import train_job`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from noderuntime import progress_bar
from veritrain.bisection import StepFn
from veritrain.errors import CheckpointHashMismatch, CheckpointNotFound
from veritrain.hexutil import from_hex, to_hex
from veritrain.state import StateBuffer, state_hash
from veritrain.store import CheckpointStore
from veritrain.training import TrainingEngine, TrainState

logger = logging.getLogger(__name__)

__all__ = ["restore_checkpoint", "step_function", "train_job"]


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


def restore_checkpoint(
    engine: TrainingEngine,
    store: CheckpointStore,
    hashes: list[bytes],
    index: int,
    *,
    step_fn: StepFn | None = None,
) -> bytes:
    """The bytes of checkpoint `index` (step `index * k`), recomputed when the stored file is
    missing or corrupt.

    Walks back from `index` to the last checkpoint whose file still re-hashes to its recorded
    hash (or to step 0, rebuilt from `engine.init_state()`), then replays forward one segment
    at a time exactly as `train_job` trained (each segment from the decoded bytes of the
    previous checkpoint), checks every rebuilt checkpoint against its recorded hash and puts
    it back in the store (overwriting the bad file). Cost: at most `index * k` steps.

    Args:
        engine: the job's engine.
        store: the checkpoint store.
        hashes: the recorded 32-byte state hashes of steps 0, k, ... (at least `index + 1`).
        index: the checkpoint (leaf) index.
        step_fn: the step rule the checkpoints were trained with (default: honest).

    Returns:
        The checkpoint bytes; `state_hash` of them equals `hashes[index]`.

    Raises:
        CheckpointHashMismatch: a replayed checkpoint does not hash to its recorded hash (the
            history cannot be reproduced: non-deterministic execution or a wrong record).
        IndexError: `index` is out of range of `hashes`.
    """
    advance_one = step_fn if step_fn is not None else step_function(engine)
    k = engine.spec.checkpoint_interval
    good = index
    blob: bytes | None = None
    while good >= 0:
        try:
            blob = store.get(hashes[good])
            break
        except (CheckpointHashMismatch, CheckpointNotFound) as exc:
            logger.warning("checkpoint at step %d is unusable (%s); recomputing it", good * k, exc)
            good -= 1
    if blob is None:
        good = 0
        blob = _checked_put(store, engine.state_bytes(engine.init_state()), hashes[0], 0)
    for i in range(good + 1, index + 1):
        state = engine.load_state(blob)
        while state.step < i * k:
            advance_one(state)
        blob = _checked_put(store, engine.state_bytes(state), hashes[i], i * k)
    if good < index:
        logger.info("checkpoint at step %d repaired by replay from step %d", index * k, good * k)
    return blob


def _checked_put(store: CheckpointStore, blob: bytes, expected: bytes, step: int) -> bytes:
    """Put a recomputed checkpoint after checking it against its recorded hash."""
    actual = state_hash(blob)
    if actual != bytes(expected):
        raise CheckpointHashMismatch(bytes(expected), actual, f"replay of step {step}")
    store.put(blob)
    return blob


def train_job(
    engine: TrainingEngine,
    store: CheckpointStore,
    hashes: list[str],
    *,
    step_fn: StepFn | None = None,
    initial: Callable[[], TrainState] | None = None,
    on_checkpoint: Callable[[list[str]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    give_up: Callable[[int], str | None] | None = None,
    label: str = "training",
    workers: int = 1,
    device: str = "cpu",
    threads: int | None = None,
) -> bool:
    """Train `engine.spec` to `total_steps`, resuming after the checkpoints in `hashes`.

    With `workers` W > 1 the steps run on W data-parallel processes
    (`solver.dataparallel.train_job_parallel`; W clamped to the job's `micro_batches`, so a
    job with one micro-batch trains here, on one process) to the same checkpoint bytes and
    hashes; W = 1 (the default) trains in this process.

    Args:
        engine: the engine of the job's spec (profile already applied).
        store: checkpoint store; every checkpoint (step 0, k, ..., N) is put here and
            fsynced on the writer thread (`store.sync(hashes)` before committing to them then
            skips these files and covers any from before a restart).
        hashes: 0x-hex state hashes of the checkpoints already made (steps 0, k, ...),
            extended in place; pass `[]` to start from scratch.
        step_fn: advances a state by one step (default: the honest `step_function`).
        initial: builds state 0 when starting from scratch (default: the spec's
            seed-initialised `engine.init_state()`, the only one `commitCheckpoints` accepts).
        on_checkpoint: called with `hashes` after each new checkpoint (persist it there).
        should_stop: polled between steps; when it returns True the run stops early.
        give_up: called with the current step (before each step); a returned reason stops
            the run early and is logged (e.g. the commit deadline can no longer be met).
        label: progress bar description.
        workers: W >= 1 processes; W > 1 needs the honest rules (`step_fn` and `initial`
            None) and checks `should_stop` and `give_up` at each checkpoint only.
        device: with W > 1, where a repro job's workers train (`"cpu"` or `"cuda"`).
        threads: with W > 1, this node's CPU threads, shared among the workers.

    Returns:
        True when all N/k + 1 checkpoints exist, False if stopped early.

    Raises:
        CheckpointHashMismatch: a corrupt stored checkpoint cannot be recomputed to its
            recorded hash (see `restore_checkpoint`; a corrupt file alone is repaired).
        ValueError: a stored checkpoint at the wrong step; W > 1 with `step_fn` or `initial`.
        ParallelTrainingError: W > 1 and a worker died or failed; the checkpoints made before
            are stored and recorded in `hashes`, and a new call resumes from them.
    """
    if workers != 1:
        from solver.dataparallel import effective_workers, train_job_parallel

        used = effective_workers(engine.spec, workers, device, label)
        if used > 1:
            if step_fn is not None or initial is not None:
                raise ValueError("data-parallel training runs the honest step rule from state 0")
            return train_job_parallel(
                engine,
                store,
                hashes,
                used,
                device=device,
                threads=threads,
                on_checkpoint=on_checkpoint,
                should_stop=should_stop,
                give_up=give_up,
                label=label,
            )
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="checkpoint-writer") as writer:
        return _train(
            engine,
            store,
            hashes,
            writer,
            step_fn=step_fn,
            initial=initial,
            on_checkpoint=on_checkpoint,
            should_stop=should_stop,
            give_up=give_up,
            label=label,
        )


def _train(
    engine: TrainingEngine,
    store: CheckpointStore,
    hashes: list[str],
    writer: ThreadPoolExecutor,
    *,
    step_fn: StepFn | None,
    initial: Callable[[], TrainState] | None,
    on_checkpoint: Callable[[list[str]], None] | None,
    should_stop: Callable[[], bool] | None,
    give_up: Callable[[int], str | None] | None,
    label: str,
) -> bool:
    """`train_job`'s loop. A checkpoint's bytes are made in the loop (training changes the
    state in place right after); hashing, the file write and `on_checkpoint` run on the one
    `writer` thread while the next segment trains (hashlib and file I/O release the GIL);
    training waits at a checkpoint until the previous one is written. The pending write is
    finished, and its error raised, before this returns."""
    advance_one = step_fn if step_fn is not None else step_function(engine)
    spec = engine.spec
    k, total = spec.checkpoint_interval, spec.total_steps
    pending: list[Future[None]] = []
    buffer = StateBuffer()  # one checkpoint in flight: `settle` frees it for the next

    def persist(blob: memoryview, index: int) -> None:
        if len(hashes) != index:  # never record a checkpoint at another one's index
            raise RuntimeError(f"checkpoint {index} written after {len(hashes)} recorded")
        # fsynced here, on the writer thread, while the next segment trains: the solver's
        # `store.sync` before its commit then only fsyncs the directory
        hashes.append(to_hex(store.put(blob)))
        if on_checkpoint is not None:
            on_checkpoint(hashes)

    def settle() -> None:
        """Finish the pending write and raise its error (disk full...)."""
        while pending:
            pending.pop(0).result()

    def checkpoint(state: TrainState) -> TrainState:
        # Checkpoint i is written while segment i + 1 trains, never more: `settle` waits for
        # it before its bytes are overwritten with checkpoint i + 1's (one reused buffer), and
        # a failed write stops training before a later checkpoint is handed to the writer.
        settle()
        index = len(hashes)
        blob = buffer.encode(state.step, engine.state_tensors(state))
        pending.append(writer.submit(persist, blob, index))
        # Training goes on from the in-memory state: the canonical bytes hold all of it
        # (weights, AdamW moments, step), so decoding them would rebuild the same state and
        # copy every tensor a second time (pinned by the solver's unit tests per preset).
        return state

    try:
        finished = _loop(
            engine, store, hashes, checkpoint, advance_one, initial, should_stop, give_up, label
        )
    except BaseException:
        wait(pending)  # the checkpoints made so far are stored and recorded before it propagates
        raise
    settle()
    return finished and len(hashes) == total // k + 1


def _loop(
    engine: TrainingEngine,
    store: CheckpointStore,
    hashes: list[str],
    checkpoint: Callable[[TrainState], TrainState],
    advance_one: StepFn,
    initial: Callable[[], TrainState] | None,
    should_stop: Callable[[], bool] | None,
    give_up: Callable[[int], str | None] | None,
    label: str,
) -> bool:
    """Train from the last checkpoint in `hashes` (restored, repaired if corrupt) or from
    state 0, checkpointing every k steps; False when stopped or given up early."""
    k, total = engine.spec.checkpoint_interval, engine.spec.total_steps
    if hashes:
        recorded = [from_hex(h) for h in hashes]
        blob = restore_checkpoint(engine, store, recorded, len(recorded) - 1, step_fn=advance_one)
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
            reason = give_up(state.step) if give_up is not None else None
            if reason is not None:
                logger.warning("%s: giving up at step %d: %s", label, state.step, reason)
                return False
            advance_one(state)
            advance(1)
            if state.step % k == 0:
                state = checkpoint(state)
    return True
