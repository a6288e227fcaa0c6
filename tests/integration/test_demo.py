"""The README's demo, end to end: `veritrain demo --json` as a user runs it.

Runs 10 node processes on a real Anvil (about 3-4 minutes on 2 cores).
Run: ``.venv/bin/python -m pytest tests/integration/test_demo.py``.
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
def test_demo_settles_every_job_as_promised(tmp_path: Path) -> None:
    out = tmp_path / "demo.json"
    env = {**os.environ, "PATH": f"{repo_root() / 'node_modules/.bin'}:{os.environ['PATH']}"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli.app",
            "demo",
            "--json",
            str(out),
            "--workdir",
            str(tmp_path / "run"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    summary = json.loads(out.read_text())
    assert all(summary["checks"].values()), summary["checks"]
    # Off a terminal the live view prints one plain line per change: no escape codes, each
    # dispute opened once, each slash once (the slash lines add up to the chain's totals).
    assert "\x1b[" not in proc.stdout
    for d in summary["disputes"]:
        opened = f"] dispute {d['dispute_id']} opened on job {d['job_id']} (bisection)"
        assert proc.stdout.count(opened) == 1, proc.stdout[-4000:]
    live_slashed: dict[tuple[str, str], float] = {}
    for name, role, amount in re.findall(r"\] slashed (\S+) \((\w+)\): ([\d,.]+) VTT", proc.stdout):
        key = (name, role)
        live_slashed[key] = live_slashed.get(key, 0.0) + float(amount.replace(",", ""))
    assert live_slashed == {
        (s["name"], s["role"]): pytest.approx(s["amount_wei"] / 10**18, abs=0.01)
        for s in summary["slashed"]
    }, proc.stdout[-4000:]
    assert proc.stdout.count("] forced error settled on job ") == len(summary["forced_errors"])

    jobs = {j["solver_name"]: j for j in summary["jobs"]}
    assert jobs["solver-honest"]["status"] == "Finalized"
    assert jobs["solver-honest"]["test_accuracy"] >= 0.9
    assert {jobs["solver-skip-steps"]["status"], jobs["solver-perturb"]["status"]} == {"Rejected"}

    slashed = {(s["name"], s["role"]): s["amount_wei"] for s in summary["slashed"]}
    assert slashed[("solver-skip-steps", "solver")] > 0
    assert slashed[("solver-perturb", "solver")] > 0
    assert slashed[("verifier-lazy", "verifier")] > 0
    assert {name for name, _ in slashed} == {"solver-skip-steps", "solver-perturb", "verifier-lazy"}

    rewards = {r["name"]: r for r in summary["rewards"]}
    assert rewards["whistleblower"]["role"] == "whistleblower"
    assert rewards["whistleblower"]["amount_wei"] > 0
    assert rewards["solver-honest"]["amount_wei"] > 0

    assert [(s["name"], s["shares"], s["bps"]) for s in summary["shares"]] == [
        ("solver-honest", 300, 10_000)
    ]
    # Both cheaters lose a bisection game that narrowed their segment to one step.
    assert len(summary["disputes"]) == 2
    for d in summary["disputes"]:
        assert d["adjudicator"] == "bisection"
        assert not d["segment_valid"] and d["winner_side"] == "challenger"
        assert d["winner_name"].startswith("verifier-") and d["winner_name"] != "verifier-lazy"
        assert 3 <= d["moves"] <= 1 + 2 * 5  # endpoints + (bisect, respond) x ceil(log2 25)
        assert d["step"] is not None and d["gas_used"] > 0
    # Every job carries a forced error (rate 10_000 bps); the honest job's is caught in full.
    forced = {f["job_id"]: f for f in summary["forced_errors"]}
    assert set(forced) == {j["job_id"] for j in summary["jobs"]}
    honest = forced[jobs["solver-honest"]["job_id"]]
    assert [a["name"] for a in honest["approvers_slashed"]] == ["verifier-lazy"]
    assert {a["name"] for a in honest["rejecters_paid"]} == {f"verifier-{i}" for i in range(1, 5)}
    assert [a["name"] for a in honest["whistleblowers_paid"]] == ["whistleblower"]
    assert (
        honest["slashed_wei"] > 0
        and honest["paid_wei"] == 5 * honest["rejecters_paid"][0]["amount_wei"]
    )
