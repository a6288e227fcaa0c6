"""A model's lineage on a real Anvil (docs/SECURITY.md P-18, P-26): `veritrain model register`
binds the model to a spec's architecture, family, compute per step and seed state; `model show`
and `shares` print the head and the lineage; a job from the head mints its verified compute and
its final state extends the lineage; the same training cannot be posted twice; a spec of another
family is refused before it is posted.

Run: ``.venv/bin/python -m pytest tests/integration/test_cli_lineage.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eth_utils import keccak
from typer.testing import CliRunner

from chain import Anvil, Deployment, errors, write_manifest
from chain.scripted_round import commit, post_claims, reveal_secret, seal_and_reveal
from cli.app import app
from veritrain.enums import JobStatus, Role
from veritrain.lineage import ModelCommitments
from veritrain.merkle import checkpoint_tree
from veritrain.spec import default_digits_spec
from veritrain.training import TrainingEngine

E18 = 10**18
runner = CliRunner()
MODEL = "lineage-mlp"


def _cli(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_model_register_show_and_shares_follow_the_lineage(
    anvil: Anvil, protocol: Deployment, client_factory, tmp_path: Path
) -> None:
    common = ["--rpc-url", anvil.rpc_url, "--deployment", str(write_manifest(protocol, tmp_path))]
    p = protocol.params
    owner, solver = client_factory(1), client_factory(2)
    verifiers = [client_factory(i) for i in range(3, 3 + p.verifiers_per_job)]
    for c in (owner, solver, *verifiers):
        c.token.faucet(1_000 * E18)
    solver.stakes.stake(Role.Solver, p.min_stake_solver)
    for v in verifiers:
        v.stakes.stake(Role.Verifier, p.min_stake_verifier)

    # register from `job submit`'s default digits spec with seed 1 (its first job's seed)
    spec = default_digits_spec(seed=1, total_steps=40, checkpoint_interval=10, model_id=MODEL)
    engine = TrainingEngine(spec)
    expected = ModelCommitments.of(spec, engine.state_hash(engine.init_state()))
    out = json.loads(_cli("model", "register", MODEL, *common, "--dev-account", "1", "--json"))
    assert out["architecture"] == "0x" + expected.architecture.hex()
    assert out["family"] == "0x" + expected.family.hex()
    assert out["compute_per_step"] == expected.compute_per_step == 6 * 26_122 * 64
    assert out["seed_state"] == "0x" + expected.seed_state.hex()
    model_id = keccak(text=MODEL)
    registered = owner.shares.registered_model(model_id)
    assert registered is not None and registered.compute_per_step == expected.compute_per_step

    shown = json.loads(_cli("model", "show", MODEL, *common, "--json"))
    assert shown["head"] == out["seed_state"] and shown["lineage"] == []
    assert shown["commitments"]["compute_per_step"] == expected.compute_per_step

    # a spec of another family (batch 8) is refused before anything is sent
    result = runner.invoke(
        app,
        ["job", "submit", *common, "--model-id", MODEL, "--steps", "40", "--interval", "10",
         "--batch-size", "8", "--dev-account", "1"],
    )  # fmt: skip
    assert result.exit_code == 1 and "family" in result.output, result.output
    assert owner.jobs.job_count() == 0

    # the first job through the CLI: it starts from the head
    posted = json.loads(
        _cli("job", "submit", *common, "--model-id", MODEL, "--steps", "40", "--interval", "10",
             "--reward", "10", "--dev-account", "1", "--json")
    )["jobs"]  # fmt: skip
    assert [j["from_head"] for j in posted] == [True]
    job_id = posted[0]["job_id"]
    assert bytes(owner.jobs.get_job(job_id).init_hash) == expected.seed_state

    # the same training again reverts (P-26), and nothing is escrowed
    spec_hash = bytes.fromhex(posted[0]["spec_hash"][2:])
    balance = owner.token.balance_of()
    with pytest.raises(errors.TrainingAlreadyPosted):
        owner.jobs.post_job(model_id, spec_hash, expected.seed_state, 40, 10, 10 * E18, "data:,")
    assert owner.token.balance_of() == balance
    assert owner.shares.training_job_of(model_id, expected.seed_state, spec_hash) == job_id

    # the job took the head's slot at post; the solver commits states from the seed state (the
    # chain does not replay them), every verifier approves what it should, the job finalizes
    # (no shares yet: they are minted when its final state is on the lineage)
    assert owner.shares.is_lineage_job(job_id)
    assert owner.shares.post_kind_of(job_id) == "lineage"
    assert owner.shares.slot_of(model_id).job_id == job_id
    hashes = [expected.seed_state, *(keccak(text=f"lineage state {i}") for i in range(1, 5))]
    solver.jobs.claim_job(job_id)
    secret = commit(solver, job_id, hashes, 10)
    owner.mine(2)
    owner.jobs.assign_verifiers(job_id)
    claims = post_claims(solver, job_id, hashes, secret)
    by_addr = {v.address: v for v in verifiers}
    seal_and_reveal(job_id, by_addr, lambda _v, j: j != claims.forced_sample, claims=claims)
    reveal_secret(solver, job_id, hashes, 10, secret, claims)
    owner.jobs.finalize(job_id)
    assert owner.jobs.get_job(job_id).status is JobStatus.Finalized
    assert owner.shares.balance_of(model_id, solver.address) == 0
    slot = owner.shares.slot_of(model_id)
    assert slot.job_id == job_id and slot.extend_by > 0
    # finalized after its challenge deadline: its lineage window runs from then
    finalized_after = owner.jobs.get_job(job_id).challenge_deadline
    assert slot.extend_by > finalized_after + owner.shares.lineage_window()

    # its final state goes on the lineage: the head advances and the solver's shares are minted
    tree = checkpoint_tree(hashes, 10)
    owner.shares.extend_lineage(model_id, hashes[-1], tree.proof(len(hashes) - 1))
    assert owner.shares.head_of(model_id) == hashes[-1]
    assert owner.shares.balance_of(model_id, solver.address) == 40 * expected.compute_per_step
    shown = json.loads(_cli("model", "show", MODEL, *common, "--json"))
    assert shown["lineage"] == [{"index": 0, "state": "0x" + hashes[-1].hex(), "job_id": job_id}]
    assert shown["head"] == "0x" + hashes[-1].hex()
    assert shown["slot"] == {"job_id": 0, "extend_by": 0}
    text = _cli("model", "show", MODEL, *common)
    assert f"lineage 0      0x{hashes[-1].hex()} (job {job_id})" in text
    assert f"{expected.compute_per_step} FLOP per step" in text

    report = json.loads(_cli("shares", MODEL, *common, "--json"))
    assert report["total_shares"] == 40 * expected.compute_per_step
    assert report["holders"][0]["address"] == solver.address
    assert report["holders"][0]["bps"] == 10_000
    assert report["lineage"] == shown["lineage"]
    text = _cli("shares", MODEL, *common)
    assert f"0x{hashes[-1].hex()} (job {job_id})" in text

    # the next job of `job submit` starts from the seed state again: off the head, said so
    out = _cli("job", "submit", *common, "--model-id", MODEL, "--steps", "40", "--interval", "10",
               "--seed", "2", "--reward", "1", "--dev-account", "1")  # fmt: skip
    assert "does not start from model" in out and "mints no shares" in out
