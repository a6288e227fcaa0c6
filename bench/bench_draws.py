"""Benchmark: detection per unit of verifier compute with each verifier its own draw
(docs/SECURITY.md P-27).

Run: ``.venv/bin/python -m bench.bench_draws`` (``--trials 20000`` Monte Carlo draws per row,
default 1000; ``--repeats 5`` timing repeats, 0 skips the timing table).

Prints two tables:
1. Detection: a solver fakes c = f*M of its M segments; V verifiers each draw q segments
   without replacement, independently (seeded by the round's randomness and the verifier). The
   probability that some verifier draws a faked segment, exactly
   (``1 - (C(M - c, q) / C(M, q))^V``) and by Monte Carlo over the contract's own draw
   (`veritrain.sampling`, the Python mirror of LibSampling and LibAssignment's seat draws, with
   random block hashes and verifier addresses), against one shared draw (before P-27: every
   verifier replayed the same q segments, so the job had one verifier's coverage).
2. Compute: replay seconds per segment measured on the default digits job, the verifiers'
   compute per job (V*q segments replayed in all, each verifier q) against the solver's (M
   segments trained), for the defaults and for configurations that reach 99% detection of
   f = 10% (the goal: at most 5% of the solver's compute).
3. Detection of c = 1..M faked segments at the deployment defaults (`ProtocolParams()`: V, q on
   its reference job of M segments), exactly (`veritrain.economics.detection`) and by Monte Carlo
   on the contract's own draws (the solver fakes the segments least replayed: the first c with
   the last kept honest; with one seat the last two together, P-39).
4. Each cheating strategy's expected gain per job in VTT at the defaults, on the reference job
   (docs/SECURITY.md "Cheating is irrational": faking, worst c; a coalition holding the stated
   share of the seats, worst c; a lazy seat blind to its draw and one that sees it; a copying
   seat; a withholding solver).
5. Replay fraction (all seats' replayed segments over the job's M, each seat its own draw plus
   the last segment; one seat its draw of the first M - 1 plus the last only with the one
   before it, P-39) at the defaults and at the least-replay (V, q) that keeps every gain
   negative, for M = 10 (a run contribution at H = 50, k = 5), 12 (the demo job), 60, 240 and
   1000, with and without asking for the defaults' deterrence, and at the former defaults
   (V = 3, q = 2).
The output ends with ``replay fraction at the defaults: X%``.
Timings are wall-clock medians on this machine; ratios are taken within the same run
(``--repeats 0`` skips the timing table).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
from collections.abc import Sequence
from fractions import Fraction

from rich.console import Console
from rich.table import Table

from bench.bench_protocol import interleaved
from chain.manifest import ProtocolParams
from veritrain.economics import (
    Economics,
    detection,
    fee_bound_lazy_gain,
    lazy_gain,
    lazy_holding_worst,
    least_replay,
    replay_fraction,
    solver_fake_gain,
    union_fraction,
    withhold_gain,
    worst_coalition,
    worst_fake,
)
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


# M of the replay table: a run contribution (H = 50, k = 5), the demo job, larger jobs
REPLAY_SEGMENTS: tuple[int, ...] = (10, 12, 60, 240, 1000)


def _vtt(wei: Fraction | int) -> str:
    return f"{float(Fraction(wei) / 10**18):+.2f}"


def _best_fakes(m: int, c: int, single_seat: bool) -> set[int]:
    """The c segments a cheating solver fakes to be replayed least: the first c, the last kept
    honest (every seat replays it); with one seat (P-39) the last two together (the seat replays
    the last only when it drew the one before) and then the first c - 2."""
    if c == m:
        return set(range(m))
    if single_seat and c >= 2:
        return {m - 2, m - 1} | set(range(c - 2))
    return set(range(c))


def detection_by_draw(m: int, v: int, q: int, trials: int, seed: int = 0) -> list[float]:
    """Monte Carlo over the contract's own draws (`own_draws`, random block hashes and seat
    addresses from a seeded generator): for c = 1..M, the share of draws in which some seat
    replays one of the faked segments (`_best_fakes`; a fetched last sample replays nothing)."""
    rng = random.Random(seed)
    single = v == 1
    hits = [0] * m
    for _ in range(trials):
        draws = own_draws(
            job_seed(rng.randbytes(32), 1, rng.randbytes(32)), _seats(rng, v), m, q, single
        )
        replayed: set[int] = set()
        for mask, fetched in zip(draws.masks, draws.fetch_only, strict=True):
            own = mask & ~fetched
            replayed |= {s for i, s in enumerate(draws.segments) if own >> i & 1}
        for c in range(1, m + 1):
            hits[c - 1] += bool(replayed & _best_fakes(m, c, single))
    return [h / trials for h in hits]


def _seats(rng: random.Random, v: int) -> list[str]:
    return ["0x" + rng.randbytes(20).hex() for _ in range(v)]


def bench_detection_by_c(params: ProtocolParams, trials: int) -> Table:
    """Table 3: detection of c = 1..M faked segments at the defaults, exact and Monte Carlo."""
    m, v, q = params.reference_segments, params.verifiers_per_job, params.samples_per_job
    table = Table(
        title=f"Detection of c of M = {m} faked segments at the defaults (V = {v}, q = {q}; "
        f"Monte Carlo: {trials:,} contract draws)"
    )
    for col in ("c", "exact", "Monte Carlo", "faking gain (VTT)"):
        table.add_column(col, justify="right")
    mc = detection_by_draw(m, v, q, trials)
    econ = params.reference_economics
    for c in range(1, m + 1):
        table.add_row(
            str(c),
            f"{float(detection(m, c, v, q)):.2%}",
            f"{mc[c - 1]:.2%}",
            _vtt(solver_fake_gain(econ, c)),
        )
    return table


def bench_strategies(params: ProtocolParams) -> Table:
    """Table 4: each strategy's expected gain per job (VTT) at the defaults, reference job."""
    econ = params.reference_economics
    m, v, q = econ.segments, econ.verifiers, econ.samples
    phi = Fraction(params.reference_coalition_bps, 10_000)
    table = Table(
        title=f"Expected gain per job of each strategy at the defaults (reference job: M = {m}, "
        f"reward {_vtt(econ.reward)} VTT, {_vtt(econ.segment_cost)} VTT per segment; "
        "docs/SECURITY.md 'Cheating is irrational')"
    )
    for col in ("strategy", "worst case", "gain (VTT)"):
        table.add_column(col)
    c, fake = worst_fake(econ)
    table.add_row("(a) solver fakes c of M", f"c = {c}", _vtt(fake))
    cc, coal = worst_coalition(econ, phi)
    table.add_row(
        f"(c) solver + coalition holding {float(phi):.0%} of seats", f"c = {cc}", _vtt(coal)
    )
    table.add_row(
        "(b) lazy seat, blind to its draw", f"h = 1/{v}", _vtt(lazy_gain(econ, Fraction(1, v)))
    )
    worst_h = lazy_holding_worst(v, q, m)
    table.add_row(
        "(b) lazy seat that sees its draw", f"h = {worst_h}", _vtt(lazy_gain(econ, worst_h))
    )
    table.add_row(
        "(b) lazy seat, deployer's rule (fee bound, worst draw)",
        f"h = {params.lazy_holding}",
        _vtt(fee_bound_lazy_gain(econ, params.lazy_holding)),
    )
    table.add_row(
        "(b) copying seat (sealed verdicts: = lazy)",
        f"h = 1/{v}",
        _vtt(lazy_gain(econ, Fraction(1, v))),
    )
    table.add_row("(d) withholds the final state", "always sampled", _vtt(withhold_gain(econ, 0)))
    table.add_row("(d) withholds c faked segments", f"c = {c}", _vtt(withhold_gain(econ, c)))
    return table


def _reference(params: ProtocolParams, m: int) -> Economics:
    """The defaults' money on a job of M segments at the reference cost, reward M * cost."""
    cost = params.reference_segment_cost
    return params.reference_economics.model_copy(
        update={"segments": m, "reward": m * cost, "segment_cost": cost}
    )


def bench_replay(params: ProtocolParams) -> Table:
    """Table 5: replay fraction today and at the least-replay (V, q) per M."""
    phi = Fraction(params.reference_coalition_bps, 10_000)
    v0, q0 = params.verifiers_per_job, params.samples_per_job
    table = Table(
        title="Replay fraction (all seats' replayed segments / M; each seat its own q and the "
        "last segment, one seat its q of the first M - 1 and the last with the one before or "
        "when the forced error lands on it, P-39) and the least-replay sample keeping every "
        f"gain < 0 (coalition {float(phi):.0%})"
    )
    for col in (
        "M",
        f"today V={v0}, q={q0}",
        "union only",
        "least (V, q)",
        "its replay",
        "least with today's deterrence",
        "its replay",
        "before: V=3, q=2",
    ):
        table.add_column(col, justify="right")
    for m in REPLAY_SEGMENTS:
        econ = _reference(params, m).with_sample(v0, min(q0, m))
        least = least_replay(econ, phi)
        strong = least_replay(econ, phi, max_fake_gain=worst_fake(econ)[1])
        table.add_row(
            str(m),
            f"{float(replay_fraction(v0, q0, m, params.forced_error_rate_bps)):.1%}",
            f"{float(union_fraction(v0, q0, m)):.1%}",
            "none" if least is None else f"({least[0]}, {least[1]})",
            "-" if least is None else f"{float(least[2]):.1%}",
            "none" if strong is None else f"({strong[0]}, {strong[1]})",
            "-" if strong is None else f"{float(strong[2]):.1%}",
            f"{float(replay_fraction(3, 2, m)):.1%}",
        )
    return table


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--trials", type=int, default=1000, help="Monte Carlo draws per row (sd <= 1.6%%)"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="timing repeats (median; 0 skips the timing table)"
    )
    args = parser.parse_args(argv)
    console = Console(width=160)
    params = ProtocolParams()
    console.print(bench_detection(args.trials))
    if args.repeats > 0:
        console.print(bench_compute(args.repeats))
    console.print(bench_detection_by_c(params, args.trials))
    console.print(bench_strategies(params))
    console.print(bench_replay(params))
    fraction = replay_fraction(
        params.verifiers_per_job,
        params.samples_per_job,
        params.reference_segments,
        params.forced_error_rate_bps,
    )
    console.print(f"replay fraction at the defaults: {float(fraction) * 100:.1f}%")


if __name__ == "__main__":
    main()
