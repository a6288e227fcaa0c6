"""Benchmark: what the repro arithmetic costs against native, and whether it learns as well.

Run: ``.venv/bin/python -m bench.bench_repro`` (``--steps 200 --chunk 10``; ``--presets
digits-mlp-wide`` to run one model; ``--batch`` to override the presets' batch sizes;
``--device cuda`` to train both on a GPU; ``--gemm 4096`` for the matrix-product table only;
``--sqrt`` for the square-root table only).

For each model (the `digits-mlp-wide` and `shakespeare-char` presets) it trains the native and
the repro job side by side in one process at one thread, from their own state 0, in lockstep:
chunks of `--chunk` steps alternate between the two arithmetics (the order flips every chunk),
so both see the same machine load. It prints one table:
- step time (ms): min and median over the chunks, per arithmetic, and the repro/native ratios
  of the mins and of the medians (target <= 2x on CPU);
- loss: the mean training loss of the last 20 steps (nats per example or per character) and
  the evaluation metric after the last step (test accuracy, or validation bits per character),
  per arithmetic, and the relative loss difference (target: repro within 1% of native);
- the final state hash of every variant (the repro hashes are the same on every machine).

``--gemm N`` instead times one N x N x N product on the device: repro's `matmul` (block
floating point, one exact float64 GEMM) against native float32 (TF32 off) and bfloat16, in
TFLOP/s (2 N**3 flops per product), interleaved repeats, min and median. ``--sqrt`` times
`veritrain.repro.sqrt` (correctly rounded, proven entry by entry) against `torch.sqrt` on
float32 vectors the size of the presets' parameters.

Both engines live in one process and the execution profile is process-global: the repro
engine, built last, turns off deterministic mode's NaN fill of new tensors, so the native steps
run without it too (the native times are, if anything, lower than in a native-only process).
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import torch
from rich.console import Console
from rich.table import Table

from veritrain import repro
from veritrain.presets import preset
from veritrain.spec import ARITHS, NATIVE_ARITH, ExecutionProfile
from veritrain.training import TrainingEngine, TrainState

PRESETS = ("digits-mlp-wide", "shakespeare-char")
TAIL = 20  # training losses averaged at the end


@dataclass
class _Variant:
    arith: str
    engine: TrainingEngine
    state: TrainState
    step_s: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def bench_model(
    name: str,
    steps: int,
    chunk: int,
    batch: int | None,
    device: str = "cpu",
    overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train `name` natively and in repro for `steps` steps, interleaved; return the row.

    Args:
        name: preset name.
        steps: optimizer steps per arithmetic (a multiple of `chunk`).
        chunk: steps per timed chunk.
        batch: batch size override (None: the preset's).
        device: `"cpu"` or `"cuda"` (the native spec pins it, the repro engine runs on it).
        overrides: other `JobSpec` fields to replace in both specs (e.g. `model`).

    Returns:
        Per arithmetic: `ms_min`, `ms_median` (per step), `loss` (mean of the last `TAIL`
        steps, nats), `metric`, `hash` (`0x` + hex); `metric_name`; `params` (the model's
        parameter count).
    """
    extra: dict[str, Any] = {
        **(overrides or {}),
        "total_steps": steps,
        "checkpoint_interval": steps,
    }
    if batch is not None:
        extra["batch_size"] = batch
    variants = []
    for arith in ARITHS:
        if arith == NATIVE_ARITH:
            profile = ExecutionProfile(device=device, threads=1)
            engine = TrainingEngine(preset(name, arith, profile=profile, **extra))
        else:
            engine = TrainingEngine(preset(name, arith, **extra), device=device)
        variants.append(_Variant(arith, engine, engine.init_state()))
    torch.set_num_threads(1)  # native pins 1 thread; repro runs at the same count here
    for i in range(steps // chunk):
        order = variants if i % 2 == 0 else variants[::-1]
        for v in order:
            _sync(device)
            t0 = time.perf_counter()
            for _ in range(chunk):
                v.losses.append(v.engine.train_step(v.state))
            _sync(device)
            v.step_s.append((time.perf_counter() - t0) / chunk)
    row: dict[str, Any] = {
        "metric_name": variants[0].engine.metric_name,
        "params": sum(p.numel() for p in variants[0].state.model.parameters()),
    }
    for v in variants:
        row[v.arith] = {
            "ms_min": 1000 * min(v.step_s),
            "ms_median": 1000 * statistics.median(v.step_s),
            "loss": statistics.fmean(v.losses[-TAIL:]),
            "metric": v.engine.evaluate(v.state),
            "hash": "0x" + v.engine.state_hash(v.state).hex(),
        }
    return row


def _interleaved(fns: dict[str, Any], repeats: int, device: str) -> dict[str, list[float]]:
    """Seconds per call of each function, `repeats` interleaved rounds after one warm-up."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for i in range(repeats):
        order = list(fns.items()) if i % 2 == 0 else list(fns.items())[::-1]
        for key, fn in order:
            _sync(device)
            t0 = time.perf_counter()
            fn()
            _sync(device)
            times[key].append(time.perf_counter() - t0)
    return times


def bench_gemm(n: int, device: str, repeats: int) -> Table:
    """The table of one n x n x n product: repro against native float32 and bfloat16."""
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=gen).to(device)
    b = torch.randn(n, n, generator=gen).to(device)
    a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
    fns = {
        "repro (1 float64 GEMM, exact)": lambda: repro.matmul(a, b),
        "native float32": lambda: torch.matmul(a, b),
        "native bfloat16": lambda: torch.matmul(a16, b16),
    }
    times = _interleaved(fns, repeats, device)
    flops = 2.0 * n**3
    native_min = min(times["native float32"])
    table = Table(title=f"{n} x {n} x {n} product on {device}, {repeats} interleaved repeats")
    for col in ("variant", "ms min", "ms median", "TFLOP/s (min)", "x native fp32 (min)"):
        table.add_column(col, justify="left" if col == "variant" else "right")
    for key, ts in times.items():
        table.add_row(
            key,
            f"{1000 * min(ts):.1f}",
            f"{1000 * statistics.median(ts):.1f}",
            f"{flops / min(ts) / 1e12:.3f}",
            f"{min(ts) / native_min:.2f}",
        )
    return table


def bench_sqrt(device: str, repeats: int) -> Table:
    """The table of `repro.sqrt` against `torch.sqrt` on float32 second-moment-like vectors."""
    table = Table(title=f"float32 square roots on {device}, {repeats} interleaved repeats")
    for col in ("elements", "torch.sqrt ms min", "repro.sqrt ms min", "repro.sqrt ms median"):
        table.add_column(col, justify="right")
    gen = torch.Generator().manual_seed(0)
    for n in (25_000, 200_000, 1_100_000):
        v = (torch.rand(n, generator=gen) * 1e-4).to(device)  # like AdamW's exp_avg_sq
        times = _interleaved(
            {"torch": lambda v=v: torch.sqrt(v), "repro": lambda v=v: repro.sqrt(v)},
            repeats,
            device,
        )
        table.add_row(
            f"{n:,}",
            f"{1000 * min(times['torch']):.3f}",
            f"{1000 * min(times['repro']):.3f}",
            f"{1000 * statistics.median(times['repro']):.3f}",
        )
    return table


def main() -> None:
    """Parse the options, run the models, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="steps per arithmetic")
    parser.add_argument("--chunk", type=int, default=10, help="steps per timed chunk")
    parser.add_argument("--batch", type=int, default=None, help="batch size override")
    parser.add_argument("--presets", nargs="+", default=list(PRESETS), choices=PRESETS)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--gemm", type=int, default=None, help="time one N x N x N product")
    parser.add_argument("--sqrt", action="store_true", help="time the square roots only")
    parser.add_argument("--repeats", type=int, default=5, help="repeats (--gemm, --sqrt)")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no GPU")
    if args.gemm is not None or args.sqrt:
        if args.gemm is not None:
            Console(width=150).print(bench_gemm(args.gemm, args.device, args.repeats))
        if args.sqrt:
            Console(width=150).print(bench_sqrt(args.device, args.repeats))
        return
    if args.steps < args.chunk or args.steps % args.chunk:
        parser.error("--steps must be a positive multiple of --chunk")
    where = "1 thread, CPU" if args.device == "cpu" else "CUDA"
    table = Table(title=f"repro vs native, {args.steps} steps, {where}")
    cols = ("model", "arith", "step ms min", "step ms median", "x native min / median")
    for col in (*cols, "loss", "metric"):
        table.add_column(col, justify="right" if col not in ("model", "arith") else "left")
    table.add_column("state hash")
    for name in args.presets:
        row = bench_model(name, args.steps, args.chunk, args.batch, args.device)
        native = row["native"]
        for arith in ARITHS:
            r = row[arith]
            ratio_min = r["ms_min"] / native["ms_min"]
            ratio = r["ms_median"] / native["ms_median"]
            dloss = (r["loss"] - native["loss"]) / native["loss"]
            table.add_row(
                name,
                arith,
                f"{r['ms_min']:.1f}",
                f"{r['ms_median']:.1f}",
                f"{ratio_min:.2f} / {ratio:.2f}",
                f"{r['loss']:.4f}" + ("" if arith == "native" else f" ({dloss:+.2%})"),
                f"{row['metric_name']} {r['metric']:.4f}",
                r["hash"][:18] + "...",
            )
        for arith in ARITHS:
            print(f"{name} {arith} state hash {row[arith]['hash']}")
    Console(width=150).print(table)


if __name__ == "__main__":
    main()
