"""A run's rounds as the chain records them: the `RunRegistry`'s registered contribution jobs,
their final states, the round claims, and the global state every party computes from them
(docs/RUNS.md, section 3).

A round's result (the outer state t + 1 and the seats it counts) is a pure function of public
facts: which registered contribution jobs were finalized, their initHashes and their committed
final states (`veritrain.diloco.advance_round`). Any account proposes it on chain with a bond;
anyone who computes another result challenges it, and the arbitration committee, whose members
compute it again here (`judge_round_claim`), rules. The final states come from the solvers'
checkpoint servers, each proved against its job's on-chain Merkle root before it is used.

Run: not a script; `from noderuntime.runs import run_state`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from chain.contracts.runs import seat_mask
from noderuntime.mirror import MirrorClient, StateMirror, fetch_from_holders
from veritrain.diloco import (
    OuterState,
    RoundResult,
    RunSpec,
    advance_round,
    contribution_init,
    contribution_uri,
    load_contribution,
)
from veritrain.enums import JobStatus, RunRoundPhase
from veritrain.errors import (
    CheckpointHashMismatch,
    CheckpointUnavailable,
    MerkleProofInvalid,
    RemoteResponseError,
    VeritrainError,
)
from veritrain.hexutil import to_hex
from veritrain.state import state_hash
from veritrain.units import utc_time

__all__ = [
    "RoundNotReady",
    "RunMismatch",
    "SeatAlreadyPosted",
    "RunState",
    "contribution_jobs",
    "find_run",
    "judge_round_claim",
    "open_run",
    "post_round",
    "round_claim",
    "run_of_dispute",
    "OPEN_ENDED_ROUNDS",
    "chain_rounds",
    "run_spec_of",
    "run_start",
    "run_state",
    "verified_final",
]

#: Statuses after which a job never changes again (a round can be proposed once all are).
TERMINAL = frozenset(
    {JobStatus.Finalized, JobStatus.Rejected, JobStatus.Cancelled, JobStatus.Expired}
)
UNAVAILABLE_WHY = "its final state is not available"
"""How `RoundResult.excluded` says a seat was left out because nobody served its final."""
#: What an unavailable final state raises (its seat is left out of a proposed round).
UNAVAILABLE = (
    CheckpointUnavailable,
    CheckpointHashMismatch,
    RemoteResponseError,
    MerkleProofInvalid,
)


#: The on-chain round count of an open-ended run (`RunSpec.rounds` None): the most the
#: `RunRegistry` stores (R packs into 24 bits; `openRun` refuses more).
OPEN_ENDED_ROUNDS = 2**24 - 1


def chain_rounds(run: RunSpec) -> int:
    """R as the `RunRegistry` records it (`OPEN_ENDED_ROUNDS` for an open-ended run)."""
    return OPEN_ENDED_ROUNDS if run.rounds is None else run.rounds


ENDED_UNPAID = frozenset({JobStatus.Rejected, JobStatus.Cancelled, JobStatus.Expired})
"""Statuses of a job that ended without paying for its training: its training key is free again
(`ShareRegistry._endedUnpaid`)."""

#: (Merkle root, N, k) -> the final state hash a proof placed in that root (this process).
_PROVEN: dict[tuple[bytes, int, int], bytes] = {}


class RoundNotReady(VeritrainError):
    """A run's round cannot be worked on yet: the run is not opened, the round not reached or
    its jobs not settled, or a job not registered yet. Try again later."""


class SeatAlreadyPosted(VeritrainError):
    """A seat of a round already has its contribution job (`RunRegistry.SeatTaken`), or its
    training was already posted as a job that is live or paid
    (`ShareRegistry.TrainingAlreadyPosted`): posting it again would revert."""


class RunMismatch(VeritrainError):
    """The chain's final round claims disagree with this node's own computation of the run."""


@dataclass
class RunState:
    """A run at the start of a round, rebuilt from the chain.

    Attributes:
        round: t, the round the state starts.
        state: the outer state t (global parameters and momentum).
        seat_finals: each seat's latest accepted final checkpoint (its private state).
        rounds: the `RoundResult` of every earlier round, in order.
        jobs: round -> seat -> the registered contribution job of that round.
        run_id: the run's `RunRegistry` id.
        withheld: seat -> why its latest accepted final is served by no holder: the seat's
            prescribed start is unknown, so it is not posted, trained or judged until someone
            serves that state again (docs/RUNS.md, "A leaver's counted state").
    """

    round: int
    state: OuterState
    seat_finals: dict[int, bytes]
    rounds: list[RoundResult] = field(default_factory=list)
    jobs: dict[int, dict[int, int]] = field(default_factory=dict)
    run_id: int = 0
    withheld: dict[int, str] = field(default_factory=dict)

    def seat_start(self, seat: int) -> bytes:
        """The prescribed initial state of `seat`'s contribution in this round:
        `contribution_init(global state, the seat's latest accepted final)`.

        Raises:
            CheckpointUnavailable: the seat's latest accepted final is withheld (`withheld`).
        """
        if seat in self.withheld:
            raise CheckpointUnavailable(
                f"run {self.run_id} round {self.round}: seat {seat}'s start cannot be built: "
                f"{self.withheld[seat]}"
            )
        return contribution_init(self.state.to_bytes(), self.seat_finals.get(seat))


def find_run(client: Any, run: RunSpec) -> Any:
    """The on-chain `RunView` of `run` (looked up by its runHash).

    Raises:
        RoundNotReady: no run with this runHash was opened.
        RunMismatch: the opened run's model, seats, rounds or H differ from the spec.
    """
    run_id = client.runs.run_id_of(run.run_hash())
    if run_id == 0:
        raise RoundNotReady(f"run {to_hex(run.run_hash())} is not opened on chain")
    view = client.runs.get_run(run_id)
    expected = (run.inner.model_id_hash(), run.seats, chain_rounds(run), run.inner_steps)
    if (view.model_id, view.seats, view.rounds, view.inner_steps) != expected:
        raise RunMismatch(f"run {run_id} on chain does not match its spec")
    return view


def run_start(run: RunSpec, start_hash: bytes, store: Any = None) -> bytes:
    """The run's outer state 0, by its on-chain hash.

    The seed-initialised weights (`veritrain.runsim.pretrained_start(run, 0)`) when they hash to
    `start_hash`, else the state of that hash in `store`.

    Raises:
        CheckpointUnavailable: neither has the state.
    """
    from veritrain.runsim import pretrained_start

    start = pretrained_start(run, 0)
    if state_hash(start) == bytes(start_hash):
        return start
    if store is not None and store.has(bytes(start_hash)):
        return bytes(store.get(bytes(start_hash)))
    raise CheckpointUnavailable(
        f"the run's start state {to_hex(bytes(start_hash))} is not the seed-initialised one "
        "and is not in this node's store"
    )


def contribution_jobs(client: Any, run_id: int, before_round: int) -> dict[int, dict[int, int]]:
    """The registered contribution jobs of rounds 0 .. before_round - 1.

    Args:
        client: a `ChainClient`.
        run_id: the run's `RunRegistry` id.
        before_round: rounds before it are read.

    Returns:
        round -> seat -> job id (rounds with none are left out).
    """
    found: dict[int, dict[int, int]] = {}
    for t in range(before_round):
        jobs = client.runs.contributions(run_id, t)
        if jobs:
            found[t] = jobs
    return found


def verified_final(
    client: Any,
    job_id: int,
    store: Any = None,
    http: Any = None,
    *,
    job: Any = None,
    mirrors: Sequence[str] = (),
) -> bytes:
    """The final checkpoint of a finalized job, proved against its on-chain Merkle root.

    The proof and the bytes are asked of the job's solver first, then of each mirror in
    `mirrors` (`noderuntime.mirror`); the first proof that places a state in the root and the
    first bytes of that state's hash are taken, whoever serves them.

    Args:
        client: a `ChainClient`.
        job_id: the job.
        store: a `CheckpointStore` to look in first and to keep the bytes in (optional); a
            `StateMirror` also keeps the proof, so that this node serves both.
        http: an `httpx.Client` for the holders (optional).
        job: the job's view when the caller has read it already (else it is read here).
        mirrors: base URLs of the other holders, tried after the solver.

    Returns:
        The checkpoint bytes of step N. A final state this node proved once and `store`
        holds is returned without asking anyone again.

    Raises:
        MerkleProofInvalid: the solver's proof does not place its final state in the root (no
            mirror given).
        CheckpointUnavailable, CheckpointHashMismatch, RemoteResponseError: no holder serves
            the state (with no mirror, the solver's own error).
    """
    from veritrain.merkle import verify_checkpoint
    from veritrain.wire import CheckpointClient, ProofResponse

    if job is None:
        job = client.jobs.get_job(job_id)
    n, k = int(job.total_steps), int(job.checkpoint_interval)
    leaf, root = n // k, bytes(job.merkle_root)
    proven = _PROVEN.get((root, n, k))
    if proven is None and isinstance(store, StateMirror):
        kept = store.proof_of(root, leaf)
        if kept is not None and verify_checkpoint(
            kept.proof_bytes(), root, n, k, leaf, kept.state_hash_bytes()
        ):
            proven = kept.state_hash_bytes()
    if proven is not None and store is not None and store.has(proven):
        return bytes(store.get(proven))  # proved once already: its solver need not be up
    solver = CheckpointClient(client.jobs.checkpoint_url(job_id), http)
    holders = [MirrorClient(url, http) for url in mirrors]

    def proved(proof: ProofResponse) -> ProofResponse:
        if not verify_checkpoint(proof.proof_bytes(), root, n, k, leaf, proof.state_hash_bytes()):
            raise MerkleProofInvalid(f"job {job_id}: the final state's proof is not in the root")
        return proof

    def mirrored(mirror: MirrorClient) -> ProofResponse:
        return proved(mirror.proof_in(root, leaf))

    proofs: list[tuple[str, Callable[[], ProofResponse]]] = [
        ("its solver", lambda: proved(solver.proof(leaf)))
    ]
    proofs += [(m.base_url, partial(mirrored, m)) for m in holders]
    proof = fetch_from_holders(f"job {job_id}'s final proof", proofs)
    final_hash = proof.state_hash_bytes()
    _PROVEN[(root, n, k)] = final_hash
    if isinstance(store, StateMirror):
        store.keep_proof(root, proof)
    if store is not None and store.has(final_hash):
        return bytes(store.get(final_hash))
    states: list[tuple[str, Callable[[], bytes]]] = [
        ("its solver", lambda: solver.checkpoint(n, final_hash))
    ]
    states += [(m.base_url, partial(m.state_by_hash, final_hash)) for m in holders]
    blob = fetch_from_holders(f"job {job_id}'s final state", states)
    if store is not None:
        store.put(blob)
    return bytes(blob)


def _contributions(
    client: Any,
    jobs: dict[int, int],
    seats: list[int] | None,
    store: Any,
    http: Any,
    unavailable: dict[int, str] | None,
    mirrors: Sequence[str] = (),
) -> dict[int, tuple[bytes, bytes]]:
    """seat -> (initHash, proved final) of the Finalized jobs among `jobs` (only `seats` when
    given), each fetched from its solver, then from `mirrors`. A final that no holder serves
    raises, or, with `unavailable`, is recorded there."""
    out = {}
    for seat, job_id in sorted(jobs.items()):
        if seats is not None and seat not in seats:
            continue
        job = client.jobs.get_job(job_id)  # one read for its status, initHash and root
        if JobStatus(int(job.status)) is not JobStatus.Finalized:
            continue
        try:
            final = verified_final(client, job_id, store, http, job=job, mirrors=mirrors)
        except UNAVAILABLE as exc:
            if unavailable is None:
                raise
            unavailable[seat] = f"{UNAVAILABLE_WHY}: {exc}"
            continue
        out[seat] = (bytes(job.init_hash), final)
    return out


def run_state(
    client: Any,
    run: RunSpec,
    round_index: int,
    start: bytes | None = None,
    *,
    store: Any = None,
    http: Any = None,
    mirrors: Sequence[str] = (),
) -> RunState:
    """Rebuild a run's state at the start of `round_index` from its final round claims.

    Each earlier round must be final on chain. Its counted seats' final states are fetched (from
    each job's solver, then from `mirrors`) and proved, `advance_round` is applied to them, and
    the result must count every one of them and give the claim's state hash (else
    `RunMismatch`: this node cannot follow that chain).

    A counted final that no holder serves does not stop the run (docs/RUNS.md, "A leaver's
    counted state"): the round's outer state is then taken by the final claim's state hash
    from `store` or a mirror, and the seat is marked `withheld` (its start is unknown until
    someone serves that final again).

    Args:
        client: a `ChainClient`.
        run: the run.
        round_index: t >= 0.
        start: the run's outer state 0 (default: `run_start` of the on-chain start hash).
        store: a `CheckpointStore` for the final states (optional); a `StateMirror` also keeps
            each round's outer state, so that this node serves it.
        http: an `httpx.Client` (optional).
        mirrors: base URLs of the holders tried after each job's solver.

    Returns:
        The `RunState` of round t.

    Raises:
        RoundNotReady: the run is not opened or a round before t is not final yet.
        RunMismatch: a final claim disagrees with this computation, or `start` is not the run's.
        CheckpointUnavailable: a counted final and the round's outer state are both served by
            no holder.
        MerkleProofInvalid, CheckpointHashMismatch, RemoteResponseError: a counted job's final
            state cannot be fetched and proved (its solver's error, without mirrors).
    """
    view = find_run(client, run)
    if start is None:
        start = run_start(run, view.start_hash, store)
    state = OuterState.from_bytes(start)
    if state.state_hash() != view.start_hash:
        raise RunMismatch(f"run {view.run_id}: the given start is not the run's start state")
    jobs = contribution_jobs(client, view.run_id, round_index)
    finals: dict[int, bytes] = {}
    withheld: dict[int, str] = {}
    tolerant = bool(mirrors) or isinstance(store, StateMirror)  # someone may hold the state
    results = []
    for t in range(round_index):
        claim = client.runs.get_round(view.run_id, t)
        if claim.phase is not RunRoundPhase.Final:
            raise RoundNotReady(f"run {view.run_id}: round {t} is not final yet")
        counted = claim.seats(claim.accepted)
        missing: dict[int, str] = {}
        contributions = _contributions(
            client, jobs.get(t, {}), counted, store, http, missing if tolerant else None, mirrors
        )
        lost = {seat: why for seat, why in missing.items() if seat in counted}
        if lost or any(seat in withheld for seat in counted):
            result = _taken_from_holders(
                view.run_id, t, claim, counted, contributions, finals, lost, store, http, mirrors
            )
            withheld.update({s: f"round {t}'s counted final: {why}" for s, why in lost.items()})
        else:
            result = advance_round(run, state, finals, contributions)
            if result.accepted != counted or result.state.state_hash() != claim.state_hash:
                raise RunMismatch(
                    f"run {view.run_id}: round {t}'s final claim (seats {counted}, state "
                    f"{to_hex(claim.state_hash)}) is not what this node computes (seats "
                    f"{result.accepted}, state {to_hex(result.state.state_hash())})"
                )
            _keep(store, result.state)
        for seat in contributions:
            withheld.pop(seat, None)  # counted again: its latest final is known
        state, finals = result.state, result.seat_finals
        results.append(result)
    return RunState(round_index, state, finals, results, jobs, view.run_id, withheld)


def _keep(store: Any, state: OuterState) -> None:
    """Keep an outer state this node computed or checked, when its store is a mirror."""
    if isinstance(store, StateMirror):
        store.keep(state.to_bytes())


def _taken_from_holders(
    run_id: int,
    t: int,
    claim: Any,
    counted: list[int],
    contributions: dict[int, tuple[bytes, bytes]],
    finals: dict[int, bytes],
    lost: dict[int, str],
    store: Any,
    http: Any,
    mirrors: Sequence[str],
) -> RoundResult:
    """Round t's result when a counted final (or a counted seat's start) is not available to
    this node: the outer state is the one of the final claim's state hash, from `store` or a
    mirror; the counted seats whose finals it holds carry them, the others lose theirs.

    Raises:
        CheckpointUnavailable: no holder serves the outer state either.
    """
    wanted = bytes(claim.state_hash)
    attempts: list[tuple[str, Callable[[], bytes]]] = []
    if store is not None and store.has(wanted):
        attempts.append(("this node's store", partial(store.get, wanted)))
    attempts += [(url, partial(MirrorClient(url, http).state_by_hash, wanted)) for url in mirrors]
    seats = ", ".join(str(s) for s in sorted(lost)) or "none"
    if not attempts:
        raise CheckpointUnavailable(
            f"run {run_id} round {t}: the counted final of seat(s) {seats} is served by no "
            f"holder, and no holder is configured for the round's outer state {to_hex(wanted)}"
        )
    try:
        blob = fetch_from_holders(f"run {run_id} round {t}'s outer state", attempts)
    except CheckpointUnavailable as exc:
        raise CheckpointUnavailable(
            f"run {run_id} round {t}: the counted final of seat(s) {seats} and the round's "
            f"outer state {to_hex(wanted)} are served by no holder: the run cannot go on until "
            f"one serves them ({exc})"
        ) from exc
    state = OuterState.from_bytes(blob)
    _keep(store, state)
    carried = dict(finals)
    for seat in counted:
        carried.pop(seat, None)
        if seat in contributions:
            carried[seat] = contributions[seat][1]
    return RoundResult(state, carried, list(counted), {}, {}, {})


def round_claim(
    client: Any,
    run: RunSpec,
    round_index: int | None = None,
    *,
    store: Any = None,
    http: Any = None,
    settled: bool = True,
    state: RunState | None = None,
    mirrors: Sequence[str] = (),
) -> tuple[RunState, RoundResult]:
    """What the claim of a round must say: `advance_round` over its registered jobs.

    Every Finalized registered job whose final state can be fetched and proved is considered
    (one that cannot is left out: whoever withholds its data loses its seat); the rule then
    counts those that started from the prescribed state with a finite pseudo-gradient.

    Args:
        client: a `ChainClient`.
        run: the run.
        round_index: t (default: the run's current round).
        store, http, mirrors: as in `run_state`.
        settled: require the round's registration closed (every seat registered, or its
            deadline passed) and every registered job terminal (as `proposeRound` does); False
            to judge a claim already proposed.
        state: the run's `RunState` at t when the caller has it (else rebuilt here).

    Returns:
        (the run's state at t, the round's `RoundResult`: ``accepted`` and ``state`` are the
        claim; ``excluded`` says why each other Finalized seat is left out).

    Raises:
        RoundNotReady: the run has ended, or (`settled`) the round's registration is open or
            a registered job is still running.
        CheckpointUnavailable: a registered seat is withheld (`RunState.withheld`): its
            contribution cannot be judged until someone serves the seat's latest final.
        RunMismatch, CheckpointUnavailable, ...: as in `run_state` for the earlier rounds.
    """
    view = find_run(client, run)
    t = view.round if round_index is None else round_index
    if t >= view.rounds:
        raise RoundNotReady(f"run {view.run_id} has ended")
    jobs = client.runs.contributions(view.run_id, t)
    if settled and len(jobs) < view.seats:
        # Registration closes when every seat is registered or at its deadline, never by a
        # proposal (proposeRound refuses before, docs/SECURITY.md P-28).
        deadline = int(client.runs.registration_deadline(view.run_id, t))
        if int(client.timestamp()) <= deadline:
            raise RoundNotReady(
                f"run {view.run_id} round {t}: registration is open until {utc_time(deadline)} "
                f"UTC ({len(jobs)} of {view.seats} seats registered)"
            )
    if settled:
        for seat, job_id in sorted(jobs.items()):
            status = JobStatus(int(client.jobs.get_job(job_id).status))
            if status not in TERMINAL:
                raise RoundNotReady(
                    f"run {view.run_id} round {t}: seat {seat}'s job {job_id} is {status.name}"
                )
    if state is None or state.round != t or state.run_id != view.run_id:
        state = run_state(client, run, t, store=store, http=http, mirrors=mirrors)
    for seat in sorted(jobs):
        if seat in state.withheld:  # its prescribed start is unknown here: nothing to judge by
            raise CheckpointUnavailable(
                f"run {view.run_id} round {t}: seat {seat} is registered, but its start cannot "
                f"be built: {state.withheld[seat]}"
            )
    unavailable: dict[int, str] = {}
    contributions = _contributions(client, jobs, None, store, http, unavailable, mirrors)
    result = advance_round(run, state.state, state.seat_finals, contributions)
    result.excluded.update(unavailable)
    _keep(store, result.state)
    return state, result


def run_spec_of(client: Any, run_id: int, up_to_round: int | None = None) -> RunSpec:
    """A run's spec, read from one of its registered contribution jobs' spec URI (checked
    against the job's specHash and the registry's runHash).

    Args:
        client: a `ChainClient`.
        run_id: the run's `RunRegistry` id.
        up_to_round: the latest round to look in (default: the run's current round).

    Raises:
        RoundNotReady: no registered job of the run names its spec yet.
    """
    view = client.runs.get_run(run_id)
    last = min(view.round if up_to_round is None else up_to_round, view.rounds - 1)
    for r in range(last, -1, -1):
        for job_id in client.runs.contributions(run_id, r).values():
            job = client.jobs.get_job(job_id)
            try:
                run, _, _ = load_contribution(str(job.spec_uri), bytes(job.spec_hash))
            except VeritrainError:
                continue
            if run.run_hash() == view.run_hash:
                return run
    raise RoundNotReady(f"run {run_id}: no registered job names the run's spec yet")


def run_of_dispute(client: Any, dispute_id: int) -> tuple[RunSpec, int] | None:
    """The run and round a committee dispute judges, or None for a job's dispute.

    Raises:
        RoundNotReady: no registered job of the run names its spec.
    """
    run_id, t = client.runs.claim_of(dispute_id)
    if run_id == 0:
        return None
    return run_spec_of(client, run_id, t), t


def judge_round_claim(
    client: Any,
    dispute_id: int,
    *,
    store: Any = None,
    http: Any = None,
    mirrors: Sequence[str] = (),
) -> bool | None:
    """A committee member's vote on a round claim: True when the claim is what this node
    computes (same counted seats, same state hash), False otherwise, None when the dispute is
    not a round claim.

    Raises:
        RoundNotReady, RunMismatch, CheckpointUnavailable, ...: the run cannot be rebuilt.
    """
    found = run_of_dispute(client, dispute_id)
    if found is None:
        return None
    run, t = found
    view = find_run(client, run)
    claim = client.runs.get_round(view.run_id, t)
    _, result = round_claim(client, run, t, store=store, http=http, settled=False, mirrors=mirrors)
    return bool(
        claim.accepted == seat_mask(result.accepted)
        and claim.state_hash == result.state.state_hash()
    )


def open_run(client: Any, run: RunSpec, start: bytes, run_uri: str | None = None) -> int:
    """Open `run` on chain (its model's owner or an authorised poster); returns its run id.

    Args:
        client: the opener's `ChainClient`.
        run: the run.
        start: its outer state 0 (bytes of an `OuterState`).
        run_uri: where every node reads the run's canonical JSON (`file://`, `http(s)://`, or
            by default `RunSpec.to_data_uri()`), without a fragment: published once in
            ``RunOpened``; each contribution's spec is resolved from it by (round, seat)
            (`chain.contracts.runs.RunsFacade.contribution_spec_uri`) and checked against
            the job's spec hash.

    Raises:
        SpecError: a run URI with a fragment.
        ChainError: the open reverts (not a poster, runHash taken, bad seats/rounds).
    """
    uri = run.to_data_uri() if run_uri is None else run_uri
    contribution_uri(uri, 0, 0)  # raises SpecError for a URI with a fragment
    receipt = client.runs.open_run(
        run.inner.model_id_hash(),
        run.run_hash(),
        OuterState.from_bytes(start).state_hash(),
        run.seats,
        chain_rounds(run),
        run.inner_steps,
        uri,
    )
    return int(client.runs.run_id_from(receipt))


def post_round(
    client: Any,
    run: RunSpec,
    round_index: int | None = None,
    start: bytes | None = None,
    *,
    reward: int,
    seats: list[int] | None = None,
    store: Any = None,
    http: Any = None,
    mirrors: Sequence[str] = (),
) -> list[int]:
    """Post and register a round's contribution jobs (the model's owner or an authorised poster).

    Each job's spec is the run's (published at `open_run`) at (round, seat): its specHash is
    `run.contribution_spec_hash(round, seat)` and it carries no URI of its own. Its initHash is
    the state hash of `contribution_init(global state of the round, the seat's latest accepted
    final)`, rebuilt from the chain's final claims (`run_state`) exactly as the seated solver
    will rebuild it.
    Each job is posted and registered in one transaction (`RunRegistry.postContribution`), so
    it is a contribution from its post and never a lineage job (docs/SECURITY.md P-29). The
    round's registration closes when its last seat is registered; no claim can be proposed
    before (P-28), so a round posted in batches keeps every seat.

    Args:
        client: the poster's `ChainClient`.
        run: the run (opened on chain).
        round_index: t (default: the run's current round).
        start: the run's outer state 0 (default: from the on-chain start hash).
        reward: each solver's reward (wei).
        seats: which seats (default: every seat not registered yet whose start can be built:
            a seat whose latest accepted final no holder serves is left out,
            `RunState.withheld`; so a round posted in part is completed, never posted twice).
        store, http, mirrors: as in `run_state`.

    Returns:
        The posted job ids, in seat order.

    Raises:
        SpecError: a seat or round outside the run.
        RoundNotReady: the run is not opened, or round t is not the run's current round.
        SeatAlreadyPosted: a chosen seat is already registered in round t, or its training
            (model, start state, spec hash) is already a live or paid job; checked for every
            seat before the first post, so nothing is posted.
        ChainError: a post reverts (what was done before it stays done).
        MerkleProofInvalid, CheckpointUnavailable, ...: as in `run_state`, or a chosen seat's
            start cannot be built (`RunState.seat_start`).
    """
    view = find_run(client, run)
    t = view.round if round_index is None else round_index
    if t != view.round:
        raise RoundNotReady(f"run {view.run_id}: the current round is {view.round}, not {t}")
    chosen = list(range(run.seats)) if seats is None else sorted(set(seats))
    for seat in chosen:
        run.contribution_spec(t, seat)  # raises SpecError outside the run
    state = run_state(client, run, t, start, store=store, http=http, mirrors=mirrors)
    if seats is None:
        taken = client.runs.contributions(view.run_id, t)
        chosen = [seat for seat in chosen if seat not in state.withheld and seat not in taken]
    inits = {seat: state_hash(state.seat_start(seat)) for seat in chosen}
    for seat in chosen:
        _check_unposted(client, run, view.run_id, t, seat, inits[seat])
    posted = []
    for seat in chosen:
        receipt = client.runs.post_contribution(
            view.run_id,
            seat,
            inits[seat],
            run.inner.checkpoint_interval,
            reward,
        )
        posted.append(int(client.runs.job_id_from(receipt)))
    return posted


def _check_unposted(client: Any, run: RunSpec, run_id: int, t: int, seat: int, init: bytes) -> None:
    """Refuse a seat whose post would revert ``SeatTaken`` or ``TrainingAlreadyPosted``.

    Raises:
        SeatAlreadyPosted: the seat has its job in round t, or the same training (model, start
            state `init`, the seat's spec hash) is a job not ended unpaid (`ENDED_UNPAID`).
    """
    taken = int(client.runs.contribution_of(run_id, t, seat))
    if taken:
        raise SeatAlreadyPosted(
            f"seat {seat} of round {t} of run {run_id} is already posted as job {taken}: "
            "post the other seats with --seat"
        )
    twin = int(
        client.shares.training_job_of(
            run.inner.model_id_hash(), init, run.contribution_spec_hash(t, seat)
        )
    )
    if twin and JobStatus(int(client.jobs.get_job(twin).status)) not in ENDED_UNPAID:
        raise SeatAlreadyPosted(
            f"seat {seat} of round {t} of run {run_id} is already posted as job {twin} (the same "
            "training, live or paid): it cannot be posted again while that job stands"
        )
