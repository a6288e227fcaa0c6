"""The dissection game's pure core (`veritrain.bisection`, docs/DISPUTES.md): the points of an
interval, the honest challenger's part, one round, whole simulated games against trajectories
diverging at a random step, the round count, and `next_move` (turns, clocks, adjudication and
resolution) on the decoded game view."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veritrain._keccak import keccak256
from veritrain.bisection import (
    GameView,
    Move,
    MoveKind,
    choose_index,
    depth_of,
    dissect_interval,
    dissection_points,
    hashes_digest,
    next_move,
    play_out,
    posted_points,
)
from veritrain.enums import GameStatus, Side

D, C = "0x" + "d" * 40, "0x" + "c" * 40
Z = b"\x00" * 32


def _view(**kw: Any) -> GameView:
    base = dict(
        job_id=1, segment=2, defender=D, challenger=C, lo=20, hi=30, agreed_hash=Z,
        claimed_hash=Z, pending_hash=Z, turn=1, status=2, defender_clock=50,
        challenger_clock=50, turn_started_at=100,
    )  # fmt: skip
    base.update(kw)
    return GameView(
        dispute_id=1,
        **{**base, "turn": Side(int(base["turn"])), "status": GameStatus(int(base["status"]))},
    )


def _h(tag: str, step: int) -> bytes:
    return keccak256(f"{tag}:{step}".encode())


def _trajectories(t: int) -> tuple[Any, Any]:
    """(defender, challenger) hash functions equal at steps <= t, different after."""

    def honest(step: int) -> bytes:
        return _h("honest", step)

    def cheat(step: int) -> bytes:
        return _h("honest" if step <= t else "cheat", step)

    return cheat, honest


# ------------------------------------------------------------------------------ points
def test_points_pinned_cases() -> None:
    assert dissection_points(0, 1024, 8) == [0, 128, 256, 384, 512, 640, 768, 896, 1024]
    assert dissection_points(20, 30, 8) == [20, 21, 22, 23, 25, 26, 27, 28, 30]
    assert dissection_points(20, 22, 8) == [20, 21, 22]  # one hash: the old midpoint
    assert dissection_points(20, 25, 8) == [20, 21, 22, 23, 24, 25]  # parts = hi - lo
    assert dissection_points(20, 30, 2) == [20, 25, 30]  # binary bisection


@settings(max_examples=200, deadline=None)
@given(lo=st.integers(0, 10**6), width=st.integers(2, 5000), arity=st.integers(2, 16))
def test_posted_points_need_no_arity(lo: int, width: int, arity: int) -> None:
    # A Bisected event carries lo, hi and the hashes, not the arity: the hash count pins it.
    interior = dissection_points(lo, lo + width, arity)[1:-1]
    assert posted_points(lo, lo + width, len(interior)) == interior
    assert posted_points(lo, lo + width, 0) == []


@settings(max_examples=200, deadline=None)
@given(lo=st.integers(0, 10**6), width=st.integers(1, 5000), arity=st.integers(2, 16))
def test_points_split_evenly(lo: int, width: int, arity: int) -> None:
    hi = lo + width
    points = dissection_points(lo, hi, arity)
    parts = min(arity, width)
    assert len(points) == parts + 1 and points[0] == lo and points[-1] == hi
    gaps = [b - a for a, b in zip(points, points[1:], strict=False)]
    assert set(gaps) <= {width // parts, math.ceil(width / parts)} and min(gaps) >= 1


def test_points_reject_empty_interval_and_unary_arity() -> None:
    with pytest.raises(ValueError, match="no step"):
        dissection_points(5, 5, 8)
    with pytest.raises(ValueError, match="arity"):
        dissection_points(0, 10, 1)


def test_depth_matches_the_contract_loop() -> None:
    assert depth_of(1024, 8) == 4 and depth_of(64, 8) == 2 and depth_of(10, 8) == 2
    assert depth_of(1024, 2) == 10 and depth_of(1000, 2) == 10 and depth_of(1, 8) == 0
    assert depth_of(8, 8) == 1 and depth_of(9, 8) == 2 and depth_of(2, 16) == 1


def test_hashes_digest_is_keccak_of_the_concatenation() -> None:
    hashes = [_h("x", 1), _h("x", 2)]
    assert hashes_digest(hashes) == keccak256(hashes[0] + hashes[1])
    assert hashes_digest(hashes) != hashes_digest(hashes[::-1])
    with pytest.raises(ValueError, match="32 bytes"):
        hashes_digest([b"\x01" * 31])


# ------------------------------------------------------------------------------ choice
def test_choose_index_takes_the_first_disputed_part() -> None:
    a, b, c, x = _h("a", 0), _h("b", 0), _h("c", 0), _h("x", 0)
    assert choose_index([a, b, c], [a, b, x]) == 2
    assert choose_index([a, b, c], [a, x, x]) == 1
    assert choose_index([a, b, c], [x, b, c]) == 0  # later agreement does not matter
    assert choose_index([a, b, c], [a, b, c]) == 2  # agrees everywhere: the last part
    with pytest.raises(ValueError):
        choose_index([a], [a, b])


def test_dissect_interval_moves_the_hashes() -> None:
    agreed, claimed = _h("agreed", 0), _h("claimed", 0)
    posted = [_h("p", j) for j in range(1, 8)]  # [20, 30]: points 21 22 23 25 26 27 28
    assert dissect_interval(20, 30, agreed, claimed, posted, 0, 8) == (20, 21, agreed, posted[0])
    assert dissect_interval(20, 30, agreed, claimed, posted, 3, 8) == (
        23,
        25,
        posted[2],
        posted[3],
    )
    assert dissect_interval(20, 30, agreed, claimed, posted, 7, 8) == (28, 30, posted[6], claimed)
    with pytest.raises(ValueError, match="takes 7 hashes"):
        dissect_interval(20, 30, agreed, claimed, posted[:6], 0, 8)
    with pytest.raises(ValueError, match="index 8"):
        dissect_interval(20, 30, agreed, claimed, posted, 8, 8)


# ------------------------------------------------------------------------- whole games
@settings(max_examples=300, deadline=None)
@given(data=st.data(), k=st.integers(1, 3000), arity=st.integers(2, 16))
def test_honest_challenger_pins_the_first_divergent_step(
    data: st.DataObject, k: int, arity: int
) -> None:
    start = data.draw(st.integers(0, 10**6), label="start")
    t = data.draw(st.integers(start, start + k - 1), label="t")  # t ok, t + 1 differs
    defender, challenger = _trajectories(t)
    out = play_out(start, start + k, defender, challenger, arity)
    assert out.step == t
    assert out.agreed == defender(t) == challenger(t)
    assert out.claimed == defender(t + 1) != challenger(t + 1)
    assert 1 <= out.rounds <= depth_of(k, arity) if k > 1 else out.rounds == 0


@pytest.mark.parametrize(("k", "arity"), [(64, 8), (1024, 8), (81, 3), (256, 2), (16, 16)])
def test_rounds_equal_depth_when_k_is_a_power_of_the_arity(k: int, arity: int) -> None:
    for t in (0, k // 3, k - 1):
        assert play_out(0, k, *_trajectories(t), arity).rounds == depth_of(k, arity)


@pytest.mark.parametrize(("k", "arity"), [(10, 8), (100, 8), (37, 3), (1000, 16), (13, 2)])
def test_the_longest_game_takes_depth_rounds(k: int, arity: int) -> None:
    rounds = [play_out(0, k, *_trajectories(t), arity).rounds for t in range(k)]
    assert max(rounds) == depth_of(k, arity)


def test_a_wrong_choice_pins_the_wrong_step() -> None:
    """A griefer that always disputes the first part ends at step 0, though the two
    trajectories agree there; the honest choice finds the real step."""
    defender, challenger = _trajectories(700)
    assert play_out(0, 1024, defender, challenger, 8).step == 700
    lost = play_out(0, 1024, defender, challenger, 8, choose=lambda _m, _t: 0)
    assert lost.step == 0 and lost.claimed == defender(1) == challenger(1)


def test_an_honest_defender_leaves_the_last_step() -> None:
    """No divergence at all: the challenger takes the last part every round and the step
    adjudicator gets the segment's last step, which the defender wins."""
    out = play_out(10, 20, *_trajectories(10**9), 8)
    assert out.step == 19 and out.claimed == _h("honest", 20)


# ---------------------------------------------------------------------------- next_move
def test_next_move_follows_turns_and_clocks() -> None:
    assert next_move(_view(status=1), D, 120, arity=8) == Move(MoveKind.POST_ENDPOINTS)
    assert next_move(_view(), D, 120, arity=8) == Move(
        MoveKind.BISECT, (21, 22, 23, 25, 26, 27, 28)
    )
    assert next_move(_view(), D, 120, arity=2) == Move(MoveKind.BISECT, (25,))
    assert next_move(_view(), C, 120, arity=8) is None  # not our turn, clock still running
    assert next_move(_view(), C, 151, arity=8) == Move(MoveKind.CLAIM_TIMEOUT)
    assert next_move(_view(turn=2, status=3), C, 120, arity=8) == Move(
        MoveKind.RESPOND, (21, 22, 23, 25, 26, 27, 28, 30)
    )
    assert next_move(_view(turn=2, status=3), D, 151, arity=8) == Move(MoveKind.CLAIM_TIMEOUT)
    late = _view(turn=0, status=4, lo=24, hi=25)
    assert next_move(late, D, 10**9, arity=8) is None  # adjudication
    assert next_move(_view(turn=0, status=5), C, 10**9, arity=8) is None  # resolved
    assert next_move(_view(), "0x" + "e" * 40, 10**9, arity=8) is None  # not a party


def test_view_points_are_the_dissection_points() -> None:
    for lo, hi in [(0, 1), (20, 30), (21, 22), (0, 25), (7, 100)]:
        assert _view(lo=lo, hi=hi).points(8) == dissection_points(lo, hi, 8)
