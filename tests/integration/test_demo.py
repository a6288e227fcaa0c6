"""The README's demo (docs/DEMO.md), end to end: `veritrain demo --json` as a user runs it.

Runs 9 node processes on a real Anvil, each with its own torch thread count and
``ATEN_CPU_CAPABILITY``, and 4 repro jobs, one of them the character-level GPT (about 4-6
minutes on 2 cores). With ``--hold`` the demo keeps its chain and its dashboard up once the jobs
settle: a real browser (Playwright driving Debian's chromium) then checks the dashboard's pages
and JSON against the chain's own views (about 10-20 s), before the demo is let go.
Run: ``.venv/bin/python -m pytest tests/integration/test_demo.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from chain import DEV_PRIVATE_KEYS, ChainClient, load_manifest
from chain.artifacts import repo_root
from veritrain.spec import model_id_hash
from veritrain.units import vtt_number

HONEST = tuple(f"verifier-{i}" for i in range(1, 5))


@pytest.mark.slow
def test_demo_settles_every_job_as_promised(tmp_path: Path) -> None:
    out = tmp_path / "demo.json"
    env = {**os.environ, "PATH": f"{repo_root() / 'node_modules/.bin'}:{os.environ['PATH']}"}
    argv = [sys.executable, "-m", "cli.app", "demo", "--json", str(out), "--hold"]
    argv += ["--workdir", str(tmp_path / "run")]
    proc = _held_demo(argv, tmp_path, env, lambda url, rpc: _check_dashboard(url, rpc, tmp_path))
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
    summed: dict[tuple[str, str], int] = {}  # the summary splits an account's slashes by cause
    for s in summary["slashed"]:
        summed[(s["name"], s["role"])] = summed.get((s["name"], s["role"]), 0) + s["amount_wei"]
    assert live_slashed == {
        key: pytest.approx(wei / 10**18, abs=0.01) for key, wei in summed.items()
    }, proc.stdout[-4000:]
    assert proc.stdout.count("] forced error settled on job ") == len(summary["forced_errors"])

    # Mixed machines: every node reported its compute; the honest solver and the honest
    # verifiers ran with different thread counts and CPU capabilities (each as asked for).
    nodes = {n["name"]: n for n in summary["nodes"]}
    assert set(nodes) == {
        "solver-honest",
        "solver-skip-steps",
        "solver-perturb",
        *HONEST,
        "verifier-lazy",
        "whistleblower",
    }
    for n in nodes.values():
        assert n["threads"] in (1, 2) and n["cpu_capability"] == n["aten_cpu_capability"].upper()
    replaying = [nodes[n] for n in ("solver-honest", *HONEST)]
    assert {n["threads"] for n in replaying} == {1, 2}
    assert {n["cpu_capability"] for n in replaying} == {"DEFAULT", "AVX2"}
    solver = nodes["solver-honest"]
    assert any(
        n["threads"] != solver["threads"] and n["cpu_capability"] != solver["cpu_capability"]
        for n in replaying[1:]
    ), "some verifier differs from the honest solver in both threads and CPU capability"
    assert "Nodes (mixed machines)" in proc.stdout

    assert all(j["model"] in ("digits-mlp", "shakespeare-char") for j in summary["jobs"])
    jobs = {j["solver_name"]: j for j in summary["jobs"] if j["model"] == "digits-mlp"}
    assert len(jobs) == 3
    assert jobs["solver-honest"]["status"] == "Finalized"
    assert jobs["solver-honest"]["metric"] == "accuracy"
    assert jobs["solver-honest"]["metric_value"] >= 0.9
    assert {jobs["solver-skip-steps"]["status"], jobs["solver-perturb"]["status"]} == {"Rejected"}
    # The GPT job: trained by the honest solver, finalized, its metric validation bits/char.
    (text,) = [j for j in summary["jobs"] if j["model"] == "shakespeare-char"]
    assert text["solver_name"] == "solver-honest" and text["status"] == "Finalized"
    assert text["metric"] == "val_bpc" and 0.0 < text["metric_value"] < 8.0
    assert "validation loss (bits/char)" in proc.stdout
    # Verified across machines: each honest verifier replayed every sample of both honest jobs
    # and agreed with the solver (Approve), the forced error included: it rejected the forced
    # claim with the end it replayed, the solver's true end, which the settlement turned into an
    # approval of that end (the forced errors below name it among the paid rejecters).
    for job in (jobs["solver-honest"], text):
        for name in HONEST:
            verdicts = job["verdicts"][name]
            # q = 12: every seat draws every segment (12 digits, 8 GPT; P-27)
            assert verdicts == ["Approve"] * len(verdicts) and len(verdicts) >= 8, (
                job["job_id"],
                name,
                verdicts,
            )
        assert job["verdicts"]["verifier-lazy"] == ["Approve"] * len(verdicts)

    slashed = {(s["name"], s["role"]): s["amount_wei"] for s in summary["slashed"]}
    assert slashed[("solver-skip-steps", "solver")] > 0
    assert slashed[("solver-perturb", "solver")] > 0
    assert slashed[("verifier-lazy", "verifier")] > 0
    assert {name for name, _ in slashed} == {"solver-skip-steps", "solver-perturb", "verifier-lazy"}

    rewards = {r["name"]: r for r in summary["rewards"]}
    assert rewards["whistleblower"]["role"] == "whistleblower"
    assert rewards["whistleblower"]["amount_wei"] > 0
    assert rewards["solver-honest"]["amount_wei"] > 0
    # the honest solver's rewards are restaked (added to its stake at each finalize)
    assert 0 < rewards["solver-honest"]["restaked_wei"] <= rewards["solver-honest"]["amount_wei"]

    # Shares belong to the honest solver only, for the jobs that held their head's slot (P-30):
    # the text model's one job always; the digits model's first-posted job only when the honest
    # solver won the race to claim it (a cheater's slot job is rejected and mints nothing, and
    # the jobs posted while it held the slot are paid only). Shares count verified compute, the
    # job's steps times the model's registered FLOP per step (P-18).
    digits_slot = min(j["job_id"] for j in summary["jobs"] if j["model"] == "digits-mlp")
    honest_has_slot = jobs["solver-honest"]["job_id"] == digits_slot
    assert [(s["model"], s["name"], s["bps"]) for s in summary["shares"]] == [
        *([("digits-mlp", "solver-honest", 10_000)] if honest_has_slot else []),
        ("shakespeare-char", "solver-honest", 10_000),
    ]
    steps = {"digits-mlp": 300, "shakespeare-char": 16}
    for s in summary["shares"]:
        assert s["shares"] > steps[s["model"]] and s["shares"] % steps[s["model"]] == 0, s
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
    for job in (jobs["solver-honest"], text):
        honest = forced[job["job_id"]]
        assert [a["name"] for a in honest["approvers_slashed"]] == ["verifier-lazy"]
        assert {a["name"] for a in honest["rejecters_paid"]} == set(HONEST)
        assert honest["rejecters_disputed"] == []
        assert [a["name"] for a in honest["whistleblowers_paid"]] == ["whistleblower"]
        assert (
            honest["slashed_wei"] > 0
            and honest["paid_wei"] == 5 * honest["rejecters_paid"][0]["amount_wei"]
        )
    # A forced claim does not shield a cheating segment (P-9): where a cheater's forced sample
    # is one of its wrong segments (from segment 2 on), the honest verifiers' replayed ends are
    # not its true end, so they are not paid and the sample stays disputed.
    for name in ("solver-skip-steps", "solver-perturb"):
        cheat = forced[jobs[name]["job_id"]]
        if cheat["segment"] >= 2:
            assert {a["name"] for a in cheat["rejecters_disputed"]} == set(HONEST), cheat
            assert cheat["rejecters_paid"] == [], cheat


# ------------------------------------------------------------------------------ dashboard


def _held_demo(argv: list[str], cwd: Path, env: dict[str, str], check: Any) -> Any:
    """Run the demo with ``--hold``; once it holds, run ``check(dashboard_url, rpc_url)``, then
    let it finish. Returns the finished run (``returncode``, ``stdout``, ``stderr``)."""
    err = cwd / "demo.stderr"
    with open(err, "w") as stderr:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr, text=True,
        )  # fmt: skip
        watchdog = threading.Timer(660, proc.kill)
        watchdog.start()
        try:
            assert proc.stdout is not None and proc.stdin is not None
            lines = []
            for line in proc.stdout:
                lines.append(line)
                if line.startswith("holding: "):
                    url, rpc = re.findall(r"(http://\S+?)[;,]? ", line + " ")[:2]
                    try:
                        check(url, rpc)
                    finally:
                        proc.stdin.close()
                    break
            lines.append(proc.stdout.read())
            proc.wait(timeout=120)
        finally:
            watchdog.cancel()
    stdout = "".join(lines)
    assert any(line.startswith("dashboard: http://127.0.0.1:") for line in lines[:3]), stdout[:2000]
    assert "holding: " in stdout, stdout[-4000:] + err.read_text()[-4000:]
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, err.read_text())


def _check_dashboard(url: str, rpc_url: str, tmp_path: Path) -> None:
    """The dashboard in a real browser, against the chain's views: every job's phase, every
    dispute's moves and winner, each model's owners (full addresses), a slashed account, and
    the JSON of every job."""
    from playwright.sync_api import sync_playwright

    dep = load_manifest(tmp_path / "run" / "deployments" / "31337.json")
    chain = ChainClient(rpc_url, DEV_PRIVATE_KEYS[0], dep)
    jobs = {i: chain.jobs.get_job(i) for i in range(1, chain.jobs.job_count() + 1)}
    assert len(jobs) == 4
    api = httpx.Client(base_url=url, timeout=10)
    for job_id, job in jobs.items():
        got = api.get(f"/api/jobs/{job_id}").json()
        expected = {
            "phase": job.status.name,
            "poster": job.submitter,
            "solver": job.solver,
            "reward_wei": str(job.reward),
            "spec_hash": "0x" + job.spec_hash.hex(),
            "merkle_root": "0x" + job.merkle_root.hex(),
            "dispute_id": job.dispute_id or None,
            "segments": list(chain.jobs.get_assignment(job_id).segments),
            "total_steps": job.total_steps,
        }
        assert {k: got[k] for k in expected} == expected, (job_id, got)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
            ],
        )  # fmt: skip
        page = browser.new_page(viewport={"width": 1200, "height": 800})
        page.goto(url)
        rows = page.locator("#jobs-table tr[data-job]")
        assert rows.count() == len(jobs)
        for job_id, job in jobs.items():
            row = page.locator(f'#jobs-table tr[data-job="{job_id}"]')
            assert row.locator("td.phase").inner_text() == job.status.name
        for job_id, job in jobs.items():
            page.goto(f"{url}jobs/{job_id}")
            assert page.locator("#job-phase").inner_text() == job.status.name
            if not job.dispute_id:
                continue
            page.click(f'a[href="/disputes/{job.dispute_id}"]')
            page.wait_for_url(f"**/disputes/{job.dispute_id}")
            game = chain.game.get_game(job.dispute_id)
            moves = page.locator("#timeline li .move").all_inner_texts()
            made = [
                m for m in moves if m in ("EndpointsPosted", "Bisected", "Responded", "Escalated")
            ]
            assert len(made) == game.moves and moves[0] == "GameOpened", moves
            assert {"CommitteeDrawn", "VoteRevealed", "GameResolved"} <= set(moves), moves
            winner = game.defender if game.status.name == "DefenderWon" else game.challenger
            assert winner in page.locator("#winner").inner_text()
        for model in ("digits-mlp", "shakespeare-char"):
            page.goto(f"{url}models/{model}")
            holders = page.locator(
                "#holders tr:has(td.num) td:first-child a.addr"
            ).all_inner_texts()
            token = chain.shares.model_shares(model_id_hash(model))
            if token.functions.totalSupply().call() == 0:
                # the digits model when a cheater won its slot job's claim race (P-30)
                assert holders == [] and "no shares minted yet" in page.content()
                continue
            assert holders and all(
                int(
                    page.locator(
                        f'#holders tr:has(a[href="/accounts/{h}"]) td.num'
                    ).first.inner_text()
                )
                == token.functions.balanceOf(h).call()
                for h in holders
            ), holders
            assert all(len(h) == 42 for h in holders)  # full addresses, never cut
            assert page.locator("svg.ownership rect").count() == len(holders)
        lazy = _dev_address(8)  # verifier-lazy
        page.goto(f"{url}accounts/{lazy}")
        stake = chain.stakes.stake_of(lazy, 1)
        assert page.locator("#slashes tr").count() > 1
        cells = page.locator("#stakes tr:has(td:text('verifier')) td.num").all_inner_texts()
        assert cells[0] == vtt_number(stake.staked, 18), cells  # exact, no float
        release = page.locator("#stakes tr:has(td:text('verifier')) td.num").nth(3).inner_text()
        assert release == "-" or re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", release)
        page.goto(f"{url}jobs/1")
        assert re.search(r"commit \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", page.content())
        browser.close()


def _dev_address(i: int) -> str:
    from eth_account import Account

    return str(Account.from_key(DEV_PRIVATE_KEYS[i]).address)
