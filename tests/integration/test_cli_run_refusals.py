"""What operators read when a run command (and `faucet`, `job submit`) refuses: one line, amounts
in VTT and times in UTC, and nothing sent.

Each test drives a `veritrain` command through Typer's CliRunner against the session Anvil, on a
run opened for real (digits-mlp, 2 seats, H = 4, k = 2): the line must name the fix, show no
wei count nor Unix time, hold no revert name or RPC dump, and the caller's nonce must not move
(the refusal came before any transaction, an `approve` included). The argument-level and other
chain-level tables are tests/unit/cli/test_cli_bad_arguments.py and
tests/integration/test_cli_bad_chain_inputs.py.

Run: ``.venv/bin/python -m pytest tests/integration/test_cli_run_refusals.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from eth_utils import keccak
from typer.testing import CliRunner

from chain import DEV_PRIVATE_KEYS, Anvil, ChainClient, Deployment, write_manifest
from cli.app import app
from noderuntime.runs import open_run, run_state
from tests.utils.models import register_model
from veritrain.diloco import RunSpec
from veritrain.presets import preset
from veritrain.runsim import pretrained_start
from veritrain.state import state_hash
from veritrain.training import TrainingEngine
from veritrain.units import utc_time, vtt

E18 = 10**18
OWNER = 1  # the model's owner: registers the model, opens and posts the run
BROKE = 6  # a dev account with ether but no token
NO_GAS_KEY = "0x" + "42" * 32  # a key whose account holds nothing on the devnet
RAW_NUMBER = re.compile(r"\d{9,}")  # a wei count or a Unix time; VTT amounts carry separators


@dataclass
class World:
    """The manifest, the run file and the opened run's id; the owner's client."""

    manifest: Path
    run_file: Path
    run: RunSpec
    run_id: int
    owner: ChainClient


@pytest.fixture
def world(tmp_path: Path, anvil: Anvil, protocol: Deployment, client_factory) -> World:
    owner = client_factory(OWNER)
    owner.token.faucet(1_000 * E18)
    run = RunSpec(
        inner=preset("digits-mlp", "native", total_steps=4, checkpoint_interval=2),
        seats=2,
        rounds=2,
    )
    seeded = TrainingEngine(run.inner)
    register_model(
        owner, run.inner.model_id_hash(), seeded.state_hash(seeded.init_state()), run.inner
    )
    run_id = open_run(owner, run, pretrained_start(run, 0))
    run_file = tmp_path / "run.json"
    run_file.write_bytes(run.canonical_json())
    return World(write_manifest(protocol, tmp_path / "deployments"), run_file, run, run_id, owner)


def _nonce(client: ChainClient, address: str | None = None) -> int:
    return int(client.w3.eth.get_transaction_count(address or client.account.address))


def _refused(anvil: Anvil, w: World, *argv: str, account: str | None = None) -> str:
    """Run the command as dev account `account` (default: the owner, unless argv names a key);
    check it refused in one line before sending anything; return that line."""
    if "--key-env" in argv:
        key, signer = [], NO_GAS_KEY
    else:
        key, signer = (
            ["--dev-account", account or str(OWNER)],
            DEV_PRIVATE_KEYS[int(account or OWNER)],
        )
    address = ChainClient(anvil.rpc_url, signer).account.address
    before = _nonce(w.owner, address)
    result = CliRunner().invoke(
        app,
        [*argv, *key, "--rpc-url", anvil.rpc_url, "--deployment", str(w.manifest)],
        env={"VERITRAIN_DEBUG": "", "VERITRAIN_TEST_NO_GAS_KEY": NO_GAS_KEY},
    )
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and result.stdout.strip() == "", result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "reverted" not in lines[0] and "RPC" not in lines[0] and "{" not in lines[0], lines[0]
    assert _nonce(w.owner, address) == before, "a transaction was sent"
    return lines[0]


def _post(anvil: Anvil, w: World, *extra: str) -> None:
    result = CliRunner().invoke(
        app,
        ["run", "post", str(w.run_file), *extra, "--dev-account", str(OWNER)]
        + ["--rpc-url", anvil.rpc_url, "--deployment", str(w.manifest)],
    )
    assert result.exit_code == 0, result.output


def _proposed_wrong_claim(anvil: Anvil, protocol: Deployment, w: World) -> int:
    """Round 0 closes empty (its registration window passes) and the owner proposes a wrong
    state; returns the claim's challenge deadline (Unix seconds)."""
    anvil.increase_time(protocol.params.registration_window + 1)
    w.owner.runs.propose_round(w.run_id, keccak(text="not the round's state"), 0)
    return int(w.owner.runs.get_round(w.run_id, 0).challenge_deadline)


def test_post_below_the_escrow_names_vtt_and_the_faucet(anvil: Anvil, world: World) -> None:
    line = _refused(anvil, world, "run", "post", str(world.run_file), "--reward", "1000000000")
    assert "`veritrain faucet " in line, line
    shown, _, hint = line.partition("(test tokens:")  # the hint's amount is AMOUNT's digits
    assert "wei" not in line and not RAW_NUMBER.search(shown), line
    needed = 2 * world.owner.jobs.post_cost(10**9 * E18)
    assert f"below the {vtt(needed)} escrow of 2 job(s)" in shown, line


def test_a_seat_posted_twice_is_refused_before_sending(anvil: Anvil, world: World) -> None:
    _post(anvil, world, "--seat", "0", "--reward", "1")
    job = world.owner.runs.contribution_of(world.run_id, 0, 0)
    seats = ("--seat", "0", "--seat", "1")
    line = _refused(anvil, world, "run", "post", str(world.run_file), *seats, "--reward", "1")
    assert f"seat 0 of round 0 of run {world.run_id} is already posted as job {job}" in line
    assert "--seat" in line and "SeatTaken" not in line, line
    assert world.owner.runs.contribution_of(world.run_id, 0, 1) == 0  # seat 1 not posted either
    # without --seat the round is completed: only the seat still missing is posted
    _post(anvil, world, "--reward", "1")
    assert world.owner.runs.contribution_of(world.run_id, 0, 0) == job
    assert world.owner.runs.contribution_of(world.run_id, 0, 1) not in (0, job)


def test_a_seat_whose_training_is_a_live_job_is_refused_before_sending(
    anvil: Anvil, world: World
) -> None:
    """The seat's training (its spec hash and start) posted as a plain job first: the registry's
    post would revert TrainingAlreadyPosted."""
    run, owner = world.run, world.owner
    init = run_state(owner, run, 0).seat_start(1)
    receipt = owner.jobs.post_job(
        run.inner.model_id_hash(),
        run.contribution_spec_hash(0, 1),
        state_hash(init),
        run.inner_steps,
        run.inner.checkpoint_interval,
        E18,
        "x",
    )
    twin = owner.job_id_from(receipt)
    line = _refused(anvil, world, "run", "post", str(world.run_file), "--seat", "1")
    assert f"seat 1 of round 0 of run {world.run_id} is already posted as job {twin}" in line
    assert "TrainingAlreadyPosted" not in line, line


def test_post_after_the_registration_window_names_its_utc_end(
    anvil: Anvil, protocol: Deployment, world: World
) -> None:
    deadline = int(world.owner.runs.registration_deadline(world.run_id, 0))
    anvil.increase_time(protocol.params.registration_window + 1)
    line = _refused(anvil, world, "run", "post", str(world.run_file), "--reward", "1")
    assert f"closed at {utc_time(deadline)} UTC: propose the round" in line, line
    assert "RegistrationClosed" not in line and not RAW_NUMBER.search(line), line


def test_propose_while_registration_is_open_names_its_utc_end(anvil: Anvil, world: World) -> None:
    deadline = int(world.owner.runs.registration_deadline(world.run_id, 0))
    line = _refused(anvil, world, "run", "propose", str(world.run_file))
    assert f"registration is open until {utc_time(deadline)} UTC" in line, line
    assert not RAW_NUMBER.search(line), line


def test_an_early_finalize_names_the_utc_end_of_the_window(
    anvil: Anvil, protocol: Deployment, world: World
) -> None:
    deadline = _proposed_wrong_claim(anvil, protocol, world)
    line = _refused(anvil, world, "run", "finalize", str(world.run_file))
    assert f"can be challenged until {utc_time(deadline)} UTC (" in line, line
    assert not RAW_NUMBER.search(line), line


def test_a_challenge_without_the_bond_names_the_faucet_and_sends_no_approve(
    anvil: Anvil, protocol: Deployment, world: World
) -> None:
    _proposed_wrong_claim(anvil, protocol, world)
    line = _refused(anvil, world, "run", "challenge", str(world.run_file), account=str(BROKE))
    assert "below the 100 VTT claim bond" in line and "`veritrain faucet 100`" in line, line
    assert "ERC20InsufficientBalance" not in line
    assert world.owner.runs.get_round(world.run_id, 0).phase.name == "Proposed"


def test_a_challenge_of_ones_own_claim_or_after_the_window_is_one_line(
    anvil: Anvil, protocol: Deployment, world: World
) -> None:
    deadline = _proposed_wrong_claim(anvil, protocol, world)
    line = _refused(anvil, world, "run", "challenge", str(world.run_file))
    assert "proposed this claim and cannot challenge it" in line, line
    anvil.increase_time(protocol.params.claim_challenge_window + 1)
    line = _refused(anvil, world, "run", "challenge", str(world.run_file), account=str(BROKE))
    assert f"closed at {utc_time(deadline)} UTC" in line, line


def test_faucet_from_an_account_without_gas_money_is_one_line(anvil: Anvil, world: World) -> None:
    line = _refused(anvil, world, "faucet", "10", "--key-env", "VERITRAIN_TEST_NO_GAS_KEY")
    assert "holds no native currency" in line and "gas" in line, line


def test_any_transaction_of_an_account_without_gas_money_is_one_sentence(
    anvil: Anvil, protocol: Deployment
) -> None:
    """Past the commands' own checks, the node's refusal to send a transaction nobody can pay the
    gas of is one sentence naming the account and the fix, not the JSON-RPC response's dict."""
    from chain.errors import ChainError

    broke = ChainClient(anvil.rpc_url, NO_GAS_KEY, protocol)
    with pytest.raises(ChainError) as refused:
        broke.token.faucet(E18)
    line = str(refused.value)
    assert line.startswith(f"{broke.address} holds too little native currency on chain "), line
    assert "send it some first" in line and "{" not in line and "\n" not in line, line


def test_job_submit_over_the_step_limit_is_refused_before_any_work(
    anvil: Anvil, world: World
) -> None:
    """Refused by the deployment's job limits before the initHash is computed (which would say
    so on stderr) and before anything is posted."""
    jobs = world.owner.jobs.job_count()
    line = _refused(anvil, world, "job", "submit", "--steps", "2000000", "--interval", "25")
    assert "--steps 2000000 is above this deployment's most steps per job" in line, line
    assert world.owner.jobs.job_count() == jobs
