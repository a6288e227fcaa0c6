"""What the dashboard shows, read from the index: one query function per page, each filling
its `dashboard.views` model (the `/api` JSON).

Amounts are wei as ints, addresses checksummed and never shortened, hashes ``0x`` hex,
deadlines and times block timestamps (s).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from dashboard.views import (
    AccountSummary,
    AccountView,
    AssignmentView,
    DisputeSummary,
    DisputeView,
    EquivocationView,
    EventView,
    ForcedErrorView,
    HolderView,
    JobSummary,
    JobView,
    ModelSummary,
    ModelView,
    MoveView,
    Overview,
    PhaseStep,
    RoundView,
    RunSummary,
    RunView,
    SlashRow,
    StakeRow,
    Status,
)
from indexer.models import (
    Account,
    Assignment,
    Contribution,
    Dispute,
    DisputeMove,
    Earning,
    Equivocation,
    Event,
    ForcedError,
    Job,
    JobPhase,
    LineageEntry,
    Meta,
    Model,
    Revenue,
    Run,
    RunMetric,
    RunRound,
    ShareBalance,
    Slash,
    Stake,
)
from veritrain.spec import model_id_hash

__all__ = [
    "EARNED_KINDS",
    "MAX_ROW_ID",
    "account",
    "dispute",
    "disputes",
    "events",
    "job",
    "model",
    "overview",
    "run",
    "status",
]

EARNED_KINDS = ("credit", "paid", "restaked", "revenue")
"""The earning kinds (`indexer.models.Earning`) an account's earned total sums: credited, paid
to the wallet, restaked at a job's end, revenue claimed (``reward`` and ``jackpot`` restate
parts of them, ``claimed`` withdraws credit)."""

MAX_ROW_ID = 2**63 - 1
"""The largest id an index row can hold (SQLite and PostgreSQL BIGINT are 64-bit signed): a
larger job, run or dispute id is not in the index."""


def _seats(mask: int | None) -> list[int]:
    mask = int(mask or 0)
    return [j for j in range(mask.bit_length()) if mask >> j & 1]


# ------------------------------------------------------------------------------- helpers


def model_label(session: Session, model_id: str) -> str:
    """A model's name, or its full id when no spec names it."""
    m = session.get(Model, model_id)
    return (m.name if m is not None and m.name else None) or model_id


def resolve_model(session: Session, ref: str) -> Model | None:
    """A model by name or ``0x`` id."""
    if ref.startswith("0x") and len(ref) == 66:
        return session.get(Model, ref.lower())
    found = session.scalar(select(Model).where(Model.name == ref))
    return found or session.get(Model, "0x" + model_id_hash(ref).hex())


def status(session: Session) -> Status:
    """Chain id, cursor and event count of the index."""
    meta = {m.key: m.value for m in session.scalars(select(Meta))}
    return Status(
        chain_id=int(meta["chain_id"]) if "chain_id" in meta else None,
        cursor=int(meta["cursor"]) if "cursor" in meta else None,
        events=int(session.scalar(select(func.count()).select_from(Event)) or 0),
        last_block=session.scalar(select(func.max(Event.block))),
    )


def _job_summary(session: Session, j: Job) -> JobSummary:
    return JobSummary(
        job_id=j.job_id,
        model_id=j.model_id,
        model=model_label(session, j.model_id),
        phase=j.phase,
        poster=j.poster,
        solver=j.solver,
        reward_wei=j.reward,
        dispute_id=j.dispute_id,
        outcome=j.outcome,
        total_steps=j.total_steps,
        checkpoint_interval=j.checkpoint_interval,
        init_hash=j.init_hash,
        merkle_root=j.merkle_root,
    )


def jobs(session: Session) -> list[JobSummary]:
    """Every job, by id (what `overview` and `veritrain job list --db` list)."""
    return [_job_summary(session, j) for j in session.scalars(select(Job).order_by(Job.job_id))]


def _forced(f: ForcedError) -> ForcedErrorView:
    return ForcedErrorView(
        job_id=f.job_id,
        sample_index=f.sample_index,
        slashed_wei=f.slashed,
        paid_wei=f.paid,
        block=f.block,
    )


def _dispute_summary(d: Dispute) -> DisputeSummary:
    return DisputeSummary(
        key=str(d.dispute_id) if d.kind == "job" else f"claim-{d.dispute_id}",
        kind=d.kind,
        dispute_id=d.dispute_id,
        job_id=d.job_id,
        run_id=d.run_id,
        round=d.round,
        adjudicator=d.adjudicator,
        status=d.status,
        moves=d.moves,
        resolved=d.resolved,
        winner=d.winner,
        winner_side=d.winner_side,
    )


def disputes(session: Session) -> list[DisputeSummary]:
    """Every dispute, in the order they opened (what `overview` and `veritrain dispute list
    --db` list)."""
    found = session.scalars(select(Dispute).order_by(Dispute.opened_block, Dispute.dispute_id))
    return [_dispute_summary(d) for d in found]


def events(
    session: Session,
    address: str,
    names: Sequence[str],
    *,
    from_block: int | None = None,
    to_block: int | None = None,
) -> list[EventView]:
    """The stored events ``names`` emitted by the contract at ``address``, in chain order.

    Args:
        session: a session of the index.
        address: the emitting contract (checksummed).
        names: event names.
        from_block: first block (default: all).
        to_block: last block (default: all).
    """
    query = select(Event).where(Event.address == address, Event.name.in_(list(names)))
    if from_block is not None:
        query = query.where(Event.block >= from_block)
    if to_block is not None:
        query = query.where(Event.block <= to_block)
    return [
        EventView(
            block=e.block,
            log_index=e.log_index,
            tx_hash=e.tx_hash,
            contract=e.contract,
            address=e.address,
            name=e.name,
            args=dict(e.args),
            timestamp=e.timestamp,
        )
        for e in session.scalars(query.order_by(Event.block, Event.log_index))
    ]


def _run_phase(session: Session, r: Run) -> str:
    if r.round >= r.rounds:
        return "Ended"
    rnd = session.get(RunRound, (r.run_id, r.round))
    return f"round {r.round}: {rnd.phase if rnd is not None else 'Open'}"


def _run_summary(session: Session, r: Run) -> RunSummary:
    return RunSummary(
        run_id=r.run_id,
        model_id=r.model_id,
        model=model_label(session, r.model_id),
        seats=r.seats,
        rounds=r.rounds,
        inner_steps=r.inner_steps,
        round=r.round,
        phase=_run_phase(session, r),
    )


def _earned(session: Session, account: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in session.scalars(select(Earning).where(Earning.account == account)):
        out[e.kind] = out.get(e.kind, 0) + e.amount
    return out


# ------------------------------------------------------------------------------- pages


def overview(session: Session) -> Overview:
    """Everything the home page lists."""
    listed = jobs(session)
    runs = [_run_summary(session, r) for r in session.scalars(select(Run).order_by(Run.run_id))]
    forced = [_forced(f) for f in session.scalars(select(ForcedError).order_by(ForcedError.job_id))]
    models = []
    for m in session.scalars(select(Model).order_by(Model.registered_block)):
        holders = session.scalar(
            select(func.count())
            .select_from(ShareBalance)
            .where(ShareBalance.model_id == m.model_id, ShareBalance.balance != "0")
        )
        models.append(
            ModelSummary(
                model_id=m.model_id,
                name=m.name,
                owner=m.owner,
                total_shares=m.total_shares,
                holders=int(holders or 0),
            )
        )
    accounts = []
    for a in session.scalars(select(Account).order_by(Account.address)):
        stakes = list(session.scalars(select(Stake).where(Stake.account == a.address)))
        earned = _earned(session, a.address)
        accounts.append(
            AccountSummary(
                address=a.address,
                roles=[r for r in a.roles.split(",") if r],
                staked_wei=sum(s.staked for s in stakes),
                locked_wei=sum(s.locked for s in stakes),
                unbonding_wei=sum(s.unbonding for s in stakes),
                slashed_wei=sum(s.slashed for s in stakes),
                earned_wei=sum(earned.get(k, 0) for k in EARNED_KINDS),
            )
        )
    return Overview(
        status=status(session),
        jobs=listed,
        runs=runs,
        disputes=disputes(session),
        forced_errors=forced,
        models=models,
        accounts=accounts,
    )


def job(session: Session, job_id: int) -> JobView | None:
    """A job in full (None when the index has no such job)."""
    j = session.get(Job, job_id)
    if j is None:
        return None
    phases = [
        PhaseStep(phase=p.phase, block=p.block, event=p.event)
        for p in session.scalars(
            select(JobPhase)
            .where(JobPhase.job_id == job_id)
            .order_by(JobPhase.block, JobPhase.log_index)
        )
    ]
    equivocations = [
        EquivocationView(
            verifier=e.verifier,
            prover=e.prover,
            commitment=e.commitment,
            other_commitment=e.other_commitment,
            slashed_wei=e.slashed,
            bonds_wei=e.bonds,
            block=e.block,
            timestamp=e.timestamp,
        )
        for e in session.scalars(
            select(Equivocation)
            .where(Equivocation.job_id == job_id)
            .order_by(Equivocation.block, Equivocation.log_index)
        )
    ]
    voided = {e.verifier for e in equivocations}
    seats = [
        AssignmentView(
            verifier=a.verifier,
            samples=_seats(a.sample_mask),
            sealed=a.sealed,
            approvals=a.approvals,
            abstained=_seats(a.abstain_mask),
            bond_wei=a.bond,
            missed=a.missed,
            voided=a.verifier in voided,
        )
        for a in session.scalars(
            select(Assignment).where(Assignment.job_id == job_id).order_by(Assignment.verifier)
        )
    ]
    forced = session.get(ForcedError, job_id)
    return JobView(
        **_job_summary(session, j).model_dump(),
        spec_hash=j.spec_hash,
        spec_uri=j.spec_uri,
        checkpoint_url=j.checkpoint_url,
        open_deadline=j.open_deadline,
        commit_deadline=j.commit_deadline,
        verdict_deadline=j.verdict_deadline,
        challenge_deadline=j.challenge_deadline,
        segments=list(j.segments or []),
        shares=j.shares,
        phases=phases,
        assignments=seats,
        forced_error=_forced(forced) if forced is not None else None,
        equivocations=equivocations,
    )


def dispute(session: Session, key: str) -> DisputeView | None:
    """A dispute by URL id: ``N`` (a job's) or ``claim-N`` (a run claim's)."""
    kind, _, number = key.rpartition("-")
    kind = kind or "job"
    if not number.isdigit() or kind not in ("job", "claim") or int(number) > MAX_ROW_ID:
        return None
    d = session.get(Dispute, (kind, int(number)))
    if d is None:
        return None
    moves = [
        MoveView(
            block=m.block,
            log_index=m.log_index,
            timestamp=m.timestamp,
            move=m.move,
            actor=m.actor,
            detail=m.detail,
        )
        for m in session.scalars(
            select(DisputeMove)
            .where(DisputeMove.kind == kind, DisputeMove.dispute_id == d.dispute_id)
            .order_by(DisputeMove.block, DisputeMove.log_index)
        )
    ]
    return DisputeView(
        **_dispute_summary(d).model_dump(),
        sample_index=d.sample_index,
        segment=d.segment,
        defender=d.defender,
        challenger=d.challenger,
        lo=d.lo,
        hi=d.hi,
        step_dispute_id=d.step_dispute_id,
        committee=list(d.committee or []),
        segment_valid=d.segment_valid,
        timeline=moves,
    )


def run(session: Session, run_id: int) -> RunView | None:
    """A run with its rounds (metrics from the cache, None where not computed)."""
    r = session.get(Run, run_id)
    if r is None:
        return None
    metrics: dict[tuple[int, str], RunMetric] = {
        (m.round, m.state_hash): m
        for m in session.scalars(select(RunMetric).where(RunMetric.run_id == run_id))
    }
    name = next((m.name for m in metrics.values()), None)
    rounds = []
    for rr in session.scalars(
        select(RunRound).where(RunRound.run_id == run_id).order_by(RunRound.round)
    ):
        contributions = {
            c.seat: c.job_id
            for c in session.scalars(
                select(Contribution).where(
                    Contribution.run_id == run_id, Contribution.round == rr.round
                )
            )
        }
        cached = metrics.get((rr.round, rr.state_hash or ""))
        rounds.append(
            RoundView(
                round=rr.round,
                phase=rr.phase,
                registered=_seats(rr.registered),
                accepted=_seats(rr.accepted),
                state_hash=rr.state_hash,
                proposer=rr.proposer,
                challenger=rr.challenger,
                dispute_id=rr.dispute_id,
                proposals=rr.proposals,
                challenges=rr.challenges,
                shares_per_seat_wei=rr.shares_per_seat,
                contributions=contributions,
                metric=cached.value if cached is not None and rr.phase == "Final" else None,
            )
        )
    return RunView(
        **_run_summary(session, r).model_dump(),
        run_hash=r.run_hash,
        opener=r.opener,
        start_hash=r.start_hash,
        metric_name=name,
        round_views=rounds,
    )


def model(session: Session, ref: str) -> ModelView | None:
    """A model by name or ``0x`` id."""
    m = resolve_model(session, ref)
    if m is None:
        return None
    balances = [
        b
        for b in session.scalars(
            select(ShareBalance)
            .where(ShareBalance.model_id == m.model_id)
            .order_by(ShareBalance.account)
        )
        if b.balance > 0
    ]
    total = m.total_shares or 0
    holders = sorted(
        (
            HolderView(
                account=b.account, shares=b.balance, bps=b.balance * 10_000 // total if total else 0
            )
            for b in balances
        ),
        key=lambda h: (-h.shares, h.account),
    )
    lineage: list[dict[str, int | str]] = [
        {"index": e.index, "job_id": e.job_id, "final_state": e.final_state, "block": e.block}
        for e in session.scalars(
            select(LineageEntry)
            .where(LineageEntry.model_id == m.model_id)
            .order_by(LineageEntry.index)
        )
    ]
    paid = claimed = 0
    claims: dict[str, int] = {}
    for rev in session.scalars(select(Revenue).where(Revenue.model_id == m.model_id)):
        if rev.kind == "paid":
            paid += rev.amount
        else:
            claimed += rev.amount
            claims[rev.account] = claims.get(rev.account, 0) + rev.amount
    return ModelView(
        model_id=m.model_id,
        name=m.name,
        owner=m.owner,
        pending_owner=m.pending_owner,
        token=m.token,
        posters=list(m.posters or []),
        compute_per_step=m.compute_per_step,
        seed_state=m.seed_state,
        head=m.head,
        total_shares=total,
        holders=holders,
        lineage=lineage,
        revenue_paid_wei=paid,
        revenue_claimed_wei=claimed,
        revenue_claims=claims,
        jobs=list(
            session.scalars(
                select(Job.job_id).where(Job.model_id == m.model_id).order_by(Job.job_id)
            )
        ),
        runs=list(
            session.scalars(
                select(Run.run_id).where(Run.model_id == m.model_id).order_by(Run.run_id)
            )
        ),
    )


def account(session: Session, address: str) -> AccountView | None:
    """An account by address: all lowercase, or mixed case with a good EIP-55 checksum (None for
    anything else, as for an account the index has not seen)."""
    from veritrain.hexutil import checksum_address

    try:
        address = checksum_address(address)
    except ValueError:
        return None
    row = session.get(Account, address)
    if row is None:
        return None
    stakes = [
        StakeRow(
            role=s.role,
            staked_wei=s.staked,
            locked_wei=s.locked,
            unbonding_wei=s.unbonding,
            release_at=s.release_at,
            slashed_wei=s.slashed,
        )
        for s in session.scalars(select(Stake).where(Stake.account == address).order_by(Stake.role))
    ]
    slashes = [
        SlashRow(
            block=s.block,
            role=s.role,
            slashed_wei=s.slashed,
            recipient=s.recipient,
            job_id=s.job_id,
            cause=s.cause,
        )
        for s in session.scalars(
            select(Slash).where(Slash.account == address).order_by(Slash.block, Slash.log_index)
        )
    ]
    shares = {
        model_label(session, b.model_id): b.balance
        for b in session.scalars(select(ShareBalance).where(ShareBalance.account == address))
        if b.balance > 0
    }
    return AccountView(
        address=address,
        roles=[r for r in row.roles.split(",") if r],
        stakes=stakes,
        slashes=slashes,
        earnings=_earned(session, address),
        shares=shares,
        jobs_solved=list(
            session.scalars(select(Job.job_id).where(Job.solver == address).order_by(Job.job_id))
        ),
    )
