"""A seat's side of the one-shot verdict batch (docs/SECURITY.md P-40): open its seal to the
solver only once it holds every seat's signed seal, and prove any seat that signed another.

The solver submits every seat's seal and opening in one ``revealVerdictsSigned`` before any
seal is on chain (`solver.aggregation`). On chain nothing then orders the seals before the
openings, so the order is kept off chain: a seat hands its ends and salt over only after the
solver's ``GET /seals`` shows each seat's seal signed by that seat (`open_to_solver`), and keeps
those seals. A seat that signs a second seal after seeing the opened ends, to copy them, has
two signed seals for one submission; once it has revealed, this seat proves both on chain
(`prove_equivocations`) and it loses one verifierStake to the jackpot pool, its verdicts
voided, so copying through a colluding solver never pays.

Run: not a script; the verifier node calls both from its verdict duty.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from eth_utils.address import to_checksum_address

from verifier.bonds import stake_reveal_bonds
from verifier.handoff import complete_seal_set, fetch_seal_set, post_hand_off
from veritrain.hexutil import from_hex, to_hex
from veritrain.wire import RevealHandOff

if TYPE_CHECKING:
    from verifier.node import VerifierNode

__all__ = ["open_to_solver", "prove_equivocations"]


def solver_seal_set(
    node: VerifierNode, job_id: int, job: Any, submission: bytes, commitment: bytes
) -> dict[str, tuple[bytes, bytes]] | None:
    """The solver's seal set (``GET /jobs/{id}/seals``) when it holds every seat's seal, each
    signed by its seat, this seat's own being `commitment`: seat (lower-case) -> (commitment,
    signature); None while it is incomplete, wrong or unreachable."""
    got = fetch_seal_set(node.http_client, node.checkpoint_url_of(job))
    if isinstance(got, str):
        return None
    seats = [str(v) for v in node.client.jobs.get_assignment(job_id).verifiers]

    def signer(c: bytes, sig: bytes) -> str | None:
        return node.client.round.seal_signer(submission, c, sig)

    return complete_seal_set(got, seats, signer, node.client.address, commitment)


def open_to_solver(
    node: VerifierNode,
    job_id: int,
    submission: bytes,
    job: Any,
    ends: list[bytes],
    salt: bytes,
    commitment: bytes,
) -> bool:
    """After the seal hand-off, before any seal is on chain: once the solver shows every seat's
    signed seal, keep them (`VerifierJob.seen_seals`) and hand this seat's opening over for the
    solver's ``revealVerdictsSigned``; its reject bonds are covered first (its free verifier
    stake topped up from the wallet, `verifier.bonds.stake_reveal_bonds`), since that call
    locks them from that stake and reverts for any seat whose free verifier stake is short.

    Args:
        node: the verifier node.
        job_id: the job.
        submission: its submission id.
        job: the job view (its checkpoint URL).
        ends: this seat's sealed ends, one per sample.
        salt: its sealed salt.
        commitment: its sealed commitment (what it signed).

    Returns:
        True once the opening stands handed over (now or before), else False (retried next
        round; the seat's own fallback timers still run).
    """
    rec = node._job_rec(job_id)
    if rec.reveal_handed_at is not None:
        return True
    seen = solver_seal_set(node, job_id, job, submission, commitment)
    if seen is None:
        return False
    # the evidence is persisted BEFORE the opening leaves this process
    node._record_job(
        job_id, seen_seals={v: [to_hex(c), to_hex(sig)] for v, (c, sig) in seen.items()}
    )
    _, rejects = node._own_tally(job_id, submission, ends, len(ends))
    unstaked = stake_reveal_bonds(node, job_id, rejects)
    if unstaked is not None:  # retried next round
        node.log.info("job %d: opening kept back: %s", job_id, unstaked)
        return False
    body = RevealHandOff(
        verifier=node.client.address, ends=[to_hex(e) for e in ends], salt=to_hex(salt)
    )
    refused = post_hand_off(node.http_client, node.checkpoint_url_of(job), "reveals", body)
    if refused is not None:
        node.log.info("job %d: opening not taken by the solver (%s)", job_id, refused)
        return False
    node._record_job(job_id, reveal_handed_at=node.chain_time())
    node.log.info("job %d: every seat's seal seen; opening handed to the solver", job_id)
    return True


def prove_equivocations(node: VerifierNode, job_id: int, submission: bytes) -> None:
    """Once this seat has revealed: compare each other seat's seal on chain with the one the
    solver showed (`VerifierJob.seen_seals`) and send ``proveEquivocation`` for every seat
    whose differs and has revealed (a seat that has not yet is retried next round: it either
    reveals, and is proven then, or is slashed as silent). Done once nothing is left to
    prove, or the challenge deadline passed: the contract takes proofs until then, while the
    voided seat's samples can still be drawn again (`VerifierJob.seals_checked`).

    Args:
        node: the verifier node.
        job_id: the job (Verifying: a proof after it is finalized reverts).
        submission: its submission id.
    """
    rec = node._job_rec(job_id)
    if not rec.seen_seals or rec.seals_checked:
        return
    deadline = int(node.client.jobs.get_job(job_id).challenge_deadline)
    if deadline and node.chain_time() > deadline:  # the contract takes no proof after it
        node._record_job(job_id, seals_checked=True)
        return
    on_chain = node.client.round.seals_on_chain(submission)
    me = node.client.address.lower()
    waiting = False
    for seat, (commitment_hex, signature_hex) in rec.seen_seals.items():
        got, verifier = on_chain.get(seat), to_checksum_address(seat)
        seen = (from_hex(commitment_hex), from_hex(signature_hex))
        if seat == me or got is None or got[0] == seen[0]:
            continue  # this seat, never sealed on chain (slashed as silent), or the same seal
        _, revealed = node.client.round.verdict_commitment_of(submission, verifier)
        if not revealed:
            waiting = True
            continue
        if _voided(node, job_id, verifier):
            continue  # another seat proved it already: its seat holds no sample any more
        node.log.warning(
            "job %d: seat %s signed two seals (0x%s.. shown, 0x%s.. on chain): proving it",
            job_id,
            verifier,
            seen[0].hex()[:12],
            got[0].hex()[:12],
        )
        node.send(
            f"proveEquivocation job {job_id} seat {verifier}",
            node.client.round.prove_equivocation,
            submission,
            verifier,
            seen,
            got,
            # every honest seat proves it: one that lands second lost a race, not a duty
            done=partial(_proven_by_another, node, job_id, verifier),
        )
    if not waiting:
        node._record_job(job_id, seals_checked=True)


def _proven_by_another(node: VerifierNode, job_id: int, verifier: str) -> str | None:
    """`NodeCore.send`'s ``done`` check of a proof that reverted: who proved it first."""
    return "another seat's proof" if _voided(node, job_id, verifier) else None


def _voided(node: VerifierNode, job_id: int, verifier: str) -> bool:
    """Whether `verifier`, a seat of `job_id` that revealed, was proven to have signed two
    seals: its seat is voided and holds no sample (``sampleMaskOf`` is 0)."""
    return node.client.jobs.sample_mask_of(job_id, verifier) == 0
