"""`veritrain run drive` on a real Anvil: killed after it posted the first round and started
again, it finishes the run with every seat of every round posted exactly once (the chain's
`ContributionAdded` events say so).

The other parties are played by direct `ChainClient` calls, so no node trains: each posted job
is cancelled by its submitter (terminal, nothing to count) and the round's claim is proposed
by another account with the state every node computes (`noderuntime.runs.round_claim`); chain
time is moved past the claim's challenge window, and the driver finalizes it.

Run: ``.venv/bin/python -m pytest tests/integration/test_run_drive_anvil.py -m anvil``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chain import DEV_PRIVATE_KEYS, Anvil, ChainClient, Deployment, write_manifest
from chain.artifacts import repo_root
from chain.contracts.runs import seat_mask
from noderuntime.runs import open_run, round_claim
from tests.utils.models import register_model
from tests.utils.node_harness import tiny_spec
from veritrain.diloco import RunSpec
from veritrain.runsim import pretrained_start
from veritrain.training import TrainingEngine

pytestmark = [pytest.mark.anvil, pytest.mark.timeout(240)]
E18 = 10**18
OWNER, PROPOSER = 1, 2


def _until(
    what: str, done: Callable[[], bool], proc: subprocess.Popen[str], timeout: float
) -> None:
    """Poll `done()` until true; fail at `timeout` or when the driver exits first."""
    end = time.monotonic() + timeout
    while not done():
        if proc.poll() is not None:
            pytest.fail(f"the driver exited ({proc.returncode}) before {what}")
        if time.monotonic() > end:
            pytest.fail(f"{what}: not after {timeout:.0f} s")
        time.sleep(0.1)


def _drive(run_file: Path, rpc_url: str, manifest: Path, out: Path) -> subprocess.Popen[str]:
    """`veritrain run drive` as the owner, in its own process, JSON lines into `out`."""
    argv = [sys.executable, "-m", "cli.app", "run", "drive", str(run_file), "--json"]
    argv += ["--rpc-url", rpc_url, "--deployment", str(manifest), "--dev-account", str(OWNER)]
    env = {**os.environ, "PYTHONPATH": str(repo_root()), "VERITRAIN_DEBUG": ""}
    with out.open("w") as sink, out.with_suffix(".err").open("w") as errors:
        return subprocess.Popen(
            [*argv, "--poll", "0.2"], stdout=sink, stderr=errors, text=True, env=env
        )


def _settle_and_propose(owner: ChainClient, proposer: ChainClient, run: RunSpec, t: int) -> None:
    """The round's jobs end unclaimed (cancelled by their submitter) and the round's claim is
    proposed with the state every node computes (no seat counted)."""
    run_id = owner.runs.run_id_of(run.run_hash())
    for job_id in owner.runs.contributions(run_id, t).values():
        owner.jobs.cancel_job(job_id)
    _, result = round_claim(proposer, run, t)
    proposer.runs.propose_round(run_id, result.state.state_hash(), seat_mask(result.accepted))


def test_a_restarted_driver_finishes_the_run_posting_each_round_once(
    anvil: Anvil, protocol: Deployment, tmp_path: Path
) -> None:
    started = time.monotonic()
    run = RunSpec(inner=tiny_spec(seed=31), seats=2, rounds=2)
    run_file = tmp_path / "run.json"
    run_file.write_bytes(run.canonical_json())
    manifest = write_manifest(protocol, tmp_path / "deployments")

    def client(i: int) -> ChainClient:  # fresh: the driver's transactions move the nonces
        return ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[i], protocol)

    owner, proposer = client(OWNER), client(PROPOSER)
    owner.token.faucet(1000 * E18)
    proposer.token.faucet(1000 * E18)
    seeded = TrainingEngine(run.inner)
    register_model(
        owner, run.inner.model_id_hash(), seeded.state_hash(seeded.init_state()), run.inner
    )
    first_block = owner.block_number()
    run_id = open_run(owner, run, pretrained_start(run, 0))
    window = owner.runs.challenge_window()

    def registered(t: int) -> bool:
        return len(owner.runs.contributions(run_id, t)) == run.seats

    print(f"set up in {time.monotonic() - started:.1f} s")
    first = _drive(run_file, anvil.rpc_url, manifest, tmp_path / "first.jsonl")
    try:
        _until("round 0 posted", lambda: registered(0), first, 90)
    finally:
        first.kill()  # at once, as a crash would
        first.wait(10)
    print(f"round 0 posted, driver killed at {time.monotonic() - started:.1f} s")
    second = _drive(run_file, anvil.rpc_url, manifest, tmp_path / "second.jsonl")
    try:
        for t in range(run.rounds):
            _until(f"round {t} posted", lambda t=t: registered(t), second, 90)
            _settle_and_propose(client(OWNER), proposer, run, t)
            anvil.increase_time(window + 1)
            _until(f"round {t} final", lambda t=t: owner.runs.get_run(run_id).round > t, second, 60)
        assert second.wait(30) == 0, (tmp_path / "second.err").read_text()
    finally:
        if second.poll() is None:
            second.kill()
            second.wait(10)

    events = owner.event_logs(
        owner.runs.contract,
        ["ContributionAdded", "RoundFinalized"],
        first_block,
        owner.block_number(),
    )
    posted = [
        (int(e.args["round"]), int(e.args["seat"]))
        for e in events
        if e.event == "ContributionAdded" and int(e.args["runId"]) == run_id
    ]
    assert posted == [(0, 0), (0, 1), (1, 0), (1, 1)]
    finals = [int(e.args["round"]) for e in events if e.event == "RoundFinalized"]
    assert finals == [0, 1]
    lines: list[dict[str, Any]] = [
        json.loads(x) for x in (tmp_path / "second.jsonl").read_text().splitlines()
    ]
    acted = [(s["action"], s["round"]) for s in lines if s["action"] != "waiting"]
    # the restart waited on the round it found posted, and finalized it itself
    assert acted == [("finalized", 0), ("posted", 1), ("finalized", 1), ("complete", 2)]
    print(f"run drive on Anvil: {time.monotonic() - started:.1f} s")
