"""Deployment, wiring, decoded JobManager reverts, a thin job smoke test through ChainClient,
and a testnet-like deployment signed from an encrypted keystore (no unlocked accounts).

Run: ``.venv/bin/python -m pytest tests/integration/test_chain_deploy.py``.
"""

from __future__ import annotations

import pytest
from eth_utils import keccak

from chain import (
    Anvil,
    ChainClient,
    ContractRevert,
    Deployment,
    EventWatcher,
    ProtocolParams,
    deploy_protocol,
    errors,
    load_manifest,
    write_manifest,
)
from chain.keys import create_keystore, load_keystore, new_account
from chain.scripted_round import commit, post_claims, reveal_secret, seal_and_reveal
from tests.utils.models import register_model
from veritrain.commitments import new_salt, submission_id
from veritrain.enums import DisputePhase, DisputeStatus, JobStatus, Role, Verdict
from veritrain.merkle import checkpoint_tree

E18 = 10**18
HASHES = [keccak(text=f"state {i}") for i in range(5)]  # N = 40, k = 10


def test_deploy_wiring(protocol: Deployment, client_factory):
    c = client_factory(0)
    a = protocol.addresses
    for addr in a.model_dump(exclude_none=True).values():  # bisection_game: None here
        assert len(c.w3.eth.get_code(addr)) > 0
    sm, jm, ac, reg = c.stakes.contract, c.jobs.contract, c.committee.contract, c.shares.contract
    assert c.call(sm, "isProtocol", a.job_manager)
    assert c.call(sm, "isProtocol", a.arbitration)
    assert c.call(sm, "isProtocol", a.run_registry)
    assert not c.call(sm, "isProtocol", c.address)
    assert c.call(reg, "minter") == a.job_manager
    assert c.call(jm, "adjudicator") == a.arbitration
    assert c.adjudicator.name == "committee" and c.adjudicator.contract.address == a.arbitration
    assert c.jobs.verification_round_address() == a.verification_round
    assert c.call(c.round.contract, "jobManager") == a.job_manager
    assert c.round.forced_error_rate_bps() == protocol.params.forced_error_rate_bps
    assert c.escrow.jackpot_pool() == protocol.params.jackpot_funding
    assert c.call(jm, "escrow") == a.escrow == c.jobs.escrow_address()
    assert c.call(c.escrow.contract, "token") == a.token
    assert c.call(c.escrow.contract, "protocols")[0] == a.job_manager
    assert c.escrow.is_authorized(a.job_manager) and not c.escrow.is_authorized(c.address)
    assert c.call(jm, "stakeManager") == a.stake_manager
    assert c.call(jm, "shareRegistry") == a.share_registry
    assert c.call(ac, "jobManager") == a.job_manager
    assert c.call(ac, "stakeManager") == a.stake_manager
    p = protocol.params
    assert c.call(ac, "committeeSize") == p.committee_size
    assert c.call(ac, "voteCommitWindow") == p.vote_commit_window
    assert c.call(ac, "voteRevealWindow") == p.vote_reveal_window
    assert c.call(sm, "unbondingDelay") == p.unbonding_delay
    assert [c.stakes.min_stake(r) for r in Role] == p.min_stakes
    jp = c.jobs.job_params()
    assert (jp.solver_stake, jp.verifier_stake, jp.challenge_bond) == (
        p.solver_stake,
        p.verifier_stake,
        p.challenge_bond,
    )
    assert (jp.verifiers_per_job, jp.samples_per_job) == (p.verifiers_per_job, p.samples_per_job)
    assert (jp.commit_window, jp.verdict_window, jp.challenge_window) == (
        p.commit_window,
        p.verdict_window,
        p.challenge_window,
    )
    assert (jp.jackpot, jp.reveal_window) == (p.jackpot, p.reveal_window)
    assert c.jobs.job_count() == 0


def test_job_manager_revert_is_decoded(client_factory):
    c = client_factory(1)
    c.token.faucet(1_000 * E18)
    with pytest.raises(errors.InvalidJobShape) as info:
        c.jobs.post_job(keccak(text="m"), keccak(text="s"), HASHES[0], 10, 3, 10 * E18, "data:,")
    assert info.value.named_args == {"totalSteps": 10, "checkpointInterval": 3}
    assert str(info.value) == (
        "JobManager reverted: InvalidJobShape(totalSteps=10, checkpointInterval=3)"
    )
    with pytest.raises(ContractRevert) as info2:
        c.jobs.claim_job(42)
    assert info2.value.contract == "JobManager" and info2.value.name != "Unknown"


def test_smoke_job_happy_path(anvil: Anvil, protocol: Deployment, client_factory):
    p = protocol.params
    submitter, solver = client_factory(1), client_factory(2)
    verifiers = [client_factory(i) for i in range(3, 3 + p.verifiers_per_job)]
    for c in (submitter, solver, *verifiers):
        c.token.faucet(1_000 * E18)
    solver.stakes.stake(Role.Solver, p.min_stake_solver)
    for v in verifiers:
        v.stakes.stake(Role.Verifier, p.min_stake_verifier)
    assert set(submitter.stakes.active_verifiers()) == {v.address for v in verifiers}

    model_id = keccak(text="digits-mlp")
    reward = 10 * E18
    before = submitter.token.balance_of()
    register_model(submitter, model_id, HASHES[0])
    receipt = submitter.jobs.post_job(
        model_id, keccak(text="spec"), HASHES[0], 40, 10, reward, "data:,{}"
    )
    job_id = submitter.job_id_from(receipt)
    assert job_id == 1
    assert before - submitter.token.balance_of() == p.job_escrow(reward)
    job = submitter.jobs.get_job(job_id)
    assert job.status is JobStatus.Open and job.submitter == submitter.address
    assert job.num_segments == 4 and job.spec_uri == "data:,{}"

    assert submitter.jobs.submission_of(job_id) == b"\x00" * 32  # no solver yet
    (claimed,) = solver.decode_receipt(solver.jobs.claim_job(job_id), "JobClaimed")
    sid = submission_id(job_id, solver.address)  # jobId << 160 | solver
    assert bytes(claimed.args["submissionId"]) == sid == solver.jobs.submission_of(job_id)
    assert solver.jobs.get_submission(sid) == (job_id, solver.address)
    assert solver.jobs.get_job(job_id).status is JobStatus.Claimed
    assert solver.stakes.stake_of(role=Role.Solver).locked == p.solver_stake
    secret = commit(solver, job_id, HASHES, 10, "http://127.0.0.1:1/jobs/1")
    job = solver.jobs.get_job(job_id)
    assert job.status is JobStatus.Committed
    assert job.merkle_root == checkpoint_tree(HASHES, 10).root
    assert job.checkpoint_url == "http://127.0.0.1:1/jobs/1"

    with pytest.raises(errors.RandomnessNotReady):
        submitter.jobs.assign_verifiers(job_id)
    submitter.mine(2)
    submitter.jobs.assign_verifiers(job_id)
    assignment = submitter.jobs.get_assignment(job_id)
    assert len(assignment.verifiers) == p.verifiers_per_job
    # each seat draws its own q (P-27); the demo's q covers this job's 4 segments
    assert assignment.segments == (0, 1, 2, 3)
    for v in assignment.verifiers:
        assert submitter.jobs.sample_mask_of(job_id, v) == 0b1111
    assert submitter.jobs.get_job(job_id).status is JobStatus.Verifying

    by_addr = {v.address: v for v in verifiers}
    claims = post_claims(solver, job_id, HASHES, secret)
    f = claims.forced_sample  # demo parameters: every job carries a forced error
    # diligent: reject the forced claim with the replayed (true) end
    seal_and_reveal(job_id, by_addr, lambda _v, j: j != f, claims=claims)
    assert submitter.jobs.verdicts_of(job_id, assignment.verifiers[0]) == [
        Verdict.Reject if j == f else Verdict.Approve for j in range(len(assignment.segments))
    ]
    with pytest.raises(errors.ChallengeWindowOpen):
        submitter.jobs.finalize(job_id)
    reveal_secret(solver, job_id, HASHES, 10, secret, claims)
    wallet = solver.token.balance_of()
    staked = solver.stakes.stake_of(role=Role.Solver).staked
    submitter.jobs.finalize(job_id)
    assert submitter.jobs.get_job(job_id).status is JobStatus.Finalized

    # the reward is restaked: added to the solver's stake, its wallet unchanged; nothing to
    # claim (P-41)
    assert solver.stakes.stake_of(role=Role.Solver).staked - staked == reward
    assert solver.token.balance_of() == wallet
    assert solver.escrow.credit_of() == 0
    # the shares are minted when the job's final state is appended to the lineage
    assert solver.shares.balance_of(model_id) == 0
    solver.shares.extend_lineage(
        model_id, HASHES[-1], checkpoint_tree(HASHES, 10).proof(len(HASHES) - 1)
    )
    assert solver.shares.balance_of(model_id) == 40
    assert solver.shares.ownership_bps(model_id) == 10_000

    submitter.shares.pay_revenue(model_id, 4 * E18)  # auto-approves the ModelShares token
    assert solver.shares.revenue_of(model_id) == 4 * E18
    solver.shares.claim_revenue(model_id)
    assert solver.shares.revenue_of(model_id) == 0

    names = [
        e.event
        for e in EventWatcher(submitter, "JobManager", None, from_block=protocol.block).drain()
    ]
    for expected in (
        "JobPosted",
        "JobClaimed",
        "CheckpointsCommitted",
        "VerifiersAssigned",
        "ChallengeDeadlineSet",
        "JobFinalized",
    ):
        assert expected in names
    assert names.index("JobPosted") < names.index("JobClaimed") < names.index("JobFinalized")


def test_testnet_like_deploy_from_keystore(tmp_path, protocol_artifacts):
    """Chain id 11155111, no dev accounts: every transaction is signed from a keystore key."""
    with Anvil(chain_id=11155111, block_time=None, accounts=0) as node:
        assert node.rpc("eth_accounts") == []
        fresh = new_account()
        path = create_keystore(tmp_path / "deployer.json", fresh.key, "s3cret", iterations=2**10)
        account = load_keystore(path, "s3cret")
        node.fund(account.address, 100 * E18)  # gas money only; no unlocked account involved
        client = ChainClient(node.rpc_url, account)
        assert client.chain_id == 11155111

        # An existing ERC-20 as payment token (here a VeriToken standing in for one).
        token, _ = client.deploy_contract("VeriToken")
        dep = deploy_protocol(client, ProtocolParams(), token=token, build=False)
        assert dep.chain_id == 11155111 and dep.deployer == account.address
        assert dep.addresses.token == token and dep.token_deployed is False

        manifest = write_manifest(dep, tmp_path / "deployments")
        assert manifest == tmp_path / "deployments" / "11155111.json"
        loaded = load_manifest(11155111, tmp_path / "deployments")
        assert loaded == dep
        reader = ChainClient(node.rpc_url, new_account(), loaded)
        assert reader.jobs.job_params().verifiers_per_job == dep.params.verifiers_per_job
        with pytest.raises(errors.ChainValueError):
            ChainClient(node.rpc_url, new_account(), dep.model_copy(update={"chain_id": 1}))


def test_smoke_dispute_path(anvil: Anvil, protocol: Deployment, client_factory):
    """A reject opens arbitration; the committee votes the segment invalid; job Rejected."""
    p = protocol.params
    submitter, solver = client_factory(1), client_factory(2)
    stakers = [client_factory(i) for i in range(3, 10)]
    for _ in range(2):  # assigned verifiers cannot arbitrate: V=5 + 4 spare arbiters
        acct = new_account()
        anvil.fund(acct.address, 10 * E18)
        stakers.append(ChainClient(anvil.rpc_url, acct, protocol))
    for c in (submitter, solver, *stakers):
        c.token.faucet(1_000 * E18)
    solver.stakes.stake(Role.Solver, p.min_stake_solver)
    for v in stakers:
        v.stakes.stake(Role.Verifier, p.min_stake_verifier)
    by_addr = {v.address: v for v in stakers}

    register_model(submitter, keccak(text="m"), HASHES[0])
    job_id = submitter.job_id_from(
        submitter.jobs.post_job(
            keccak(text="m"), keccak(text="s"), HASHES[0], 40, 10, 10 * E18, "data:,"
        )
    )
    solver.jobs.claim_job(job_id)
    secret = commit(solver, job_id, HASHES, 10)
    submitter.mine(2)
    submitter.jobs.assign_verifiers(job_id)
    assigned = submitter.jobs.get_assignment(job_id).verifiers
    claims = post_claims(solver, job_id, HASHES, secret)
    rejecter = by_addr[assigned[0]]
    locked = rejecter.stakes.stake_of(role=Role.Verifier).locked
    # the first verifier rejects everything (q bonds from its stake: the first in its seat's lock
    # since the draw, the others locked at the reveal), the
    # others only the forced claim; the forced sample leaves the disputed set, the rest goes to
    # arbitration
    seal_and_reveal(
        job_id,
        by_addr,
        lambda v, j: v != assigned[0] and j != claims.forced_sample,
        claims=claims,
    )
    samples = len(submitter.jobs.get_assignment(job_id).segments)
    assert (
        rejecter.stakes.stake_of(role=Role.Verifier).locked - locked
        == (samples - 1) * p.challenge_bond
    )

    reveal_secret(solver, job_id, HASHES, 10, secret, claims)
    dispute_id = submitter.dispute_id_from(submitter.jobs.finalize(job_id))
    assert dispute_id is not None
    assert submitter.jobs.get_job(job_id).status is JobStatus.Disputed
    with pytest.raises(errors.RandomnessNotReady):
        submitter.committee.draw_committee(dispute_id)
    submitter.mine(2)
    submitter.committee.draw_committee(dispute_id)
    members = submitter.committee.committee_of(dispute_id)
    assert len(members) == p.committee_size and solver.address not in members
    salts = {}
    for m in members:
        salts[m] = new_salt()
        arb = by_addr[m]
        arb.committee.commit_vote(
            dispute_id, arb.committee.vote_commitment(dispute_id, False, salts[m])
        )
    assert submitter.committee.dispute_phase(dispute_id) is DisputePhase.Reveal
    with pytest.raises(errors.VoteMismatch):
        by_addr[members[0]].committee.reveal_vote(dispute_id, True, salts[members[0]])
    for m in members:
        by_addr[m].committee.reveal_vote(dispute_id, False, salts[m])
    submitter.committee.resolve(dispute_id)
    d = submitter.committee.get_dispute(dispute_id)
    assert d.status is DisputeStatus.Resolved and d.segment_valid is False
    assert (d.invalid_votes, d.valid_votes) == (p.committee_size, 0)
    assert submitter.jobs.get_job(job_id).status is JobStatus.Rejected
    assert rejecter.escrow.credit_of() > 0
    assert submitter.escrow.credit_of() >= 10 * E18
