"""Benchmark: what the repro arithmetic costs against native, and whether it learns as well.

Run: ``.venv/bin/python -m bench.bench_repro`` (``--steps 200 --chunk 10``; ``--presets
digits-mlp-wide`` to run one model; ``--batch`` to override the presets' batch sizes;
``--device cuda`` to train both on a GPU; ``--gemm 4096`` for the matrix-product table only;
``--sqrt`` for the square-root table only; ``--scale`` for the scale table).

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

``--scale`` times training steps of the presets and of two larger Llama models on the
byte-level Bible corpus (`llama-10m`, 9.5 M parameters; `llama-100m`, about 100 M, on a GPU
only) in four variants, interleaved in one process: native float32 (TF32 off), native bfloat16
autocast (the field's mixed precision), repro2 with its float64 GEMM and, on a GPU, repro2
with its int8 GEMM, on a CPU repro2 with its fused kernels off (every repro2 variant gives the
same bytes: the table shows their hashes). It prints step time min/median and repro2 over
native float32 and over bfloat16 (``--no-bf16`` leaves the bfloat16 variant out).

Both engines live in one process and the execution profile is process-global: the repro
engine, built last, turns off deterministic mode's NaN fill of new tensors, so the native steps
run without it too (the native times are, if anything, lower than in a native-only process).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import torch
from rich.console import Console
from rich.table import Table

from veritrain import repro
from veritrain.presets import PRESETS as ALL_PRESETS
from veritrain.presets import preset
from veritrain.repro.fused import fused_available, kernels_mode
from veritrain.repro.gemm import GEMM_ENV
from veritrain.spec import ARITHS, NATIVE_ARITH, REPRO_ARITH, ExecutionProfile, LlamaConfig
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


# (preset whose data it trains on, model, batch size, GPU only)
SCALE_MODELS: dict[str, tuple[str, LlamaConfig, int, bool]] = {
    "llama-10m": (
        "llama-bible",
        LlamaConfig(
            n_layer=6, n_head=6, n_kv_head=2, n_embd=384, block_size=256, ffn_hidden=1024,
            tie_embeddings=True,
        ),
        8,
        False,
    ),
    "llama-100m": (
        "llama-bible",
        LlamaConfig(
            n_layer=12, n_head=12, n_kv_head=4, n_embd=768, block_size=512, ffn_hidden=2816,
            tie_embeddings=True,
        ),
        8,
        True,
    ),
}  # fmt: skip


@dataclass
class _ScaleVariant:
    label: str
    engine: TrainingEngine
    state: TrainState
    bf16: bool = False
    gemm: str | None = None
    kernels: str = "auto"
    step_s: list[float] = field(default_factory=list)


def bench_scale(
    name: str, steps: int, chunk: int, device: str, threads: int, bf16: bool = True
) -> list[list[str]]:
    """Rows of the scale table for one preset or `SCALE_MODELS` entry.

    Variants, trained from their own state 0 in lockstep chunks (the order flips every chunk):
    native float32, native with bfloat16 autocast (`torch.autocast`, forward and backward
    products in bfloat16, float32 master weights and optimizer), repro2 with the float64
    GEMM, and on a GPU repro2 with the int8 GEMM (`VERITRAIN_REPRO_GEMM`, switched around its
    chunks); on a CPU, repro2 once more with the fused kernels off (`VERITRAIN_REPRO_KERNELS=
    eager`: the same bits, the eager chains' time). `bf16=False` leaves the bfloat16 variant
    out (on a CPU without bfloat16 units it is 8-17x slower than float32 and says nothing).
    Returns one row per variant: model, parameters, variant, step ms min and median,
    x native float32 and x bfloat16 (of the medians; "-" without it), state hash prefix.
    """
    if name in SCALE_MODELS:
        base, model, batch, _ = SCALE_MODELS[name]
        extra: dict[str, Any] = {"model": model, "batch_size": batch}
    else:
        base, extra = name, {}
    extra.update(total_steps=steps, checkpoint_interval=steps)
    profile = ExecutionProfile(device=device, threads=threads)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    def native() -> tuple[TrainingEngine, TrainState]:
        engine = TrainingEngine(preset(base, NATIVE_ARITH, profile=profile, **extra))
        return engine, engine.init_state()

    variants = [_ScaleVariant("native float32", *native())]
    if bf16:
        variants.append(_ScaleVariant("native bf16 autocast", *native(), bf16=True))
    repro_engine = TrainingEngine(preset(base, REPRO_ARITH, **extra), device=device)
    gemms = ["float64", "int8"] if device == "cuda" else ["float64"]
    for gemm in gemms:
        variants.append(
            _ScaleVariant(f"repro2 {gemm} GEMM", repro_engine, repro_engine.init_state(), gemm=gemm)
        )
    if device == "cpu" and fused_available():
        variants.append(
            _ScaleVariant(
                "repro2 float64 GEMM, eager kernels",
                repro_engine,
                repro_engine.init_state(),
                gemm="float64",
                kernels="eager",
            )
        )
    torch.set_num_threads(threads)
    previous = os.environ.get(GEMM_ENV)
    try:
        for i in range(steps // chunk):
            for v in variants if i % 2 == 0 else variants[::-1]:
                if v.gemm is not None:
                    os.environ[GEMM_ENV] = v.gemm
                _sync(device)
                t0 = time.perf_counter()
                with (
                    kernels_mode(v.kernels),
                    torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=v.bf16),
                ):
                    for _ in range(chunk):
                        v.engine.train_step(v.state)
                _sync(device)
                v.step_s.append((time.perf_counter() - t0) / chunk)
    finally:
        if previous is None:
            os.environ.pop(GEMM_ENV, None)
        else:
            os.environ[GEMM_ENV] = previous
    params = sum(p.numel() for p in variants[0].state.model.parameters())
    med = {v.label: statistics.median(v.step_s) for v in variants}
    rows = []
    for v in variants:
        rows.append(
            [
                name,
                f"{params / 1e6:.2f} M",
                v.label,
                f"{1000 * min(v.step_s):.1f}",
                f"{1000 * med[v.label]:.1f}",
                f"{med[v.label] / med['native float32']:.2f}",
                f"{med[v.label] / med['native bf16 autocast']:.2f}" if bf16 else "-",
                "0x" + v.engine.state_hash(v.state).hex()[:12],
            ]
        )
    return rows


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
    parser.add_argument(
        "--scale",
        nargs="*",
        default=None,
        choices=(*ALL_PRESETS, *SCALE_MODELS),
        help="the scale table (models: default every preset and the scale models that fit)",
    )
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (--scale)")
    parser.add_argument(
        "--no-bf16", action="store_true", help="leave the bfloat16 variant out (--scale)"
    )
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no GPU")
    if args.scale is not None:
        run_scale(args)
        return
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


def run_scale(args: argparse.Namespace) -> None:
    """Print the scale table for `args.scale` (all fitting models when empty)."""
    names = args.scale or [
        *ALL_PRESETS,
        *(m for m, (_, _, _, gpu) in SCALE_MODELS.items() if args.device == "cuda" or not gpu),
    ]
    if args.steps < args.chunk or args.steps % args.chunk:
        raise SystemExit("--steps must be a positive multiple of --chunk")
    where = f"{args.threads} thread(s), CPU" if args.device == "cpu" else "CUDA"
    table = Table(title=f"scale: step time, {args.steps} steps per variant, {where}")
    cols = ("model", "params", "variant", "ms min", "ms median", "x fp32", "x bf16", "hash")
    for col in cols:
        table.add_column(col, justify="left" if col in ("model", "variant", "hash") else "right")
    for name in names:
        rows = bench_scale(
            name, args.steps, args.chunk, args.device, args.threads, bf16=not args.no_bf16
        )
        for row in rows:
            table.add_row(*row)
            print(" | ".join(row), flush=True)
    Console(width=150).print(table)


if __name__ == "__main__":
    main()
