"""`veritrain train`: train a preset or a spec file locally (no chain); print its final state
hash.

Run: `veritrain train --preset shakespeare-char --arith repro2 --steps 300 --json`, or
`veritrain train --spec my-model.json --steps 20` (a spec `veritrain spec new` wrote; --arith,
--steps, --batch, --seed and --threads override its fields); prints
`{"state_hash", "step", "loss", "metric", "seconds"}`. Under repro2 the hash is the same on
every machine, thread count and SIMD level; under native only where the profile is matched.

Bad input (unknown preset or arithmetic, the retired arithmetic `repro`, a count below 1,
both --preset and --spec, a spec file that is missing or not a valid spec, missing data) prints
one line on stderr and exits with status 2.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["bad_input", "check_preset", "train", "train_preset", "train_spec"]

NATIVE = "native"
"""The arithmetic a preset trains in when no --arith is given (`veritrain.spec.NATIVE_ARITH`)."""


def bad_input(message: str) -> typer.Exit:
    """Print `error: <message>` on stderr; the exit (status 2) for the caller to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def check_preset(preset: str | None, arith: str) -> None:
    """Refuse an unknown preset (None: no preset to check) or arithmetic (a retired one with
    its reason) in one line.

    Raises:
        typer.Exit: status 2, after the error line.
    """
    from veritrain.errors import VeritrainError
    from veritrain.presets import PRESETS
    from veritrain.spec import check_arith

    if preset is not None and preset not in PRESETS:
        raise bad_input(f"unknown preset {preset!r} (choose from {', '.join(PRESETS)})")
    try:
        check_arith(arith)
    except VeritrainError as exc:
        raise bad_input(str(exc)) from None


def train_preset(name: str, arith: str, **options: Any) -> dict[str, Any]:
    """Train preset `name` in `arith` from state 0 and report the final state.

    Args:
        name: a `veritrain.presets.PRESETS` name.
        arith: `"native"` or `"repro2"` (`veritrain.spec.ARITHS`).
        **options: `train_spec`'s keyword arguments (`steps`, `threads`, `batch`, `seed`,
            `device`, `evaluate`, `micro_batches`, `workers`).

    Returns:
        `train_spec`'s report.

    Raises:
        VeritrainError: bad preset, arithmetic or values, or the data is missing.
    """
    from veritrain.presets import preset
    from veritrain.spec import check_arith

    check_arith(arith)
    return train_spec(preset(name, arith), f"{name} ({arith})", **options)


def train_spec(
    spec: Any,
    label: str,
    *,
    arith: str | None = None,
    steps: int | None = None,
    threads: int | None = None,
    batch: int | None = None,
    seed: int | None = None,
    device: str | None = None,
    evaluate: bool = True,
    micro_batches: int | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    """Train a `JobSpec` (with the command line's overrides) from state 0; report the final state.

    Args:
        spec: the `veritrain.spec.JobSpec`.
        label: how the progress line names it.
        arith: `"native"` or `"repro2"` to replace the spec's arithmetic (default: its own).
        steps: optimizer steps N, also the checkpoint interval (default: the spec's).
        threads: CPU threads: pinned in the spec under native, a local choice under repro2
            (default: native the spec's, repro2 torch's default).
        batch: examples (MLP) or windows (GPT, Llama) per step (default: the spec's).
        seed: job seed (default: the spec's).
        device: `"cpu"` or `"cuda"`: a local choice under repro2; native pins CPU.
        evaluate: compute the metric (None when False).
        micro_batches: the spec's `micro_batches` m (it defines the step: m > 1 is another
            job than m = 1, with other bytes).
        workers: train with W data-parallel processes (`veritrain.parallel.train_parallel`,
            W <= m): the same bytes as one process; None trains in this process.

    Returns:
        `{"state_hash": "0x" + 64 hex, "step": steps, "loss": last step's mean loss (nats;
        None with `workers`, whose processes report checkpoints only),
        "metric": accuracy or validation bits per character (or token), "seconds": training
        wall time, "metric_name", "workers": W or 1}`.

    Raises:
        VeritrainError: bad arithmetic or values (one line), or the data is missing.
    """
    import torch

    from cli.spec import spec_with
    from veritrain.errors import SpecError
    from veritrain.spec import NATIVE_ARITH, REPRO_ARITH
    from veritrain.training import TrainingEngine

    target = spec.profile.arith if arith is None else arith
    native = target == NATIVE_ARITH
    if device is not None and native and device != "cpu":
        raise SpecError(
            f"native presets pin device 'cpu' (native specs their own); use --arith {REPRO_ARITH} "
            "to pick a device"
        )
    spec = spec_with(
        spec,
        total_steps=steps,
        checkpoint_interval=steps,
        batch_size=batch,
        seed=seed,
        arith=arith,
        threads=threads if native else None,
        micro_batches=micro_batches,
    )
    if workers is not None and workers > spec.micro_batches:
        raise SpecError(
            f"workers must be in [1, micro_batches = {spec.micro_batches}], got {workers} "
            "(each worker takes whole micro-batches: --micro-batches)"
        )
    if threads is not None and not native:
        torch.set_num_threads(threads)
    engine = TrainingEngine(spec, device=None if native else device)
    from noderuntime.logs import progress_bar

    loss: float | None = float("nan")
    started = time.perf_counter()
    logging.getLogger("veritrain.train").info("training %s for %d steps", label, spec.total_steps)
    if workers is not None:
        from veritrain.parallel import train_parallel

        final = train_parallel(
            spec,
            workers,
            device=device or "cpu",
            threads=None if native else threads,
        )
        state = engine.load_state(final)
        loss = None
    else:
        state = engine.init_state()
        with progress_bar(f"train {label}", spec.total_steps) as advance:
            while state.step < spec.total_steps:
                loss = engine.train_step(state)
                advance(1)
    seconds = time.perf_counter() - started
    return {
        "state_hash": "0x" + engine.state_hash(state).hex(),
        "step": state.step,
        "loss": loss,
        "metric": engine.evaluate(state) if evaluate else None,
        "seconds": round(seconds, 3),
        "metric_name": engine.metric_name,
        "workers": workers or 1,
    }


def train(
    preset: Annotated[
        str | None,
        typer.Option(
            help="A preset: digits-mlp, digits-mlp-wide, shakespeare-char, llama-char or "
            "llama-bible."
        ),
    ] = None,
    spec_file: Annotated[
        Path | None,
        typer.Option(
            "--spec", help="A job spec JSON file (`veritrain spec new`) instead of a preset."
        ),
    ] = None,
    arith: Annotated[
        str | None,
        typer.Option(help="Arithmetic: 'native' or 'repro2' (default: native, or the spec's)."),
    ] = None,
    steps: Annotated[int | None, typer.Option(help="Optimizer steps (default: preset's).")] = None,
    threads: Annotated[int | None, typer.Option(help="CPU threads.")] = None,
    batch: Annotated[int | None, typer.Option(help="Batch size (default: preset's).")] = None,
    seed: Annotated[int | None, typer.Option(help="Job seed (default: preset's).")] = None,
    device: Annotated[
        str | None, typer.Option(help="'cpu' or 'cuda' (repro2 only; default cpu).")
    ] = None,
    micro_batches: Annotated[
        int | None,
        typer.Option(
            "--micro-batches",
            help="Micro-batches per step m (divides the batch; defines the step, so m > 1 is "
            "another job than m = 1).",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            help="Train with W data-parallel processes (W <= micro-batches): the same state "
            "hash as one process."
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Train a preset (default digits-mlp) or a --spec file locally (no chain); print the final
    state hash, loss and metric."""
    from veritrain.errors import VeritrainError

    if spec_file is not None and preset is not None:
        raise bad_input("give --preset or --spec, not both")
    if spec_file is None:
        preset = preset or "digits-mlp"
        check_preset(preset, arith or NATIVE)
    elif arith is not None:
        check_preset(None, arith)
    for flag, value in (
        ("--steps", steps),
        ("--threads", threads),
        ("--batch", batch),
        ("--micro-batches", micro_batches),
        ("--workers", workers),
    ):
        if value is not None and value < 1:
            raise bad_input(f"{flag} must be >= 1, got {value}")
    if seed is not None and not 0 <= seed < 2**64:
        raise bad_input(f"--seed must be in [0, 2^64), got {seed}")
    if device is not None and device not in ("cpu", "cuda"):
        raise bad_input(f"--device must be 'cpu' or 'cuda', got {device!r}")
    spec = None
    if spec_file is not None:
        from cli.spec import load_spec_file

        spec = load_spec_file(spec_file)
    from noderuntime.options import setup_logging

    setup_logging(0)  # progress lines on stderr when it is not a terminal (stdout stays clean)
    options: dict[str, Any] = dict(
        steps=steps,
        threads=threads,
        batch=batch,
        seed=seed,
        device=device,
        micro_batches=micro_batches,
        workers=workers,
    )
    try:
        if spec is None:
            label = f"{preset} ({arith or NATIVE})"
            result = train_preset(str(preset), arith or NATIVE, **options)
        else:
            label = f"{spec.model_id} ({arith or spec.profile.arith}, {spec_file})"
            result = train_spec(spec, label, arith=arith, **options)
    except VeritrainError as exc:
        raise bad_input(str(exc).splitlines()[0]) from None
    metric_name = result.pop("metric_name")
    if json_out:
        typer.echo(json.dumps(result, sort_keys=True))
        return
    typer.echo(f"{'preset' if spec is None else 'spec':<11} {label}")
    typer.echo(f"steps       {result['step']}")
    if result["loss"] is not None:
        typer.echo(f"loss        {result['loss']:.4f} nats")
    typer.echo(f"workers     {result.pop('workers')}")
    typer.echo(f"{metric_name:<11} {result['metric']:.4f}")
    typer.echo(f"seconds     {result['seconds']:.2f}")
    typer.echo(f"state hash  {result['state_hash']}")


if __name__ == "__main__":
    typer.run(train)
