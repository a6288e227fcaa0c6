"""`veritrain.economics`: every strategy's expected gain against enumeration of every draw.

For small M, V and q the tests list every combination of the seats' own draws (each seat a
uniform q-subset of the M segments, independently, plus the last segment: `LibAssignment`; with
one seat a q-subset of the first M - 1, the last replayed only with segment M - 2, P-39) and
average the payoff at the solver's best choice of faked segments; the exact formulas must equal
those averages as fractions. One Monte Carlo check runs the contract's own draw
(`veritrain.sampling.own_draws`).

Run: ``.venv/bin/python -m pytest tests/unit/veritrain/test_economics.py -q``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from fractions import Fraction

import pytest

from veritrain.economics import (
    Economics,
    coalition_gain,
    detection,
    fake_violation,
    fee_bound_lazy_gain,
    lazy_gain,
    lazy_holding_worst,
    least_replay,
    replay_fraction,
    solver_fake_gain,
    union_fraction,
    violations,
    withhold_gain,
    worst_fake,
)
from veritrain.sampling import job_seed, own_draws

E18 = 10**18
# (M, V, q), q >= M included; V = 1 is the single-seat rule (P-39)
SHAPES = [(5, 1, 1), (6, 1, 2), (2, 1, 1), (5, 2, 2), (6, 3, 2), (4, 2, 3), (3, 2, 3)]


def _econ(m: int, v: int, q: int, **kw: int) -> Economics:
    values = {
        "segments": m,
        "verifiers": v,
        "samples": q,
        "reward": 7 * E18,
        "segment_cost": 2 * E18,
        "solver_stake": 3 * E18,
        "verifier_fee": E18,
        "verifier_stake": 10 * E18,
        "jackpot": 5 * E18,
        "forced_error_rate_bps": 3_000,
    }
    values.update(kw)
    return Economics(**values)


def _all_draws(m: int, v: int, q: int) -> Iterator[tuple[frozenset[int], ...]]:
    """Every equally likely tuple of the V seats' replayed segments: each seat's draw with the
    last segment added; one seat (P-39) draws among the first M - 1 and replays the last only
    with segment M - 2 (else it fetches the final state, which replays nothing)."""
    if v == 1 and m >= 2:
        draws = itertools.combinations(range(m - 1), min(q, m - 1))
        return (((frozenset(s) | {m - 1}) if m - 2 in s else frozenset(s),) for s in draws)
    subsets = [frozenset(s) | {m - 1} for s in itertools.combinations(range(m), min(q, m))]
    return itertools.product(subsets, repeat=v)


def _fakes(m: int, c: int) -> Iterator[frozenset[int]]:
    """Every set of c faked segments the solver may choose."""
    return (frozenset(f) for f in itertools.combinations(range(m), c))


@pytest.mark.parametrize(("m", "v", "q"), SHAPES)
def test_detection_and_fake_gain_equal_the_average_over_every_draw(m: int, v: int, q: int) -> None:
    econ = _econ(m, v, q)
    draws = list(_all_draws(m, v, q))
    for c in range(1, m + 1):
        # the solver fakes the c segments least likely to be replayed
        p = min(
            Fraction(sum(any(seat & faked for seat in draw) for draw in draws), len(draws))
            for faked in _fakes(m, c)
        )
        assert detection(m, c, v, q) == p
        payoff = c * econ.segment_cost - p * (econ.reward + econ.solver_stake)
        assert solver_fake_gain(econ, c) == payoff
        assert withhold_gain(econ, c) == payoff


@pytest.mark.parametrize(("m", "v", "q"), SHAPES)
def test_coalition_gain_equals_the_average_over_draws_and_seat_owners(
    m: int, v: int, q: int
) -> None:
    econ = _econ(m, v, q)
    phi = Fraction(1, 3)
    draws = list(_all_draws(m, v, q))
    for c in range(1, m + 1):
        detected = []
        for faked in _fakes(m, c):
            expected = Fraction(0)
            for owners in itertools.product((True, False), repeat=v):  # True: the coalition's
                weight = Fraction(1)
                for ours in owners:
                    weight *= phi if ours else 1 - phi
                caught = sum(
                    any(seat & faked for seat, ours in zip(draw, owners, strict=True) if not ours)
                    for draw in draws
                )
                expected += weight * Fraction(caught, len(draws))
            detected.append(expected)
        gain = c * econ.segment_cost - min(detected) * (econ.reward + econ.solver_stake)
        assert coalition_gain(econ, c, phi) == gain
    assert coalition_gain(econ, 1, Fraction(0)) == solver_fake_gain(econ, 1)
    assert coalition_gain(econ, 1, Fraction(1)) == econ.segment_cost  # every seat theirs


@pytest.mark.parametrize(("m", "v", "q"), SHAPES)
def test_replay_and_union_fractions_equal_the_average_over_every_draw(
    m: int, v: int, q: int
) -> None:
    draws = list(_all_draws(m, v, q))
    replayed = Fraction(sum(sum(len(seat) for seat in d) for d in draws), len(draws) * m)
    # the sample holds the last segment whether it is replayed or fetched
    union = Fraction(sum(len(frozenset().union(*d) | {m - 1}) for d in draws), len(draws) * m)
    assert replay_fraction(v, q, m) == replayed
    assert union_fraction(v, q, m) == union
    # with forced errors, one seat also replays a fetched last when the forced error lands on it
    # (its fetch disagrees with the forced claim, E-3): uniform among the eligible samples
    p = Fraction(3, 10)
    extra = Fraction(0)
    if v == 1:
        for (seat,) in draws:
            sample = seat | {m - 1}
            eligible = {s for s in sample if s + 1 not in sample}
            if m - 1 not in seat:  # fetched
                extra += p * Fraction(1, len(eligible))
    assert replay_fraction(v, q, m, 3_000) == replayed + extra / (len(draws) * m)


def test_replay_fraction_at_the_deployment_defaults() -> None:
    # V = 3 seats, q = 2 of M = 12, plus the last segment each: 70.8%, not the 50% of V*q/M
    assert replay_fraction(3, 2, 12) == Fraction(17, 24)
    # one seat, one of the first 11 segments, the last only with segment 10 (P-39): 1/11 = 9.1%;
    # with the forced error at p = 20% the seat also replays a fetched last the forced error
    # lands on: (1 + 1/11 + 0.2 * 10/22) / 12 = 9.85%
    assert replay_fraction(1, 1, 12) == Fraction(1, 11)
    assert (
        replay_fraction(1, 1, 12, 2_000)
        == (1 + Fraction(1, 11) + Fraction(2, 10) * Fraction(10, 22)) / 12
    )


@pytest.mark.parametrize(("m", "v", "q"), [(5, 2, 1), (6, 3, 1), (9, 2, 2), (9, 1, 1), (7, 1, 2)])
def test_lazy_holding_bounds_hold_on_every_draw(m: int, v: int, q: int) -> None:
    """The forced sample is uniform among the eligible samples (`VerificationRound._draw`: no
    sampled segment starts where theirs ends, and not a last sample that a single seat only
    fetches); each seat's chance to hold it among the samples it replays is at least
    `lazy_holding_worst` on every draw (some draw attains it) and at least 1/V on average."""
    worst = lazy_holding_worst(v, q, m)
    total = [Fraction(0)] * v
    draws = list(_all_draws(m, v, q))
    seen_min = Fraction(1)
    for draw in draws:
        union = frozenset().union(*draw) | {m - 1}  # the sample holds the last, fetched or not
        eligible = {s for s in union if s + 1 not in union}  # a fetched last too (E-3)
        for i, seat in enumerate(draw):
            h = Fraction(len(seat & eligible), len(eligible))
            assert h >= worst
            seen_min = min(seen_min, h)
            total[i] += h
    assert seen_min == worst
    if v > 1:
        assert all(t / len(draws) >= Fraction(1, v) for t in total)
    if q >= 2 and v > 1:
        assert seen_min < Fraction(1, v)  # a seat that sees its draw can do worse than 1/V
    if v == 1:
        # one seat: the forced error lands on its replayed draw or on its fetched last (which
        # tests the fetch, E-3), so on a worst draw it tests the replay half the time
        assert seen_min == Fraction(1, 2)


def test_lazy_gain_formula() -> None:
    econ = _econ(12, 3, 2, segment_cost=E18 // 4)
    h = Fraction(1, 3)
    replay = (2 + 1 - Fraction(2, 12)) * (E18 // 4)
    assert lazy_gain(econ, h) == replay - h * Fraction(3, 10) * 16 * E18
    assert lazy_gain(econ, h) < 0
    assert lazy_gain(econ, Fraction(0)) == replay  # never tested: laziness pays its replay


def test_the_deployers_fee_bound_lazy_rule_bounds_the_lazy_gain_from_above() -> None:
    """The deployer's rule saves the fee instead of the replay and drops the jackpot, so where a
    seat's replay costs at most its fee it is never below `lazy_gain`."""
    for cost, jackpot, rate in itertools.product((0, E18 // 4, E18 // 3), (0, 5 * E18), (0, 3_000)):
        econ = _econ(12, 3, 2, segment_cost=cost, jackpot=jackpot, forced_error_rate_bps=rate)
        for h in (Fraction(1, 3), Fraction(1, 5), Fraction(1)):
            rule = fee_bound_lazy_gain(econ, h)
            assert rule == E18 - h * Fraction(rate, 10_000) * 11 * E18
            assert rule >= lazy_gain(econ, h)


def test_monte_carlo_on_the_contracts_draw_matches_the_exact_detection() -> None:
    rng = random.Random(7)
    m, v, q, c, trials = 12, 3, 2, 1, 1500
    hits = 0
    for _ in range(trials):
        seed = job_seed(rng.randbytes(32), 1, rng.randbytes(32))
        seats = ["0x" + rng.randbytes(20).hex() for _ in range(v)]
        draws = own_draws(seed, seats, m, q)
        owned = [{s for i, s in enumerate(draws.segments) if mask >> i & 1} for mask in draws.masks]
        hits += any(s < c for seat in owned for s in seat)
    exact = float(detection(m, c, v, q))
    sigma = (exact * (1 - exact) / trials) ** 0.5
    assert abs(hits / trials - exact) < 4 * sigma


def test_worst_fake_and_violations_name_the_strategy() -> None:
    cheap = _econ(12, 1, 1, solver_stake=0, reward=E18, segment_cost=E18)  # reward below cost
    c, gain = worst_fake(cheap)
    assert gain == 11 * E18 and c == 12  # nothing at stake: fake everything, lose the reward
    line = fake_violation(cheap)
    assert line is not None and "faking 12 of 12" in line and "11.00 VTT" in line
    assert any(v.startswith("faking does not lose") for v in violations(cheap))
    safe = _econ(12, 3, 2, segment_cost=E18 // 4, reward=3 * E18, solver_stake=100 * E18)
    assert fake_violation(safe) is None
    assert violations(safe, Fraction(1, 3)) == []
    # a seat paid less than its replay: no honest seat sits
    assert any("replaying does not pay" in v for v in violations(_econ(12, 3, 2)))


def test_least_replay_picks_the_cheapest_sample_that_keeps_every_gain_negative() -> None:
    econ = _econ(12, 3, 2, segment_cost=E18 // 4, reward=3 * E18, solver_stake=100 * E18)
    v, q, fraction = least_replay(econ, Fraction(1, 3)) or (0, 0, Fraction(0))
    assert (v, q) == (1, 1) and fraction == replay_fraction(1, 1, 12, econ.forced_error_rate_bps)
    # asking for today's deterrence (the worst faking gain of V = 3, q = 2) costs more replay
    today = worst_fake(econ)[1]
    v2, q2, fraction2 = least_replay(econ, Fraction(1, 3), max_fake_gain=today) or (0, 0, 1)
    assert fraction2 > fraction and worst_fake(econ.with_sample(v2, q2))[1] <= today
    for vv in range(1, 4):
        for qq in range(1, 13):
            if replay_fraction(vv, qq, 12, econ.forced_error_rate_bps) < fraction2:
                assert violations(econ.with_sample(vv, qq), Fraction(1, 3), today)
    # no stake: nothing deters a solver whose reward is below its cost
    assert least_replay(_econ(12, 3, 2, solver_stake=0, reward=0, segment_cost=E18)) is None
