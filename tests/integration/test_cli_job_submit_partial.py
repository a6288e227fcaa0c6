"""`job submit --count N --json` when a later post fails: what was posted is still printed.

A small JSON-RPC proxy in front of the session Anvil answers HTTP 503 to every
``eth_sendRawTransaction`` after the first two (job 1's approval and post), so the second job's
approval fails on the wire, after the first job is on chain.

Run: ``.venv/bin/python -m pytest tests/integration/test_cli_job_submit_partial.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from eth_utils import keccak
from typer.testing import CliRunner

from chain import Anvil, Deployment, write_manifest
from cli.app import app
from tests.utils.models import register_model
from tests.utils.rpc_proxy import RpcProxy
from veritrain.spec import default_digits_spec
from veritrain.training import TrainingEngine

E18 = 10**18


@pytest.fixture
def send_limit(anvil: Anvil) -> Iterator[RpcProxy]:
    proxy = RpcProxy(anvil.rpc_url, send_limit=2)
    proxy.start()
    yield proxy
    proxy.stop()


def test_a_failed_later_post_prints_the_posted_jobs_and_exits_non_zero(
    protocol: Deployment, client_factory, send_limit: RpcProxy, tmp_path: Path
) -> None:
    manifest = write_manifest(protocol, tmp_path)
    submitter = client_factory(6)
    submitter.token.faucet(100 * E18)
    model = keccak(text="digits-mlp")
    if submitter.shares.model_owner(model) is None:  # the command posts under digits-mlp
        spec = default_digits_spec(seed=1, total_steps=40, checkpoint_interval=10, lr=3e-3)
        engine = TrainingEngine(spec)
        register_model(submitter, model, engine.state_hash(engine.init_state()), spec)
    jobs_before = submitter.jobs.job_count()
    result = CliRunner().invoke(
        app,
        ["job", "submit", "--count", "3", "--steps", "40", "--interval", "10", "--reward", "1",
         "--json", "--rpc-url", send_limit.url, "--deployment", str(manifest),
         "--dev-account", "6"],
        env={"VERITRAIN_DEBUG": ""},
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    posted = json.loads(result.stdout)["jobs"]
    assert [j["job_id"] for j in posted] == [jobs_before + 1]
    assert submitter.jobs.job_count() == jobs_before + 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: posted 1 of 3 jobs"), result.stderr
