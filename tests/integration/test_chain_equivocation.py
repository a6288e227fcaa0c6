"""One call for every seat's verdicts and the proof of a seat that signed two seals
(docs/SECURITY.md P-40), through `ChainClient` on Anvil: the solver's ``revealVerdictsSigned``
carries a copier's second seal; ``client.round.seals_on_chain`` reads every seal back with the
signature the call carried (decoded from its calldata), and ``prove_equivocation`` with the seal
the copier signed first slashes it one verifierStake. The same against a seal the copier stored
with its own ``commitVerdicts`` (an empty signature). An honest seat cannot be framed with a
signature that is not its own, and a seat is proven once.

Run: ``.venv/bin/python -m pytest tests/integration/test_chain_equivocation.py -m anvil``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from chain import ChainClient, Deployment, ProtocolParams, errors
from chain.scripted_round import post_claims
from chain.seals import SignedReveal, sign_seal
from tests.integration.test_chain_forced import _job_to_verifying
from veritrain.commitments import new_salt, verdict_commitment
from veritrain.enums import JobStatus, Role


def _claimed_job(
    client_factory: Callable[[int], ChainClient],
) -> tuple[int, bytes, list[bytes], list[ChainClient], ChainClient, ProtocolParams]:
    """A job in Verifying with its claims posted: (job id, submission, the claimed ends, the
    seats' clients in seat order, the solver, the `protocol` fixture's parameters)."""
    clients = {i: client_factory(i) for i in range(1, 10)}
    p = ProtocolParams.demo()  # the `protocol` fixture's
    job_id, hashes, secret = _job_to_verifying(clients, p)
    solver = clients[2]
    post_claims(solver, job_id, hashes, secret)
    sid = solver.jobs.submission_of(job_id)
    claimed = list(solver.round.claims_of(sid).end_hashes)
    by_addr = {c.address: c for c in clients.values()}
    seats = [by_addr[v] for v in solver.jobs.get_assignment(job_id).verifiers]
    return job_id, sid, claimed, seats, solver, p


def test_a_copier_in_the_one_shot_call_is_proven_and_slashed(
    protocol: Deployment, client_factory
) -> None:
    job_id, sid, claimed, seats, solver, p = _claimed_job(client_factory)
    copier, honest = seats[1], seats[0]
    # the seal the copier showed the others (kept by them), then the one it submits instead
    first_salt, salt = new_salt(), new_salt()
    first = copier.round.sign_seal(
        sid, verdict_commitment(job_id, copier.address, claimed, first_salt)
    )
    reveals = []
    for seat in seats:
        s = salt if seat is copier else new_salt()
        seal = seat.round.sign_seal(sid, verdict_commitment(job_id, seat.address, claimed, s))
        reveals.append(SignedReveal(seat.address, tuple(claimed), s, seal.signature))
    receipt = solver.round.reveal_verdicts_signed(sid, reveals)
    assert all(honest.round.verdict_commitment_of(sid, s.address)[1] for s in seats)
    # every seat approved: the client sent no ends (the contract opened the claimed ones), and
    # the seals are still read back from the call, over the claimed ends
    _, data = honest.transaction_call(receipt["transactionHash"].to_0x_hex())
    _, args = honest.round.contract.decode_function_input(data)
    ends = [e["ends"] if isinstance(e, dict) else e[1] for e in args["reveals"]]
    assert ends == [[]] * len(seats)
    on_chain = honest.round.seals_on_chain(sid)
    assert set(on_chain) == {s.address.lower() for s in seats}
    second = on_chain[copier.address.lower()]
    assert second == (
        verdict_commitment(job_id, copier.address, claimed, salt),
        reveals[1].signature,
    )
    # framing the honest seat: a second "seal" signed by another key is no proof
    forged = sign_seal(
        copier.account, copier.chain_id, str(copier.round.contract.address), sid, b"\x05" * 32
    )
    with pytest.raises(errors.ContractRevert):
        solver.round.prove_equivocation(
            sid,
            honest.address,
            (forged.commitment, forged.signature),
            on_chain[honest.address.lower()],
        )
    before = honest.stakes.stake_of(copier.address, Role.Verifier).staked
    honest.round.prove_equivocation(
        sid, copier.address, (first.commitment, first.signature), second
    )
    after = honest.stakes.stake_of(copier.address, Role.Verifier).staked
    assert before - after == p.verifier_stake
    with pytest.raises(errors.ContractRevert):  # proven once
        honest.round.prove_equivocation(
            sid, copier.address, (first.commitment, first.signature), second
        )
    assert JobStatus(int(solver.jobs.get_job(job_id).status)) is JobStatus.Verifying


def test_a_seal_stored_by_the_seat_itself_is_proven_with_an_empty_signature(
    protocol: Deployment, client_factory
) -> None:
    job_id, sid, claimed, seats, solver, p = _claimed_job(client_factory)
    copier = seats[0]
    first = copier.round.sign_seal(
        sid, verdict_commitment(job_id, copier.address, claimed, new_salt())
    )
    salts = {s.address: new_salt() for s in seats}
    for s in seats:
        s.round.commit_verdicts(
            sid, verdict_commitment(job_id, s.address, claimed, salts[s.address])
        )
    for s in seats:
        s.round.reveal_verdicts(sid, claimed, salts[s.address])
    on_chain = seats[1].round.seals_on_chain(sid)
    stored = on_chain[copier.address.lower()]
    assert stored == (
        verdict_commitment(job_id, copier.address, claimed, salts[copier.address]),
        b"",
    )
    before = copier.stakes.stake_of(copier.address, Role.Verifier).staked
    seats[1].round.prove_equivocation(
        sid, copier.address, (first.commitment, first.signature), stored
    )
    assert before - copier.stakes.stake_of(copier.address, Role.Verifier).staked == p.verifier_stake
