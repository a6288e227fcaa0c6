"""`cli.history`'s times: block timestamps and deadlines as people read them (UTC)."""

from __future__ import annotations

from cli.history import clock, when

NOON = 1_795_867_200  # 2026-11-28 12:00:00 UTC


def test_when_is_the_full_utc_date_and_time() -> None:
    assert when(NOON) == "2026-11-28 12:00:00"


def test_a_deadline_today_is_its_time_and_any_other_day_has_its_date() -> None:
    assert clock(NOON + 3600, now=NOON) == "13:00:00"
    # a job open for a day: its deadline is tomorrow, not "an hour ago"
    assert clock(NOON + 86_400 - 3600, now=NOON) == "2026-11-29 11:00:00"
    assert clock(NOON - 86_400, now=NOON) == "2026-11-27 12:00:00"
    assert clock(NOON + 11 * 3600 + 3599, now=NOON) == "23:59:59"
    assert clock(NOON + 12 * 3600, now=NOON) == "2026-11-29 00:00:00"
