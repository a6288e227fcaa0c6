"""`veritrain.sampling`: the contracts' own-draw sample (docs/SECURITY.md P-27) in Python, and
the detection arithmetic of docs/ECONOMICS.md "Detection". The bit-for-bit match with the
contract is checked on Anvil (tests/integration/test_nodes_own_draws.py)."""

from __future__ import annotations

from math import comb

import pytest

from veritrain.sampling import (
    DENSE_LIMIT,
    detection_probability,
    draw_segments,
    job_seed,
    own_draws,
    seat_seed,
)

SEED = job_seed(b"\x11" * 32, 7, b"\x22" * 32)
VERIFIERS = ["0x" + f"{i:040x}" for i in (1, 2, 3)]


@pytest.mark.parametrize("segments", [12, 40, DENSE_LIMIT + 5])
def test_draw_segments_is_distinct_and_in_range(segments: int) -> None:
    picked = draw_segments(SEED, segments, 9)
    assert len(picked) == len(set(picked)) == 9
    assert all(0 <= s < segments for s in picked)
    assert draw_segments(SEED, segments, 9) == picked  # deterministic


def test_draw_segments_takes_all_when_q_covers_the_job() -> None:
    assert draw_segments(SEED, 4, 4) == [0, 1, 2, 3]
    assert draw_segments(SEED, 4, 9) == [0, 1, 2, 3]


def test_each_seat_draws_its_own_and_the_union_is_sorted() -> None:
    seeds = {seat_seed(SEED, v) for v in VERIFIERS}
    assert len(seeds) == 3  # seeded by the verifier
    assert seat_seed(SEED, VERIFIERS[0], "samples") != seat_seed(SEED, VERIFIERS[0])
    draws = own_draws(SEED, VERIFIERS, 12, 2)
    assert list(draws.segments) == sorted(set(draws.segments))
    assert draws.segments[-1] == 11  # the last segment is always sampled (P-36)
    covered = 0
    for v, mask in zip(VERIFIERS, draws.masks, strict=True):
        own = draw_segments(seat_seed(SEED, v), 12, 2)
        held = {draws.segments[i] for i in range(len(draws.segments)) if mask >> i & 1}
        assert held == {*own, 11}  # its own draw, and the last segment as every seat
        covered |= mask
    assert covered == (1 << len(draws.segments)) - 1


def test_a_single_seat_draws_before_the_last_and_fetches_it_unless_it_drew_the_one_before() -> None:
    """`LibAssignment` with one seat per job (docs/SECURITY.md P-39)."""
    fetched = 0
    for t in range(40):
        seed = job_seed(bytes([t]) * 32, 7, b"\x22" * 32)
        draws = own_draws(seed, VERIFIERS[:1], 12, 1, single_seat=True)
        (own,) = draw_segments(seat_seed(seed, VERIFIERS[0]), 11, 1)
        assert own < 11 and draws.segments == (own, 11) and draws.masks == (3,)
        assert draws.fetch_only == ((0,) if own == 10 else (2,))
        fetched += draws.fetch_only[0] != 0
    assert 30 <= fetched < 40  # all but the draws of segment 10 (1 in 11)
    assert own_draws(SEED, VERIFIERS[:1], 1, 1, single_seat=True).fetch_only == (0,)
    several = own_draws(SEED, VERIFIERS, 12, 2)
    assert several.fetch_only == (0, 0, 0)  # several seats all replay the last (P-36)


def test_detection_probability() -> None:
    # one shared draw of q = 2 out of 12 with one faked segment: 1 - C(11, 2) / C(12, 2) = 1/6
    assert detection_probability(12, 1, 1, 2) == pytest.approx(1 / 6)
    # V independent draws: 1 - (10/12)^3
    assert detection_probability(12, 1, 3, 2) == pytest.approx(1 - (comb(11, 2) / comb(12, 2)) ** 3)
    assert detection_probability(880, 88, 4, 11) >= 0.99  # the goal's configuration
    assert detection_probability(12, 0, 3, 2) == 0.0
    assert detection_probability(12, 12, 1, 2) == 1.0
