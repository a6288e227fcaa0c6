"""The solver aggregates its job's seals and reveals: one ``revealVerdictsSigned`` per job
(every seat's seal and opening at once, docs/SECURITY.md P-40), or one ``commitVerdictsFor``
and one ``revealVerdictsFor``, instead of one ``commitVerdicts`` and one ``revealVerdicts`` per
seat (docs/FORCED_ERRORS.md section 2; the seats pay no gas for their verdicts).

Routes, under the job's ``checkpointURL`` (``/jobs/{job_id}``; `mount_aggregation` adds them to
the checkpoint server):

- `POST /jobs/{job_id}/seals` (`veritrain.wire.SealHandOff`): a seat's EIP-712 seal
  (`chain.seals`). Accepted when the job is one this solver serves and is Verifying, the
  verifier holds a seat of it, has neither sealed nor revealed on chain, and signed the seal
  itself (``client.round.seal_signer``): a bad seal is refused here, never put in a batch it
  would revert.
- `GET /jobs/{job_id}/seals` (`veritrain.wire.SealSet`): the seals pending here. A seat opens
  its seal to the solver only once this shows every seat's, each signed by its seat, and keeps
  them: a seat that signs a second seal after seeing the opened ends is slashed on proof of both
  (``proveEquivocation``), so no seat can copy another's ends through this solver.
- `POST /jobs/{job_id}/reveals` (`veritrain.wire.RevealHandOff`): a seat's sealed ends and salt.
  Accepted when they open the seat's seal (on chain, or pending here), it has not revealed, and
  the seat's free verifier stake covers the reject bonds it books, which the JobManager locks
  from that stake (the contract skips a seat short of them in ``revealVerdictsFor``,
  docs/SECURITY.md P-38, and ``revealVerdictsSigned`` would revert).

Both answer `veritrain.wire.HandOffAccepted`, or a 4xx with one line (400 malformed or not
opening the seal, 403 not a seat, 404 a job not served here, 409 too late or too early, 413 a
body over `veritrain.wire.MAX_HANDOFF_BYTES`, 429 too many pending entries) and 503 while the
chain cannot be read; never a 500.

The duty (`SealAggregator.flush`, run by the solver each round for each Verifying job):

1. when no seat has sealed on chain and every seat's seal and reveal are pending, by the verdict
   deadline: ``revealVerdictsSigned`` (one transaction for the whole round);
2. else ``commitVerdictsFor`` with the pending seals `HANDOFF_WAIT` before the seats' own
   fallback (`veritrain.wire.hand_off_cutoff`, a third of the verdict window left): sealing
   earlier opens the reveal window no sooner unless every seat sealed, which is the one-shot
   case. Once some seat sealed on chain (no one-shot is possible) the seals go when every open
   seat's is pending, or after half of `HANDOFF_WAIT`;
3. then ``revealVerdictsFor`` once the reveal window is open, on the same rule.

Entries of seats the chain shows done are dropped (the contract skips a seat that sealed or
revealed itself, so such a race costs nothing).

Pending entries live in memory only: a restarted solver forgets them, and their seats fall back
to their own transactions after `HANDOFF_WAIT`; nothing of safety rests on the aggregator.

Run: not a script; ``mount_aggregation(app, SealAggregator(client, serves=...))``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from chain.seals import SignedReveal, SignedSeal
from noderuntime.ports import ChainPort
from veritrain.commitments import verdict_commitment
from veritrain.enums import JobStatus, Role
from veritrain.forced import bonded_rejects, reveal_bond
from veritrain.hexutil import as_bytes32, from_hex, to_hex
from veritrain.units import vtt
from veritrain.wire import (
    HANDOFF_WAIT,
    MAX_HANDOFF_BYTES,
    HandOffAccepted,
    RevealHandOff,
    SealHandOff,
    SealSet,
    hand_off_cutoff,
)

if TYPE_CHECKING:
    from noderuntime.core import NodeCore

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_PENDING_PER_JOB",
    "HandOffRefused",
    "SealAggregator",
    "mount_aggregation",
]


MAX_PENDING_PER_JOB = 64
"""The most pending seals (and, apart, reveals) one job holds: only seats are accepted, so this
bounds memory against a deployment with many seats, not a spammer (who holds no seat)."""

ZERO32 = b"\x00" * 32


class HandOffRefused(Exception):
    """A hand-off the aggregator does not take: an HTTP status (4xx) and one line why."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass
class _Pending:
    """One job's pending entries, by seat address (lower case): (entry, clock when taken,
    seconds)."""

    seals: dict[str, tuple[SignedSeal, float]] = field(default_factory=dict)
    reveals: dict[str, tuple[tuple[str, list[bytes], bytes], float]] = field(default_factory=dict)


class SealAggregator:
    """A solver's pending seals and reveals, checked on arrival and submitted in batches.

    Thread-safe: the routes run on the server's threads, `flush` on the node's.

    Args:
        client: the solver's chain port (reads; `flush` sends through the node).
        serves: whether this solver serves a job (its checkpoint catalog has it); hand-offs of
            other jobs are refused with 404, so memory is bounded by the jobs it holds.
        wait: the seats' hand-off wait (seconds); a partial batch goes after half of it.
        max_pending: the most pending entries of one kind per job (`MAX_PENDING_PER_JOB`).
        clock: seconds; None: chain time (the latest block's timestamp), the clock the seats'
            own fallback runs on, so a partial batch always goes before they give up (a devnet
            chain clock may run ahead of the wall clock).
    """

    def __init__(
        self,
        client: ChainPort,
        *,
        serves: Callable[[int], bool],
        wait: float = HANDOFF_WAIT,
        max_pending: int = MAX_PENDING_PER_JOB,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.client = client
        self.serves = serves
        self.wait = wait
        self.max_pending = max_pending
        self.clock = clock or (lambda: float(client.timestamp()))
        self._lock = threading.Lock()
        self._jobs: dict[int, _Pending] = {}

    # ------------------------------------------------------------------------- intake
    def _seat_of(self, job_id: int, verifier: str) -> tuple[bytes, list[str]]:
        """The job's submission and seats, after the checks every hand-off shares.

        Raises:
            HandOffRefused: 404 a job not served here, 409 not Verifying, 403 not a seat.
        """
        if not self.serves(job_id):
            raise HandOffRefused(404, f"unknown job {job_id}: this solver does not serve it")
        job = self.client.jobs.get_job(job_id)
        if JobStatus(int(job.status)) is not JobStatus.Verifying:
            raise HandOffRefused(
                409, f"job {job_id} is {JobStatus(int(job.status)).name}, not Verifying"
            )
        seats = [str(v) for v in self.client.jobs.get_assignment(job_id).verifiers]
        if verifier.lower() not in (s.lower() for s in seats):
            raise HandOffRefused(403, f"{verifier} holds no seat of job {job_id}")
        return bytes(self.client.jobs.submission_of(job_id)), seats

    def _room(self, entries: dict[str, Any], verifier: str, job_id: int) -> None:
        if verifier.lower() not in entries and len(entries) >= self.max_pending:
            raise HandOffRefused(429, f"job {job_id} holds {len(entries)} pending entries")

    def accept_seal(self, job_id: int, body: SealHandOff) -> int:
        """Check a seat's seal and keep it for the next batch (a seat's newer seal replaces
        its older one).

        Returns:
            The job's pending seals.

        Raises:
            HandOffRefused: 404, 409 (not Verifying, or sealed on chain already), 403 (not a
                seat), 400 (a signature not the verifier's: it would revert the batch), 429.
        """
        sid, seats = self._seat_of(job_id, body.verifier)
        commitment = as_bytes32(body.commitment)
        signature = from_hex(body.signature)
        signer = self.client.round.seal_signer(sid, commitment, signature)
        if signer is None or signer.lower() != body.verifier.lower():
            raise HandOffRefused(
                400, f"the seal of job {job_id} is not signed by {body.verifier} (by {signer})"
            )
        sealed, revealed = self.client.round.verdict_commitment_of(sid, body.verifier)
        if bytes(sealed) != ZERO32 or revealed:
            raise HandOffRefused(409, f"{body.verifier} has sealed job {job_id} on chain already")
        seal = SignedSeal(body.verifier, commitment, signature)
        with self._lock:
            pending = self._jobs.setdefault(job_id, _Pending())
            self._room(pending.seals, body.verifier, job_id)
            pending.seals[body.verifier.lower()] = (seal, self.clock())
            return len(pending.seals)

    def accept_reveal(self, job_id: int, body: RevealHandOff) -> int:
        """Check that a seat's ends and salt open its seal (on chain, else the one pending
        here), and keep them.

        Returns:
            The job's pending reveals.

        Raises:
            HandOffRefused: 404, 409 (no seal on chain or pending, revealed already, or reject
                bonds not covered), 403, 400 (wrong number of ends, or they do not open the
                seal: the batch would revert), 429.
        """
        sid, _ = self._seat_of(job_id, body.verifier)
        sealed, revealed = self.client.round.verdict_commitment_of(sid, body.verifier)
        if revealed:
            raise HandOffRefused(409, f"{body.verifier} has revealed job {job_id} already")
        if bytes(sealed) == ZERO32:
            with self._lock:  # the seal this solver holds for the one-shot batch, if any
                held = self._jobs.get(job_id, _Pending()).seals.get(body.verifier.lower())
            if held is None:
                raise HandOffRefused(409, f"{body.verifier} has no seal of job {job_id} yet")
            sealed = held[0].commitment
        ends, salt = body.ends_bytes(), as_bytes32(body.salt)
        samples = len(self.client.round.claims_of(sid).end_hashes)
        if len(ends) != samples:
            raise HandOffRefused(400, f"{len(ends)} ends for the {samples} samples of job {job_id}")
        if verdict_commitment(job_id, body.verifier, ends, salt) != bytes(sealed):
            raise HandOffRefused(
                400, f"these ends and salt do not open {body.verifier}'s seal of job {job_id}"
            )
        self._require_bonds_covered(job_id, sid, body.verifier, ends)
        with self._lock:
            pending = self._jobs.setdefault(job_id, _Pending())
            self._room(pending.reveals, body.verifier, job_id)
            pending.reveals[body.verifier.lower()] = ((body.verifier, ends, salt), self.clock())
            return len(pending.reveals)

    def _require_bonds_covered(
        self, job_id: int, sid: bytes, verifier: str, ends: list[bytes]
    ) -> None:
        """Refuse a reveal whose reject bonds (`veritrain.forced.reveal_bond` of its
        `bonded_rejects`, locked from the seat's stake at the reveal) the seat's free verifier stake
        (``freeStake(verifier, Verifier)``) does not cover: ``revealVerdictsFor`` would skip it
        (docs/SECURITY.md P-38) and ``revealVerdictsSigned`` revert. Its wallet balance and
        Escrow allowance play no part.

        Raises:
            HandOffRefused: 409, with the bonds and the free stake in VTT.
        """
        own = self.client.jobs.sample_mask_of(job_id, verifier)
        rejects = bonded_rejects(ends, self.client.round.claims_of(sid).end_hashes, own)
        bond = reveal_bond(rejects, self.client.jobs.job_params().challenge_bond)
        if not bond:
            return
        free = self.client.stakes.free_stake(verifier, Role.Verifier)
        if free < bond:
            raise HandOffRefused(
                409,
                f"{verifier}'s reject bonds of job {job_id} ({vtt(bond)}) are not covered"
                f" by its free verifier stake ({vtt(free)})",
            )

    def seal_set(self, job_id: int) -> SealSet:
        """The seals pending for a job's next batch (`veritrain.wire.SealSet`), in arrival
        order; no chain read.

        Raises:
            HandOffRefused: 404 for a job this solver does not serve.
        """
        if not self.serves(job_id):
            raise HandOffRefused(404, f"unknown job {job_id}: this solver does not serve it")
        with self._lock:
            pending = self._jobs.get(job_id)
            seals = [s for s, _ in pending.seals.values()] if pending is not None else []
        return SealSet(
            job_id=job_id,
            seals=[
                SealHandOff(
                    verifier=s.verifier,
                    commitment=to_hex(s.commitment),
                    signature=to_hex(s.signature),
                )
                for s in seals
            ],
        )

    def pending(self, job_id: int) -> tuple[int, int]:
        """(pending seals, pending reveals) of a job."""
        with self._lock:
            p = self._jobs.get(job_id)
            return (len(p.seals), len(p.reveals)) if p is not None else (0, 0)

    def drop(self, job_id: int) -> None:
        """Forget a job's pending entries (it left Verifying)."""
        with self._lock:
            self._jobs.pop(job_id, None)

    # --------------------------------------------------------------------------- duty
    def _due(self, taken: list[float], covered: bool) -> bool:
        """A batch is due when it covers every open seat or its oldest entry waited half the
        hand-off wait (seconds)."""
        return bool(taken) and (covered or self.clock() - min(taken) >= self.wait / 2)

    def flush(self, node: NodeCore, job_id: int) -> None:
        """The solver's duty for a Verifying job: submit the due batch through ``node.send``
        (a revert is logged and its entries dropped: their seats fall back on their own; a
        one-shot batch that reverts keeps its seals for ``commitVerdictsFor``).

        Args:
            node: the solver node (its `send`, clock and chain port).
            job_id: the job.
        """
        with self._lock:
            pending = self._jobs.get(job_id)
            if pending is None or not (pending.seals or pending.reveals):
                return
            seals = dict(pending.seals)
            reveals = dict(pending.reveals)
        client = self.client
        sid = bytes(client.jobs.submission_of(job_id))
        addresses = [str(v) for v in client.jobs.get_assignment(job_id).verifiers]
        seats = [v.lower() for v in addresses]
        state = {v.lower(): client.round.verdict_commitment_of(sid, v) for v in addresses}
        unsealed = [v for v in seats if bytes(state[v][0]) == ZERO32 and not state[v][1]]
        unrevealed = [v for v in seats if bytes(state[v][0]) != ZERO32 and not state[v][1]]
        seals = {v: e for v, e in seals.items() if v in unsealed}
        opened = {v: e for v, e in reveals.items() if v in seals}  # open a pending seal
        reveals = {v: e for v, e in reveals.items() if v in unrevealed}
        with self._lock:  # the chain shows these done: drop them (never an entry that came
            # in after the snapshot above: its seat is not done, and it goes in the next batch)
            live = self._jobs.get(job_id)
            if live is not None:
                for v in [v for v in live.seals if v in state and v not in unsealed]:
                    live.seals.pop(v)
                for v in [v for v in live.reveals if v in state and state[v][1]]:
                    live.reveals.pop(v)
        one_shot = bool(seats) and len(unsealed) == len(seats)  # no seal on chain yet
        taken = [t for _, t in seals.values()]
        if one_shot:
            deadline = int(client.jobs.get_job(job_id).verdict_deadline)
            now = node.chain_time()
            if set(seats) <= set(opened) and now <= deadline:
                self._send_one_shot(node, job_id, sid, seats, seals, opened)
                return
            # wait for every seal and opening, up to the seats' own fallback (their cutoff)
            window = int(client.jobs.job_params().verdict_window)
            due = bool(seals) and now >= hand_off_cutoff(deadline, window) - self.wait
        else:  # some seat sealed on chain: no one-shot batch, the seals go as they come
            due = self._due(taken, set(unsealed) <= set(seals))
        if due:
            batch = [s for s, _ in seals.values()]
            node.send(
                f"commitVerdictsFor job {job_id} ({len(batch)} of {len(seats)} seats)",
                client.round.commit_verdicts_for,
                sid,
                batch,
            )
            self._forget(job_id, seals, "seals")
            return  # the reveals wait for the chain to show the new seals
        if reveals and self._reveal_open(node, sid, len(seats) - len(unsealed), len(seats)):
            if self._due([t for _, t in reveals.values()], set(unrevealed) <= set(reveals)):
                entries = [r for r, _ in reveals.values()]
                node.send(
                    f"revealVerdictsFor job {job_id} ({len(entries)} of {len(seats)} seats)",
                    client.round.reveal_verdicts_for,
                    sid,
                    entries,
                )
                self._forget(job_id, reveals, "reveals")

    def _send_one_shot(
        self,
        node: NodeCore,
        job_id: int,
        sid: bytes,
        seats: list[str],
        seals: dict[str, tuple[SignedSeal, float]],
        opened: dict[str, tuple[tuple[str, list[bytes], bytes], float]],
    ) -> None:
        """``revealVerdictsSigned`` with every seat's seal and opening, in seat order; the
        entries are forgotten once mined, only the openings when it reverts (the seals then go
        in a ``commitVerdictsFor``)."""
        entries = []
        for v in seats:
            seal = seals[v][0]
            _, ends, salt = opened[v][0]
            entries.append(SignedReveal(seal.verifier, tuple(ends), salt, seal.signature))
        receipt = node.send(
            f"revealVerdictsSigned job {job_id} ({len(entries)} seats)",
            self.client.round.reveal_verdicts_signed,
            sid,
            entries,
        )
        self._forget(job_id, opened, "reveals")
        if receipt is not None:
            self._forget(job_id, seals, "seals")

    def _reveal_open(self, node: NodeCore, sid: bytes, sealed: int, seats: int) -> bool:
        """The contract's reveal window: every seat sealed, or the verdict deadline passed;
        until it closes."""
        now = node.chain_time()
        windows = self.client.round.windows_of(sid)
        if now > windows.verdict_reveal_closes:
            return False
        return sealed >= seats or now > windows.verdict_reveal_opens

    def _forget(self, job_id: int, sent: dict[str, Any], kind: str) -> None:
        """Drop the entries just submitted (mined or reverted alike)."""
        with self._lock:
            live = self._jobs.get(job_id)
            if live is None:
                return
            entries: dict[str, Any] = getattr(live, kind)
            for v, entry in sent.items():
                if entries.get(v) is entry:
                    del entries[v]


# ------------------------------------------------------------------------------------ routes
router = APIRouter(prefix="/jobs/{job_id}", tags=["aggregation"])

_ERRORS: dict[int | str, dict[str, object]] = {
    400: {"description": "Malformed, or a signature or reveal that does not check."},
    403: {"description": "The verifier holds no seat of the job."},
    404: {"description": "A job this solver does not serve."},
    409: {
        "description": "Not Verifying, already done on chain, no seal yet, or reject bonds not"
        " covered by the seat's free verifier stake."
    },
    413: {"description": "A body over MAX_HANDOFF_BYTES."},
    429: {"description": "Too many pending entries for the job."},
    503: {"description": "The chain cannot be read now; retry."},
}


async def _body(request: Request, model: type[BaseModel]) -> Any:
    """Read at most `MAX_HANDOFF_BYTES` of the body and validate it as ``model``.

    Raises:
        HTTPException: 413 for a larger body, 400 for invalid JSON or fields (one line).
    """
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_HANDOFF_BYTES):
        raise HTTPException(413, f"a hand-off body holds at most {MAX_HANDOFF_BYTES} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_HANDOFF_BYTES:
            raise HTTPException(413, f"a hand-off body holds at most {MAX_HANDOFF_BYTES} bytes")
        chunks.append(chunk)
    try:
        return model.model_validate_json(b"".join(chunks))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "body"
        raise HTTPException(400, f"invalid {model.__name__}: {where}: {first['msg']}") from None


async def _accept(
    request: Request, job_id: int, model: type[BaseModel], kind: str
) -> HandOffAccepted:
    aggregator: SealAggregator = request.app.state.aggregator
    body = await _body(request, model)
    accept = aggregator.accept_seal if kind == "seal" else aggregator.accept_reveal
    try:
        pending = await run_in_threadpool(accept, job_id, body)
    except HandOffRefused as exc:
        raise HTTPException(exc.status, exc.detail) from None
    except Exception as exc:  # RPC errors: the seat retries or falls back; never a 500
        logger.warning("job %d: %s hand-off not checked: %s", job_id, kind, exc)
        detail = f"the chain cannot be read now: {type(exc).__name__}"
        raise HTTPException(503, detail) from None
    logger.info("job %d: %s of %s taken (%d pending)", job_id, kind, body.verifier, pending)
    return HandOffAccepted(job_id=job_id, verifier=body.verifier, pending=pending)


@router.post("/seals", response_model=HandOffAccepted, responses=_ERRORS)
async def post_seal(job_id: int, request: Request) -> HandOffAccepted:
    """Take a seat's signed seal (`veritrain.wire.SealHandOff`) for ``commitVerdictsFor``."""
    return await _accept(request, job_id, SealHandOff, "seal")


@router.get("/seals", response_model=SealSet, responses={404: _ERRORS[404]})
async def get_seals(job_id: int, request: Request) -> SealSet:
    """The seals pending for the job's next batch (`veritrain.wire.SealSet`): a seat opens its
    own seal only once this holds every seat's (docs/SECURITY.md P-40)."""
    aggregator: SealAggregator = request.app.state.aggregator
    try:
        return aggregator.seal_set(job_id)
    except HandOffRefused as exc:
        raise HTTPException(exc.status, exc.detail) from None


@router.post("/reveals", response_model=HandOffAccepted, responses=_ERRORS)
async def post_reveal(job_id: int, request: Request) -> HandOffAccepted:
    """Take a seat's ends and salt (`veritrain.wire.RevealHandOff`) for ``revealVerdictsFor``."""
    return await _accept(request, job_id, RevealHandOff, "reveal")


def mount_aggregation(app: FastAPI, aggregator: SealAggregator) -> FastAPI:
    """Add the hand-off routes over ``aggregator`` to the checkpoint server's app; return it."""
    app.state.aggregator = aggregator
    app.include_router(router)
    return app
