"""The verification round (docs/FORCED_ERRORS.md) played by direct `ChainClient` calls, for the
chain tests and the gas scenario (bench/gas_scenario.py) that drive a job without nodes.

    secret = commit(solver, job_id, hashes, k)                  # commitCheckpoints + secret
    claims = post_claims(solver, job_id, hashes, secret)        # after assignVerifiers
    # or both at once: assign_and_post_claims(solver, job_id, hashes, secret)
    seal_and_reveal(job_id, clients, approve, claims=claims)    # commitVerdicts, revealVerdicts
    reveal_secret(solver, job_id, hashes, k, secret, claims)    # after the challenge deadline

A verdict is an end state hash per sample (`veritrain.forced`): ``approve(verifier, j)`` seals
the claimed end, a reject the solver's true end on the forced sample (a replay's result) or
`SCRIPTED_REJECT_END` elsewhere (an end of its own: a rejection; `UNREPLAYED_END`, the zero end,
would be an abstention, which holds no dispute on a sample another seat replayed,
docs/SECURITY.md P-33), unless ``ends_of`` names another end.

Each call takes the job id and keys the round by the job's submission id
(``JobManager.submissionOf``). State hashes are real 32-byte values; the tree is
`veritrain.merkle.checkpoint_tree`, so every proof the round checks on chain is a real one.

Run: not a script; ``from chain.scripted_round import commit, post_claims``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from eth_utils.crypto import keccak

from chain.errors import ChainError
from chain.seals import SignedReveal
from veritrain.commitments import new_salt, new_secret, secret_commitment, verdict_commitment
from veritrain.forced import (
    Claims,
    build_claims,
    draw_forced_error,
    verdict_approvals,
)
from veritrain.merkle import checkpoint_tree, claim_indices

if TYPE_CHECKING:
    from chain.client import ChainClient

Receipts = dict[str, Any]


#: The end a scripted reject seals outside the forced sample: a made-up state hash (32 bytes),
#: never a claim and never zero, so the verdict is a rejection (a claimed replay that disagrees)
#: and not an abstention.
SCRIPTED_REJECT_END = keccak(b"veritrain scripted reject")


def commit(
    solver: ChainClient,
    job_id: int,
    hashes: Sequence[bytes],
    interval: int,
    url: str = "http://x/jobs/1",
    *,
    receipts: Receipts | None = None,
) -> bytes:
    """Commit the tree over `hashes` (with the proof of leaf 0: `hashes[0]` must be the job's
    initHash) and a fresh secret; returns the secret."""
    secret = new_secret()
    tree = checkpoint_tree(list(hashes), interval)
    r = solver.jobs.commit_checkpoints(
        job_id, tree.root, tree.proof(0), url, secret_commitment(job_id, solver.address, secret)
    )
    if receipts is not None:
        receipts["commitCheckpoints"] = r
    return secret


def _honest_claims(
    solver: ChainClient, job_id: int, segments: list[int], hashes: Sequence[bytes], secret: bytes
) -> Claims:
    """The honest claims on `segments`, with the forced claim when the secret's draw says so."""
    draw = draw_forced_error(secret, job_id, segments, solver.round.forced_error_rate_bps())
    return build_claims(segments, list(hashes), draw)


def post_claims(
    solver: ChainClient,
    job_id: int,
    hashes: Sequence[bytes],
    secret: bytes,
    *,
    receipts: Receipts | None = None,
) -> Claims:
    """Post the honest claims (with the forced claim when the draw says so); returns them."""
    segments = list(solver.jobs.get_assignment(job_id).segments)
    claims = _honest_claims(solver, job_id, segments, hashes, secret)
    sid = solver.jobs.submission_of(job_id)
    r = solver.round.post_claims(sid, claims.start_hashes, claims.end_hashes)
    if receipts is not None:
        receipts["postClaims"] = r
    return claims


def assign_and_post_claims(
    solver: ChainClient,
    job_id: int,
    hashes: Sequence[bytes],
    secret: bytes,
    *,
    receipts: Receipts | None = None,
) -> Claims:
    """Assign the verifiers and post the honest claims in one transaction
    (``assignAndPostClaims``), on the sample `JobsFacade.predict_sample` replays off chain;
    returns the claims.

    Raises:
        ChainError: the job cannot be assigned now (`predict_sample` is None).
        ContractRevert: the draw moved since the prediction (``SampleMismatch``).
    """
    draws = solver.jobs.predict_sample(job_id)
    if draws is None:
        raise ChainError(f"job {job_id} cannot be assigned now")
    segments = list(draws.segments)
    claims = _honest_claims(solver, job_id, segments, hashes, secret)
    r = solver.round.assign_and_post_claims(
        job_id, segments, claims.start_hashes, claims.end_hashes
    )
    if receipts is not None:
        receipts["assignAndPostClaims"] = r
    return claims


def seal_and_reveal(
    job_id: int,
    clients: Mapping[str, ChainClient],
    approvals_of: Callable[[str, int], bool],
    *,
    claims: Claims | None = None,
    ends_of: Callable[[str, int], bytes] | None = None,
    receipts: Receipts | None = None,
    aggregator: ChainClient | None = None,
    one_shot: bool = False,
) -> dict[str, list[bytes]]:
    """Every assigned verifier seals its end state hashes, then reveals them (the reveal opens
    once all sealed); the contract approves a sample iff the end is the claimed one. With an
    `aggregator` (a node's solver), the seats sign their seals (EIP-712, `chain.seals`) and hand
    over their salts once all sealed, and the aggregator submits them in one
    ``commitVerdictsFor`` and one ``revealVerdictsFor``; with `one_shot` too, in one
    ``revealVerdictsSigned`` (every seat's seal and opening at once, docs/SECURITY.md P-40).

    Args:
        job_id: the job.
        clients: a client per verifier address (at least the assigned ones).
        approvals_of: `(verifier, sample index) -> approve?`: an approval seals the posted
            claimed end.
        claims: the solver's claims (what `post_claims` returned): a reject of the forced
            sample then seals the solver's true end, as a verifier that replayed it would (its
            bond comes back with the jackpot).
        ends_of: `(verifier, sample index) -> end hash` sealed for a reject, first choice
            (e.g. a lazy rejecter's wrong end on the forced sample). Without it, and apart from
            the forced sample of `claims`, a reject seals `SCRIPTED_REJECT_END`.
        receipts: filled with the last commit and reveal receipts (gas tables), and with every
            seat's under ``"commitVerdicts (every seat)"`` and ``"revealVerdicts (every seat)"``
            (lists in seat order); with an `aggregator`, its two receipts under
            ``"commitVerdictsFor"`` and ``"revealVerdictsFor"`` (and, alone, in those lists);
            with `one_shot`, its one receipt under ``"revealVerdictsSigned"`` (and alone in
            the reveal list, the commit list empty).
        aggregator: the client that submits every seat's seal and reveal (None: each seat its
            own).
        one_shot: with an `aggregator`, one ``revealVerdictsSigned`` instead of two batches.

    Returns:
        The revealed end hashes per verifier.
    """
    any_client = next(iter(clients.values()))
    assignment = any_client.jobs.get_assignment(job_id)
    q = len(assignment.segments)
    sid = any_client.jobs.submission_of(job_id)
    claimed = any_client.round.claims_of(sid).end_hashes

    def end_of(v: str, j: int) -> bytes:
        if approvals_of(v, j):
            return bytes(claimed[j])
        if ends_of is not None:
            return bytes(ends_of(v, j))
        if claims is not None and j == claims.forced_sample:
            return bytes(claims.forced_true_end)
        return SCRIPTED_REJECT_END

    ends = {v: [end_of(v, j) for j in range(q)] for v in assignment.verifiers}
    salts = {v: new_salt() for v in assignment.verifiers}
    if aggregator is not None and one_shot:
        _aggregate_signed(aggregator, job_id, sid, clients, ends, salts, receipts)
        return ends
    if aggregator is not None:
        _aggregate(aggregator, job_id, sid, clients, ends, salts, receipts)
        return ends
    for v in assignment.verifiers:
        r = clients[v].round.commit_verdicts(sid, verdict_commitment(job_id, v, ends[v], salts[v]))
        if receipts is not None:
            receipts["commitVerdicts"] = r
            receipts.setdefault("commitVerdicts (every seat)", []).append(r)
    for v in assignment.verifiers:
        r = clients[v].round.reveal_verdicts(sid, ends[v], salts[v])
        if receipts is not None:
            rejects = not all(verdict_approvals(ends[v], claimed))
            receipts["revealVerdicts (reject)" if rejects else "revealVerdicts"] = r
            receipts.setdefault("revealVerdicts (every seat)", []).append(r)
    return ends


def _aggregate(
    aggregator: ChainClient,
    job_id: int,
    sid: bytes,
    clients: Mapping[str, ChainClient],
    ends: dict[str, list[bytes]],
    salts: dict[str, bytes],
    receipts: Receipts | None,
) -> None:
    """`seal_and_reveal` through an aggregator: signed seals, then the salts, two transactions.
    A rejecting seat covers its own bonds first (`cover_reveal_bonds` tops its free verifier
    stake up: the JobManager locks them from it, and the batch skips a seat short of them)."""
    seals = [
        clients[v].round.sign_seal(sid, verdict_commitment(job_id, v, ends[v], salts[v]))
        for v in ends
    ]
    r = aggregator.round.commit_verdicts_for(sid, seals)
    if receipts is not None:
        receipts["commitVerdictsFor"] = r
        receipts["commitVerdicts (every seat)"] = [r]
    for v in ends:
        clients[v].round.cover_reveal_bonds(sid, ends[v])
    r = aggregator.round.reveal_verdicts_for(sid, [(v, ends[v], salts[v]) for v in ends])
    if receipts is not None:
        receipts["revealVerdictsFor"] = r
        receipts["revealVerdicts (every seat)"] = [r]


def _aggregate_signed(
    aggregator: ChainClient,
    job_id: int,
    sid: bytes,
    clients: Mapping[str, ChainClient],
    ends: dict[str, list[bytes]],
    salts: dict[str, bytes],
    receipts: Receipts | None,
) -> None:
    """`seal_and_reveal` in one ``revealVerdictsSigned``: every seat signs its seal, covers its
    own reject bonds with free verifier stake (`cover_reveal_bonds`), and the aggregator sends
    every seal with its opening."""
    reveals = []
    for v in ends:
        seal = clients[v].round.sign_seal(sid, verdict_commitment(job_id, v, ends[v], salts[v]))
        clients[v].round.cover_reveal_bonds(sid, ends[v])
        reveals.append(SignedReveal(seal.verifier, tuple(ends[v]), salts[v], seal.signature))
    r = aggregator.round.reveal_verdicts_signed(sid, reveals)
    if receipts is not None:
        receipts["revealVerdictsSigned"] = r
        receipts["commitVerdicts (every seat)"] = []
        receipts["revealVerdicts (every seat)"] = [r]


def to_secret_window(client: ChainClient, job_id: int) -> None:
    """Move chain time just past the challenge deadline (the secret reveal opens)."""
    opens = client.round.windows_of(client.jobs.submission_of(job_id)).secret_reveal_opens
    now = client.timestamp()
    if now <= opens:
        client.increase_time(opens - now + 1)


def reveal_proof(
    solver: ChainClient, job_id: int, hashes: Sequence[bytes], interval: int
) -> list[bytes]:
    """The secret reveal's multiproof: the checkpoints `claim_indices` gives for the job's sampled
    segments (each start and end, one per index) over the committed `hashes`, as
    ``VerificationRound`` folds it."""
    segments = [int(s) for s in solver.jobs.get_assignment(job_id).segments]
    return checkpoint_tree(list(hashes), interval).multiproof(claim_indices(segments))


def reveal_secret(
    solver: ChainClient,
    job_id: int,
    hashes: Sequence[bytes],
    interval: int,
    secret: bytes,
    claims: Claims,
    *,
    advance: bool = True,
    and_finalize: bool = False,
) -> Any:
    """Reveal the secret with the multiproof of every claim (`reveal_proof`; after the challenge
    deadline); with `and_finalize`, finalize the job in the same transaction
    (``revealSecretAndFinalize``)."""
    if advance:
        to_secret_window(solver, job_id)
    return solver.round.reveal_secret(
        solver.jobs.submission_of(job_id),
        secret,
        claims.forced_true_end,
        reveal_proof(solver, job_id, hashes, interval),
        and_finalize=and_finalize,
    )
