"""Training one job with W data-parallel processes into the solver's checkpoint store.

`solver.trainer.train_job(workers=W)` comes here when W > 1: the job's steps run on W worker
processes through `veritrain.parallel.train_parallel` (each takes whole micro-batches of
`JobSpec.micro_batches`, gradients folded in one fixed order), whose rank 0 hands over the
canonical bytes of every checkpoint. They are stored, hashed and recorded exactly as one
process's (`CheckpointStore.put`, the same 0x-hex hashes, the same `on_checkpoint`), so the
commitments do not depend on W: the unit tests pin W = 2 to W = 1's hashes.

W is clamped, never refused: to the job's `micro_batches` (a job with one micro-batch trains
on one process, said in one log line) and, on CUDA, to the GPU count. A dead worker stops the
attempt with `ParallelTrainingError` after the checkpoints handed over so far are stored and
recorded; the caller resumes from them (the solver node's next round) and reaches the bytes of
an uninterrupted run.

Run: not a script; `solver.trainer.train_job(..., workers=2)`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from noderuntime import progress_bar
from veritrain.errors import CheckpointHashMismatch
from veritrain.hexutil import from_hex, to_hex
from veritrain.parallel import train_parallel
from veritrain.spec import NATIVE_ARITH, JobSpec
from veritrain.store import CheckpointStore
from veritrain.training import TrainingEngine

logger = logging.getLogger(__name__)

__all__ = ["effective_workers", "train_job_parallel"]


class _Stopped(Exception):
    """Raised in the checkpoint hand-over to end a run early (should_stop or give_up)."""


def effective_workers(spec: JobSpec, workers: int, device: str = "cpu", label: str = "") -> int:
    """The number of processes a job trains with when `workers` are asked for.

    At most `spec.micro_batches` (each worker takes whole micro-batches) and, on CUDA, at most
    the GPU count (one GPU per worker); a clamp is said in one INFO line.

    Args:
        spec: the job.
        workers: W >= 1 asked for (`solver run --workers`).
        device: `"cpu"` or `"cuda"`, where the job trains.
        label: the job's name in the log line.

    Returns:
        The W used, 1 <= W <= `workers`.

    Raises:
        ValueError: `workers` < 1.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    used = min(workers, spec.micro_batches)
    if used < workers:
        logger.info(
            "%s: the job has %d micro-batch(es) per step: training on %d process(es), not %d",
            label or "training",
            spec.micro_batches,
            used,
            workers,
        )
    if device == "cuda" and used > 1:
        import torch

        gpus = torch.cuda.device_count()
        if gpus < used:
            logger.info("%s: %d GPU(s): training on %d process(es)", label, gpus, max(gpus, 1))
            used = max(gpus, 1)
    return used


def train_job_parallel(
    engine: TrainingEngine,
    store: CheckpointStore,
    hashes: list[str],
    workers: int,
    *,
    device: str = "cpu",
    threads: int | None = None,
    on_checkpoint: Callable[[list[str]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    give_up: Callable[[int], str | None] | None = None,
    label: str = "training",
    timeout_s: float = 300.0,
) -> bool:
    """`train_job` on `workers` processes: train `engine.spec` to `total_steps`, resuming after
    the checkpoints in `hashes`, with the honest step rule from the engine's state 0.

    Args:
        engine: the job's engine in this process: it builds state 0, restores (and repairs) the
            checkpoint to resume from; the workers build their own from `engine.spec`.
        store: the checkpoint store (every checkpoint put here, fsynced, by a writer thread
            while the workers train on).
        hashes: 0x-hex state hashes of the checkpoints made (steps 0, k, ...), extended in place.
        workers: W, 2 <= W <= `spec.micro_batches` (see `effective_workers`).
        device: `"cpu"` (gloo) or `"cuda"` (nccl, one GPU per worker) for a repro job; a native
            job trains on its profile's device whatever this says.
        threads: CPU threads of this node (None: this machine's cores); each worker takes
            `threads // W` (at least 1). A native job uses its profile's count.
        on_checkpoint: called with `hashes` after each new checkpoint is recorded.
        should_stop: polled at each checkpoint (every k steps, not every step: the workers
            train a segment without stopping); True ends the run early.
        give_up: called with the step at the start and at each checkpoint; a reason ends the
            run early (logged).
        label: progress bar description and log prefix.
        timeout_s: seconds a worker waits for a peer or for a checkpoint to be taken.

    Returns:
        True when all N/k + 1 checkpoints exist, False if stopped early.

    Raises:
        ParallelTrainingError: a worker died or failed; the checkpoints handed over before are
            stored and recorded in `hashes` (resume from them).
        CheckpointHashMismatch: a stored checkpoint cannot be recomputed to its recorded hash,
            or a worker's bytes do not hash to the hash it reported.
        SpecError: `workers` out of range for the job or the device.
        ValueError: a stored checkpoint at the wrong step.
    """
    from solver.trainer import restore_checkpoint, step_function

    spec = engine.spec
    k, total = spec.checkpoint_interval, spec.total_steps
    native = spec.profile.arith == NATIVE_ARITH
    where = (spec.profile.device or "cpu") if native else device
    per_worker = None if native else max(1, (threads or os.cpu_count() or 1) // workers)
    pending: list[Future[None]] = []

    def persist(blob: bytes, index: int, digest: bytes) -> None:
        if len(hashes) != index:  # never record a checkpoint at another one's index
            raise RuntimeError(f"checkpoint {index} written after {len(hashes)} recorded")
        stored = store.put(blob)
        if stored != digest:
            raise CheckpointHashMismatch(digest, stored, f"checkpoint {index} from worker 0")
        hashes.append(to_hex(stored))
        if on_checkpoint is not None:
            on_checkpoint(hashes)

    def settle() -> None:
        while pending:
            pending.pop(0).result()

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="checkpoint-writer") as writer:
        if hashes:
            recorded = [from_hex(h) for h in hashes]
            index = len(recorded) - 1
            start = restore_checkpoint(
                engine, store, recorded, index, step_fn=step_function(engine)
            )
            step = engine.load_state(start).step
            if step != index * k:
                raise ValueError(f"checkpoint {index} holds step {step}, expected {index * k}")
            logger.info("%s: resuming from step %d", label, step)
        else:
            state = engine.init_state()
            start, step = engine.state_bytes(state), state.step
            persist(start, 0, engine.state_hash(state))

        def stop_reason(at: int) -> str | None:
            if should_stop is not None and should_stop():
                logger.info("%s: stopped at step %d", label, at)
                return "stopped"
            reason = give_up(at) if give_up is not None else None
            if reason is not None:
                logger.warning("%s: giving up at step %d: %s", label, at, reason)
            return reason

        if step < total and stop_reason(step) is not None:
            return False
        logger.info(
            "%s: training steps %d to %d on %d data-parallel workers", label, step, total, workers
        )
        with progress_bar(label, total) as advance:
            advance(step)

            def take(at: int, blob: bytes, digest: bytes) -> None:
                # Rank 0 waits until this returns; the write itself runs on the writer thread
                # (one checkpoint in flight, as in `train_job`).
                settle()
                pending.append(writer.submit(persist, blob, len(hashes), digest))
                advance(k)
                if at < total and stop_reason(at) is not None:
                    raise _Stopped

            try:
                if step < total:
                    train_parallel(
                        spec,
                        workers,
                        start,
                        total,
                        take,
                        device=where,
                        threads=per_worker,
                        timeout_s=timeout_s,
                    )
            except _Stopped:
                settle()
                return False
            except BaseException:
                wait(pending)  # the checkpoints handed over are stored and recorded first
                raise
        settle()
    return len(hashes) == total // k + 1
