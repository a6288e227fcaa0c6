"""Long work is never silent: without a terminal, `progress_bar` logs progress lines (a
solver's training once ran 2.5 minutes without one log line when its stderr was a file)."""

from __future__ import annotations

import logging

import pytest

import noderuntime.logs as logs


def test_progress_is_logged_without_a_terminal(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(logs, "PROGRESS_LOG_SECONDS", 0.0)
    with caplog.at_level(logging.INFO, logger="veritrain.progress"):
        with logs.progress_bar("train job 3", 4, enabled=False) as advance:
            for _ in range(4):
                advance(1)
    lines = [r.getMessage() for r in caplog.records if r.name == "veritrain.progress"]
    assert lines[0].startswith("train job 3: 1/4 steps (25%)")
    assert len(lines) == 3  # no line for the last step: the caller reports the end itself
    assert "s left" in lines[-1]


def test_progress_lines_are_rate_limited(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(logs, "PROGRESS_LOG_SECONDS", 3600.0)
    with caplog.at_level(logging.INFO, logger="veritrain.progress"):
        with logs.progress_bar("train", 100, enabled=False) as advance:
            for _ in range(100):
                advance(1)
    assert not [r for r in caplog.records if r.name == "veritrain.progress"]
