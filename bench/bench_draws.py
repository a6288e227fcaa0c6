"""Benchmark: detection per unit of verifier compute with each verifier its own draw
(docs/SECURITY.md P-27).

Run: ``.venv/bin/python -m bench.bench_draws`` (``--trials 20000`` Monte Carlo draws per row,
``--repeats 5`` timing repeats).

Prints two tables:
1. Detection: a solver fakes c = f*M of its M segments; V verifiers each draw q segments
   without replacement, independently (seeded by the round's randomness and the verifier). The
   probability that some verifier draws a faked segment, exactly
   (``1 - (C(M - c, q) / C(M, q))^V``) and by Monte Carlo over the contract's own draw
   (`veritrain.sampling`, the Python mirror of LibSampling and LibSettlement's seat draws, with
   random block hashes and verifier addresses), against one shared draw (before P-27: every
   verifier replayed the same q segments, so the job had one verifier's coverage).
2. Compute: replay seconds per segment measured on the default digits job, the verifiers'
   compute per job (V*q segments replayed in all, each verifier q) against the solver's (M
   segments trained), for the defaults and for configurations that reach 99% detection of
   f = 10% (the goal: at most 5% of the solver's compute).
Timings are wall-clock medians on this machine; ratios are taken within the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics

from rich.console import Console
from rich.table import Table

from bench.bench_protocol import interleaved
from veritrain.sampling import detection_probability, job_seed, own_draws

# (M, f, V, q): the example, the defaults on the demo job, and the goal's configurations
DETECTION_ROWS: tuple[tuple[int, float, int, int], ...] = (
    (12, 0.10, 3, 2),
    (12, 0.25, 3, 2),
    (40, 0.10, 3, 2),
    (40, 0.10, 5, 4),
    (880, 0.10, 4, 11),
    (900, 0.10, 3, 15),
    (1000, 0.10, 4, 11),
    (1500, 0.10, 4, 11),
)


def _monte_carlo(m: int, f: float, v: int, q: int, trials: int) -> float:
    """Share of `trials` random assignments in which some seat's own draw holds a faked segment.

    The faked segments are the first c (the draw is uniform, so any fixed set is the same)."""
    faked = round(f * m)
    hits = 0
    for _ in range(trials):
        seed = job_seed(os.urandom(32), 1, os.urandom(32))
        verifiers = ["0x" + os.urandom(20).hex() for _ in range(v)]
        draws = own_draws(seed, verifiers, m, q)
        if any(s < faked for s in draws.segments):
            hits += 1
    return hits / trials


def bench_detection(trials: int) -> Table:
    """Table 1: detection probability, exact and Monte Carlo, own draws vs one shared draw."""
    table = Table(title=f"Detection of a solver faking c = f*M segments ({trials:,} draws per row)")
    for col in ("M", "f (c)", "V", "q", "shared draw", "own draws (exact)", "own draws (MC)"):
        table.add_column(col, justify="right")
    for m, f, v, q in DETECTION_ROWS:
        c = round(f * m)
        shared = detection_probability(m, c, 1, q)
        exact = detection_probability(m, c, v, q)
        mc = _monte_carlo(m, f, v, q, trials)
        table.add_row(
            str(m), f"{f:.0%} ({c})", str(v), str(q), f"{shared:.2%}", f"{exact:.2%}", f"{mc:.2%}"
        )
    return table


def _seconds_per_segment(repeats: int) -> tuple[float, float, int, int, str]:
    """(train s per segment, replay s per segment, N, k, the times as min / median) of the
    default digits job; the two seconds are medians of `repeats` interleaved runs."""
    from veritrain.replay import replay_segment
    from veritrain.spec import default_digits_spec
    from veritrain.training import TrainingEngine, apply_profile

    spec = default_digits_spec(seed=7)
    engine = TrainingEngine(spec)
    apply_profile(spec.profile)
    n, k = spec.total_steps, spec.checkpoint_interval
    start = engine.init_state()
    engine.run(start, k)
    start_blob = engine.state_bytes(start)

    times = interleaved(
        {
            "train": lambda: engine.run(engine.init_state(), n),
            "replay": lambda: replay_segment(engine, start_blob, 2 * k),
        },
        repeats,
    )
    train_s, replay_s = statistics.median(times["train"]), statistics.median(times["replay"])
    shown = (
        f"train {min(times['train']) / (n // k) * 1e3:.1f} / {train_s / (n // k) * 1e3:.1f} ms, "
        f"replay {min(times['replay']) * 1e3:.1f} / {replay_s * 1e3:.1f} ms per segment "
        f"(min / median of {repeats} interleaved runs)"
    )
    return train_s / (n // k), replay_s, n, k, shown


def bench_compute(repeats: int) -> Table:
    """Table 2: verifier compute per job against the solver's, per configuration."""
    train_seg, replay_seg, n, k, shown = _seconds_per_segment(repeats)
    table = Table(title=(f"Verifier compute (default digits job: N = {n}, k = {k}; {shown})"))
    for col in (
        "M",
        "V",
        "q",
        "P(detect f=10%)",
        "all verifiers: V*q segments (s)",
        "solver: M segments (s)",
        "verifiers / solver",
        "per verifier / solver",
        "V*q/M",
    ):
        table.add_column(col, justify="right")
    for m, _f, v, q in DETECTION_ROWS:
        if _f != 0.10:
            continue
        verifiers_s = v * q * replay_seg
        solver_s = m * train_seg
        table.add_row(
            str(m),
            str(v),
            str(q),
            f"{detection_probability(m, round(0.1 * m), v, q):.2%}",
            f"{verifiers_s:.3f}",
            f"{solver_s:.3f}",
            f"{verifiers_s / solver_s:.1%}",
            f"{q * replay_seg / solver_s:.1%}",
            f"{v * q / m:.1%}",
        )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--trials", type=int, default=5000, help="Monte Carlo draws per row")
    parser.add_argument("--repeats", type=int, default=3, help="timing repeats (median)")
    args = parser.parse_args()
    console = Console(width=160)
    console.print(bench_detection(args.trials))
    console.print(bench_compute(args.repeats))


if __name__ == "__main__":
    main()
