"""Derive the index's tables from its events: one handler per protocol event.

`apply(session, event)` updates the derived tables (`indexer.models.DERIVED_TABLES`) for one
stored `Event`, in chain order; `rederive(session)` deletes them and applies every stored event
again (after a reorganisation). Handlers read only the event's ``args`` and ``extra`` (the
views the indexer read at its block), the events stored before it and the index's binding (the
deployment's addresses), never the chain, so deriving is deterministic.

Amounts are wei (ints), addresses checksummed strings, hashes ``0x`` hex.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import unquote_to_bytes

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from chain.types import SLASH_ANNOUNCEMENTS, restaked_amounts, revealed_approvals
from indexer.models import (
    DERIVED_TABLES,
    Account,
    Assignment,
    Base,
    Dispute,
    DisputeMove,
    Earning,
    Equivocation,
    Event,
    ForcedError,
    Job,
    JobPhase,
    Meta,
    Model,
    Slash,
    Stake,
)
from veritrain.bisection import posted_points
from veritrain.enums import JobStatus, Role, RoundOutcome, Side
from veritrain.spec import model_id_hash

__all__ = ["apply", "rederive", "model_name_of_spec", "KNOWN_MODEL_NAMES"]

ZERO = "0x" + "00" * 20
KNOWN_MODEL_NAMES = ("digits-mlp", "digits-mlp-wide", "shakespeare-char")
"""Names tried for a model id no spec names (the presets of `veritrain.presets`)."""

T = TypeVar("T", bound=Base)
Handler = Callable[[Session, Event], None]
_HANDLERS: dict[tuple[str, str], Handler] = {}


def _on(contract: str, *names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for n in names:
            _HANDLERS[(contract, n)] = fn
        return fn

    return register


def apply(session: Session, event: Event) -> None:
    """Update the derived tables for one event (events without a handler are only stored)."""
    handler = _HANDLERS.get((event.contract, event.name))
    if handler is not None:
        handler(session, event)
        session.flush()


def rederive(session: Session) -> int:
    """Delete every derived row and apply every stored event again, in chain order.

    Returns:
        The number of events applied.
    """
    for table in reversed(DERIVED_TABLES):
        session.execute(delete(table))
    n = 0
    for ev in session.scalars(select(Event).order_by(Event.block, Event.log_index)):
        apply(session, ev)
        n += 1
    return n


def model_name_of_spec(spec_uri: str, model_id: str) -> str | None:
    """The model name a ``data:`` job spec (or run spec) gives, when it hashes to ``model_id``
    (``0x`` hex); None for other URIs or names. Reads no network."""
    if not spec_uri.startswith("data:") or "," not in spec_uri:
        return None
    head, payload = spec_uri.split("#", 1)[0].split(",", 1)
    try:
        if head.endswith(";base64"):
            import base64

            raw = base64.b64decode(payload)
        else:
            raw = unquote_to_bytes(payload)
        spec = json.loads(raw)
    except (ValueError, TypeError):
        return None
    for candidate in (spec.get("model_id"), (spec.get("inner") or {}).get("model_id")):
        if isinstance(candidate, str) and "0x" + model_id_hash(candidate).hex() == model_id:
            return candidate
    return None


def _get(session: Session, cls: type[T], *key: Any, **defaults: Any) -> T:
    row = session.get(cls, key if len(key) > 1 else key[0])
    if row is None:
        names = [c.name for c in cls.__table__.primary_key.columns]  # type: ignore[attr-defined]
        row = cls(**dict(zip(names, key, strict=True)), **defaults)
        session.add(row)
    return row


def _address(session: Session, key: str) -> str | None:
    """The deployment's address of contract ``key`` (``stake_manager``...) from the index's
    binding (`indexer.models.Meta`), or None when the binding does not name it."""
    meta = session.get(Meta, "addresses")
    addresses = json.loads(meta.value) if meta is not None else {}
    found = addresses.get(key)
    return str(found) if found else None


def _role(value: int) -> str:
    return Role(int(value)).name.lower()


def _account(session: Session, address: str, role: str) -> None:
    if not address or address == ZERO:
        return
    acct = _get(session, Account, address, roles="")
    roles = set(filter(None, (acct.roles or "").split(",")))
    if role not in roles:
        acct.roles = ",".join(sorted(roles | {role}))


def _phase(session: Session, ev: Event, job_id: int, phase: str) -> None:
    job = session.get(Job, job_id)
    if job is None:
        return
    if job.phase != phase:
        job.phase = phase
        session.add(
            JobPhase(
                job_id=job_id, block=ev.block, log_index=ev.log_index, phase=phase, event=ev.name
            )
        )


def _move(
    session: Session, ev: Event, kind: str, dispute_id: int, actor: str | None, detail: str
) -> None:
    dispute = session.get(Dispute, (kind, dispute_id))
    if dispute is None:
        return
    dispute.moves += 1
    session.add(
        DisputeMove(
            block=ev.block,
            log_index=ev.log_index,
            kind=kind,
            dispute_id=dispute_id,
            move=ev.name,
            actor=actor,
            detail=detail,
            timestamp=ev.timestamp,
        )
    )


# ------------------------------------------------------------------------------ JobManager

_PHASE_OF = {
    "JobClaimed": JobStatus.Claimed,
    "CheckpointsCommitted": JobStatus.Committed,
    "VerifiersAssigned": JobStatus.Verifying,
    "JobDisputed": JobStatus.Disputed,
    "JobFinalized": JobStatus.Finalized,
    "JobRejected": JobStatus.Rejected,
    "JobCancelled": JobStatus.Cancelled,
    "JobExpired": JobStatus.Expired,
}


@_on("JobManager", "JobPosted")
def _job_posted(session: Session, ev: Event) -> None:
    a, x = ev.args, ev.extra
    job_id = int(a["jobId"])
    session.add(
        Job(
            job_id=job_id,
            model_id=a["modelId"],
            poster=a["submitter"],
            solver=None,
            reward=int(a["reward"]),
            escrow=int(a["escrow"]),
            phase=JobStatus.Open.name,
            spec_hash=a["specHash"],
            spec_uri=a["specURI"],
            init_hash=a["initHash"],
            total_steps=int(a["totalSteps"]),
            checkpoint_interval=int(a["checkpointInterval"]),
            open_deadline=x.get("open_deadline"),
            segments=[],
            shares=0,
            posted_block=ev.block,
        )
    )
    session.add(
        JobPhase(
            job_id=job_id,
            block=ev.block,
            log_index=ev.log_index,
            phase=JobStatus.Open.name,
            event=ev.name,
        )
    )
    _account(session, a["submitter"], "poster")
    model = session.get(Model, a["modelId"])
    if model is not None and model.name is None:
        model.name = model_name_of_spec(a["specURI"], a["modelId"])


@_on(
    "JobManager",
    "JobClaimed",
    "CheckpointsCommitted",
    "VerifiersAssigned",
    "JobDisputed",
    "JobFinalized",
    "JobRejected",
    "JobCancelled",
    "JobExpired",
)
def _job_phase(session: Session, ev: Event) -> None:
    a = ev.args
    job_id = int(a["jobId"])
    job = session.get(Job, job_id)
    if job is None:
        return
    if ev.name == "JobClaimed":
        job.solver = a["solver"]
        job.commit_deadline = int(a["commitDeadline"])
        _account(session, a["solver"], "solver")
    elif ev.name == "CheckpointsCommitted":
        job.merkle_root = a["merkleRoot"]
        job.checkpoint_url = a["checkpointURL"]
    elif ev.name == "VerifiersAssigned":
        job.segments = [int(s) for s in a["segments"]]
        job.verdict_deadline = int(a["verdictDeadline"])
        job.challenge_deadline = int(a["challengeDeadline"])
        for v, mask in zip(a["verifiers"], a["sampleMasks"], strict=True):
            row = _get(session, Assignment, job_id, v, sample_mask=0, bond=0, abstain_mask=0)
            row.sample_mask = int(mask)
            _account(session, v, "verifier")
    elif ev.name == "JobDisputed":
        job.dispute_id = int(a["disputeId"])
        dispute = session.get(Dispute, ("job", int(a["disputeId"])))
        if dispute is not None:
            dispute.job_id = job_id
            dispute.sample_index = int(a["sampleIndex"])
            dispute.segment = int(a["segment"])
    elif ev.name == "JobFinalized":
        job.shares = int(a["shares"])
        _earning(session, ev, a["solver"], "reward", int(a["reward"]), job_id)
    _phase(session, ev, job_id, _PHASE_OF[ev.name].name)


@_on("JobManager", "JobReclaimed", "DisputeSettled", "VerifiersReassigning")
def _job_status_view(session: Session, ev: Event) -> None:
    """Events whose next phase depends on the job: the status read at the block."""
    job_id = int(ev.args["jobId"])
    status = ev.extra.get("status")
    if ev.name == "DisputeSettled":
        dispute = session.get(Dispute, ("job", int(ev.args["disputeId"])))
        if dispute is not None:
            dispute.segment_valid = bool(ev.args["segmentValid"])
            _move(
                session,
                ev,
                "job",
                dispute.dispute_id,
                None,
                f"settled: segment {'valid' if ev.args['segmentValid'] else 'invalid'}, "
                f"pot {int(ev.args['pot'])} wei",
            )
    if status is not None:
        _phase(session, ev, job_id, JobStatus(int(status)).name)


@_on("JobManager", "ChallengeDeadlineSet")
def _challenge_deadline(session: Session, ev: Event) -> None:
    job = session.get(Job, int(ev.args["jobId"]))
    if job is not None:
        job.challenge_deadline = int(ev.args["challengeDeadline"])


@_on("JobManager", "VerdictsAbstained", "VerdictMissed")
def _verdicts(session: Session, ev: Event) -> None:
    a = ev.args
    row = _get(session, Assignment, int(a["jobId"]), a["verifier"], sample_mask=0, bond=0)
    if ev.name == "VerdictsAbstained":
        row.abstain_mask = int(a["abstainMask"])
    else:
        row.missed = True


@_on("JobManager", "ForcedErrorSettled")
def _forced(session: Session, ev: Event) -> None:
    a = ev.args
    session.merge(
        ForcedError(
            job_id=int(a["jobId"]),
            sample_index=int(a["sampleIndex"]),
            slashed=int(a["slashed"]),
            paid=int(a["paid"]),
            block=ev.block,
        )
    )


def _earning(
    session: Session,
    ev: Event,
    account: str,
    kind: str,
    amount: int,
    job_id: int | None = None,
    *,
    seq: int = 0,
    model_id: str | None = None,
) -> None:
    """An `Earning` row of ``ev``: ``amount`` (wei) of ``kind`` for ``account`` (its job or
    model if any); ``seq`` tells apart the rows of one event that pays several accounts."""
    session.add(
        Earning(
            block=ev.block,
            log_index=ev.log_index,
            seq=seq,
            account=account,
            kind=kind,
            amount=amount,
            job_id=job_id,
            model_id=model_id,
        )
    )


@_on("JobManager", "JackpotPaid")
def _jackpot(session: Session, ev: Event) -> None:
    a = ev.args
    _earning(session, ev, a["account"], "jackpot", int(a["amount"]), int(a["jobId"]))


def _equivocation(session: Session, ev: Event, job_id: int, verifier: str) -> Equivocation:
    """The `Equivocation` row of a proof: both of its events (one transaction) share it."""
    return _get(
        session,
        Equivocation,
        job_id,
        verifier,
        ev.block,
        log_index=ev.log_index,
        slashed=0,
        bonds=0,
        timestamp=ev.timestamp,
    )


@_on("JobManager", "VerifierEquivocated")
def _verifier_equivocated(session: Session, ev: Event) -> None:
    """A seat slashed and voided for two seals (docs/SECURITY.md P-40): its stake and reject
    bonds (wei) on the equivocation, and the job and cause on the seat's ``StakeSlashed`` of
    the same transaction (emitted just before, so already derived)."""
    a = ev.args
    job_id, verifier = int(a["jobId"]), a["verifier"]
    row = _equivocation(session, ev, job_id, verifier)
    row.slashed, row.bonds = int(a["slashed"]), int(a["bonds"])
    same_tx = session.scalars(
        select(Event).where(
            Event.block == ev.block,
            Event.tx_hash == ev.tx_hash,
            Event.contract == "StakeManager",
            Event.name == "StakeSlashed",
            Event.log_index < ev.log_index,
        )
    )
    for stake_ev in same_tx:
        if stake_ev.args.get("account") == verifier:
            slash = session.get(Slash, (stake_ev.block, stake_ev.log_index))
            if slash is not None:
                slash.job_id, slash.cause = job_id, "equivocation"


@_on("JobManager", "SolverFaulted")
def _solver_faulted(session: Session, ev: Event) -> None:
    job = session.get(Job, int(ev.args["jobId"]))
    if job is not None:
        job.outcome = RoundOutcome(int(ev.args["outcome"])).name


@_on("VerificationRound", "SecretRevealed")
def _secret(session: Session, ev: Event) -> None:
    job_id = ev.extra.get("job_id")
    job = session.get(Job, int(job_id)) if job_id is not None else None
    if job is not None:
        forced = bool(ev.args["forced"])
        job.outcome = f"Forced (sample {int(ev.args['forcedSample'])})" if forced else "Clean"


@_on("VerificationRound", "EquivocationProven")
def _equivocation_proven(session: Session, ev: Event) -> None:
    """Who proved a seat's two seals, and the two commitments (the job read at the block)."""
    job_id = ev.extra.get("job_id")
    if job_id is None:
        return
    a = ev.args
    row = _equivocation(session, ev, int(job_id), a["verifier"])
    row.log_index = ev.log_index
    row.submission_id = a["submissionId"]
    row.prover = a["prover"]
    row.commitment, row.other_commitment = a["commitment"], a["otherCommitment"]


@_on("VerificationRound", "VerdictsCommitted")
def _sealed(session: Session, ev: Event) -> None:
    job_id = ev.extra.get("job_id")
    if job_id is not None:
        row = _get(session, Assignment, int(job_id), ev.args["verifier"], sample_mask=0, bond=0)
        row.sealed = True


@_on("VerificationRound", "VerdictsRevealed")
def _revealed(session: Session, ev: Event) -> None:
    """A seat's reveal, the one record of its verdicts (the JobManager emits none): its approvals
    and its reject bonds, challengeBond per non-approval of its own samples (the job and the
    bond read at the block). A revealed seat sealed first; a signed reveal emits no
    ``VerdictsCommitted``."""
    job_id = ev.extra.get("job_id")
    if job_id is None:
        return
    a = ev.args
    row = _get(session, Assignment, int(job_id), a["verifier"], sample_mask=0, bond=0)
    row.sealed = True
    row.approvals = revealed_approvals(a)
    own = [i for i in range(len(row.approvals)) if (int(row.sample_mask) >> i) & 1]
    rejects = sum(1 for i in own if not row.approvals[i])
    row.bond = rejects * int(ev.extra.get("challenge_bond", 0))


# ------------------------------------------------------------------------- the adjudicators


@_on("BisectionGame", "GameOpened")
def _game_opened(session: Session, ev: Event) -> None:
    a = ev.args
    dispute_id = int(a["disputeId"])
    session.merge(
        Dispute(
            kind="job",
            dispute_id=dispute_id,
            job_id=int(a["jobId"]),
            adjudicator="bisection",
            segment=int(a["segment"]),
            defender=a["defender"],
            challenger=a["challenger"],
            status="AwaitingEndpoints",
            lo=int(a["lo"]),
            hi=int(a["hi"]),
            committee=[],
            moves=0,
            opened_block=ev.block,
        )
    )
    _move(
        session,
        ev,
        "job",
        dispute_id,
        a["challenger"],
        f"game opened on segment {int(a['segment'])}, steps [{int(a['lo'])}, {int(a['hi'])}]",
    )


@_on("BisectionGame", "EndpointsPosted", "Bisected", "Responded", "Escalated", "TimeoutClaimed")
def _game_move(session: Session, ev: Event) -> None:
    a = ev.args
    dispute = session.get(Dispute, ("job", int(a["disputeId"])))
    if dispute is None:
        return
    actor: str | None = dispute.defender
    if ev.name == "EndpointsPosted":
        dispute.status = "AwaitingBisection"
        detail = f"endpoints {a['startHash']} -> {a['endHash']}"
    elif ev.name == "Bisected":
        dispute.status = "AwaitingResponse"
        lo, hi, posted = int(a["lo"]), int(a["hi"]), len(a["hashes"])
        points = posted_points(lo, hi, posted)
        detail = f"dissects [{lo}, {hi}] at {posted} point(s) {points}"
    elif ev.name == "Responded":
        actor = dispute.challenger
        dispute.lo, dispute.hi = int(a["lo"]), int(a["hi"])
        dispute.status = "AwaitingBisection"
        detail = f"picks part {int(a['index'])}: interval now [{int(a['lo'])}, {int(a['hi'])}]"
    elif ev.name == "Escalated":
        actor = dispute.challenger
        dispute.lo, dispute.hi = int(a["lo"]), int(a["hi"])
        detail = f"escalated [{int(a['lo'])}, {int(a['hi'])}] to the committee"
    else:
        actor = a["caller"]
        detail = f"timeout: the {Side(int(a['loser'])).name.lower()} ran out of time"
    if "clockLeft" in a:
        detail += f" (clock left {int(a['clockLeft'])} s)"
    _move(session, ev, "job", dispute.dispute_id, actor, detail)


@_on("BisectionGame", "StepDisputeOpened")
def _game_step(session: Session, ev: Event) -> None:
    a = ev.args
    dispute = session.get(Dispute, ("job", int(a["disputeId"])))
    if dispute is None:
        return
    dispute.status = "AwaitingStep"
    dispute.step_dispute_id = int(a["stepDisputeId"])
    _move(
        session,
        ev,
        "job",
        dispute.dispute_id,
        None,
        f"step {int(a['step'])} to the committee (step dispute {int(a['stepDisputeId'])})",
    )


@_on("BisectionGame", "GameResolved")
def _game_resolved(session: Session, ev: Event) -> None:
    a = ev.args
    dispute = session.get(Dispute, ("job", int(a["disputeId"])))
    if dispute is None:
        return
    won = bool(a["defenderWon"])
    dispute.status = "DefenderWon" if won else "ChallengerWon"
    dispute.resolved = True
    dispute.winner = a["winner"]
    dispute.winner_side = "defender" if won else "challenger"
    _move(
        session,
        ev,
        "job",
        dispute.dispute_id,
        a["winner"],
        f"{dispute.winner_side} won; bonds {int(a['bonds'])} wei",
    )


def _committee_parent(session: Session, committee_id: int) -> Dispute | None:
    """The dispute a committee id belongs to: a game's step dispute, a run claim's dispute or
    (committee adjudicator) the job dispute itself."""
    parent = session.scalar(select(Dispute).where(Dispute.step_dispute_id == committee_id))
    if parent is not None:
        return parent
    claim = session.get(Dispute, ("claim", committee_id))
    if claim is not None:
        return claim
    job = session.get(Dispute, ("job", committee_id))
    if job is not None and job.adjudicator == "committee":
        return job
    return None


@_on("ArbitrationCommittee", "DisputeOpened")
def _committee_opened(session: Session, ev: Event) -> None:
    a = ev.args
    dispute_id = int(a["disputeId"])
    if ev.extra.get("adjudicator") != "committee" or int(a["jobId"]) == 0:
        return  # a step or claim dispute (a claim's names no job): its parent records it
    session.merge(
        Dispute(
            kind="job",
            dispute_id=dispute_id,
            job_id=int(a["jobId"]),
            adjudicator="committee",
            segment=int(a["segment"]),
            status="AwaitingCommittee",
            committee=[],
            moves=0,
            opened_block=ev.block,
        )
    )
    _move(session, ev, "job", dispute_id, None, f"committee dispute on segment {a['segment']}")


@_on("ArbitrationCommittee", "CommitteeDrawn", "VoteCommitted", "VoteRevealed", "DisputeResolved")
def _committee_move(session: Session, ev: Event) -> None:
    a = ev.args
    parent = _committee_parent(session, int(a["disputeId"]))
    if parent is None:
        return
    actor = a.get("member")
    if ev.name == "CommitteeDrawn":
        parent.committee = list(a["members"])
        for m in a["members"]:
            _account(session, m, "arbiter")
        detail = f"committee drawn: {', '.join(a['members'])}"
        if parent.adjudicator == "committee":
            parent.status = "Voting"
    elif ev.name == "VoteCommitted":
        detail = "vote sealed"
    elif ev.name == "VoteRevealed":
        detail = f"voted segment {'valid' if a['segmentValid'] else 'invalid'}"
    else:
        valid = bool(a["segmentValid"])
        detail = (
            f"resolved: {'valid' if valid else 'invalid'}; majority {', '.join(a['majority'])}"
            + (f"; non-voters {', '.join(a['nonVoters'])}" if a["nonVoters"] else "")
        )
        if parent.adjudicator == "committee":
            parent.status = "Resolved"
            parent.resolved = True
            parent.segment_valid = valid
            parent.winner_side = "defender" if valid else "challenger"
    _move(session, ev, parent.kind, parent.dispute_id, actor, detail)


# --------------------------------------------------------------------------- StakeManager


@_on(
    "StakeManager",
    "Staked",
    "UnbondRequested",
    "Withdrawn",
    "StakeLocked",
    "StakeUnlocked",
    "StakeSlashed",
)
def _stake(session: Session, ev: Event) -> None:
    a, x = ev.args, ev.extra
    role = _role(a["role"])
    row = _get(session, Stake, a["account"], role, slashed=0)
    if "staked" in x:
        _set_stake(row, x)
    _account(session, a["account"], role)
    if ev.name == "StakeSlashed":
        row.slashed = (row.slashed or 0) + int(a["slashed"])
        job_id, cause = _bond_forfeit(session, ev)
        session.add(
            Slash(
                block=ev.block,
                log_index=ev.log_index,
                account=a["account"],
                role=role,
                requested=int(a["requested"]),
                slashed=int(a["slashed"]),
                recipient=a["recipient"],
                job_id=job_id,
                cause=cause,
            )
        )


@_on("StakeManager", "StakesLocked", "StakesUnlocked", "StakesRestaked")
def _stakes(session: Session, ev: Event) -> None:
    """A lock or unlock of several accounts in one call: each account's stake as read at the
    block (``extra["stakes"]``, by account). A ``StakesRestaked`` (a job's end: each account's
    seat unlocked and its earnings added to its stake) also records each account's earned
    amount as a ``restaked`` earning (a single ``earned`` entry is every account's)."""
    a = ev.args
    role = _role(a["role"])
    read = ev.extra.get("stakes", {})
    for account in a["accounts"]:
        row = _get(session, Stake, account, role, slashed=0)
        x = read.get(account)
        if x is not None:
            _set_stake(row, x)
        _account(session, account, role)
    if ev.name == "StakesRestaked":
        _restaked(session, ev)


def _restaked(session: Session, ev: Event) -> None:
    """One ``restaked`` earning per account of a ``StakesRestaked`` that earned something (its
    position among them as ``seq``), for the job that the transaction's last JobManager event
    before it names (its ``JobFinalized``, ``JobRejected`` or ``JobExpired``)."""
    job_id = _job_of_tx(session, ev)
    for seq, (account, amount) in enumerate(restaked_amounts(ev.args)):
        _earning(session, ev, account, "restaked", amount, job_id, seq=seq)


def _job_of_tx(session: Session, ev: Event) -> int | None:
    """The job of the last JobManager event with a ``jobId`` before ``ev`` in its transaction
    (None when there is none)."""
    before = session.scalars(
        select(Event)
        .where(
            Event.block == ev.block,
            Event.log_index < ev.log_index,
            Event.tx_hash == ev.tx_hash,
            Event.contract == "JobManager",
        )
        .order_by(Event.log_index.desc())
    )
    for prev in before:
        if "jobId" in prev.args:
            return int(prev.args["jobId"])
    return None


def _set_stake(row: Stake, x: dict[str, Any]) -> None:
    """``row`` as ``stakeOf`` read at an event's block (the indexer's extra fields)."""
    row.staked, row.locked = int(x["staked"]), int(x["locked"])
    row.unbonding, row.release_at = int(x["unbonding"]), int(x["release_at"])


def _bond_forfeit(session: Session, ev: Event) -> tuple[int | None, str | None]:
    """The job and cause of a ``StakeSlashed`` that forfeits a seat's reject bonds: the log just
    before it in its transaction is the JobManager's announcement for that account (`BondForfeited`,
    `AbstentionForfeited`, the bonds of `VerifierEquivocated`); (None, None) for any other slash."""
    prev = session.get(Event, (ev.block, ev.log_index - 1))
    if prev is None or prev.tx_hash != ev.tx_hash or prev.contract != "JobManager":
        return None, None
    named = SLASH_ANNOUNCEMENTS.get(prev.name)
    if named is None or prev.args.get(named[0]) != ev.args["account"]:
        return None, None
    return int(prev.args["jobId"]), named[1]


# --------------------------------------------------------------------------------- Escrow


_ESCROW_KINDS = {"Credited": "credit", "Paid": "paid", "CreditClaimed": "claimed"}
"""Earning kind of each Escrow event: a payout booked as credit, one paid to the wallet
(`Escrow.pay`: a whistleblower's bond and jackpot, a catch's jackpot while a dispute stays
open), a credit withdrawn. A job's end pays the reward and the fees to the StakeManager, which
restakes them (``StakesRestaked``, kind ``restaked``): that payment is no account's earning."""


@_on("Escrow", *_ESCROW_KINDS)
def _credit(session: Session, ev: Event) -> None:
    a = ev.args
    if ev.name == "Paid" and a["account"] == _address(session, "stake_manager"):
        return  # the earnings of a job's end, restaked for their parties (`_restaked`)
    _earning(session, ev, a["account"], _ESCROW_KINDS[ev.name], int(a["amount"]))


# The ownership and run handlers live in their own module; importing it registers them.
from indexer import derive_ownership  # noqa: E402, F401
