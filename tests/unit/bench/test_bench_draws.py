"""`bench.bench_draws`: the economics tables run on tiny arguments and the output ends with the
replay fraction at the defaults (one seat drawing one of the first 11 of the reference job's
M = 12 segments, the last replayed with segment 10 or when the forced error, at 20%, lands on
the fetched last: (1 + 1/11 + 0.2 * 10/22) / 12 = 9.85%, docs/SECURITY.md P-39; 70.8% at the
former V = 3, q = 2).

Run: ``.venv/bin/python -m pytest tests/unit/bench/test_bench_draws.py -q``.
"""

from __future__ import annotations

import re

import pytest

from bench.bench_draws import detection_by_draw, main
from veritrain.economics import detection


def test_main_ends_with_the_replay_fraction_at_the_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["--trials", "20", "--repeats", "0"])
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip()]
    assert re.fullmatch(r"replay fraction at the defaults: \d+\.\d%", lines[-1])
    assert lines[-1] == "replay fraction at the defaults: 9.8%"
    assert "solver fakes c of M" in out and "coalition" in out and "withholds" in out


def test_monte_carlo_on_the_contract_draw_is_near_the_exact_detection() -> None:
    trials = 800
    mc = detection_by_draw(12, 3, 2, trials, seed=3)
    for c in (1, 2, 3):
        exact = float(detection(12, c, 3, 2))
        assert abs(mc[c - 1] - exact) < 4 * (exact * (1 - exact) / trials) ** 0.5
    assert mc[-1] == 1.0


def test_monte_carlo_on_the_single_seat_draw_is_at_least_the_exact_bound() -> None:
    """One seat (P-39): the solver's best fakes are the last two segments together, replayed
    only with segment M - 2; the Monte Carlo of the contract's draw (no forced error) matches."""
    trials = 800
    mc = detection_by_draw(12, 1, 1, trials, seed=5)
    for c in (1, 2, 3):
        exact = float(detection(12, c, 1, 1))
        assert abs(mc[c - 1] - exact) < 4 * (exact * (1 - exact) / trials) ** 0.5 + 1e-9
    assert mc[-1] == 1.0
