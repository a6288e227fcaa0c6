"""Data-parallel training: one job on W worker processes, the bytes of one device.

A spec with `micro_batches` m (`veritrain.spec.JobSpec`) cuts each step's batch into m
micro-batches and folds their gradients in the fixed order 0..m-1
(`veritrain.training.TrainingEngine.apply_micro_gradients`). `train_parallel` runs that step on
W <= m processes through `torch.distributed` (gloo on CPU, nccl on CUDA): rank r reads only the
rows of and computes the micro-batches r, r + W, r + 2W, ... (`TrainingEngine.batch(step,
rows)`: a "tokens" job's rank fetches only the chunks its windows use); one `all_gather`
(never `all_reduce`, whose summation order is unspecified) gives every rank every micro-batch's
loss and gradient, and every rank folds them in order 0..m-1 exactly as one device does, then
takes the same optimizer step, so all ranks hold identical replicas and a verifier replays the
job on one device (`TrainingEngine.run`) to the same state hashes.

The workers are started by this module (as torchrun would start them): a `forkserver` whose
server has imported torch and the engine once (later runs in the same program start in a
fraction of a second; `spawn` where forkserver is missing), a `file://` rendezvous in a
temporary directory (no TCP port to pick). Rank 0 alone encodes and hashes the checkpoints and
hands them to the caller's process, which runs `on_checkpoint` and acknowledges; the caller
watches the workers, and one that dies (killed, crashed) or fails stops the run with
`ParallelTrainingError` within a fraction of a second: training resumes from the last
checkpoint the caller received and reaches the same bytes.

Run: `.venv/bin/python -c "from veritrain.presets import preset; from veritrain.parallel import
train_parallel as t; print(len(t(preset('digits-mlp', 'repro2', micro_batches=4,
total_steps=20, checkpoint_interval=10), 2)))"`.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import queue
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any

import torch
import torch.distributed as dist

from veritrain.errors import ParallelTrainingError, SpecError
from veritrain.spec import NATIVE_ARITH, JobSpec
from veritrain.state import state_hash
from veritrain.training import TrainingEngine

__all__ = ["OnCheckpoint", "train_parallel"]

OnCheckpoint = Callable[[int, bytes, bytes], None]
"""Called in the caller's process as `on_checkpoint(step, state_bytes, state_hash)` for each
step `s` with `s % spec.checkpoint_interval == 0` reached by the run (not the start state);
the canonical checkpoint bytes ("VTCK\\x01") and their 32-byte state hash. Training waits
until it returns."""

_POLL_S = 0.1  # how often the caller looks at its workers while waiting
_GRACE_S = 2.0  # after a failure: how long to wait for the other workers' own reports
_PRELOAD = [
    "torch",
    "torch.distributed",
    "torch._inductor",  # imported by torch.use_deterministic_algorithms (seconds)
    "veritrain.parallel",
    "veritrain.repro",
    "sklearn.datasets",
]
"""Imported once by the forkserver (a missing one is skipped): what every worker would import."""


def _context() -> BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


def train_parallel(
    spec: JobSpec,
    workers: int,
    start_state: bytes | None = None,
    until_step: int | None = None,
    on_checkpoint: OnCheckpoint | None = None,
    *,
    device: str = "cpu",
    threads: int | None = None,
    timeout_s: float = 300.0,
) -> bytes:
    """Train `spec` with `workers` processes from `start_state` to `until_step`.

    The result is the bytes `TrainingEngine.run` gives on one device from the same state
    (`JobSpec.micro_batches` defines the step; W does not enter it).

    Args:
        spec: the job; `spec.micro_batches` >= `workers`.
        workers: W >= 1 processes; rank r computes micro-batches r, r + W, ...
        start_state: canonical checkpoint bytes to resume from (hash checks are the caller's
            job), or None for the spec's state 0.
        until_step: the step to stop at (default `spec.total_steps`), at or after the start
            state's step and at most `spec.total_steps`.
        on_checkpoint: see `OnCheckpoint`; runs in the caller's process.
        device: `"cpu"` (gloo) or `"cuda"` (nccl; rank r on GPU r, so W <= the GPU count).
            A native spec must name its profile's device.
        threads: CPU threads per worker (default: this machine's cores / W, at least 1);
            native specs use their profile's count.
        timeout_s: seconds a collective or the hand-over of a checkpoint may wait for a
            peer before the workers give up (a dead worker is noticed sooner, by its exit).

    Returns:
        The canonical checkpoint bytes at `until_step`.

    Raises:
        SpecError: `workers` < 1 or > `spec.micro_batches`, `until_step` out of range, an
            unknown device, a native spec on another device than its profile's, or fewer GPUs
            than workers.
        ParallelTrainingError: a worker died or failed (the message names which and why); the
            checkpoints already handed to `on_checkpoint` are valid resume points.
        CheckpointFormatError, DatasetError, ProfileUnavailable: raised by a worker building
            its engine, reported as `ParallelTrainingError` with that message.
    """
    if workers < 1 or workers > spec.micro_batches:
        raise SpecError(
            f"workers must be in [1, micro_batches = {spec.micro_batches}], got {workers}"
        )
    until = spec.total_steps if until_step is None else until_step
    if not 0 <= until <= spec.total_steps:
        raise SpecError(f"until_step {until} must be in [0, {spec.total_steps}]")
    if device not in ("cpu", "cuda"):
        raise SpecError(f"unknown device {device!r} (use 'cpu' or 'cuda')")
    if spec.profile.arith == NATIVE_ARITH and device != spec.profile.device:
        raise SpecError(
            f"a native job pins device {spec.profile.device!r}; only repro jobs run anywhere"
        )
    if device == "cuda" and workers > torch.cuda.device_count():
        raise SpecError(
            f"{workers} workers need {workers} GPUs, torch sees {torch.cuda.device_count()}"
        )
    if threads is None:
        threads = max(1, (os.cpu_count() or 1) // workers)
    ctx = _context()
    with tempfile.TemporaryDirectory(prefix="vt-dp-") as tmp:
        init = "file://" + os.path.join(tmp, "rendezvous")
        out_q: Any = ctx.Queue()
        ack_q: Any = ctx.Queue()
        args = (
            workers,
            init,
            spec.model_dump_json(),
            start_state,
            until,
            device,
            threads,
            timeout_s,
            out_q,
            ack_q,
        )
        procs = [
            ctx.Process(  # type: ignore[attr-defined]
                target=_worker, args=(rank, *args), name=f"veritrain-dp-rank{rank}", daemon=True
            )
            for rank in range(workers)
        ]
        try:
            for p in procs:
                p.start()
            return _supervise(procs, out_q, ack_q, until, on_checkpoint)
        finally:
            _stop(procs)


def _supervise(
    procs: list[BaseProcess],
    out_q: Any,
    ack_q: Any,
    until: int,
    on_checkpoint: OnCheckpoint | None,
) -> bytes:
    """Relay rank 0's states to the caller until `until`; raise on any worker's failure."""
    last = "none"
    while True:
        try:
            msg = out_q.get(timeout=_POLL_S)
        except queue.Empty:
            if any(p.exitcode is not None for p in procs):
                raise ParallelTrainingError(_failure(procs, out_q, {}, last)) from None
            continue
        if msg[0] == "error":
            raise ParallelTrainingError(_failure(procs, out_q, {msg[1]: msg[2]}, last))
        _, step, blob, digest, is_checkpoint = msg
        if is_checkpoint:
            if on_checkpoint is not None:
                on_checkpoint(step, blob, digest)
            last = f"step {step}"
        ack_q.put(step)
        if step == until:
            for p in procs:
                p.join(timeout=30.0)
            return bytes(blob)


def _failure(procs: list[BaseProcess], out_q: Any, errors: dict[int, str], last: str) -> str:
    """One line naming each worker that died or failed, and the last checkpoint handed over."""
    deadline = time.monotonic() + _GRACE_S
    while time.monotonic() < deadline:  # let the others report (or exit) too
        try:
            msg = out_q.get(timeout=_POLL_S)
        except queue.Empty:
            if all(p.exitcode is not None for p in procs):
                break
            continue
        if msg[0] == "error":
            errors.setdefault(msg[1], msg[2])
    parts = []
    for rank, p in enumerate(procs):
        code = p.exitcode
        if code is not None and code < 0:
            parts.append(f"worker {rank} (pid {p.pid}) was killed by {signal.Signals(-code).name}")
        elif rank in errors:
            parts.append(f"worker {rank} failed: {errors[rank]}")
        elif code not in (None, 0):
            parts.append(f"worker {rank} (pid {p.pid}) exited with code {code}")
        elif code == 0:
            parts.append(f"worker {rank} (pid {p.pid}) exited before the run ended")
    # A killed worker is the cause; the errors it made the others raise come after it.
    parts.sort(key=lambda s: "killed" not in s)
    return (
        "data-parallel training stopped: "
        + "; ".join(parts or ["a worker stopped"])
        + f" (last checkpoint handed over: {last})"
    )


def _stop(procs: list[BaseProcess]) -> None:
    """Terminate, then kill, every worker still running, and reap them all (those that never
    started, when starting one failed, are skipped)."""
    procs = [p for p in procs if p.pid is not None]
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5.0)
        if p.is_alive():
            p.kill()
            p.join(timeout=5.0)


def _worker(
    rank: int,
    world: int,
    init: str,
    spec_json: str,
    start_state: bytes | None,
    until: int,
    device: str,
    threads: int,
    timeout_s: float,
    out_q: Any,
    ack_q: Any,
) -> None:
    """One rank: build the engine, join the group, train; report an exception and exit 1."""
    try:
        spec = JobSpec.model_validate_json(spec_json)
        if device == "cuda":
            torch.cuda.set_device(rank)
        native = spec.profile.arith == NATIVE_ARITH
        engine = TrainingEngine(
            spec, device=None if native else device, threads=None if native else threads
        )
        dist.init_process_group(
            "nccl" if device == "cuda" else "gloo",
            init_method=init,
            rank=rank,
            world_size=world,
            timeout=timedelta(seconds=timeout_s),
        )
        try:
            _train(engine, spec, rank, world, start_state, until, timeout_s, out_q, ack_q)
        finally:
            dist.destroy_process_group()
    except BaseException as exc:  # reported to the caller, which raises it
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        out_q.put(("error", rank, detail.splitlines()[-1] if detail else type(exc).__name__))
        out_q.close()
        out_q.join_thread()
        sys.exit(1)


def _train(
    engine: TrainingEngine,
    spec: JobSpec,
    rank: int,
    world: int,
    start_state: bytes | None,
    until: int,
    timeout_s: float,
    out_q: Any,
    ack_q: Any,
) -> None:
    """Rank `rank`'s training loop (see the module docstring for the rule)."""
    state = engine.load_state(start_state) if start_state is not None else engine.init_state()
    if state.step > until:
        raise SpecError(f"the start state is at step {state.step}, past until_step {until}")
    params = list(state.model.parameters())
    sizes = [p.numel() for p in params]
    m = spec.micro_batches
    slots = math.ceil(m / world)  # rows per rank; a rank with fewer micro-batches sends zeros
    mine = list(range(rank, m, world))
    width = 1 + sum(sizes)  # the loss, then every gradient flattened in parameter order
    dtype = params[0].dtype
    size = spec.batch_size // m  # rows per micro-batch
    start_step = state.step
    while state.step < until:
        send = torch.zeros((slots, width), dtype=dtype, device=engine.device)
        for j, i in enumerate(mine):  # only this rank's rows are read (a tokens job's chunks)
            x, y = engine.batch(state.step, (i * size, (i + 1) * size))
            loss, grads = engine.micro_gradient(state, x, y)
            send[j, 0] = loss
            torch.cat([g.reshape(-1) for g in grads], out=send[j, 1:])
        recv = [torch.empty_like(send) for _ in range(world)]
        dist.all_gather(recv, send)
        rows = [recv[i % world][i // world] for i in range(m)]
        engine.apply_micro_gradients(
            state,
            [row[0] for row in rows],
            [
                [g.view(p.shape) for g, p in zip(torch.split(row[1:], sizes), params, strict=True)]
                for row in rows
            ],
        )
        is_checkpoint = state.step % spec.checkpoint_interval == 0
        if rank == 0 and (is_checkpoint or state.step == until):
            _hand_over(engine, state, is_checkpoint, timeout_s, out_q, ack_q)
    if rank == 0 and state.step == start_step:  # nothing to train: the start state is the result
        _hand_over(engine, state, False, timeout_s, out_q, ack_q)
    dist.barrier()


def _hand_over(
    engine: TrainingEngine,
    state: Any,
    is_checkpoint: bool,
    timeout_s: float,
    out_q: Any,
    ack_q: Any,
) -> None:
    """Rank 0: send the state's bytes and hash to the caller and wait for its acknowledgement."""
    blob = bytes(engine.state_buffer(state))
    out_q.put(("state", state.step, blob, state_hash(blob), is_checkpoint))
    try:
        ack_q.get(timeout=timeout_s)
    except queue.Empty:
        raise ParallelTrainingError(
            f"the caller did not take the state at step {state.step} within {timeout_s} s"
        ) from None
