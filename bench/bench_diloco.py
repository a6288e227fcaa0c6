"""Benchmark: what a DiLoCo run (`veritrain.diloco`) costs in quality and saves in communication.

Run: ``.venv/bin/python -m bench.bench_diloco`` (defaults: shakespeare-char, native
arithmetic, M = 4 seats, H = 50 inner steps, R = 20 rounds, from weights pretrained for 500
single-solver steps as the DiLoCo paper starts from a pretrained model; ``--runs`` picks the
rows, ``--json FILE`` writes every curve). About 15 minutes on 2 cores; the rows are independent
processes' worth of work, so a many-core machine runs them side by side.

Trains, on the same data and from the same starting weights (fresh AdamW each):
1. one solver alone for H x R steps (batch B);
2. synchronous data-parallel training with an M x B batch for H x R steps (what M workers
   that all-reduce every step compute; the DiLoCo paper's baseline);
3. the run: M solvers, R rounds of H inner steps each, every contribution built exactly as a
   veritrain job (`contribution_init`, `contribution_spec`'s shard, AdamW carried per seat),
   the outer Nesterov step of `veritrain.diloco.outer_step` on the mean pseudo-gradient;
4. the run with int8 pseudo-gradients (`encode_delta(..., "int8")`, decoded before the step);
   the run with each contribution excluded with probability 1/2 (the DiLoCo paper's dropout
   test: what excluding late or rejected solvers costs); the run with the demo's churn (one
   seat caught cheating in round 2 and excluded after, one leaving after 40% of the rounds,
   one joining halfway with a fresh AdamW);
5. the run with the outer step applied one round late (round t trains from theta_t, which
   holds the pseudo-gradients of rounds < t - 1, so round t - 1 could be verified while round
   t trains), its last round applied at the end.
Each logs its validation bits per character (the engine's `evaluate`) after every H steps of a
solver; the quality table compares the ends. The communication table counts the bytes one
solver sends per round (its encoded pseudo-gradient's tensor data) against what one
data-parallel worker sends for the same H steps (a float32 gradient per step, 4 bytes per
parameter; a ring all-reduce sends 2 (M - 1) / M of that). The compute table times, in
interleaved repeats (min and median), one contribution, its pseudo-gradient's encoding and the
outer step that every party checking a round recomputes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

from veritrain.diloco import (
    OuterState,
    RunSpec,
    communication_bytes,
    contribution_init,
    encode_delta,
    outer_step,
    pseudo_gradient,
)
from veritrain.presets import preset
from veritrain.runsim import (
    Absent,
    RoundReport,
    evaluate_global,
    pretrained_start,
    simulate_run,
    train_alone,
    train_contribution,
)
from veritrain.training import TrainingEngine


def late_run(run: RunSpec, start: bytes, rounds: int, log: Callable[[str], None]) -> list[float]:
    """The rejected variant: round t's pseudo-gradients are applied after round t + 1 trains
    (so round t could be verified while round t + 1 trains); the last round's at the end.
    The metric after every outer step, one more than `rounds`."""
    base = TrainingEngine(run.inner)
    state = OuterState.from_bytes(start)
    finals: dict[int, bytes] = {}
    pending: list[OrderedDict[str, torch.Tensor]] = []
    curve = []
    for t in range(rounds):
        g = state.to_bytes()
        deltas = []
        for j in range(run.seats):
            _, finals[j] = train_contribution(run, t, j, g, finals.get(j))
            deltas.append(pseudo_gradient(g, finals[j]))
        state = outer_step(state, pending, run.outer.lr, run.outer.momentum)
        pending = deltas
        curve.append(evaluate_global(base, state.to_bytes()))
        log(f"one round late, round {t}: {curve[-1]:.4f}")
    state = outer_step(state, pending, run.outer.lr, run.outer.momentum)
    curve.append(evaluate_global(base, state.to_bytes()))
    return curve


def compute_rows(run: RunSpec, start: bytes, repeats: int) -> list[tuple[str, float, float]]:
    """(what, seconds min, seconds median) over `repeats` interleaved repeats: one solver's
    contribution (H inner steps from its composed start), its pseudo-gradient and int8
    encoding, and the outer step over the M seats' pseudo-gradients (what every party that
    checks a round's result recomputes)."""
    engine = TrainingEngine(run.contribution_spec(0, 0))
    init = contribution_init(start, None)
    state = engine.load_state(init)
    engine.run(state, run.inner_steps)
    final = engine.state_bytes(state)
    delta = pseudo_gradient(start, final)
    outer = OuterState.from_bytes(start)
    tasks: dict[str, Callable[[], object]] = {
        "one contribution (H inner steps)": lambda: engine.run(
            engine.load_state(init), run.inner_steps
        ),
        "pseudo-gradient + int8 encoding": lambda: encode_delta(
            pseudo_gradient(start, final), 0, "int8"
        ),
        f"outer step over {run.seats} pseudo-gradients": lambda: outer_step(
            outer, [delta] * run.seats, run.outer.lr, run.outer.momentum
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in tasks}
    for _ in range(repeats):
        for name, fn in tasks.items():
            tick = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - tick)
    return [(name, min(ts), statistics.median(ts)) for name, ts in times.items()]


def _coin(t: int, j: int) -> bool:
    """Excludes each contribution with probability 1/2, the same ones on every machine."""
    return bool(hashlib.sha256(f"drop {t} {j}".encode()).digest()[0] & 1)


def _churn(rounds: int, seats: int) -> Callable[[int, int], bool]:
    """The demo's run: seat 1 cheats from round 2 on (every later contribution rejected), seat
    2 leaves after 40% of the rounds, seat 3 joins halfway with a fresh AdamW."""

    def absent(t: int, j: int) -> bool:
        if j == 1:
            return t >= 2
        if j == 2:
            return t >= (2 * rounds) // 5
        if j == 3:
            return t < rounds // 2
        return False

    if seats < 4:
        raise SystemExit("--runs churn needs at least 4 seats")
    return absent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--preset", default="shakespeare-char")
    parser.add_argument("--arith", default="native", help="native or repro2")
    parser.add_argument("--seats", type=int, default=4, help="M")
    parser.add_argument("--inner-steps", type=int, default=50, help="H")
    parser.add_argument("--rounds", type=int, default=20, help="R")
    parser.add_argument("--outer-lr", type=float, default=0.7)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument(
        "--pretrain", type=int, default=500, help="single-solver steps before all of them"
    )
    parser.add_argument(
        "--runs",
        default="solo,dp,fp32,int8,late,drop,churn",
        help="comma list of solo, dp, fp32, int8, late, drop, churn (default: all)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="timing repeats (compute table)")
    parser.add_argument("--json", type=Path, default=None, help="write every curve here")
    args = parser.parse_args()
    console = Console(width=140)
    inner = preset(
        args.preset, args.arith, total_steps=args.inner_steps, checkpoint_interval=args.inner_steps
    )
    run = RunSpec(
        inner=inner,
        seats=args.seats,
        rounds=args.rounds,
        outer={"lr": args.outer_lr, "momentum": args.momentum},
    )
    m, h, r = run.seats, run.inner_steps, args.rounds

    def solo(factor: int) -> list[float]:
        def log(t: int, metric: float) -> None:
            console.log(f"batch x{factor} round {t}: {metric:.4f}")

        return train_alone(run, start, r, factor, log)

    def diloco(fmt: str, absent: Absent | None = None) -> list[float]:
        spec = run.model_copy(update={"delta_format": fmt})

        def log(rep: RoundReport) -> None:
            console.log(f"diloco {fmt} round {rep.round}: {rep.metric:.4f}")

        reports = simulate_run(spec, start, r, absent=absent, on_round=log)
        return [rep.metric for rep in reports]

    curves: dict[str, list[float]] = {}
    start = pretrained_start(run, args.pretrain)
    dp_name = f"data-parallel, batch x{m}"
    every: dict[str, tuple[str, Callable[[], list[float]]]] = {
        "solo": ("one solver", lambda: solo(1)),
        "dp": (dp_name, lambda: solo(m)),
        "fp32": (f"DiLoCo M={m}", lambda: diloco("float32")),
        "int8": (
            f"DiLoCo M={m}, int8",
            lambda: diloco("int8"),
        ),
        "drop": (
            f"DiLoCo M={m}, half the contributions excluded",
            lambda: diloco("float32", absent=_coin),
        ),
        "churn": (
            f"DiLoCo M={m}, the demo's churn",
            lambda: diloco("float32", absent=_churn(r, m)),
        ),
        "late": (
            f"DiLoCo M={m}, one round late",
            lambda: late_run(run, start, r, console.log),
        ),
    }
    chosen = [x.strip() for x in args.runs.split(",") if x.strip()]
    unknown = sorted(set(chosen) - set(every))
    if unknown:
        parser.error(f"unknown --runs {', '.join(unknown)} (choose from {', '.join(every)})")
    jobs = [every[x] for x in chosen]
    for name, fn in jobs:  # quality only: the times are the interleaved repeats below
        curves[name] = fn()

    dp = curves[dp_name][-1] if dp_name in curves else float("nan")
    quality = Table(
        title=f"{args.preset} ({args.arith}), H={h}, R={r}, outer lr {args.outer_lr}, "
        f"momentum {args.momentum}, pretrained {args.pretrain} steps: validation bits/char"
    )
    for col in ("run", "steps per worker", "val_bpc", "vs data-parallel"):
        quality.add_column(col, justify="left" if col == "run" else "right")
    for name, curve in curves.items():
        quality.add_row(
            name,
            f"{h * r:,}",
            f"{curve[-1]:.4f}",
            f"{100 * (curve[-1] - dp) / dp:+.2f}%",
        )
    console.print(quality)

    base = TrainingEngine(run.inner)
    params = list(base.init_state().model.parameters())
    p, n_t = sum(x.numel() for x in params), len(params)
    comm = Table(title=f"Bytes one solver sends per round ({p:,} parameters, {n_t} tensors)")
    for col in ("pseudo-gradient", "bytes per round", "data-parallel, H steps", "ratio"):
        comm.add_column(col, justify="right")
    ratios = {}
    for fmt in ("float32", "int8"):
        sent = communication_bytes(p, n_t, fmt)
        ratios[fmt] = h * 4 * p / sent
        comm.add_row(fmt, f"{sent:,}", f"{h * 4 * p:,}", f"{ratios[fmt]:.1f}x")
    console.print(comm)

    rows = compute_rows(run, start, args.repeats)
    contribution = rows[0][1]
    compute = Table(title=f"Compute per round ({args.repeats} interleaved repeats)")
    for col in ("work", "seconds min", "seconds median", "share of one contribution (min)"):
        compute.add_column(col, justify="left" if col == "work" else "right")
    for name, low, mid in rows:
        compute.add_row(name, f"{low:.4f}", f"{mid:.4f}", f"{100 * low / contribution:.2f}%")
    console.print(compute)
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "preset": args.preset,
                    "arith": args.arith,
                    "seats": m,
                    "inner_steps": h,
                    "rounds": r,
                    "outer_lr": args.outer_lr,
                    "momentum": args.momentum,
                    "pretrain": args.pretrain,
                    "curves": curves,
                    "params": p,
                    "comm_ratio": ratios,
                    "compute_seconds": {name: [low, mid] for name, low, mid in rows},
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
