"""A run's rounds as the chain records them: its verified contribution jobs, their final states
and the global state every party computes from them (docs/RUNS.md, section 3).

Nobody posts a run's global state: it is a pure function of public facts (which contribution
jobs of each round were finalized, their initHashes, their committed final states) that a
solver, a poster or an auditor computes the same way (`veritrain.diloco.advance_round`). The
final states come from the solvers' checkpoint servers, each proved against its job's on-chain
Merkle root before it is used.

Run: not a script; `from noderuntime.runs import run_state`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chain.events import MAX_BLOCK_RANGE
from veritrain.diloco import (
    OuterState,
    RoundResult,
    RunSpec,
    advance_round,
    parse_contribution_uri,
)
from veritrain.enums import JobStatus
from veritrain.errors import MerkleProofInvalid, VeritrainError
from veritrain.spec import CONTRIBUTION_MARK

__all__ = ["RunState", "contribution_jobs", "post_round", "run_state", "verified_final"]


@dataclass
class RunState:
    """A run at the start of a round, rebuilt from the chain.

    Attributes:
        round: t, the round the state starts.
        state: the outer state t (global parameters and momentum).
        seat_finals: each seat's latest accepted final checkpoint (its private state).
        rounds: the `RoundResult` of every earlier round, in order.
        jobs: round -> seat -> the contribution job that round counted or left out.
    """

    round: int
    state: OuterState
    seat_finals: dict[int, bytes]
    rounds: list[RoundResult] = field(default_factory=list)
    jobs: dict[int, dict[int, int]] = field(default_factory=dict)


def contribution_jobs(client: Any, run: RunSpec, before_round: int) -> dict[int, dict[int, int]]:
    """The contribution jobs that count for rounds before `before_round`.

    A job is contribution (round, seat) of `run` when its model is the run's and its specHash is
    `run.contribution_spec_hash(round, seat)` (which binds the run, the round and the seat).
    Round t is closed by the first contribution job of a later round to be posted: a round-t
    job counts when it was finalized before that post (by chain order of `JobFinalized` and
    `JobPosted`), so the answer for a closed round never changes, however late another of its
    jobs finalizes. Of several such jobs for one seat, the lowest job id counts.

    Args:
        client: a `ChainClient`.
        run: the run.
        before_round: rounds 0 .. before_round - 1 are read.

    Returns:
        round -> seat -> job id.
    """
    model = run.inner.model_id_hash()
    mine: dict[int, tuple[int, int, JobStatus]] = {}  # job -> (round, seat, status)
    for job_id in range(1, client.jobs.job_count() + 1):
        job = client.jobs.get_job(job_id)
        uri = str(job.spec_uri)
        if bytes(job.model_id) != model or CONTRIBUTION_MARK not in uri:
            continue
        try:
            _, round_index, seat = parse_contribution_uri(uri)
        except VeritrainError:
            continue
        if seat >= run.seats or bytes(job.spec_hash) != run.contribution_spec_hash(
            round_index, seat
        ):
            continue
        mine[job_id] = (round_index, seat, JobStatus(int(job.status)))
    if not mine:
        return {}
    events = []
    latest = client.block_number()
    # public endpoints cap a query's block range
    for first in range(0, latest + 1, MAX_BLOCK_RANGE):
        events += client.event_logs(
            client.jobs.contract,
            ["JobPosted", "JobFinalized"],
            first,
            min(first + MAX_BLOCK_RANGE - 1, latest),
        )
    posted: dict[int, tuple[int, int]] = {}
    finalized: dict[int, tuple[int, int]] = {}
    for ev in events:
        job_id = int(ev.args["jobId"])
        if job_id in mine:
            (posted if ev.event == "JobPosted" else finalized)[job_id] = ev.position
    first_post: dict[int, tuple[int, int]] = {}  # round -> position of its first post
    for job_id, (round_index, _, _) in mine.items():
        if job_id in posted:
            at = posted[job_id]
            first_post[round_index] = min(first_post.get(round_index, at), at)
    closes: dict[int, tuple[int, int]] = {}  # round -> the first post of any later round
    for round_index in {r for r, _, _ in mine.values()}:
        later = [at for r, at in first_post.items() if r > round_index]
        if later:
            closes[round_index] = min(later)
    found: dict[int, dict[int, int]] = {}
    for job_id in sorted(mine):
        round_index, seat, status = mine[job_id]
        if round_index >= before_round or status is not JobStatus.Finalized:
            continue
        done = finalized.get(job_id)
        close = closes.get(round_index)
        if done is None or (close is not None and done > close):
            continue
        found.setdefault(round_index, {}).setdefault(seat, job_id)
    return found


def verified_final(
    client: Any, job_id: int, store: Any = None, http: Any = None, *, job: Any = None
) -> bytes:
    """The final checkpoint of a finalized job, proved against its on-chain Merkle root.

    Args:
        client: a `ChainClient`.
        job_id: the job.
        store: a `CheckpointStore` to look in first and to keep the bytes in (optional).
        http: an `httpx.Client` for the solver's server (optional).
        job: the job's view when the caller has read it already (else it is read here).

    Returns:
        The checkpoint bytes of step N.

    Raises:
        MerkleProofInvalid: the server's proof does not place its final state in the root.
        CheckpointUnavailable, CheckpointHashMismatch, RemoteResponseError: the solver's server
            does not serve the state.
    """
    from veritrain.merkle import verify_checkpoint
    from veritrain.wire import CheckpointClient

    if job is None:
        job = client.jobs.get_job(job_id)
    n, k = int(job.total_steps), int(job.checkpoint_interval)
    leaf = n // k
    server = CheckpointClient(client.jobs.checkpoint_url(job_id), http)
    proof = server.proof(leaf)
    final_hash = proof.state_hash_bytes()
    if not verify_checkpoint(proof.proof_bytes(), bytes(job.merkle_root), n, k, leaf, final_hash):
        raise MerkleProofInvalid(f"job {job_id}: the final state's proof is not in the root")
    if store is not None and store.has(final_hash):
        return bytes(store.get(final_hash))
    blob = server.checkpoint(n, final_hash)
    if store is not None:
        store.put(blob)
    return bytes(blob)


def run_state(
    client: Any,
    run: RunSpec,
    round_index: int,
    start: bytes,
    *,
    store: Any = None,
    http: Any = None,
) -> RunState:
    """Rebuild a run's state at the start of `round_index` from the chain.

    Args:
        client: a `ChainClient`.
        run: the run.
        round_index: t >= 0.
        start: the run's outer state 0 (`veritrain.runsim.pretrained_start(run, 0)` for a run
            from the seed-initialised weights).
        store: a `CheckpointStore` for the final states (optional).
        http: an `httpx.Client` (optional).

    Returns:
        The `RunState` of round t.

    Raises:
        MerkleProofInvalid, CheckpointUnavailable, CheckpointHashMismatch,
        RemoteResponseError: a counted job's final state cannot be fetched and proved (the run
            cannot go on until its solver serves it).
    """
    jobs = contribution_jobs(client, run, round_index)
    state = OuterState.from_bytes(start)
    finals: dict[int, bytes] = {}
    results = []
    for t in range(round_index):
        contributions = {}
        for seat, job_id in sorted(jobs.get(t, {}).items()):
            job = client.jobs.get_job(job_id)  # one read for its initHash and its root
            final = verified_final(client, job_id, store, http, job=job)
            contributions[seat] = (bytes(job.init_hash), final)
        result = advance_round(run, state, finals, contributions)
        state, finals = result.state, result.seat_finals
        results.append(result)
    return RunState(round_index, state, finals, results, jobs)


def post_round(
    client: Any,
    run: RunSpec,
    run_uri: str,
    round_index: int,
    start: bytes,
    *,
    reward: int,
    seats: list[int] | None = None,
    store: Any = None,
    http: Any = None,
) -> list[int]:
    """Post a round's contribution jobs (the model's owner or an authorised poster).

    Each job's spec is `contribution_uri(run_uri, round, seat)` with specHash
    `run.contribution_spec_hash(round, seat)`, and its initHash the state hash of
    `contribution_init(global state of the round, the seat's latest accepted final)`, rebuilt
    from the chain (`run_state`) exactly as the seated solver will rebuild it; a solver that
    computes another start refuses the job. Post a round once the previous one has settled.

    Args:
        client: the poster's `ChainClient`.
        run: the run.
        run_uri: where every node reads the run's canonical JSON (`RunSpec.to_data_uri()`,
            `file://` or `http(s)://`), without a fragment.
        round_index: t.
        start: the run's outer state 0.
        reward: each solver's reward (wei).
        seats: which seats (default: all).
        store, http: as in `run_state`.

    Returns:
        The posted job ids, in seat order.

    Raises:
        SpecError: a seat or round outside the run, or a run URI with a fragment.
        ChainError: a post reverts (the jobs posted before it stay posted).
        MerkleProofInvalid, CheckpointUnavailable, ...: as in `run_state`.
    """
    from veritrain.diloco import contribution_init, contribution_uri
    from veritrain.state import state_hash

    chosen = list(range(run.seats)) if seats is None else sorted(set(seats))
    for seat in chosen:
        run.contribution_spec(round_index, seat)  # raises SpecError outside the run
    state = run_state(client, run, round_index, start, store=store, http=http)
    g = state.state.to_bytes()
    posted = []
    for seat in chosen:
        init = contribution_init(g, state.seat_finals.get(seat))
        receipt = client.jobs.post_job(
            run.inner.model_id_hash(),
            run.contribution_spec_hash(round_index, seat),
            state_hash(init),
            run.inner_steps,
            run.inner.checkpoint_interval,
            reward,
            contribution_uri(run_uri, round_index, seat),
        )
        posted.append(int(client.job_id_from(receipt)))
    return posted
