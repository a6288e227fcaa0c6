"""`veritrain run`: training runs (DiLoCo, docs/RUNS.md).

`veritrain run simulate` previews a run on this machine, with no chain: M seats, R rounds of H
inner steps, every contribution and outer step computed exactly as the protocol defines them
(`veritrain.runsim`). It prints each round as it ends (accepted seats, the global model's metric,
bytes uploaded, the global state hash) and, with `--json`, one JSON object instead:
`{"device", "run_hash", "rounds": [{"round", "accepted", "excluded", "metric", "bytes_uploaded",
"global_hash", "delta_hashes", "seconds"}], "metric_name", "start_metric"}`. Under repro2 every
hash is the one any machine computes.

Bad input (unknown preset, arithmetic or delta format, a count or rate out of range, missing
data, `--device cuda` without a GPU or with a native preset) prints one line on stderr and
exits with status 2.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

__all__ = ["app", "simulate"]

app = typer.Typer(help="Training runs: one model, many solvers (DiLoCo).", no_args_is_help=True)


def _bad(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


@app.command("simulate")
def simulate(
    preset: Annotated[
        str, typer.Option(help="digits-mlp, digits-mlp-wide or shakespeare-char.")
    ] = "shakespeare-char",
    arith: Annotated[str, typer.Option(help="Arithmetic: 'native' or 'repro2'.")] = "native",
    seats: Annotated[int, typer.Option(help="M, solver seats per round (1-256).")] = 4,
    inner_steps: Annotated[int, typer.Option(help="H, inner AdamW steps per round.")] = 50,
    rounds: Annotated[int, typer.Option(help="R, rounds to simulate.")] = 10,
    outer_lr: Annotated[float, typer.Option(help="Outer Nesterov learning rate, (0, 10].")] = 0.7,
    momentum: Annotated[float, typer.Option(help="Outer Nesterov momentum, [0, 1).")] = 0.9,
    delta_format: Annotated[
        str, typer.Option(help="How pseudo-gradients travel: 'float32' or 'int8'.")
    ] = "float32",
    pretrain: Annotated[
        int, typer.Option(help="Single-solver steps before the run (its start state).")
    ] = 0,
    batch: Annotated[int | None, typer.Option(help="Batch size B (default: preset's).")] = None,
    seed: Annotated[int | None, typer.Option(help="Run seed (default: preset's).")] = None,
    device: Annotated[
        str, typer.Option(help="auto, cpu or cuda: where repro2 contributions train.")
    ] = "auto",
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Simulate a training run on this machine (no chain): the metric round by round."""
    from pydantic import ValidationError

    from veritrain.diloco import DELTA_FORMATS, RunSpec
    from veritrain.errors import VeritrainError
    from veritrain.presets import PRESETS
    from veritrain.spec import NATIVE_ARITH, check_arith
    from veritrain.training import DEVICES, resolve_device

    if preset not in PRESETS:
        raise _bad(f"unknown preset {preset!r} (choose from {', '.join(PRESETS)})")
    try:
        check_arith(arith)
    except VeritrainError as exc:
        raise _bad(str(exc)) from None
    if delta_format not in DELTA_FORMATS:
        raise _bad(
            f"--delta-format must be one of {', '.join(DELTA_FORMATS)}, got {delta_format!r}"
        )
    for flag, value, low, high in (
        ("--seats", seats, 1, 256),
        ("--inner-steps", inner_steps, 1, 2**32 - 1),
        ("--rounds", rounds, 1, 2**32 - 1),
        ("--pretrain", pretrain, 0, 2**32 - 1),
    ):
        if not low <= value <= high:
            raise _bad(f"{flag} must be in [{low}, {high}], got {value}")
    if batch is not None and batch < 1:
        raise _bad(f"--batch must be >= 1, got {batch}")
    if seed is not None and not 0 <= seed < 2**64:
        raise _bad(f"--seed must be in [0, 2^64), got {seed}")
    if device not in DEVICES:
        raise _bad(f"unknown device {device!r} (choose from {', '.join(DEVICES)})")
    if arith == NATIVE_ARITH and device == "cuda":
        raise _bad("native presets pin device 'cpu'; use --arith repro2 to pick a device")
    try:
        where = "cpu" if arith == NATIVE_ARITH else resolve_device(device)
    except VeritrainError as exc:
        raise _bad(str(exc)) from None
    if not 0.0 < outer_lr <= 10.0:
        raise _bad(f"--outer-lr must be in (0, 10], got {outer_lr}")
    if not 0.0 <= momentum < 1.0:
        raise _bad(f"--momentum must be in [0, 1), got {momentum}")
    try:
        from veritrain.presets import preset as preset_spec

        overrides: dict[str, Any] = {"total_steps": inner_steps, "checkpoint_interval": inner_steps}
        if batch is not None:
            overrides["batch_size"] = batch
        if seed is not None:
            overrides["seed"] = seed
        run = RunSpec(
            inner=preset_spec(preset, arith, **overrides),
            seats=seats,
            rounds=rounds,
            outer={"lr": outer_lr, "momentum": momentum},
            delta_format=delta_format,  # type: ignore[arg-type]
        )
        report = _simulate(run, rounds, pretrain, json_out, where)
    except ValidationError as exc:
        raise _bad(f"invalid run: {exc.errors()[0]['msg']}") from None
    except (VeritrainError, ValueError) as exc:
        raise _bad(str(exc).splitlines()[0]) from None
    if json_out:
        typer.echo(json.dumps(report, sort_keys=True))


def _simulate(run: Any, rounds: int, pretrain: int, quiet: bool, device: str) -> dict[str, Any]:
    """Run the simulation, printing each round unless `quiet`; return the JSON report."""
    from rich.console import Console
    from rich.table import Table

    from veritrain.runsim import RoundReport, evaluate_global, pretrained_start, simulate_run
    from veritrain.training import TrainingEngine

    console = Console()
    start = pretrained_start(run, pretrain, device)
    engine = TrainingEngine(run.inner, device=device)
    start_metric = evaluate_global(engine, start)
    name = engine.metric_name
    if not quiet:
        console.print(
            f"run 0x{run.run_hash().hex()}: {run.seats} seats, {rounds} rounds of "
            f"{run.inner_steps} steps, {run.delta_format} pseudo-gradients; start {name} "
            f"{start_metric:.4f}"
        )
        console.print(f"{'round':>5}  {'accepted':<12} {name:>9}  {'uploaded':>12}  global state")

    def show(rep: RoundReport) -> None:
        if not quiet:
            seats = ",".join(str(j) for j in rep.accepted) or "-"
            console.print(
                f"{rep.round:>5}  {seats:<12} {rep.metric:>9.4f}  {rep.bytes_uploaded:>12,}  "
                f"0x{rep.global_hash.hex()[:16]}..."
            )

    reports = simulate_run(run, start, rounds, on_round=show, device=device)
    if not quiet:
        table = Table(title="run summary")
        for col in ("start", "end", "bytes uploaded in all", "seconds"):
            table.add_column(col, justify="right")
        table.add_row(
            f"{start_metric:.4f}",
            f"{reports[-1].metric:.4f}",
            f"{sum(r.bytes_uploaded for r in reports):,}",
            f"{sum(r.seconds for r in reports):.1f}",
        )
        console.print(table)
    return {
        "device": device,
        "run_hash": "0x" + run.run_hash().hex(),
        "metric_name": name,
        "start_metric": start_metric,
        "rounds": [
            {
                "round": r.round,
                "accepted": r.accepted,
                "excluded": r.excluded,
                "metric": r.metric,
                "bytes_uploaded": r.bytes_uploaded,
                "global_hash": "0x" + r.global_hash.hex(),
                "delta_hashes": {str(j): "0x" + h.hex() for j, h in r.delta_hashes.items()},
                "seconds": round(r.seconds, 3),
            }
            for r in reports
        ],
    }
