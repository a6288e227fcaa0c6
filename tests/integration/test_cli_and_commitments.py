"""The CLI against a real Anvil, and Python Merkle commitments checked by the contract itself.

Run: ``.venv/bin/python -m pytest tests/integration/test_cli_and_commitments.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chain import Anvil, ChainClient, Deployment, errors, write_manifest
from chain.keys import create_keystore, new_account
from cli.app import app
from tests.utils.models import register_model
from veritrain.commitments import leaf_hash
from veritrain.merkle import MerkleTree, checkpoint_tree

E18 = 10**18
runner = CliRunner()


@pytest.fixture
def manifest(tmp_path: Path, protocol: Deployment) -> Path:
    return write_manifest(protocol, tmp_path / "deployments")


def _cli(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_python_merkle_proofs_verify_on_chain(client_factory) -> None:
    """Every proof of a 13-leaf tree built in Python verifies in JobManager.verifyCheckpoint;
    a wrong hash, a wrong leaf index and a truncated proof do not."""
    submitter, solver = client_factory(1), client_factory(2)
    p = solver.jobs.job_params()
    submitter.token.faucet(1_000 * E18)
    solver.token.faucet(1_000 * E18)
    solver.stakes.stake(0, p.solver_stake)
    n, k = 300, 25
    hashes = [os.urandom(32) for _ in range(n // k + 1)]
    tree = checkpoint_tree(hashes, k)
    register_model(submitter, b"\x02" * 32, hashes[0])
    job_id = submitter.job_id_from(
        submitter.jobs.post_job(b"\x02" * 32, os.urandom(32), hashes[0], n, k, 10 * E18, "data:,{}")
    )
    solver.jobs.claim_job(job_id)
    solver.jobs.commit_checkpoints(
        job_id, tree.root, tree.proof(0), "http://127.0.0.1:1/jobs/1", os.urandom(32)
    )
    for i, h in enumerate(hashes):
        assert solver.jobs.verify_checkpoint(job_id, i, h, tree.proof(i)) is True
    assert solver.jobs.verify_checkpoint(job_id, 3, os.urandom(32), tree.proof(3)) is False
    assert solver.jobs.verify_checkpoint(job_id, 4, hashes[3], tree.proof(3)) is False
    assert solver.jobs.verify_checkpoint(job_id, 5, hashes[5], tree.proof(5)[:-1]) is False
    assert (
        solver.jobs.verify_checkpoint(job_id, 5, hashes[5], [*tree.proof(5), b"\0" * 32]) is False
    )
    assert solver.jobs.verify_checkpoint(job_id, 13, hashes[5], tree.proof(5)) is False


def _post_and_claim(
    submitter: ChainClient, solver: ChainClient, init: bytes, n: int, k: int
) -> int:
    job_id = submitter.job_id_from(
        submitter.jobs.post_job(b"\x02" * 32, os.urandom(32), init, n, k, 10 * E18, "data:,{}")
    )
    solver.jobs.claim_job(job_id)
    return job_id


def test_python_trees_with_a_second_state_per_index_are_refused_on_chain(client_factory) -> None:
    """P-21, P-25 against the contract: Python-built positional trees of 2..9 leaves verify
    at every index; an attacker's tree that also holds a second trajectory (P-21) proves only
    its honest leaves, and a tree with an extra leaf (0, initHash) next to a run from other
    weights (P-25) cannot be committed. Before the positional tree both attacker trees passed
    (sorted-pair proofs prove membership, not position)."""
    submitter, solver = client_factory(1), client_factory(2)
    p = solver.jobs.job_params()
    submitter.token.faucet(1_000 * E18)
    solver.token.faucet(1_000 * E18)
    solver.stakes.stake(0, 8 * p.solver_stake)
    register_model(submitter, b"\x02" * 32, os.urandom(32))
    k = 4
    for m in (1, 2, 3, 4, 5, 8):
        honest = [os.urandom(32) for _ in range(m + 1)]
        other = [os.urandom(32) for _ in range(m + 1)]
        # The spliced tree: the honest checkpoints at their positions, then the other
        # trajectory's last checkpoints (each leaf with its own index and step) after them: in
        # the padding positions when there are some (same depth), else one level deeper.
        pad = (1 << checkpoint_tree(honest, k).depth) - (m + 1)
        spliced = range(m + 1 - min(pad, m), m + 1) if pad else range(1, m + 1)
        leaves = [leaf_hash(i, i * k, h) for i, h in enumerate(honest)]
        leaves += [leaf_hash(i, i * k, other[i]) for i in spliced]
        tree = MerkleTree(leaves)
        job_id = _post_and_claim(submitter, solver, honest[0], m * k, k)
        url, secret_hash = "http://127.0.0.1:1/jobs/1", os.urandom(32)
        if tree.depth != checkpoint_tree(honest, k).depth:
            # A deeper tree: even the leaf-0 proof has the wrong length.
            with pytest.raises(errors.InitialStateNotCommitted):
                solver.jobs.commit_checkpoints(job_id, tree.root, tree.proof(0), url, secret_hash)
            continue
        solver.jobs.commit_checkpoints(job_id, tree.root, tree.proof(0), url, secret_hash)
        for i in range(m + 1):
            assert solver.jobs.verify_checkpoint(job_id, i, honest[i], tree.proof(i)) is True
        for pos, i in enumerate(spliced, start=m + 1):
            assert solver.jobs.verify_checkpoint(job_id, i, other[i], tree.proof(pos)) is False
            assert solver.jobs.verify_checkpoint(job_id, pos, other[i], tree.proof(pos)) is False
    # P-25: own weights at index 0, the leaf (0, initHash) smuggled in after the trajectory.
    init = os.urandom(32)
    own = [os.urandom(32) for _ in range(5)]
    smuggled = MerkleTree([*checkpoint_tree(own, k).leaves, leaf_hash(0, 0, init)])
    assert smuggled.depth == checkpoint_tree(own, k).depth  # the extra leaf sits in the padding
    job_id = _post_and_claim(submitter, solver, init, 4 * k, k)
    with pytest.raises(errors.InitialStateNotCommitted):
        solver.jobs.commit_checkpoints(
            job_id, smuggled.root, smuggled.proof(5), "http://127.0.0.1:1/jobs/1", os.urandom(32)
        )


def test_cli_stake_submit_list_and_shares(anvil: Anvil, manifest: Path, client_factory) -> None:
    common = ["--rpc-url", anvil.rpc_url, "--deployment", str(manifest)]
    client_factory(3).token.faucet(500 * E18)
    client_factory(1).token.faucet(500 * E18)
    staked = json.loads(_cli("stake", "verifier", "60", *common, "--dev-account", "3", "--json"))
    assert staked["staked_wei"] == 60 * E18 and staked["active"] is True
    _cli("model", "register", "digits-mlp", *common, "--dev-account", "1")

    posted = json.loads(
        _cli(
            "job",
            "submit",
            *common,
            "--dev-account",
            "1",
            "--count",
            "2",
            "--steps",
            "40",
            "--interval",
            "10",
            "--reward",
            "5",
            "--json",
        )
    )
    ids = [j["job_id"] for j in posted["jobs"]]
    assert len(ids) == 2
    listed = json.loads(_cli("job", "list", *common, "--json"))["jobs"]
    assert [j["status"] for j in listed if j["job_id"] in ids] == ["Open", "Open"]
    # The posted spec hash is what the chain holds.
    reader = client_factory(0)
    assert reader.jobs.get_job(ids[0]).spec_hash.hex() == posted["jobs"][0]["spec_hash"][2:]
    # ... and so is the initHash: the state hash of the spec's seed-initialised state.
    from veritrain.spec import default_digits_spec
    from veritrain.training import TrainingEngine

    engine = TrainingEngine(default_digits_spec(seed=1, total_steps=40, checkpoint_interval=10))
    expected = engine.state_hash(engine.init_state())
    assert reader.jobs.get_job(ids[0]).init_hash == expected
    assert posted["jobs"][0]["init_hash"] == "0x" + expected.hex()

    owners = json.loads(_cli("shares", "digits-mlp", *common, "--json"))
    assert owners["holders"] == [] and owners["total_shares"] == 0

    shown = json.loads(_cli("job", "show", str(ids[0]), *common))
    assert shown["status"] == "Open" and shown["round"] == {"claims_posted": False, "outcome": None}


def test_cli_jackpot_fund_show_and_job_round(
    anvil: Anvil, manifest: Path, protocol: Deployment, client_factory
) -> None:
    common = ["--rpc-url", anvil.rpc_url, "--deployment", str(manifest)]
    client_factory(4).token.faucet(100 * E18)
    before = json.loads(_cli("jackpot", "show", *common, "--json"))
    assert before["jackpot_wei"] == protocol.params.jackpot
    assert before["forced_error_rate_bps"] == protocol.params.forced_error_rate_bps
    funded = json.loads(_cli("jackpot", "fund", "3", *common, "--dev-account", "4", "--json"))
    assert funded["pool_wei"] == before["pool_wei"] + 3 * E18
    assert "jackpot pool" in _cli("jackpot", "show", *common)

    # a job in its verification round: claims posted, verdicts sealed, the forced sample hidden
    from chain.scripted_round import commit, post_claims
    from veritrain.enums import Role

    submitter, solver = client_factory(1), client_factory(2)
    verifiers = [client_factory(i) for i in range(3, 3 + protocol.params.verifiers_per_job)]
    for c in (submitter, solver, *verifiers):
        c.token.faucet(1_000 * E18)
    solver.stakes.stake(Role.Solver, protocol.params.min_stake_solver)
    for v in verifiers:
        v.stakes.stake(Role.Verifier, protocol.params.min_stake_verifier)
    hashes = [os.urandom(32) for _ in range(5)]
    register_model(submitter, b"\x03" * 32, hashes[0])
    job_id = submitter.job_id_from(
        submitter.jobs.post_job(
            b"\x03" * 32, os.urandom(32), hashes[0], 40, 10, 10 * E18, "data:,{}"
        )
    )
    solver.jobs.claim_job(job_id)
    secret = commit(solver, job_id, hashes, 10)
    submitter.mine(2)
    submitter.jobs.assign_verifiers(job_id)
    post_claims(solver, job_id, hashes, secret)
    shown = json.loads(_cli("job", "show", str(job_id), *common))
    rnd = shown["round"]
    assert shown["status"] == "Verifying" and rnd["claims_posted"] is True
    assert len(rnd["end_hashes"]) == len(shown["segments"]) == 4  # q covers the 4 segments
    assert rnd["outcome"] == "Pending" and rnd["forced_sample"] is None
    assert [v["sealed"] for v in rnd["verdicts"]] == [False] * len(shown["verifiers"])
    # each verifier's own draw (P-27): here q = N/k, so every seat holds every sample
    assert [v["samples"] for v in rnd["verdicts"]] == [list(range(4))] * len(shown["verifiers"])


def test_cli_model_register_authorize_revoke_show(anvil: Anvil, manifest: Path, client_factory):
    """`veritrain model ...`: the first registrant owns the model; only the owner and the accounts
    it authorises may post jobs under it; bad input is one clear line, no traceback."""
    common = ["--rpc-url", anvil.rpc_url, "--deployment", str(manifest)]
    owner, poster = client_factory(1), client_factory(2)
    poster.token.faucet(500 * E18)
    submit = ["job", "submit", *common, "--steps", "40", "--interval", "10", "--reward", "5"]
    submit += ["--model-id", "owned-mlp"]

    result = runner.invoke(app, [*submit, "--dev-account", "2"])
    assert result.exit_code == 1 and "not registered" in result.output
    assert "Traceback" not in result.output

    out = json.loads(
        _cli("model", "register", "owned-mlp", *common, "--dev-account", "1", "--json")
    )
    assert out["owner"] == owner.address
    result = runner.invoke(app, ["model", "register", "owned-mlp", *common, "--dev-account", "2"])
    assert result.exit_code == 1 and f"already owned by {owner.address}" in result.output

    result = runner.invoke(app, [*submit, "--dev-account", "2"])
    assert result.exit_code == 1 and "has not authorised" in result.output
    assert poster.jobs.job_count() == 0

    _cli("model", "authorize", "owned-mlp", poster.address, *common, "--dev-account", "1")
    shown = json.loads(
        _cli("model", "show", "owned-mlp", *common, "--account", poster.address, "--json")
    )
    assert shown["owner"] == owner.address and shown["posters"] == [poster.address]
    assert shown["can_post"] is True
    # registerModel made the model's share token; it holds no shares until a job finalizes
    model_id = bytes.fromhex(shown["model_id"][2:])
    token = owner.shares.shares_of(model_id)
    assert token is not None and shown["token"] == token
    assert owner.shares.total_supply(model_id) == 0
    assert "no verified work yet, no shares minted" in _cli("shares", "owned-mlp", *common)
    _cli(*submit, "--dev-account", "2")
    assert poster.jobs.job_count() == 1

    _cli("model", "revoke", "owned-mlp", poster.address, *common, "--dev-account", "1")
    result = runner.invoke(app, [*submit, "--dev-account", "2"])
    assert result.exit_code == 1 and poster.jobs.job_count() == 1
    result = runner.invoke(
        app, ["model", "revoke", "owned-mlp", poster.address, *common, "--dev-account", "1"]
    )
    assert result.exit_code == 1 and "PosterNotAuthorized" in result.output
    result = runner.invoke(app, ["model", "show", "0x12", *common])
    assert result.exit_code != 0 and "64 hex digits" in result.output
    assert "Traceback" not in result.output


def test_stranger_cannot_post_under_another_owners_model(client_factory) -> None:
    """Regression (issue 8, item 2): one cheap job with N = 1,000,000 under another model's id
    used to mint 1,000,000 of its shares to its solver; now the post reverts."""
    from chain import errors

    owner, stranger = client_factory(1), client_factory(5)
    stranger.token.faucet(100 * E18)
    model_id = b"\x05" * 32
    register_model(owner, model_id, os.urandom(32))
    with pytest.raises(errors.NotModelPoster) as info:
        stranger.jobs.post_job(model_id, os.urandom(32), os.urandom(32), 1_000_000, 1, 0, "data:,")
    assert info.value.named_args == {"modelId": model_id, "caller": stranger.address}
    assert stranger.jobs.job_count() == 0


def test_cli_refuses_a_withdraw_that_would_revert(anvil: Anvil, manifest: Path) -> None:
    """A withdraw with nothing unbonding is refused before sending, in one line (it used to be
    sent and revert with NothingUnbonding); decoded reverts are covered in
    tests/unit/cli/test_cli_errors.py."""
    result = runner.invoke(
        app,
        [
            "credit",
            "--claim",
            "--rpc-url",
            anvil.rpc_url,
            "--deployment",
            str(manifest),
            "--dev-account",
            "7",
        ],
    )
    assert result.exit_code == 0, result.output  # nothing to claim is not an error
    result = runner.invoke(
        app,
        [
            "withdraw",
            "solver",
            "--rpc-url",
            anvil.rpc_url,
            "--deployment",
            str(manifest),
            "--dev-account",
            "7",
        ],
    )
    assert result.exit_code == 1
    assert result.output == "error: nothing unbonding as solver (run `veritrain unbond` first)\n"


def test_cli_deploy_to_testnet_chain_from_keystore(tmp_path: Path, protocol_artifacts) -> None:
    """`veritrain deploy` on a chain with a testnet id and no unlocked accounts; dev keys are
    refused there."""
    with Anvil(chain_id=11155111, block_time=None, accounts=0) as node:
        account = new_account()
        keystore = create_keystore(tmp_path / "k.json", account.key, "pw", iterations=2**10)
        node.fund(account.address, 10 * E18)
        env = {"DEPLOY_PW": "pw"}
        result = runner.invoke(
            app,
            [
                "deploy",
                "--rpc-url",
                node.rpc_url,
                "--keystore",
                str(keystore),
                "--password-env",
                "DEPLOY_PW",
                "--out",
                str(tmp_path / "deployments"),
                "--json",
            ],
            env=env,
        )
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert out["chain_id"] == 11155111 and out["deployer"] == account.address
        manifest = tmp_path / "deployments" / "11155111.json"
        assert json.loads(manifest.read_text())["addresses"] == out["addresses"]
        assert "0x" + account.key.hex()[-64:] not in result.output  # the key never shows
        assert "faucet lets any account mint" in result.stderr  # no --token on a testnet id
        assert not (tmp_path / "deployments" / "11155111.partial.json").exists()

        # Refused before the first transaction: nothing mined, the manifest untouched.
        blocks = ChainClient(node.rpc_url, new_account()).block_number()
        (tmp_path / "a-file").write_text("")
        broke = create_keystore(tmp_path / "b.json", new_account().key, "pw", iterations=2**10)
        for out_dir, key, word in (
            (tmp_path / "deployments", keystore, "already exists"),
            (tmp_path / "a-file" / "sub", keystore, "not writable"),
            (tmp_path / "fresh", broke, "fund it first"),
        ):
            again = runner.invoke(
                app,
                [
                    *("deploy", "--rpc-url", node.rpc_url, "--keystore", str(key)),
                    *("--password-env", "DEPLOY_PW", "--out", str(out_dir)),
                ],
                env=env,
            )
            assert again.exit_code == 1 and word in again.stderr, again.output
            assert len(again.stderr.strip().splitlines()) == 1, again.output
        assert ChainClient(node.rpc_url, new_account()).block_number() == blocks
        assert json.loads(manifest.read_text())["addresses"] == out["addresses"]
        assert not (tmp_path / "fresh" / "11155111.partial.json").exists()

        refused = runner.invoke(
            app,
            [
                "stake",
                "solver",
                "1",
                "--rpc-url",
                node.rpc_url,
                "--deployment",
                str(manifest),
                "--dev-account",
                "1",
            ],
        )
        assert refused.exit_code != 0
        assert "devnet" in refused.output
        reader = ChainClient(node.rpc_url, new_account())
        assert reader.w3.eth.get_code(out["addresses"]["job_manager"]) != b""


def test_cli_unbond_and_an_early_withdraw_name_the_release_time(
    anvil: Anvil, manifest: Path, protocol: Deployment
) -> None:
    """`unbond` says when the stake is released as a UTC date and time (it printed a raw
    timestamp), and a withdraw before then is refused in one line naming the same time."""
    from chain.anvil import dev_accounts
    from cli.history import when
    from veritrain.enums import Role

    index = 42  # an account of its own on the shared test chain: derived, funded here
    account = dev_accounts(index + 1)[index]
    anvil.rpc("anvil_setBalance", [account.address, hex(10**20)])
    client = ChainClient(anvil.rpc_url, account, protocol)
    client.token.faucet(100 * E18)
    common = ["--rpc-url", anvil.rpc_url, "--deployment", str(manifest)]
    common += ["--dev-account", str(index)]
    _cli("stake", "whistleblower", "60", *common)
    said = _cli("unbond", "whistleblower", "10", *common)
    release = client.stakes.stake_of(role=Role.Whistleblower).release_at
    assert said.startswith(f"unbonding 10 VTT as whistleblower until {when(release)} UTC (in ")
    result = runner.invoke(app, ["withdraw", "whistleblower", *common])
    assert result.exit_code == 1, result.output
    assert result.output.startswith(
        f"error: 10 VTT unbonding as whistleblower is released at {when(release)} UTC (in "
    ), result.output


def test_cli_faucet_mints_test_tokens_only_from_a_veritoken(
    anvil: Anvil, manifest: Path, protocol: Deployment, tmp_path: Path
) -> None:
    """`veritrain faucet AMOUNT` mints exactly AMOUNT to the caller from the deployment's
    VeriToken; a deployment whose token is not one (deployed with --token) is refused in one
    line with nothing sent."""
    from chain.anvil import dev_accounts

    index = 43
    account = dev_accounts(index + 1)[index]
    anvil.rpc("anvil_setBalance", [account.address, hex(10**20)])
    client = ChainClient(anvil.rpc_url, account, protocol)
    before = client.token.balance_of()
    common = ["--rpc-url", anvil.rpc_url, "--dev-account", str(index)]
    said = _cli("faucet", "12.5", "--deployment", str(manifest), *common)
    assert said.strip() == (
        f"{account.address}: minted 12.5 VTT; token balance {12.5 + before / E18:g} VTT"
    )
    assert client.token.balance_of() == before + 125 * E18 // 10
    foreign = protocol.model_copy(update={"token_deployed": False})
    other = write_manifest(foreign, tmp_path / "foreign")
    nonce = client.w3.eth.get_transaction_count(account.address)
    result = runner.invoke(app, ["faucet", "5", "--deployment", str(other), *common])
    assert result.exit_code == 1 and "has no faucet" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert client.w3.eth.get_transaction_count(account.address) == nonce


def test_cli_model_hand_over_and_its_withdrawal(anvil: Anvil, manifest: Path, client_factory):
    """`model transfer` offers a model, `model accept` takes it; an offer to the zero address
    withdraws a pending one (it was reported as "offered to 0x000..."), after which the
    account it was offered to cannot accept."""
    common = ["--rpc-url", anvil.rpc_url, "--deployment", str(manifest)]
    owner, heir = client_factory(1), client_factory(3)
    _cli("model", "register", "handed-mlp", *common, "--dev-account", "1")
    model_id = bytes.fromhex(
        json.loads(_cli("model", "show", "handed-mlp", *common, "--json"))["model_id"][2:]
    )

    said = _cli("model", "transfer", "handed-mlp", heir.address, *common, "--dev-account", "1")
    assert said.strip().endswith("it must run `veritrain model accept`")
    zero = "0x" + "00" * 20
    said = _cli("model", "transfer", "handed-mlp", zero, *common, "--dev-account", "1")
    assert said.strip() == "model handed-mlp: pending hand-over withdrawn (nobody may accept it)"
    result = runner.invoke(app, ["model", "accept", "handed-mlp", *common, "--dev-account", "3"])
    assert result.exit_code == 1 and "NotPendingModelOwner" in result.output, result.output
    assert owner.shares.model_owner(model_id) == owner.address
    assert owner.shares.pending_model_owner(model_id) is None

    _cli("model", "transfer", "handed-mlp", heir.address, *common, "--dev-account", "1")
    said = _cli("model", "accept", "handed-mlp", *common, "--dev-account", "3")
    assert said.strip() == f"{heir.address} now owns model handed-mlp"
    assert owner.shares.model_owner(model_id) == heir.address
