"""Bad inputs only the chain can reveal: one line, a non-zero exit, and nothing mined.

Each row runs one `veritrain` command through Typer's CliRunner against the session Anvil and
checks the caller's nonce, token balance, allowances (StakeManager and Escrow), the job count
and the pool are unchanged: the command refused before sending anything. The argument-level
table is tests/unit/cli/test_cli_bad_arguments.py.

Run: ``.venv/bin/python -m pytest tests/integration/test_cli_bad_chain_inputs.py``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from eth_utils import keccak
from typer.testing import CliRunner

from chain import DEV_PRIVATE_KEYS, Anvil, ChainClient, Deployment, write_manifest
from cli.app import app
from noderuntime.datadir import DataDirLock
from noderuntime.records import ChainBinding, RecordStore, VerifierRecords
from tests.utils.models import register_model
from veritrain.spec import default_digits_spec

E18 = 10**18
CALLER = 5  # dev account used by every row: funded with 30 VTT, nothing staked
OTHER = 1  # dev account that posts a job the caller does not own


@dataclass
class World:
    """What a row may use: the manifest, the caller's client, an Open job of another account."""

    tmp: Path
    manifest: Path
    caller: ChainClient
    other_job: int


def _state(c: ChainClient) -> dict[str, Any]:
    dep = c.deployment
    assert dep is not None
    return {
        "nonce": c.w3.eth.get_transaction_count(c.account.address),
        "balance": c.token.balance_of(),
        "allow_stakes": c.token.allowance(dep.addresses.stake_manager),
        "allow_escrow": c.token.allowance(dep.addresses.escrow),
        "jobs": c.jobs.job_count(),
        "pool": c.escrow.jackpot_pool(),
    }


def _other_chain_manifest(w: World) -> Path:
    data = json.loads(w.manifest.read_text())
    data["chain_id"] = 11155111
    path = w.tmp / "sepolia.json"
    path.write_text(json.dumps(data))
    return path


def _corrupt_manifest(w: World) -> Path:
    path = w.tmp / "corrupt.json"
    path.write_text('{"chain_id": 31337, "addresses": ')
    return path


def _corrupt_state(w: World, name: str) -> Path:
    folder = w.tmp / name
    folder.mkdir()
    (folder / f"{name}_state.json").write_text("{not json")
    return folder


def _taken_port(w: World) -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    w.tmp.joinpath("held").write_text("")  # keep the socket alive for the test
    _HELD.append(sock)
    return int(sock.getsockname()[1])


def _held_data_dir(w: World) -> Path:
    folder = w.tmp / "busy"
    _HELD.append(DataDirLock(folder).__enter__())  # another node holds it
    return folder


def _restarted_chain_state(w: World) -> Path:
    """A verifier data dir bound to this chain id and deployment, but another deployment
    block hash: the state of a devnet since restarted from genesis."""
    folder = w.tmp / "stale"
    identity = w.caller.chain_identity()
    store = RecordStore(folder / "verifier_state.json", VerifierRecords)
    with store.transaction() as records:
        records.chain = ChainBinding(
            chain_id=identity.chain_id,
            deployment=identity.deployment,
            block=identity.block,
            block_hash="0x" + "ee" * 32,
        )
        records.index.cursor = 10**6  # ahead of the new chain's head
    return folder


_HELD: list[Any] = []

Row = tuple[str, Callable[[World], list[str]], str]
# (id, argv builder (the rpc url, manifest and key are added), a word the line must contain)
ROWS: list[Row] = [
    ("stake below the minimum", lambda w: ["stake", "solver", "10"], "minimum"),
    (
        # the deployment's token is a VeriToken: the line says how to get test tokens
        "stake more than the balance",
        lambda w: ["stake", "verifier", "60"],
        "(test tokens: `veritrain faucet ",
    ),  # fmt: skip
    ("mint over the faucet's limit", lambda w: ["faucet", "1000001"], "at most 1,000,000 VTT"),
    (
        "stake more than the balance, whistleblower",
        lambda w: ["stake", "whistleblower", "55"],
        "balance",
    ),  # fmt: skip
    ("unbond without stake", lambda w: ["unbond", "solver", "5"], "free stake"),
    ("withdraw without unbonding", lambda w: ["withdraw", "verifier"], "unbonding"),
    (
        "submit 5 jobs, funds for 4",
        lambda w: [
            "job",
            "submit",
            "--count",
            "5",
            "--reward",
            "2",
            "--steps",
            "40",
            "--interval",
            "10",
            "--json",
        ],
        "balance",
    ),  # fmt: skip
    (
        "submit with a reward over the balance",
        lambda w: ["job", "submit", "--reward", "100"],
        "balance",
    ),  # fmt: skip
    ("show a job that does not exist", lambda w: ["job", "show", "999"], "999"),
    ("cancel a job that does not exist", lambda w: ["job", "cancel", "999"], "999"),
    ("cancel another account's job", lambda w: ["job", "cancel", str(w.other_job)], "submitter"),
    ("reclaim an Open job", lambda w: ["job", "reclaim", str(w.other_job)], "claimed"),
    ("reclaim a job that does not exist", lambda w: ["job", "reclaim", "999"], "999"),
    ("fund the jackpot over the balance", lambda w: ["jackpot", "fund", "1000"], "balance"),
    (
        "pay revenue over the balance",
        lambda w: ["revenue", "pay", "digits-mlp", "1000"],
        "balance",
    ),  # fmt: skip
    (
        # the amount in the line is the one asked, digit for digit (no float's 1e30)
        "pay revenue of 1e30 VTT",
        lambda w: ["revenue", "pay", "digits-mlp", "1e30"],
        "below the 1,000,000,000,000,000,000,000,000,000,000 VTT revenue",
    ),  # fmt: skip
    (
        # the suggested command parses: the shortfall without thousands separators
        "stake 1e30 VTT",
        lambda w: ["stake", "verifier", "1e30"],
        "(test tokens: `veritrain faucet 99999999999999999999999999",
    ),  # fmt: skip
    (
        "pay revenue into a model without shares",
        lambda w: ["revenue", "pay", "nobody", "5"],
        "shares",
    ),  # fmt: skip
    (
        "claim revenue of a model without shares",
        lambda w: ["revenue", "claim", "nobody"],
        "shares",
    ),  # fmt: skip
    (
        # registered (its share token exists since registerModel) but no job of it finalized
        "pay revenue into a registered model without shares",
        lambda w: ["revenue", "pay", "0x" + "01" * 32, "5"],
        "shares",
    ),  # fmt: skip
    (
        "manifest of another chain, stake",
        lambda w: ["stake", "solver", "100", "--deployment", str(_other_chain_manifest(w))],
        "chain",
    ),  # fmt: skip
    (
        "manifest of another chain, job list",
        lambda w: ["job", "list", "--deployment", str(_other_chain_manifest(w))],
        "chain",
    ),
    (
        "manifest of another chain, shares",
        lambda w: ["shares", "digits-mlp", "--deployment", str(_other_chain_manifest(w))],
        "chain",
    ),
    (
        "missing manifest",
        lambda w: ["job", "list", "--deployment", str(w.tmp / "none.json")],
        "manifest",
    ),  # fmt: skip
    (
        "corrupt manifest",
        lambda w: ["jackpot", "show", "--deployment", str(_corrupt_manifest(w))],
        "manifest",
    ),
    (
        "deploy with a token that is not a contract",
        lambda w: [
            "deploy",
            "--key-env",
            "VERITRAIN_TEST_CALLER_KEY",
            "--token",
            w.caller.address,
            "--out",
            str(w.tmp / "out"),
        ],
        "contract",
    ),  # fmt: skip
    (
        "key variable unset",
        lambda w: ["stake", "solver", "100", "--key-env", "VERITRAIN_TEST_UNSET_KEY"],
        "key",
    ),
    (
        "missing keystore",
        lambda w: ["stake", "solver", "100", "--keystore", str(w.tmp / "none.json")],
        "keystore",
    ),
    (
        "solver with a corrupt state file",
        lambda w: ["solver", "run", "--data-dir", str(_corrupt_state(w, "solver"))],
        "state",
    ),
    (
        "verifier with a corrupt state file",
        lambda w: ["verifier", "run", "--data-dir", str(_corrupt_state(w, "verifier"))],
        "state",
    ),
    ("shares of an unregistered model", lambda w: ["shares", "nobody"], "not registered"),
    (
        "a dev account index beyond the devnet's",
        lambda w: ["stake", "solver", "100", "--dev-account", "100000"],
        "balance",
    ),
    (
        "verifier on the data dir of a restarted devnet",
        lambda w: ["verifier", "run", "--data-dir", str(_restarted_chain_state(w))],
        "--reset-state",
    ),
    (
        "verifier on a data dir another node holds",
        lambda w: ["verifier", "run", "--data-dir", str(_held_data_dir(w))],
        "in use",
    ),
    ("show a dispute that does not exist", lambda w: ["dispute", "show", "999"], "999"),
    ("watch a job that does not exist", lambda w: ["job", "watch", "999"], "999"),
    ("account show without an address or a key", lambda w: ["account", "show"], "ADDRESS"),
    (
        "account show of something not an address",
        lambda w: ["account", "show", "not-an-address"],
        "not an address",
    ),
    (
        "solver on a taken port",
        lambda w: ["solver", "run", "--data-dir", str(w.tmp / "s"), "--port", str(_taken_port(w))],
        "port",
    ),  # fmt: skip
]
_NO_KEY = {
    "job show",
    "job list",
    "shares digits-mlp",
    "shares nobody",
    "jackpot show",
    "dispute show",
    "job watch",
    "account show",
}


@pytest.fixture
def world(tmp_path: Path, anvil: Anvil, protocol: Deployment, client_factory) -> World:
    manifest = write_manifest(protocol, tmp_path / "deployments")
    caller = client_factory(CALLER)
    caller.token.faucet(30 * E18)
    # registered as `job submit` trains it, so that `job submit` gets to its own checks
    register_model(caller, keccak(text="digits-mlp"), b"\x03" * 32, default_digits_spec(seed=1))
    other = client_factory(OTHER)
    other.token.faucet(100 * E18)
    register_model(other, b"\x01" * 32, b"\x03" * 32)
    job = other.job_id_from(
        other.jobs.post_job(b"\x01" * 32, b"\x02" * 32, b"\x03" * 32, 40, 10, E18, "x")
    )
    return World(tmp_path, manifest, caller, job)


@pytest.mark.parametrize(("argv_of", "word"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_chain_input_is_refused_before_any_transaction(
    anvil: Anvil, world: World, argv_of: Callable[[World], list[str]], word: str
) -> None:
    """Exit != 0, exactly one line on stderr naming the problem, no traceback, nothing mined."""
    argv = argv_of(world)
    if "--deployment" not in argv and argv[0] != "deploy":
        argv += ["--deployment", str(world.manifest)]
    needs_key = " ".join(argv[:2]) not in _NO_KEY and "--key-env" not in argv
    if needs_key and "--keystore" not in argv:
        argv += ["--dev-account", str(CALLER)]
    before = _state(world.caller)
    try:
        result = CliRunner().invoke(
            app,
            [*argv, "--rpc-url", anvil.rpc_url],
            env={"VERITRAIN_DEBUG": "", "VERITRAIN_TEST_CALLER_KEY": DEV_PRIVATE_KEYS[CALLER]},
        )
    finally:
        while _HELD:
            _HELD.pop().close()
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert result.stdout.strip() == "", result.stdout
    assert word.lower() in lines[0].lower(), lines[0]
    assert _state(world.caller) == before
