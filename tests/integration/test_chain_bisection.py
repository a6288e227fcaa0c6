"""The bisection adjudicator (docs/DISPUTES.md) through `ChainClient` on Anvil: deployment and
wiring with ``ProtocolParams.adjudicator = "bisection"``, whole n-way dissection games
(endpoints with Merkle proofs, dissections read back from their logs, responses, the one-step
committee), decoded game reverts, timeouts and credits.

Run: ``.venv/bin/python -m pytest tests/integration/test_chain_bisection.py``.
"""

from __future__ import annotations

from collections.abc import Callable

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
from chain.scripted_round import commit, post_claims, reveal_secret, seal_and_reveal
from tests.utils.models import register_model
from veritrain.bisection import choose_index, depth_of, play_out
from veritrain.commitments import new_salt
from veritrain.enums import GameStatus, JobStatus, Role, Side
from veritrain.forced import Claims
from veritrain.merkle import checkpoint_tree

E18 = 10**18
K = 16  # checkpoint interval: 2 dissection rounds at arity 8 (16 -> 2 -> 1)
N = 2 * K
ARITY = 8  # BisectionGame.DISSECTION_ARITY


def _hash(step: int) -> bytes:
    """The honest state hash at `step` (any fixed values do)."""
    return keccak(text=f"state {step}")


@pytest.fixture
def bisection(anvil: Anvil, protocol_artifacts) -> Deployment:
    """A second deployment on the session Anvil, with the bisection game as adjudicator."""
    params = ProtocolParams.demo(
        adjudicator="bisection", verifiers_per_job=3, samples_per_job=4, forced_error_rate_bps=0
    )
    return deploy_protocol(ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[0]), params, build=False)


def _claimed_job(
    anvil: Anvil, dep: Deployment, *, whistleblower: bool = False
) -> tuple[dict[str, ChainClient], int, list[bytes], bytes, Claims]:
    """Clients k1..k9, funded: k1 submits, k2 solves, k3..k9 stake as verifiers (k9 as a
    whistleblower instead when `whistleblower`). A job of N = 2k honest steps is posted, claimed,
    committed, assigned, and its claims are posted.

    Returns:
        ``(clients, job_id, hashes, secret, claims)``.
    """
    clients = {f"k{i}": ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[i], dep) for i in range(1, 10)}
    submitter, solver = clients["k1"], clients["k2"]
    p = dep.params
    for c in clients.values():
        c.token.faucet(1_000 * E18)
    solver.stakes.stake(Role.Solver, p.min_stake_solver)
    for i in range(3, 9 if whistleblower else 10):
        clients[f"k{i}"].stakes.stake(Role.Verifier, p.min_stake_verifier)
    if whistleblower:
        clients["k9"].stakes.stake(Role.Whistleblower, p.min_stake_whistleblower)
    hashes = [_hash(i * K) for i in range(N // K + 1)]
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
    claims = post_claims(solver, job_id, hashes, secret)
    return clients, job_id, hashes, secret, claims


def _disputed_game(anvil: Anvil, dep: Deployment) -> tuple[dict[str, ChainClient], int, int]:
    """Job of N = 2k honest steps; the first assigned verifier rejects segment 0."""
    clients, job_id, hashes, secret, claims = _claimed_job(anvil, dep)
    submitter, solver = clients["k1"], clients["k2"]
    assignment = submitter.jobs.get_assignment(job_id)
    assigned, first = assignment.verifiers, assignment.segments.index(0)
    by_addr = {c.address: c for c in clients.values()}
    seal_and_reveal(job_id, by_addr, lambda v, j: not (v == assigned[0] and j == first))
    reveal_secret(solver, job_id, hashes, K, secret, claims)
    dispute_id = submitter.dispute_id_from(submitter.jobs.finalize(job_id))
    assert dispute_id is not None
    clients["challenger"] = by_addr[assigned[0]]
    return clients, job_id, dispute_id


def _dissect(
    solver: ChainClient, dispute_id: int, hash_at: Callable[[int], bytes] = _hash
) -> list[bytes]:
    """The defender's move: its hashes at the interior points of the current interval."""
    game = solver.game.get_game(dispute_id)
    hashes = [hash_at(p) for p in game.points(solver.game.arity())[1:-1]]
    solver.game.bisect(dispute_id, game.lo, game.hi, hashes)
    return hashes


def _game_credits(client: ChainClient, receipt: object, dep: Deployment) -> dict[str, int]:
    """The Escrow credits the game booked in a receipt (won move bonds), per account."""
    out: dict[str, int] = {}
    for ev in client.decode_receipt(receipt, "Credited"):  # type: ignore[arg-type]
        if ev.args["protocol"] == dep.addresses.bisection_game:
            out[ev.args["account"]] = out.get(ev.args["account"], 0) + int(ev.args["amount"])
    return out


def test_bisection_wiring(anvil: Anvil, bisection: Deployment):
    c = ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[1], bisection)
    a = bisection.addresses
    assert a.bisection_game is not None
    assert c.game.contract.address == a.bisection_game
    assert c.call(c.jobs.contract, "adjudicator") == a.bisection_game
    assert c.adjudicator.name == "bisection"
    assert c.adjudicator.contract.address == a.bisection_game
    assert c.call(c.committee.contract, "stepParent") == a.bisection_game
    assert c.call(c.game.contract, "stepAdjudicator") == a.arbitration
    assert c.call(c.game.contract, "clockSeconds") == bisection.params.clock_seconds == 120
    assert c.game.move_bond() == bisection.params.move_bond
    assert c.escrow.is_authorized(a.job_manager) and c.escrow.is_authorized(a.bisection_game)
    assert c.call(c.game.contract, "escrow") == a.escrow
    # The nodes' depth (bond prepayment, round count) is the contract's for any segment length.
    arity = c.game.arity()
    assert arity == 8
    for k in (1, 2, 7, 8, 9, 25, 63, 64, 65, 100, 512, 1024, 1025, 4096, 100_000):
        assert c.call(c.game.contract, "depthOf", k) == depth_of(k, arity), k


def test_bisection_game_griefer_loses(anvil: Anvil, bisection: Deployment):
    clients, job_id, dispute_id = _disputed_game(anvil, bisection)
    solver, challenger, anyone = clients["k2"], clients["challenger"], clients["k1"]
    game = anyone.game.get_game(dispute_id)
    assert (game.defender, game.challenger) == (solver.address, challenger.address)
    assert (game.lo, game.hi, game.turn, game.status) == (
        0,
        K,
        Side.Defender,
        GameStatus.AwaitingEndpoints,
    )

    tree = checkpoint_tree([_hash(i * K) for i in range(N // K + 1)], K)
    with pytest.raises(errors.InvalidEndpointProof):
        solver.game.post_endpoints(
            dispute_id, keccak(text="x"), _hash(K), tree.proof(0), tree.proof(1)
        )
    solver.game.post_endpoints(dispute_id, _hash(0), _hash(K), tree.proof(0), tree.proof(1))
    assert anyone.game.arity() == ARITY
    with pytest.raises(errors.OutOfTurn):
        challenger.game.respond(dispute_id, 0, K, 0, [])
    with pytest.raises(errors.WrongInterval):
        solver.game.bisect(dispute_id, 0, K + 1, [_hash(p) for p in range(2, K, 2)])
    with pytest.raises(errors.WrongHashCount) as wrong:
        solver.game.bisect(dispute_id, 0, K, [_hash(K // 2)])
    assert wrong.value.args == (dispute_id, ARITY - 1, 1)

    posted = _dissect(solver, dispute_id)  # at 2, 4, ..., 14
    game = anyone.game.get_game(dispute_id)
    assert game.status is GameStatus.AwaitingResponse and game.pending_block > 0
    assert challenger.game.pending_hashes(game) == posted == [_hash(p) for p in range(2, K, 2)]
    with pytest.raises(errors.HashesMismatch):
        challenger.game.respond(dispute_id, 0, K, 0, [*posted[:-1], keccak(text="forged")])
    with pytest.raises(errors.InvalidIndex) as invalid:
        challenger.game.respond(dispute_id, 0, K, ARITY, posted)
    assert invalid.value.args == (dispute_id, ARITY, ARITY)
    challenger.game.respond(dispute_id, 0, K, 0, posted)  # griefing: disputes the first part
    assert (anyone.game.get_game(dispute_id).lo, anyone.game.get_game(dispute_id).hi) == (0, 2)
    while (game := anyone.game.get_game(dispute_id)).status is not GameStatus.AwaitingStep:
        posted = _dissect(solver, dispute_id)
        challenger.game.respond(dispute_id, game.lo, game.hi, 0, posted)
    # endpoints + depth_of(16, 8) = 2 rounds of (dissect, respond)
    assert depth_of(K, ARITY) == 2
    assert (game.lo, game.hi, game.moves) == (0, 1, 5)
    assert anyone.game.moves(dispute_id) == 5

    step_id = game.step_dispute_id
    claim = anyone.committee.step_claim_of(step_id)
    assert (claim.is_step, claim.step, claim.start_hash, claim.claimed_end_hash) == (
        True,
        0,
        _hash(0),
        _hash(1),
    )
    assert anyone.game.game_of_step(step_id) == dispute_id
    anyone.mine(2)
    anyone.committee.draw_committee(step_id)
    members = anyone.committee.committee_of(step_id)
    by_addr = {c.address: c for c in clients.values()}
    salts = {m: new_salt() for m in members}
    for m in members:
        by_addr[m].committee.commit_vote(
            step_id, by_addr[m].committee.vote_commitment(step_id, True, salts[m])
        )
    for m in members:
        by_addr[m].committee.reveal_vote(step_id, True, salts[m])
    receipt = anyone.committee.resolve(step_id)

    game = anyone.game.get_game(dispute_id)
    assert game.status is GameStatus.DefenderWon and game.resolved
    # the won move bonds are Escrow credits booked by the game, claimed with everything else
    assert _game_credits(anyone, receipt, bisection) == {
        solver.address: 5 * bisection.params.move_bond
    }
    credit = solver.escrow.credit_of()  # plus any committee reward of the step dispute
    assert credit >= 5 * bisection.params.move_bond
    balance = solver.token.balance_of()
    solver.escrow.claim_credit()  # ONE claim for everything the Escrow owes
    assert solver.token.balance_of() == balance + credit
    assert solver.escrow.credit_of() == 0
    with pytest.raises(errors.GameAlreadyResolved):
        anyone.game.claim_timeout(dispute_id)
    anyone.jobs.finalize(job_id)
    assert anyone.jobs.get_job(job_id).status is JobStatus.Finalized


def test_dissection_pins_the_first_step_the_challenger_disputes(
    anvil: Anvil, bisection: Deployment
):
    """An honest challenger whose own trajectory leaves the defender's after step 11 narrows
    [0, 16] to [11, 12] in depth_of(16, 8) rounds, each part the first one whose end it
    disputes (`choose_index` over the posted hashes read back from the log), as `play_out`
    predicts; the step claim is step 11 from the agreed hash."""
    clients, _job_id, dispute_id = _disputed_game(anvil, bisection)
    solver, challenger = clients["k2"], clients["challenger"]
    t = 11

    def mine(step: int) -> bytes:
        return _hash(step) if step <= t else keccak(text=f"other {step}")

    tree = checkpoint_tree([_hash(i * K) for i in range(N // K + 1)], K)
    solver.game.post_endpoints(dispute_id, _hash(0), _hash(K), tree.proof(0), tree.proof(1))
    picked = []
    while (game := challenger.game.get_game(dispute_id)).status is not GameStatus.AwaitingStep:
        _dissect(solver, dispute_id)
        game = challenger.game.get_game(dispute_id)
        points = game.points(ARITY)
        posted = challenger.game.pending_hashes(game)
        index = choose_index([mine(p) for p in points[1:]], [*posted, game.claimed_hash])
        picked.append(index)
        challenger.game.respond(dispute_id, game.lo, game.hi, index, posted)
        after = challenger.game.get_game(dispute_id)
        assert (after.lo, after.hi) == (points[index], points[index + 1])
    expected = play_out(0, K, _hash, mine, ARITY)
    assert picked == [5, 1]  # [0,16]: 12 is the first disputed point -> [10, 12] -> [11, 12]
    assert (game.lo, game.hi) == (t, t + 1) == (expected.step, expected.step + 1)
    assert (game.agreed_hash, game.claimed_hash) == (expected.agreed, expected.claimed)
    assert len(picked) == expected.rounds == depth_of(K, ARITY)
    claim = challenger.committee.step_claim_of(game.step_dispute_id)
    assert (claim.step, claim.start_hash, claim.claimed_end_hash) == (t, _hash(t), _hash(t + 1))


def test_bisection_timeout_defender_loses(anvil: Anvil, bisection: Deployment):
    clients, job_id, dispute_id = _disputed_game(anvil, bisection)
    anyone = clients["k1"]
    with pytest.raises(errors.ClockNotExpired):
        anyone.game.claim_timeout(dispute_id)
    anyone.increase_time(bisection.params.clock_seconds + 1)
    assert anyone.game.clocks(dispute_id)[0] == 0
    anyone.game.claim_timeout(dispute_id)
    assert anyone.game.get_game(dispute_id).status is GameStatus.ChallengerWon
    assert anyone.jobs.get_job(job_id).status is JobStatus.Rejected


def test_griefing_whistleblower_loses_its_bond(anvil: Anvil, bisection: Deployment):
    """A whistleblower challenges an honest approval, then disputes every first part: the
    honest solver wins the game, the whistleblower forfeits its challenge bond and its move
    bonds, and the job is finalized."""
    # 6 verifiers: V = 3 on the job, 3 fresh ones for the step committee; k9 the whistleblower.
    clients, job_id, hashes, secret, claims = _claimed_job(anvil, bisection, whistleblower=True)
    submitter, solver, griefer = clients["k1"], clients["k2"], clients["k9"]
    p = bisection.params
    assignment = submitter.jobs.get_assignment(job_id)
    by_addr = {c.address: c for c in clients.values()}
    seal_and_reveal(job_id, by_addr, lambda v, j: True)  # every verifier approves honest work

    # The griefer challenges the first verifier's (correct) approval of segment 0.
    sample = assignment.segments.index(0)
    approver = assignment.verifiers[0]
    griefer_balance = griefer.token.balance_of()
    griefer.jobs.challenge_approval(job_id, sample, approver)
    assert griefer.jobs.challenger_of(job_id, sample, approver) == griefer.address
    assert griefer.token.balance_of() == griefer_balance - p.challenge_bond

    reveal_secret(solver, job_id, hashes, K, secret, claims)
    dispute_id = submitter.dispute_id_from(submitter.jobs.finalize(job_id))
    assert dispute_id is not None
    game = submitter.game.get_game(dispute_id)
    assert (game.defender, game.challenger) == (solver.address, griefer.address)

    tree = checkpoint_tree(hashes, K)
    solver.game.post_endpoints(dispute_id, _hash(0), _hash(K), tree.proof(0), tree.proof(1))
    while (game := submitter.game.get_game(dispute_id)).status is not GameStatus.AwaitingStep:
        posted = _dissect(solver, dispute_id)
        griefer.game.respond(dispute_id, game.lo, game.hi, 0, posted)  # disputes every part 0
    moves = game.moves
    step_id = game.step_dispute_id
    submitter.mine(2)
    submitter.committee.draw_committee(step_id)
    members = submitter.committee.committee_of(step_id)
    salts = {m: new_salt() for m in members}
    for m in members:
        by_addr[m].committee.commit_vote(
            step_id, by_addr[m].committee.vote_commitment(step_id, True, salts[m])
        )
    for m in members:
        by_addr[m].committee.reveal_vote(step_id, True, salts[m])
    receipt = submitter.committee.resolve(step_id)

    game = submitter.game.get_game(dispute_id)
    assert game.status is GameStatus.DefenderWon and game.resolved
    griefer_moves = moves // 2  # the challenger answered every other move
    won = _game_credits(submitter, receipt, bisection)
    assert won.get(solver.address, 0) >= griefer_moves * p.move_bond
    assert won.get(griefer.address, 0) == 0
    submitter.jobs.finalize(job_id)
    assert submitter.jobs.get_job(job_id).status is JobStatus.Finalized
    # The challenge bond went to the winners' pot, none of it back to the griefer.
    assert griefer.escrow.credit_of() == 0
    assert (
        griefer.token.balance_of()
        == griefer_balance - p.challenge_bond - griefer_moves * p.move_bond
    )
    assert solver.stakes.stake_of(solver.address, Role.Solver).locked == 0
