"""The bisection game's pure decision (`veritrain.bisection.next_move`, docs/DISPUTES.md):
turns, clocks, adjudication and resolution, on the decoded game view."""

from __future__ import annotations

from typing import Any

from veritrain.bisection import GameView, Move, MoveKind, mid_of, next_move
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


def test_next_move_follows_turns_and_clocks() -> None:
    assert next_move(_view(status=1), D, 120) == Move(MoveKind.POST_ENDPOINTS)
    assert next_move(_view(), D, 120) == Move(MoveKind.BISECT, 25)
    assert next_move(_view(), C, 120) is None  # not our turn, clock still running
    assert next_move(_view(), C, 151) == Move(MoveKind.CLAIM_TIMEOUT)
    assert next_move(_view(turn=2, status=3), C, 120) == Move(MoveKind.RESPOND, 25)
    assert next_move(_view(turn=2, status=3), D, 151) == Move(MoveKind.CLAIM_TIMEOUT)
    assert next_move(_view(turn=0, status=4, lo=24, hi=25), D, 10**9) is None  # adjudication
    assert next_move(_view(turn=0, status=5), C, 10**9) is None  # resolved
    assert next_move(_view(), "0x" + "e" * 40, 10**9) is None  # not a party


def test_one_midpoint_formula() -> None:
    for lo, hi in [(0, 1), (20, 30), (21, 22), (0, 25), (7, 100)]:
        assert mid_of(lo, hi) == (lo + hi) // 2
        assert _view(lo=lo, hi=hi).mid == mid_of(lo, hi)
