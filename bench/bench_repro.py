"""Benchmark: what the repro arithmetic costs against native, and whether it learns as well.

Run: ``.venv/bin/python -m bench.bench_repro`` (``--steps 200 --chunk 10``; ``--presets
digits-mlp-wide`` to run one model; ``--batch`` to override the presets' batch sizes).

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

from veritrain.presets import preset
from veritrain.spec import ARITHS
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


def bench_model(name: str, steps: int, chunk: int, batch: int | None) -> dict[str, Any]:
    """Train `name` natively and in repro for `steps` steps, interleaved; return the row.

    Args:
        name: preset name.
        steps: optimizer steps per arithmetic (a multiple of `chunk`).
        chunk: steps per timed chunk.
        batch: batch size override (None: the preset's).

    Returns:
        Per arithmetic: `ms_min`, `ms_median` (per step), `loss` (mean of the last `TAIL`
        steps, nats), `metric`, `hash` (`0x` + hex); and `metric_name`.
    """
    extra: dict[str, Any] = {"total_steps": steps, "checkpoint_interval": steps}
    if batch is not None:
        extra["batch_size"] = batch
    variants = []
    for arith in ARITHS:
        engine = TrainingEngine(preset(name, arith, **extra))
        variants.append(_Variant(arith, engine, engine.init_state()))
    torch.set_num_threads(1)  # native pins 1 thread; repro runs at the same count here
    for i in range(steps // chunk):
        order = variants if i % 2 == 0 else variants[::-1]
        for v in order:
            t0 = time.perf_counter()
            for _ in range(chunk):
                v.losses.append(v.engine.train_step(v.state))
            v.step_s.append((time.perf_counter() - t0) / chunk)
    row: dict[str, Any] = {"metric_name": variants[0].engine.metric_name}
    for v in variants:
        row[v.arith] = {
            "ms_min": 1000 * min(v.step_s),
            "ms_median": 1000 * statistics.median(v.step_s),
            "loss": statistics.fmean(v.losses[-TAIL:]),
            "metric": v.engine.evaluate(v.state),
            "hash": "0x" + v.engine.state_hash(v.state).hex(),
        }
    return row


def main() -> None:
    """Parse the options, run the models, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="steps per arithmetic")
    parser.add_argument("--chunk", type=int, default=10, help="steps per timed chunk")
    parser.add_argument("--batch", type=int, default=None, help="batch size override")
    parser.add_argument("--presets", nargs="+", default=list(PRESETS), choices=PRESETS)
    args = parser.parse_args()
    if args.steps < args.chunk or args.steps % args.chunk:
        parser.error("--steps must be a positive multiple of --chunk")
    table = Table(title=f"repro vs native, {args.steps} steps, 1 thread, CPU")
    cols = ("model", "arith", "step ms min", "step ms median", "x native min / median")
    for col in (*cols, "loss", "metric"):
        table.add_column(col, justify="right" if col not in ("model", "arith") else "left")
    table.add_column("state hash")
    for name in args.presets:
        row = bench_model(name, args.steps, args.chunk, args.batch)
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
