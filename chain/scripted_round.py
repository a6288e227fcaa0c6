"""The verification round (docs/FORCED_ERRORS.md) played by direct `ChainClient` calls, for the
chain tests and the gas scenario (bench/gas_scenario.py) that drive a job without nodes.

    secret = commit(solver, job_id, hashes, k)                  # commitCheckpoints + secret
    claims = post_claims(solver, job_id, hashes, secret)        # after assignVerifiers
    seal_and_reveal(job_id, clients, lambda addr, j: True)      # commitVerdicts, revealVerdicts
    reveal_secret(solver, job_id, hashes, k, secret, claims)    # after the challenge deadline

Each call takes the job id and keys the round by the job's submission id
(``JobManager.submissionOf``). State hashes are real 32-byte values; the tree is
`veritrain.merkle.checkpoint_tree`, so every proof the round checks on chain is a real one.

Run: not a script; ``from chain.scripted_round import commit, post_claims``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from veritrain.commitments import new_salt, new_secret, secret_commitment, verdict_commitment
from veritrain.forced import Claims, build_claims, draw_forced_error
from veritrain.merkle import checkpoint_tree

if TYPE_CHECKING:
    from chain.client import ChainClient

Receipts = dict[str, Any]


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
    draw = draw_forced_error(secret, job_id, segments, solver.round.forced_error_rate_bps())
    claims = build_claims(segments, list(hashes), draw)
    sid = solver.jobs.submission_of(job_id)
    r = solver.round.post_claims(sid, claims.start_hashes, claims.end_hashes)
    if receipts is not None:
        receipts["postClaims"] = r
    return claims


def seal_and_reveal(
    job_id: int,
    clients: Mapping[str, ChainClient],
    approvals_of: Callable[[str, int], bool],
    *,
    receipts: Receipts | None = None,
) -> dict[str, list[bool]]:
    """Every assigned verifier seals, then reveals (the reveal opens once all sealed).

    Args:
        job_id: the job.
        clients: a client per verifier address (at least the assigned ones).
        approvals_of: `(verifier, sample index) -> approve?`.
        receipts: filled with the last commit and reveal receipts (gas tables).

    Returns:
        The revealed approvals per verifier.
    """
    any_client = next(iter(clients.values()))
    assignment = any_client.jobs.get_assignment(job_id)
    q = len(assignment.segments)
    sid = any_client.jobs.submission_of(job_id)
    approvals = {v: [approvals_of(v, j) for j in range(q)] for v in assignment.verifiers}
    salts = {v: new_salt() for v in assignment.verifiers}
    for v in assignment.verifiers:
        r = clients[v].round.commit_verdicts(
            sid, verdict_commitment(job_id, v, approvals[v], salts[v])
        )
        if receipts is not None:
            receipts["commitVerdicts"] = r
    for v in assignment.verifiers:
        r = clients[v].round.reveal_verdicts(sid, approvals[v], salts[v])
        if receipts is not None:
            key = "revealVerdicts (reject)" if False in approvals[v] else "revealVerdicts"
            receipts[key] = r
    return approvals


def to_secret_window(client: ChainClient, job_id: int) -> None:
    """Move chain time just past the challenge deadline (the secret reveal opens)."""
    opens = client.round.windows_of(client.jobs.submission_of(job_id)).secret_reveal_opens
    now = client.timestamp()
    if now <= opens:
        client.increase_time(opens - now + 1)


def reveal_secret(
    solver: ChainClient,
    job_id: int,
    hashes: Sequence[bytes],
    interval: int,
    secret: bytes,
    claims: Claims,
    *,
    advance: bool = True,
) -> Any:
    """Reveal the secret with the proofs of every claim (after the challenge deadline)."""
    if advance:
        to_secret_window(solver, job_id)
    tree = checkpoint_tree(list(hashes), interval)
    segments = list(solver.jobs.get_assignment(job_id).segments)
    return solver.round.reveal_secret(
        solver.jobs.submission_of(job_id),
        secret,
        claims.forced_true_end,
        [tree.proof(s) for s in segments],
        [tree.proof(s + 1) for s in segments],
    )
