"""A Committed job nobody can verify expires through the chain facade (docs/SECURITY.md P-35):
`JobsContract.expire_unassigned` on the session Anvil, every party's tokens before and after.

Run: ``.venv/bin/python -m pytest tests/integration/test_chain_expiry.py``.
"""

from __future__ import annotations

import os

import pytest
from eth_utils import keccak

from chain import Anvil, ContractRevert, Deployment
from chain.scripted_round import commit
from tests.utils.models import register_model
from veritrain.enums import JobStatus, Role

E18 = 10**18
N, K = 40, 10  # 4 segments


def test_committed_job_without_verifiers_expires_with_every_party_whole(
    anvil: Anvil, protocol: Deployment, client_factory
) -> None:
    """No verifier is staked: ``assign_verifiers`` reverts NoEligibleVerifiers and the job stays
    Committed. ``expire_unassigned`` is refused until ``commit_deadline + open_window`` has
    passed; then a third account expires it: the submitter's reward and every fee are credited
    back (only the forced-error premium, pooled at the claim, stays spent), the solver's stake is
    unlocked whole."""
    submitter, solver, stranger = client_factory(1), client_factory(2), client_factory(3)
    for c in (submitter, solver):
        c.token.faucet(1_000 * E18)
    p = solver.jobs.job_params()
    solver.stakes.stake(Role.Solver, p.solver_stake)
    hashes = [os.urandom(32) for _ in range(N // K + 1)]
    register_model(submitter, keccak(text="m"), hashes[0])
    reward = 10 * E18
    cost = submitter.jobs.post_cost(reward)
    premium = submitter.jobs.forced_error_premium()
    model, spec = keccak(text="m"), keccak(text="s")
    job_id = submitter.job_id_from(
        submitter.jobs.post_job(model, spec, hashes[0], N, K, reward, "data:,")
    )
    credit = submitter.escrow.credit_of()
    solver.jobs.claim_job(job_id)
    commit(solver, job_id, hashes, K)
    submitter.mine(2)
    assert solver.stakes.free_stake(None, Role.Solver) == 0

    with pytest.raises(ContractRevert) as none:
        stranger.jobs.assign_verifiers(job_id)
    assert none.value.name == "NoEligibleVerifiers"
    job = stranger.jobs.get_job(job_id)
    assert job.status is JobStatus.Committed
    with pytest.raises(ContractRevert) as early:
        stranger.jobs.expire_unassigned(job_id)
    assert early.value.name == "AssignDeadlineNotPassed"

    anvil.increase_time(job.commit_deadline + p.open_window - stranger.timestamp() + 1)
    stranger.jobs.expire_unassigned(job_id)

    assert stranger.jobs.get_job(job_id).status is JobStatus.Expired
    assert submitter.escrow.credit_of() - credit == cost - premium
    assert solver.stakes.free_stake(None, Role.Solver) == p.solver_stake
    assert solver.stakes.stake_of(None, Role.Solver).staked == p.solver_stake
