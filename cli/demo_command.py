"""`veritrain demo`: the options of the two demos and their checks before anything starts
(`cli.demo` runs the jobs demo, `cli.demo_run` the run demo; `cli.app` mounts the command).

Run: ``veritrain demo``; ``veritrain demo --run --preset llama-char --rounds 3``.
"""

from __future__ import annotations

import enum
import math
from pathlib import Path
from typing import Annotated

import typer

from noderuntime.options import UINT32_MAX, VerboseOpt, setup_logging

__all__ = ["AdjudicatorName", "demo"]


class AdjudicatorName(enum.StrEnum):
    """Who settles a disputed segment in the demo (docs/DISPUTES.md)."""

    bisection = "bisection"
    committee = "committee"


def demo(
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the machine-readable summary here.")
    ] = None,
    workdir: Annotated[
        Path | None, typer.Option(help="Run folder (logs, node data); default runs/demo-<time>.")
    ] = None,
    steps: Annotated[int, typer.Option(min=1, max=UINT32_MAX, help="Steps per digits job.")] = 300,
    interval: Annotated[
        int,
        typer.Option(
            min=1, max=UINT32_MAX, help="Checkpoint interval of the digits jobs (divides --steps)."
        ),
    ] = 25,
    timeout: Annotated[
        float | None,
        typer.Option(
            help=(
                "Give up after this many seconds without progress (> 0): no change on chain "
                "and no new node log line; a slow but healthy demo never fails. Default 300."
            ),
            show_default=False,
        ),
    ] = None,
    adjudicator: Annotated[
        AdjudicatorName,
        typer.Option(
            case_sensitive=False,
            help="'bisection' (bisection game, then one step) or 'committee'.",
        ),
    ] = AdjudicatorName.bisection,
    solver_device: Annotated[
        str,
        typer.Option(
            "--solver-device",
            help="Where the honest solver trains: auto (the GPU when there is one), cpu or "
            "cuda. Every verifier replays on the CPU.",
        ),
    ] = "auto",
    training_run: Annotated[
        bool,
        typer.Option(
            "--run",
            help="Instead: a DiLoCo training run of the character GPT (or --preset) over --rounds "
            "rounds with 4 "
            "solvers (one cheating, one leaving, one joining late); --steps and --interval are "
            "then H and k of each contribution (default 8 and 2).",
        ),
    ] = False,
    rounds: Annotated[
        int,
        typer.Option(
            min=3,
            max=64,
            help="With --run: R, the rounds of the run (3 at least: the leaver goes after round "
            "0, the late joiner comes at round 2).",
        ),
    ] = 4,
    preset: Annotated[
        str | None,
        typer.Option(
            help="With --run: the language-model preset the run trains (default "
            "shakespeare-char; llama-char for the Llama).",
            show_default=False,
        ),
    ] = None,
    dashboard: Annotated[
        bool,
        typer.Option("--dashboard/--no-dashboard", help="Serve the dashboard while it runs."),
    ] = True,
    hold: Annotated[
        bool,
        typer.Option("--hold", help="At the end, keep the chain and dashboard up until Enter."),
    ] = False,
    verbose: VerboseOpt = 0,
) -> None:
    """Run the protocol end to end: 4 repro jobs (3 digits MLPs, a character GPT), honest and
    cheating solvers, a lazy verifier, every node on its own thread count and SIMD level.
    With --run: one model trained by many solvers over rounds, owned by those who trained it."""
    if preset is not None and not training_run:
        raise typer.BadParameter(
            "picks the model of a training run: give it with --run", param_hint="'--preset'"
        )
    if training_run:
        from cli.demo_run import MODEL, RunDemoConfig

        _run_demo(
            preset or MODEL,
            json_path,
            workdir,
            steps,
            interval,
            RunDemoConfig.timeout_s if timeout is None else timeout,
            adjudicator,
            verbose,
            dashboard,
            hold,
            rounds,
        )
        return
    from cli.demo import DemoConfig

    if timeout is None:
        timeout = DemoConfig.timeout_s
    if steps % interval != 0:
        raise typer.BadParameter(
            f"checkpoint interval {interval} does not divide --steps {steps}",
            param_hint="'--interval'",
        )
    if not (math.isfinite(timeout) and timeout > 0):
        raise typer.BadParameter(f"must be > 0 seconds, got {timeout}", param_hint="'--timeout'")
    if solver_device not in ("auto", "cpu", "cuda"):
        raise typer.BadParameter(
            f"choose auto, cpu or cuda, got {solver_device!r}", param_hint="'--solver-device'"
        )
    setup_logging(verbose)
    from cli.demo import run_demo
    from cli.demo_summary import print_summary

    cfg = DemoConfig(
        workdir=workdir,
        total_steps=steps,
        checkpoint_interval=interval,
        timeout_s=timeout,
        adjudicator=adjudicator.value,
        solver_device=solver_device,
        dashboard=dashboard,
        hold=hold,
    )
    summary = run_demo(cfg)
    print_summary(summary)
    if json_path is not None:
        import json

        json_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        typer.echo(f"summary written to {json_path}")
    if not summary.get("ok", False):
        raise typer.Exit(1)


def _run_demo(
    preset: str,
    json_path: Path | None,
    workdir: Path | None,
    steps: int,
    interval: int,
    timeout: float,
    adjudicator: AdjudicatorName,
    verbose: int,
    dashboard: bool = True,
    hold: bool = False,
    rounds: int = 4,
) -> None:
    """`veritrain demo --run` (`cli.demo_run`) of `preset` over `rounds` rounds; the digits
    defaults of --steps and --interval (300, 25) become the run's (8, 2).

    Raises:
        typer.BadParameter: an unknown preset or one that is not a language model (the demo
            measures validation bits round by round), steps that k does not divide, a timeout
            that is not a positive number.
    """
    from veritrain.presets import PRESETS

    if preset not in PRESETS:
        raise typer.BadParameter(
            f"unknown preset {preset!r} (choose from {', '.join(PRESETS)})",
            param_hint="'--preset'",
        )
    if (steps, interval) == (300, 25):
        steps, interval = 8, 2
    if steps % interval != 0:
        raise typer.BadParameter(
            f"checkpoint interval {interval} does not divide --steps {steps}",
            param_hint="'--interval'",
        )
    if not (math.isfinite(timeout) and timeout > 0):
        raise typer.BadParameter(f"must be > 0 seconds, got {timeout}", param_hint="'--timeout'")
    from veritrain.errors import VeritrainError
    from veritrain.presets import preset as preset_spec
    from veritrain.spec import REPRO_ARITH, TextModelConfig

    try:
        model = preset_spec(preset, REPRO_ARITH).model
    except VeritrainError as exc:
        raise typer.BadParameter(str(exc).splitlines()[0], param_hint="'--preset'") from None
    if not isinstance(model, TextModelConfig):
        raise typer.BadParameter(
            f"{preset} is not a language model (its arch is {model.arch!r}): the run demo "
            "measures validation bits round by round",
            param_hint="'--preset'",
        )
    setup_logging(verbose)
    from cli.demo_run import RunDemoConfig, print_run_summary, run_run_demo

    summary = run_run_demo(
        RunDemoConfig(
            workdir=workdir,
            preset=preset,
            rounds=rounds,
            inner_steps=steps,
            interval=interval,
            timeout_s=timeout,
            adjudicator=adjudicator.value,
            dashboard=dashboard,
            hold=hold,
        )
    )
    print_run_summary(summary)
    if json_path is not None:
        import json

        json_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        typer.echo(f"summary written to {json_path}")
    if not summary.get("ok", False):
        raise typer.Exit(1)
