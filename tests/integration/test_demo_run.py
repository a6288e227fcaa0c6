"""The run demo (docs/RUNS.md "The demo", docs/USING.md "Training runs"), end to end:
`veritrain demo --run --json` as a user runs it.

A DiLoCo run of the character GPT over 3 rounds on a real Anvil, with 8 node processes: a
cheating solver caught and slashed in round 0, a solver leaving after round 0, one joining at
round 2 (about 5-6 minutes on 2 cores).
Run: ``.venv/bin/python -m pytest tests/integration/test_demo_run.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chain.artifacts import repo_root


@pytest.mark.slow
def test_run_demo_trains_one_model_with_churn_and_pays_its_trainers(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    env = {**os.environ, "PATH": f"{repo_root() / 'node_modules/.bin'}:{os.environ['PATH']}"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli.app",
            "demo",
            "--run",
            "--json",
            str(out),
            "--workdir",
            str(tmp_path / "run"),
            # rounds 0-2 hold every case (cheater, leaver, late joiner); the demo's own
            # --timeout default (300 s without progress) applies
            "--rounds",
            "3",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    summary = json.loads(out.read_text())
    assert all(summary["checks"].values()), summary["checks"]
    rounds = summary["rounds"]
    assert [r["round"] for r in rounds] == [0, 1, 2]
    for r in rounds:
        assert set(r) >= {"accepted", "rejected", "val_bpc", "bytes_uploaded"}
        # each counted seat uploaded one float32 pseudo-gradient of the same size
        assert r["bytes_uploaded"] == len(r["accepted"]) * rounds[0]["bytes_uploaded"] // 2
    assert rounds[0]["rejected"] and rounds[0]["solvers"][str(rounds[0]["rejected"][0])] == (
        "solver-cheat"
    )
    # the shares are the counted work, the revenue went out to the wei
    total = sum(h["shares"] for h in summary["shares"])
    assert sum(h["bps"] for h in summary["shares"]) <= 10_000
    for h in summary["shares"]:
        expected = summary["revenue"]["paid_wei"] * h["shares"] // total
        assert abs(h["revenue_claimed_wei"] - expected) <= 1
    assert summary["slashed"] and {s["name"] for s in summary["slashed"]} == {"solver-cheat"}
    # the live view printed each round's claim becoming final, with its metric
    for r in rounds:
        line = rf"\] run 1 round {r['round']}: Final, .*metric {r['val_bpc']:.4f}"
        assert re.search(line, proc.stdout), proc.stdout[-4000:]
    assert "\x1b[" not in proc.stdout
