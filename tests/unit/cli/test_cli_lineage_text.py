"""`model show` / `shares` text: the head slot's extension deadline is a UTC time, never Unix
seconds (those stay in ``--json``).

Run: ``.venv/bin/python -m pytest tests/unit/cli/test_cli_lineage_text.py -q``.
"""

from __future__ import annotations

import pytest

from cli.models import echo_lineage

EXTEND_BY = 1_795_871_436  # Unix seconds: 2026-11-28 13:10:36 UTC


def test_a_finalized_slot_job_s_deadline_is_shown_in_utc(
    capsys: pytest.CaptureFixture[str],
) -> None:
    echo_lineage(
        {
            "head": "0x" + "ab" * 32,
            "slot": {"job_id": 7, "extend_by": EXTEND_BY},
            "lineage": [{"index": 1, "state": "0x" + "cd" * 32, "job_id": 3}],
        }
    )
    out = capsys.readouterr().out
    assert "job 7, finalized: its final state must be appended by 2026-11-28 13:10:36 UTC" in out
    assert str(EXTEND_BY) not in out and "unix" not in out.lower()
    assert "lineage 1" in out and "(job 3)" in out
