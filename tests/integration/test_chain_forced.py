"""Forced errors and sealed verdicts (docs/FORCED_ERRORS.md) through `ChainClient` on Anvil: the
Python formulas of `veritrain.forced` against the contract's views for many random secrets,
verdicts sealed as end state hashes (approve iff the end is the claim; a zero claim refused), a
lazy verifier caught by a forced error (slashed into the jackpot pool; honest rejecters, whose
end is the solver's true end, and the whistleblower paid from it; the solver not penalised), a
rejecter of the forced sample without the true end (the sample stays disputed and it loses the
dispute), a solver that never reveals its secret
(NoReveal) or never posts claims (NoClaims; slashed into the pool, its verifiers paid), verifiers
that all stay silent (NoVerdicts: drawn again, then the job expires with a refund), Open jobs
that expire, the job bounds, and `RoundPending`.

Run: ``.venv/bin/python -m pytest tests/integration/test_chain_forced.py``.
"""

from __future__ import annotations

import os

import pytest
from eth_utils import keccak

from chain import (
    DEV_PRIVATE_KEYS,
    Anvil,
    ChainClient,
    Deployment,
    ProtocolParams,
    deploy_protocol,
    errors,
)
from chain.scripted_round import (
    commit,
    post_claims,
    reveal_proof,
    reveal_secret,
    seal_and_reveal,
    to_secret_window,
)
from tests.utils.fake_round import end_tag
from tests.utils.models import register_model
from veritrain import commitments, forced
from veritrain.enums import Bucket, JobStatus, Role, RoundOutcome, Verdict
from veritrain.merkle import checkpoint_tree

E18 = 10**18
N, K = 120, 10  # 12 segments
INIT = b"\x07" * 32  # an initHash: only a commit's leaf-0 proof reads it


def _job_to_verifying(
    clients: dict[int, ChainClient], p: ProtocolParams
) -> tuple[int, list[bytes], bytes]:
    """Stake, post, claim, commit (with a secret) and assign one job; returns (job, hashes,
    secret). Account 1 submits, 2 solves, 3..8 verify, 9 whistleblows."""
    submitter, solver = clients[1], clients[2]
    for c in clients.values():
        c.token.faucet(1_000 * E18)
    solver.stakes.stake(Role.Solver, p.min_stake_solver)
    for i in range(3, 9):
        clients[i].stakes.stake(Role.Verifier, p.min_stake_verifier)
    clients[9].stakes.stake(Role.Whistleblower, p.min_stake_whistleblower)
    hashes = [os.urandom(32) for _ in range(N // K + 1)]
    register_model(submitter, keccak(text="m"), hashes[0])
    job_id = submitter.job_id_from(
        submitter.jobs.post_job(
            keccak(text="m"), keccak(text="s"), hashes[0], N, K, 10 * E18, "data:,"
        )
    )
    solver.jobs.claim_job(job_id)
    secret = commit(solver, job_id, hashes, K)
    submitter.mine(2)
    submitter.jobs.assign_verifiers(job_id)
    return job_id, hashes, secret


def _clients(anvil: Anvil, dep: Deployment) -> dict[int, ChainClient]:
    return {i: ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[i], dep) for i in range(1, 10)}


def test_python_formulas_match_the_contract(anvil: Anvil, protocol_artifacts) -> None:
    params = ProtocolParams.demo(forced_error_rate_bps=5_000, jackpot_funding=0)
    dep = deploy_protocol(ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[0]), params, build=False)
    clients = _clients(anvil, dep)
    c = clients[1]
    assert c.round.forced_error_tag() == forced.FORCED_ERROR_TAG
    assert c.round.forced_error_rate_bps() == 5_000
    assert c.jobs.verification_round_address() == dep.addresses.verification_round
    job_id, hashes, secret = _job_to_verifying(clients, params)
    sid = c.jobs.submission_of(job_id)
    assert sid == commitments.submission_id(job_id, clients[2].address)
    assert c.jobs.get_submission(sid) == (job_id, clients[2].address)
    secret_commitment = commitments.secret_commitment(job_id, clients[2].address, secret)
    before = c.round.round_of(sid)
    # The round keeps the top 208 bits of each hash in its one word (`RoundWord`).
    assert (before.commitment, before.claims_block) == (
        commitments.round_hash(secret_commitment),
        0,
    )
    segments = list(c.jobs.get_assignment(job_id).segments)
    seen = set()
    for _ in range(200):
        s = os.urandom(32)
        local = forced.draw_forced_error(s, job_id, segments, 5_000)
        on_chain = c.round.draw_forced_error(sid, s)
        assert on_chain[0] == local.forced
        if local.forced:
            assert on_chain[1] == local.sample and local.sample in forced.eligible_samples(segments)
            seen.add(local.sample)
        assert c.round.forced_claim(s) == forced.forced_claim(s)
    assert seen  # about half the draws are forced
    # A zero end is what a verifier seals when it could not replay: never a claim.
    with pytest.raises(errors.ZeroClaim) as zero:
        clients[2].round.post_claims(
            sid, hashes[: len(segments)], [forced.UNREPLAYED_END] * len(segments)
        )
    assert zero.value.named_args["sampleIndex"] == 0
    # Sealed verdicts: the Python commitment is the one the contract checks at reveal, and the
    # contract approves exactly the samples whose end is the claim.
    claims = post_claims(clients[2], job_id, hashes, secret)
    # The claims hash takes the secret commitment's word and binds it; the event carries both.
    posted = c.round.claims_of(sid)
    assert posted.secret_commitment == commitments.round_hash(secret_commitment)
    after = c.round.round_of(sid)
    assert after.claims_block != 0
    assert after.commitment == commitments.round_hash(
        commitments.claims_hash(
            commitments.round_hash(secret_commitment), claims.start_hashes, claims.end_hashes
        )
    )
    by_addr = {cl.address: cl for cl in clients.values()}
    v = by_addr[c.jobs.get_assignment(job_id).verifiers[0]]
    salt = commitments.new_salt()
    replayed = os.urandom(32)
    ends = [forced.UNREPLAYED_END, replayed, *claims.end_hashes[2:]]
    v.round.commit_verdicts(sid, commitments.verdict_commitment(job_id, v.address, ends, salt))
    assert v.round.verdict_commitment_of(sid) == (
        commitments.verdict_commitment(job_id, v.address, ends, salt),
        False,
    )
    with pytest.raises(errors.VerdictAlreadyCommitted):
        v.round.commit_verdicts(sid, os.urandom(32))
    with pytest.raises(errors.UnknownSubmission):
        v.round.commit_verdicts(commitments.submission_id(job_id, v.address), os.urandom(32))
    job = c.jobs.get_job(job_id)
    c.increase_time(job.verdict_deadline - c.timestamp() + 1)  # the reveal opens
    with pytest.raises(errors.VerdictCommitmentMismatch):
        v.round.reveal_verdicts(sid, list(claims.end_hashes), salt)
    locked = v.stakes.stake_of(role=Role.Verifier).locked
    receipt = v.round.reveal_verdicts(sid, ends, salt)
    # two non-approvals bond one challengeBond each from its verifier stake: the zero end is an
    # abstention (P-20), the other a reject; the first bond is in its seat's lock since the draw,
    # the second is locked now
    assert v.stakes.stake_of(role=Role.Verifier).locked - locked == params.challenge_bond
    assert c.jobs.verdicts_of(job_id, v.address) == [
        Verdict.Abstain,
        Verdict.Reject,
        *[Verdict.Approve] * (len(segments) - 2),
    ]
    (revealed,) = c.decode_receipt(receipt, "VerdictsRevealed")
    # the one record of the reveal (the JobManager emits none): the ends and their approvals
    assert set(revealed.args) == {"submissionId", "verifier", "ends", "approveMask"}
    assert [bytes(e) for e in revealed.args["ends"]] == ends
    assert int(revealed.args["approveMask"]) == (1 << len(segments)) - 1 - 0b11
    assert c.round.replayed_end_of(sid, v.address, 1) == replayed
    assert c.round.replayed_end_of(sid, v.address, 0) == bytes(32)  # unreplayed
    assert c.round.replayed_end_of(sid, v.address, 2) == bytes(32)  # approved
    assert c.round.forced_end_matches(sid, v.address) is False  # no secret revealed yet


def test_lazy_verifier_is_caught_by_a_forced_error(
    anvil: Anvil, protocol: Deployment, client_factory
) -> None:
    p = protocol.params  # demo: every job carries a forced error
    clients = {i: client_factory(i) for i in range(1, 10)}
    submitter, solver, wb = clients[1], clients[2], clients[9]
    job_id, hashes, secret = _job_to_verifying(clients, p)
    claims = post_claims(solver, job_id, hashes, secret)
    f = claims.forced_sample
    assert f is not None
    assignment = submitter.jobs.get_assignment(job_id)
    lazy, honest = assignment.verifiers[0], assignment.verifiers[1:]
    by_addr = {c.address: c for c in clients.values()}
    # honest verifiers reject exactly the forced sample, the lazy one approves everything
    ends = seal_and_reveal(job_id, by_addr, lambda v, j: v == lazy or j != f, claims=claims)
    assert ends[honest[0]][f] == claims.forced_true_end  # what their replay gives
    assert submitter.jobs.verdicts_of(job_id, lazy)[f] is Verdict.Approve
    assert submitter.jobs.verdicts_of(job_id, honest[0])[f] is Verdict.Reject
    wb.jobs.challenge_approval(job_id, f, lazy)
    with pytest.raises(errors.RoundPending):
        to_secret_window(submitter, job_id)
        submitter.jobs.finalize(job_id)
    pool = submitter.escrow.jackpot_pool()
    lazy_stake = submitter.stakes.stake_of(lazy, Role.Verifier).staked
    solver_stake = submitter.stakes.stake_of(solver.address, Role.Solver).staked
    parties = (*honest, wb.address, solver.address)
    credits = {a: submitter.escrow.credit_of(a) for a in parties}
    wallets = {a: submitter.token.balance_of(a) for a in parties}
    seat_stakes = {a: submitter.stakes.stake_of(a, Role.Verifier).staked for a in honest}
    reveal_secret(solver, job_id, hashes, K, secret, claims, advance=False)
    sid = submitter.jobs.submission_of(job_id)
    assert submitter.round.outcome(sid) == (RoundOutcome.Forced, f)
    # each end's single proof, rebuilt from the reveal's one multiproof (the forced sample's
    # true end, not its claim): what a mirror serves once the solver is gone (P-36)
    tree = checkpoint_tree(hashes, K)
    assert submitter.round.proven_ends(sid) == [
        (hashes[s + 1], tree.proof(s + 1)) for s in assignment.segments
    ]
    assert all(submitter.round.forced_end_matches(sid, a) for a in honest)
    assert not submitter.round.forced_end_matches(sid, lazy)
    # each rejecter's end of the forced sample is the 40-bit tag in its seat's word, the same
    # tag the fake round computes (so the fake's catches are the contract's)
    for a in (*honest, lazy):
        tag = bytes(submitter.call(submitter.jobs.contract, "endTagOf", sid, a))
        assert tag == (end_tag(f, claims.forced_true_end) if a in honest else bytes(5))
    receipt = submitter.jobs.finalize(job_id)
    assert submitter.jobs.get_job(job_id).status is JobStatus.Finalized
    assert not submitter.decode_receipt(receipt, "ForcedEndDisputed")
    for a in honest:  # a matching reject becomes an approval of the true end
        assert submitter.jobs.verdicts_of(job_id, a)[f] is Verdict.Approve
    assert submitter.jobs.disputed_mask_of(job_id) == 0
    # ... but `job show` reports each verdict as the verifier revealed it
    from cli.jobs import round_report

    shown = {v["verifier"]: v["approvals"] for v in round_report(submitter, job_id)["verdicts"]}
    assert all(shown[a][f] is False for a in honest), shown
    assert shown[lazy][f] is True
    # the lazy approver is slashed verifierStake into the pool
    assert submitter.stakes.stake_of(lazy, Role.Verifier).staked == lazy_stake - p.verifier_stake
    # every rejecter gets the jackpot and its fee restaked (added to its verifier stake, its
    # wallet unchanged), its reject bond unlocked from its stake; the whistleblower its
    # challenge bond back plus the jackpot, paid to its wallet: nothing is left to claim (P-41)
    winners = [*honest, wb.address]
    for a in honest:
        staked = submitter.stakes.stake_of(a, Role.Verifier).staked
        assert staked - seat_stakes[a] == p.jackpot + p.verifier_fee
        assert submitter.token.balance_of(a) == wallets[a]
    assert submitter.token.balance_of(wb.address) - wallets[wb.address] == (
        p.jackpot + p.challenge_bond
    )
    for a in winners:
        assert submitter.escrow.credit_of(a) == credits[a]
    paid = {
        e.args["account"]: e.args["amount"]
        for e in submitter.decode_receipt(receipt, "JackpotPaid")
    }
    assert paid == {a: p.jackpot for a in winners}
    (settled,) = submitter.decode_receipt(receipt, "ForcedErrorSettled")
    assert settled.args["sampleIndex"] == f and settled.args["slashed"] == p.verifier_stake
    assert submitter.escrow.jackpot_pool() == pool + p.verifier_stake - len(winners) * p.jackpot
    # the solver is not penalised: stake intact, its reward restaked (added to its stake), its
    # wallet unchanged
    assert submitter.stakes.stake_of(solver.address, Role.Solver).staked == (
        solver_stake + 10 * E18
    )
    assert submitter.token.balance_of(solver.address) == wallets[solver.address]
    assert submitter.escrow.credit_of(solver.address) == credits[solver.address]
    escrowed, bonds, owed, jackpot = submitter.escrow.liabilities()
    assert jackpot == submitter.escrow.jackpot_pool()
    pots = submitter.escrow.bucket_of(Bucket.Pot)
    assert escrowed + bonds + owed + jackpot + pots == submitter.token.balance_of(
        protocol.addresses.escrow
    )
    assert submitter.token.balance_of(protocol.addresses.job_manager) == 0


def test_a_rejecter_without_the_true_end_keeps_the_forced_sample_disputed(
    anvil: Anvil, protocol: Deployment, client_factory
) -> None:
    """P-9: a verifier that rejects the forced sample without replaying it (a made-up end: a
    zero end would be an abstention, P-20) is not paid like a replay: the sample stays disputed
    against the solver's true end, the committee finds the segment valid, and the rejecter loses
    its bond and stake; the rejecters that sealed the true end get their bonds back."""
    p = protocol.params
    clients = {i: client_factory(i) for i in range(1, 10)}
    submitter, solver = clients[1], clients[2]
    job_id, hashes, secret = _job_to_verifying(clients, p)
    claims = post_claims(solver, job_id, hashes, secret)
    f = claims.forced_sample
    assert f is not None
    assigned = submitter.jobs.get_assignment(job_id).verifiers
    guesser, honest = assigned[0], assigned[1:]
    made_up = keccak(b"a replay that never ran")
    by_addr = {c.address: c for c in clients.values()}
    seal_and_reveal(
        job_id,
        by_addr,
        lambda v, j: j != f,
        claims=claims,
        ends_of=lambda v, j: made_up if v == guesser else claims.forced_true_end,
    )
    reveal_secret(solver, job_id, hashes, K, secret, claims)
    sid = submitter.jobs.submission_of(job_id)
    assert not submitter.round.forced_end_matches(sid, guesser)
    assert all(submitter.round.forced_end_matches(sid, a) for a in honest)
    credits = {a: submitter.escrow.credit_of(a) for a in assigned}
    wallets = {a: submitter.token.balance_of(a) for a in assigned}
    receipt = submitter.jobs.finalize(job_id)
    (disputed,) = submitter.decode_receipt(receipt, "ForcedEndDisputed")
    assert (disputed.args["verifier"], disputed.args["sampleIndex"]) == (guesser, f)
    dispute_id = submitter.dispute_id_from(receipt)
    assert dispute_id is not None
    assert submitter.jobs.get_job(job_id).status is JobStatus.Disputed
    segments = submitter.jobs.get_assignment(job_id).segments
    assert submitter.committee.get_dispute(dispute_id).segment == segments[f]
    for a in honest:  # the jackpot to the wallet at once, the bond unlocked from the stake
        assert submitter.token.balance_of(a) - wallets[a] == p.jackpot
        assert submitter.escrow.credit_of(a) == credits[a]
    assert submitter.escrow.credit_of(guesser) == credits[guesser]
    assert submitter.token.balance_of(guesser) == wallets[guesser]
    submitter.mine(2)
    submitter.committee.draw_committee(dispute_id)
    members = submitter.committee.committee_of(dispute_id)
    salts = {m: commitments.new_salt() for m in members}
    for m in members:  # the committee replays the segment: the solver's true end is right
        by_addr[m].committee.commit_vote(
            dispute_id, by_addr[m].committee.vote_commitment(dispute_id, True, salts[m])
        )
    for m in members:
        by_addr[m].committee.reveal_vote(dispute_id, True, salts[m])
    stake = submitter.stakes.stake_of(guesser, Role.Verifier).staked
    resolved = submitter.committee.resolve(dispute_id)
    assert submitter.committee.get_dispute(dispute_id).segment_valid is True
    forfeited = submitter.decode_receipt(resolved, "BondForfeited")
    assert [e.args["account"] for e in forfeited] == [guesser]
    # its seat's stake and its reject bond, both slashed from its verifier stake
    guesser_stake = submitter.stakes.stake_of(guesser, Role.Verifier)
    assert guesser_stake.staked == stake - p.verifier_stake - p.challenge_bond
    assert guesser_stake.locked == 0
    if submitter.jobs.get_job(job_id).status is not JobStatus.Finalized:
        submitter.jobs.finalize(job_id)
    assert submitter.jobs.get_job(job_id).status is JobStatus.Finalized


def test_solver_that_never_reveals_is_slashed(
    anvil: Anvil, protocol: Deployment, client_factory
) -> None:
    p = protocol.params
    clients = {i: client_factory(i) for i in range(1, 10)}
    submitter, solver = clients[1], clients[2]
    job_id, hashes, secret = _job_to_verifying(clients, p)
    claims = post_claims(solver, job_id, hashes, secret)
    by_addr = {c.address: c for c in clients.values()}
    seal_and_reveal(job_id, by_addr, lambda v, j: j != claims.forced_sample, claims=claims)
    to_secret_window(submitter, job_id)
    assert submitter.round.outcome(submitter.jobs.submission_of(job_id))[0] is RoundOutcome.Pending
    with pytest.raises(errors.SecretCommitmentMismatch):
        reveal_secret(solver, job_id, hashes, K, os.urandom(32), claims, advance=False)
    sid = submitter.jobs.submission_of(job_id)
    proof = reveal_proof(solver, job_id, hashes, K)
    for bad in ([], proof[:-1], [*proof, proof[0]], [keccak(proof[0]), *proof[1:]]):
        with pytest.raises(errors.InvalidClaimsProof):
            solver.round.reveal_secret(sid, secret, claims.forced_true_end, bad)
    closes = submitter.round.windows_of(submitter.jobs.submission_of(job_id)).secret_reveal_closes
    submitter.increase_time(closes - submitter.timestamp() + 1)
    assert submitter.round.outcome(submitter.jobs.submission_of(job_id))[0] is RoundOutcome.NoReveal
    with pytest.raises(errors.OutsideWindow):
        reveal_secret(solver, job_id, hashes, K, secret, claims, advance=False)
    before = submitter.stakes.stake_of(solver.address, Role.Solver).staked
    receipt = submitter.jobs.finalize(job_id)
    assert submitter.jobs.get_job(job_id).status is JobStatus.Rejected
    assert submitter.stakes.stake_of(solver.address, Role.Solver).staked == before - p.solver_stake
    (fault,) = submitter.decode_receipt(receipt, "SolverFaulted")
    assert int(fault.args["outcome"]) == RoundOutcome.NoReveal
    assert fault.args["slashed"] == p.solver_stake


def test_solver_that_posts_no_claims_is_slashed(
    anvil: Anvil, protocol: Deployment, client_factory
) -> None:
    p = protocol.params
    clients = {i: client_factory(i) for i in range(1, 10)}
    submitter, solver = clients[1], clients[2]
    job_id, _hashes, _secret = _job_to_verifying(clients, p)
    v = next(
        c
        for c in clients.values()
        if c.address == submitter.jobs.get_assignment(job_id).verifiers[0]
    )
    with pytest.raises(errors.ClaimsNotPosted):
        v.round.commit_verdicts(v.jobs.submission_of(job_id), os.urandom(32))
    job = submitter.jobs.get_job(job_id)
    submitter.increase_time(job.challenge_deadline - submitter.timestamp() + 1)
    assert submitter.round.outcome(submitter.jobs.submission_of(job_id))[0] is RoundOutcome.NoClaims
    before = submitter.stakes.stake_of(solver.address, Role.Solver).staked
    pool = submitter.escrow.jackpot_pool()
    assigned = submitter.jobs.get_assignment(job_id).verifiers
    credits = {a: submitter.escrow.credit_of(a) for a in assigned}
    wallets = {a: submitter.token.balance_of(a) for a in assigned}
    stakes = {a: submitter.stakes.stake_of(a, Role.Verifier).staked for a in assigned}
    submitter.jobs.finalize(job_id)
    assert submitter.jobs.get_job(job_id).status is JobStatus.Rejected
    assert submitter.stakes.stake_of(solver.address, Role.Solver).staked == before - p.solver_stake
    # abandonment costs the solver (into the pool, not back to the submitter); the verifiers
    # whose stake the job locked are paid
    assert submitter.escrow.jackpot_pool() == pool + p.solver_stake
    for a in assigned:  # restaked: added to the verifier stake, the wallet unchanged
        staked = submitter.stakes.stake_of(a, Role.Verifier).staked
        assert staked - stakes[a] == p.verifier_fee
        assert submitter.token.balance_of(a) == wallets[a]
        assert submitter.escrow.credit_of(a) == credits[a]


def test_silent_verifiers_are_replaced_then_the_job_expires(
    anvil: Anvil, protocol: Deployment, client_factory
) -> None:
    """Every seat stays silent: each draw is slashed and replaced by verifiers never seated on
    the submission before (docs/SECURITY.md P-42). With 6 staked verifiers at V = 5 the first
    draw seats 5, the second the one left, and the third finds nobody (`NoEligibleVerifiers`):
    the job expires at its assign deadline (`expireUnassigned`, P-35), the submitter refunded
    and the solver unlocked."""
    p = protocol.params
    assert (p.verifiers_per_job, p.max_reassignments) == (5, 2)
    clients = {i: client_factory(i) for i in range(1, 10)}
    submitter, solver = clients[1], clients[2]
    job_id, hashes, secret = _job_to_verifying(clients, p)
    for i in range(3, 9):  # enough stake to stay active after a missed-verdict slash
        clients[i].stakes.stake(Role.Verifier, p.min_stake_verifier)
    post_claims(solver, job_id, hashes, secret)
    sid = submitter.jobs.submission_of(job_id)
    credit = submitter.escrow.credit_of(submitter.address)
    seated: set[str] = set()
    for expected in (5, 1):
        job = submitter.jobs.get_job(job_id)
        assert job.status is JobStatus.Verifying
        seats = set(submitter.jobs.get_assignment(job_id).verifiers)
        assert len(seats) == expected and not seats & seated, "a verifier seated twice"
        seated |= seats
        submitter.increase_time(job.challenge_deadline - submitter.timestamp() + 1)
        assert submitter.round.outcome(sid)[0] is RoundOutcome.NoVerdicts
        with pytest.raises(errors.SamplesUncovered):
            solver.round.reveal_secret(sid, secret, bytes(32), [])
        submitter.jobs.finalize(job_id)
        assert submitter.jobs.get_job(job_id).status is JobStatus.Committed
        submitter.mine(2)
        if expected == 5:
            submitter.jobs.assign_verifiers(job_id)
    with pytest.raises(errors.NoEligibleVerifiers):  # all 6 sat once and were slashed
        submitter.jobs.assign_verifiers(job_id)
    job = submitter.jobs.get_job(job_id)
    submitter.increase_time(job.commit_deadline + p.open_window - submitter.timestamp() + 1)
    submitter.jobs.expire_unassigned(job_id)
    assert submitter.jobs.get_job(job_id).status is JobStatus.Expired
    assert submitter.stakes.stake_of(solver.address, Role.Solver).locked == 0
    assert submitter.escrow.credit_of(solver.address) == 0
    assert submitter.escrow.credit_of(submitter.address) - credit >= 10 * E18 + p.verifier_fee


def test_open_job_expires_and_job_bounds(protocol: Deployment, client_factory) -> None:
    p = protocol.params
    submitter, solver = client_factory(1), client_factory(2)
    submitter.token.faucet(1_000 * E18)
    solver.token.faucet(1_000 * E18)
    solver.stakes.stake(Role.Solver, p.min_stake_solver)
    params = submitter.jobs.job_params()
    assert (params.claims_window, params.open_window) == (p.claims_window, p.open_window)
    register_model(submitter, keccak(text="m"), os.urandom(32))
    with pytest.raises(errors.TotalStepsAboveMax):
        submitter.jobs.post_job(
            keccak(text="m"), keccak(text="s"), INIT, 2**32 - 1, 2**32 - 1, 0, ""
        )
    with pytest.raises(errors.SegmentStepsAboveMax):
        k = p.max_segment_steps + 1
        submitter.jobs.post_job(keccak(text="m"), keccak(text="s"), INIT, k, k, 0, "")
    job_id = submitter.job_id_from(
        submitter.jobs.post_job(keccak(text="m"), keccak(text="s"), INIT, N, K, 10 * E18, "data:,")
    )
    job = submitter.jobs.get_job(job_id)
    assert job.open_deadline > 0
    with pytest.raises(errors.OpenDeadlineNotPassed):
        solver.jobs.expire_job(job_id)
    submitter.increase_time(job.open_deadline - submitter.timestamp() + 1)
    with pytest.raises(errors.OpenDeadlinePassed):
        solver.jobs.claim_job(job_id)
    credit = submitter.escrow.credit_of(submitter.address)
    solver.jobs.expire_job(job_id)
    assert submitter.jobs.get_job(job_id).status is JobStatus.Expired
    assert submitter.escrow.credit_of(submitter.address) - credit == p.job_escrow(10 * E18)


def test_fund_jackpot(protocol: Deployment, client_factory) -> None:
    c = client_factory(4)
    c.token.faucet(100 * E18)
    assert c.escrow.jackpot_pool() >= protocol.params.jackpot_funding
    before = c.escrow.jackpot_pool()
    receipt = c.escrow.fund_jackpot(7 * E18)
    assert c.escrow.jackpot_pool() == before + 7 * E18
    (ev,) = c.decode_receipt(receipt, "Deposited")
    assert ev.args == {
        "protocol": c.address,
        "bucket": int(Bucket.Jackpot),
        "from": c.address,
        "amount": 7 * E18,
    }
