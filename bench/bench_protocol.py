"""Benchmark: what verification costs, measured in one run.

Run: ``.venv/bin/python -m bench.bench_protocol`` (``--skip-gas`` to leave out the chain part,
``--repeats 5`` to take the median of more runs; with ``--skip-gas`` the commit
transaction is left out of the solver overhead; ``--device cuda`` trains tables 1 and 2 on a
GPU; ``--floor`` prints only table 1b, the solver overhead split into the encoding and the file
system's share).

Prints three tables:
1. Solver overhead: the same training loop bare, then with what the protocol adds (canonical
   state serialization + the BLAKE3 state hash every k steps, content-addressed checkpoint
   writes, the Merkle tree, the on-chain commit transaction), for the default digits job and a
   wider MLP.
2. Verifier cost: checking the solver's claims on the q sampled segments (checkpoint load, hash
   check against the claimed start hash, k steps of replay, end hash against the claimed end
   hash; the Merkle multiproof is checked on chain when the solver reveals its secret,
   docs/FORCED_ERRORS.md) as a fraction of the solver's compute for the job, at the default q and
   k, against the q*k/N expected from replay alone.
3. Gas of every protocol action, from the receipts of a real run on Anvil (an honest job, then
   a cheating job that goes through a dispute).
Timings are wall-clock medians on this machine; ratios are taken within the same run.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

SAMPLES_Q = 3  # the default q of ProtocolParams.demo()


def interleaved(
    fns: dict[str, Callable[[], Any]],
    repeats: int,
    untimed: dict[str, Callable[[], Any]] | None = None,
) -> dict[str, list[float]]:
    """Wall times (s) of ``repeats`` rounds, each round calling every function once in turn,
    so that a noisy machine slows both sides of a ratio alike; ``untimed[name]``, when given,
    runs right after each call of ``fns[name]``, outside its time (clean-up)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
            if untimed is not None and name in untimed:
                untimed[name]()
    return times


def _bench_model(
    label: str, spec: Any, repeats: int, commit_s: float
) -> tuple[list[str], list[str]]:
    """Solver and verifier rows for one job spec.

    The solver side is the solver's own `solver.trainer.train_job` (canonical bytes every k
    steps, one copy of each tensor, hashed and written to the content-addressed store off the
    training thread while the next segment trains, without fsync) plus the fsync of every file
    before the commit and the Merkle tree, against the same steps bare; ``commit_s``, the
    measured wall time of the commit transaction, is added to the protocol side (one
    transaction per job whatever N is).
    """
    from solver.trainer import train_job
    from veritrain.forced import ForcedDraw, build_claims
    from veritrain.merkle import checkpoint_tree
    from veritrain.replay import replay_segment
    from veritrain.state import state_hash
    from veritrain.store import CheckpointStore
    from veritrain.training import TrainingEngine, apply_profile

    engine = TrainingEngine(spec)
    apply_profile(spec.profile)
    n, k = spec.total_steps, spec.checkpoint_interval

    def bare() -> None:
        engine.run(engine.init_state(), n)

    hashes: list[str] = []
    blobs: dict[int, bytes] = {}

    root = Path(tempfile.mkdtemp(prefix="bench-store-"))

    def protocol() -> None:
        store = CheckpointStore(root)
        hashes.clear()
        if not train_job(engine, store, hashes):
            raise RuntimeError("training stopped early")
        store.sync(hashes)  # what the solver does before it commits: one fsync per file
        checkpoint_tree([bytes.fromhex(h[2:]) for h in hashes], k).root  # noqa: B018
        if not blobs:
            for i, h in enumerate(hashes):
                blobs[i * k] = store.get(bytes.fromhex(h[2:]))

    def clear_store() -> None:
        # a solver keeps its checkpoints: deleting them is the benchmark's own clean-up
        shutil.rmtree(root)
        root.mkdir()

    try:
        times = interleaved(
            {"bare": bare, "protocol": protocol}, repeats, untimed={"protocol": clear_store}
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    bare_min, proto_min = min(times["bare"]), min(times["protocol"]) + commit_s
    bare_med = statistics.median(times["bare"])
    proto_med = statistics.median(times["protocol"]) + commit_s
    size = len(blobs[n])
    solver_row = [
        label,
        str(n),
        str(k),
        f"{bare_min:.3f} / {bare_med:.3f}",
        f"{commit_s:.3f}",
        f"{proto_min:.3f} / {proto_med:.3f}",
        f"{(proto_min / bare_min - 1) * 100:+.1f}% / {(proto_med / bare_med - 1) * 100:+.1f}%",
        f"{size:,}",
    ]

    segments = [1, spec.num_segments // 2, spec.num_segments - 1][:SAMPLES_Q]
    raw = [bytes.fromhex(h[2:]) for h in hashes]
    # the solver's claims on the sampled segments (no forced error: an honest replay matches)
    claims = build_claims(segments, raw, ForcedDraw(False, 0, b"\x00" * 32))

    def verify() -> None:
        for j, s in enumerate(segments):
            start, end = s * k, (s + 1) * k
            start_blob = blobs[start]
            if state_hash(start_blob) != claims.start_hashes[j]:
                raise RuntimeError("start checkpoint does not match its claim")
            end_blob = replay_segment(engine, start_blob, end)
            if state_hash(end_blob) != claims.end_hashes[j]:
                raise RuntimeError(f"segment {s} did not replay bit-exactly")

    verify_s = statistics.median(interleaved({"verify": verify}, repeats)["verify"])
    verifier_row = [
        label,
        str(len(segments)),
        str(k),
        str(n),
        f"{proto_med:.3f}",
        f"{verify_s:.3f}",
        f"{verify_s / proto_med:.1%}",
        f"{len(segments) * k / n:.1%}",
    ]
    return solver_row, verifier_row


def bench_solver_and_verifier(
    repeats: int, commit_s: float, presets: list[str], steps: int | None, device: str = "cpu"
) -> tuple[Table, Table]:
    """Tables 1 and 2: solver overhead and verifier cost fraction, per preset (native, on
    ``device``: ``"cpu"`` as the presets pin it, or ``"cuda"``)."""
    from veritrain.presets import preset
    from veritrain.spec import ExecutionProfile

    solver_table = Table(
        "preset",
        "N",
        "k",
        "bare (s, min / median)",
        "commit tx (s)",
        "with protocol (s, min / median)",
        "overhead (min / median)",
        "checkpoint (bytes)",
        title="1. Solver: train_job (hashing, checkpoint writes, Merkle tree) and commit tx vs "
        f"bare training, interleaved runs ({device})",
    )
    verifier_table = Table(
        "preset",
        "q",
        "k",
        "N",
        "solver (s)",
        "verifier (s)",
        "verifier / solver",
        "q*k/N",
        title=f"2. Verifier: replaying q sampled segments vs the solver's compute ({device})",
    )
    for name in presets:
        overrides: dict[str, Any] = {}
        if device != "cpu":
            overrides.update(profile=ExecutionProfile(device=device))
        if steps is not None:
            k = preset(name, "native").checkpoint_interval
            overrides.update(total_steps=max(k, steps // k * k))
        spec = preset(name, "native", **overrides)
        solver_row, verifier_row = _bench_model(name, spec, repeats, commit_s)
        solver_table.add_row(*solver_row)
        verifier_table.add_row(*verifier_row)
    return solver_table, verifier_table


# The checkpoint I/O alone, in a process of its own: every `interval` seconds one file of
# `size` random bytes is written to a fresh temp file, fsynced and renamed into `folder`, as the
# solver's writer does (argv: folder, size in bytes, interval in seconds).
_IO_ELSEWHERE = """
import os, sys, time
folder, size, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
blob, i = os.urandom(size), 0
while True:
    path = os.path.join(folder, str(i % 64))
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    view = memoryview(blob)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)
    os.close(fd)
    os.replace(path + ".tmp", path)
    i += 1
    time.sleep(interval)
"""


def bench_floor(repeats: int, presets: list[str]) -> Table:
    """Table 1b (``--floor``): where the solver's overhead goes, per preset, in interleaved
    rounds of four runs of the same N steps: bare; with the canonical encoding of every
    checkpoint only (`veritrain.state.StateBuffer`, no hash, no write); bare while a process of
    its own writes and fsyncs checkpoint-sized files at the solver's rate (the file system's
    share, which no thread or process layout in the solver can avoid); and the solver's
    `train_job` with its pre-commit sync. Min / median of ``repeats`` rounds, each overhead
    against the bare runs of the same rounds."""
    table = Table(
        "preset",
        "checkpoints",
        "bare (s, min / median)",
        "encoding only",
        "I/O in another process",
        "train_job",
        title="1b. Solver overhead, where it goes (overhead against bare, min / median)",
    )
    for name in presets:
        table.add_row(*_floor_row(name, repeats))
    return table


def _floor_row(name: str, repeats: int) -> list[str]:
    """One row of `bench_floor`."""
    import subprocess
    import sys

    from solver.trainer import train_job
    from veritrain.presets import preset
    from veritrain.state import StateBuffer
    from veritrain.store import CheckpointStore
    from veritrain.training import TrainingEngine, apply_profile

    spec = preset(name, "native")
    engine = TrainingEngine(spec)
    apply_profile(spec.profile)
    n, k = spec.total_steps, spec.checkpoint_interval
    root = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    size = engine.max_state_bytes()  # a trained state's size (state 0 has no AdamW moments)

    def bare() -> None:
        engine.run(engine.init_state(), n)

    def encoding_only() -> None:
        buffer, state = StateBuffer(), engine.init_state()
        buffer.encode(state.step, engine.state_tensors(state))
        while state.step < n:
            engine.train_step(state)
            if state.step % k == 0:
                buffer.encode(state.step, engine.state_tensors(state))

    def protocol() -> None:
        store = CheckpointStore(root / "store")
        hashes: list[str] = []
        if not train_job(engine, store, hashes):
            raise RuntimeError("training stopped early")
        store.sync(hashes)

    (root / "io").mkdir()
    # the writer's pace: one checkpoint per k steps of bare training (timed once, untimed run)
    interval = interleaved({"bare": bare}, 1)["bare"][0] / (n // k + 1)
    writer: list[subprocess.Popen[bytes]] = []

    def start_writer() -> None:
        argv = [sys.executable, "-c", _IO_ELSEWHERE, str(root / "io"), str(size)]
        writer.append(subprocess.Popen([*argv, f"{interval:.6f}"]))
        time.sleep(0.3)  # the writer is running before the clock starts

    def stop_writer() -> None:
        process = writer.pop()
        process.kill()
        process.wait()

    try:
        # each round: bare, encoding only, bare again while the writer runs, train_job
        times = interleaved(
            {"bare": bare, "enc": encoding_only, "io": bare, "proto": protocol},
            repeats,
            untimed={
                "enc": start_writer,
                "io": stop_writer,
                "proto": lambda: shutil.rmtree(root / "store", ignore_errors=True),
            },
        )
    finally:
        for process in writer:
            process.kill()
        shutil.rmtree(root, ignore_errors=True)
    b_min, b_med = min(times["bare"]), statistics.median(times["bare"])
    cells = [
        f"{min(times[key]) / b_min - 1:+.1%} / {statistics.median(times[key]) / b_med - 1:+.1%}"
        for key in ("enc", "io", "proto")
    ]
    return [name, str(n // k + 1), f"{b_min:.3f} / {b_med:.3f}", *cells]


def bench_gas() -> tuple[Table, float]:
    """Table 3: gas per protocol action from a real run on Anvil, and the commit tx time (s)."""
    from bench.gas_scenario import run_gas_scenario

    rows, commit_s = run_gas_scenario()
    table = Table("action", "gas", "notes", title="3. Gas per protocol action (Anvil, cancun)")
    for action, gas, note in rows:
        table.add_row(action, f"{gas:,}", note)
    return table, commit_s


def main() -> None:
    """Entry point; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-gas", action="store_true")
    parser.add_argument(
        "--preset",
        action="append",
        dest="presets",
        help="preset(s) to time (default: digits-mlp, digits-mlp-wide, shakespeare-char)",
    )
    parser.add_argument("--steps", type=int, default=None, help="cap N (a multiple of k)")
    parser.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="train tables 1 and 2 on this device (native profile pinned to it)",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="only table 1b: the solver overhead split into encoding and file-system work",
    )
    args = parser.parse_args()
    console = Console(width=150)
    if args.floor:
        presets = args.presets or ["digits-mlp", "digits-mlp-wide"]
        console.print(bench_floor(args.repeats, presets))
        return
    gas_table, commit_s = (None, 0.0) if args.skip_gas else bench_gas()
    presets = args.presets or ["digits-mlp", "digits-mlp-wide", "shakespeare-char"]
    solver_table, verifier_table = bench_solver_and_verifier(
        args.repeats, commit_s, presets, args.steps, args.device
    )
    console.print(solver_table)
    console.print(verifier_table)
    if gas_table is not None:
        console.print(gas_table)


if __name__ == "__main__":
    main()
