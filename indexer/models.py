"""The index's tables (SQLAlchemy 2 declarative; SQLite by default, PostgreSQL through the same
code). The schema is created and upgraded by the Alembic migrations in `indexer/migrations`,
never by ``create_all``.

Conventions: token amounts (wei, and share counts) and bit masks (seats, samples) are `Wei`
columns, decimal strings in the database (uint256 fits no SQL integer) and Python ints in code;
uint32 event fields are BIGINT (PostgreSQL's INTEGER is signed 32-bit); addresses are checksummed
``0x`` strings (42 characters), hashes ``0x`` hex (66 characters); ``block`` columns are block
numbers and ``log_index`` positions within the block; deadlines and ``release_at`` are block
timestamps (s).

Two kinds of tables: `Meta`, `BlockHash` and `Event` are what the indexer fetched (the events,
each with the views it read at its block, are the source of truth), and every other table is
DERIVED from the events (`indexer.derive`), so a reorganisation deletes the orphaned events and
derives the rest again. `RunMetric` is a cache of computed values, kept across re-derivations.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Dialect, Float, Integer, String, Text, TypeDecorator
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "Account",
    "Assignment",
    "Base",
    "BlockHash",
    "Contribution",
    "DERIVED_TABLES",
    "Dispute",
    "DisputeMove",
    "Earning",
    "Equivocation",
    "Event",
    "ForcedError",
    "Job",
    "JobPhase",
    "LineageEntry",
    "Meta",
    "Model",
    "Revenue",
    "Run",
    "RunMetric",
    "RunRound",
    "ShareBalance",
    "ShareTransfer",
    "Slash",
    "Stake",
    "Wei",
]


class Wei(TypeDecorator[int]):
    """An unsigned 256-bit integer stored as a decimal string (wei, shares)."""

    impl = String(80)
    cache_ok = True

    def process_bind_param(self, value: int | None, dialect: Dialect) -> str | None:
        return None if value is None else str(int(value))

    def process_result_value(self, value: str | None, dialect: Dialect) -> int | None:
        return None if value is None else int(value)


def _addr() -> Any:
    return String(42)


def _hash() -> Any:
    return String(66)


class Base(DeclarativeBase):
    """Declarative base of every index table."""


# ------------------------------------------------------------------------------- fetched


class Meta(Base):
    """Key/value facts of the index: ``chain_id``, ``addresses`` (JSON), ``deploy_block``,
    ``deploy_block_hash`` (the binding) and ``cursor`` (the next block to scan)."""

    __tablename__ = "meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class BlockHash(Base):
    """Hash of a recently indexed block (the last ``reorg_depth`` blocks), to spot a reorg."""

    __tablename__ = "block_hashes"
    number: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    hash: Mapped[str] = mapped_column(_hash())


class Event(Base):
    """One decoded protocol event; ``args`` JSON-able (bytes as ``0x`` hex), ``extra`` the
    views read at its block where the event lacks a field."""

    __tablename__ = "events"
    block: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    log_index: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    tx_hash: Mapped[str] = mapped_column(_hash())
    contract: Mapped[str] = mapped_column(String(40), index=True)
    address: Mapped[str] = mapped_column(_addr())
    name: Mapped[str] = mapped_column(String(64), index=True)
    args: Mapped[dict[str, Any]] = mapped_column(JSON)
    extra: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    timestamp: Mapped[int] = mapped_column(BigInteger, default=0)


# ------------------------------------------------------------------------------- derived


class Job(Base):
    """A job: who posted and solved it, what it pays (wei) and where it stands."""

    __tablename__ = "jobs"
    job_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    model_id: Mapped[str] = mapped_column(_hash(), index=True)
    poster: Mapped[str] = mapped_column(_addr(), index=True)
    solver: Mapped[str | None] = mapped_column(_addr(), index=True)
    reward: Mapped[int] = mapped_column(Wei)
    escrow: Mapped[int] = mapped_column(Wei)
    phase: Mapped[str] = mapped_column(String(16))
    spec_hash: Mapped[str] = mapped_column(_hash())
    spec_uri: Mapped[str] = mapped_column(Text)
    init_hash: Mapped[str | None] = mapped_column(_hash())
    merkle_root: Mapped[str | None] = mapped_column(_hash())
    checkpoint_url: Mapped[str | None] = mapped_column(Text)
    total_steps: Mapped[int] = mapped_column(BigInteger)
    checkpoint_interval: Mapped[int] = mapped_column(BigInteger)
    open_deadline: Mapped[int | None] = mapped_column(BigInteger)
    commit_deadline: Mapped[int | None] = mapped_column(BigInteger)
    verdict_deadline: Mapped[int | None] = mapped_column(BigInteger)
    challenge_deadline: Mapped[int | None] = mapped_column(BigInteger)
    segments: Mapped[list[int]] = mapped_column(JSON, default=list)
    dispute_id: Mapped[int | None] = mapped_column(BigInteger)
    shares: Mapped[int] = mapped_column(Wei, default=0)
    outcome: Mapped[str | None] = mapped_column(String(16))
    posted_block: Mapped[int] = mapped_column(BigInteger)


class JobPhase(Base):
    """One phase a job entered, at the event that moved it there."""

    __tablename__ = "job_phases"
    job_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    block: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    log_index: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    phase: Mapped[str] = mapped_column(String(16))
    event: Mapped[str] = mapped_column(String(64))


class Assignment(Base):
    """A verifier's seat on a job: its samples (bit mask), sealed and revealed verdicts."""

    __tablename__ = "assignments"
    job_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    verifier: Mapped[str] = mapped_column(_addr(), primary_key=True)
    sample_mask: Mapped[int] = mapped_column(Wei, default=0)
    approvals: Mapped[list[bool] | None] = mapped_column(JSON)
    bond: Mapped[int] = mapped_column(Wei, default=0)
    abstain_mask: Mapped[int] = mapped_column(Wei, default=0)
    sealed: Mapped[bool] = mapped_column(default=False)
    missed: Mapped[bool] = mapped_column(default=False)


class ForcedError(Base):
    """A settled forced error (docs/FORCED_ERRORS.md): slashed from approvers, paid out (wei)."""

    __tablename__ = "forced_errors"
    job_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    sample_index: Mapped[int] = mapped_column(BigInteger)
    slashed: Mapped[int] = mapped_column(Wei)
    paid: Mapped[int] = mapped_column(Wei)
    block: Mapped[int] = mapped_column(BigInteger)


class Dispute(Base):
    """A dispute: ``kind`` ``"job"`` (a job's disputed segment; id the JobManager's) or
    ``"claim"`` (a run's round claim; id the committee's)."""

    __tablename__ = "disputes"
    kind: Mapped[str] = mapped_column(String(8), primary_key=True)
    dispute_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    job_id: Mapped[int | None] = mapped_column(BigInteger)
    run_id: Mapped[int | None] = mapped_column(BigInteger)
    round: Mapped[int | None] = mapped_column(BigInteger)
    adjudicator: Mapped[str] = mapped_column(String(16))
    sample_index: Mapped[int | None] = mapped_column(BigInteger)
    segment: Mapped[int | None] = mapped_column(BigInteger)
    defender: Mapped[str | None] = mapped_column(_addr())
    challenger: Mapped[str | None] = mapped_column(_addr())
    status: Mapped[str] = mapped_column(String(24))
    lo: Mapped[int | None] = mapped_column(BigInteger)
    hi: Mapped[int | None] = mapped_column(BigInteger)
    committee: Mapped[list[str]] = mapped_column(JSON, default=list)
    step_dispute_id: Mapped[int | None] = mapped_column(BigInteger)
    resolved: Mapped[bool] = mapped_column(default=False)
    segment_valid: Mapped[bool | None] = mapped_column()
    winner: Mapped[str | None] = mapped_column(_addr())
    winner_side: Mapped[str | None] = mapped_column(String(16))
    moves: Mapped[int] = mapped_column(Integer, default=0)
    opened_block: Mapped[int] = mapped_column(BigInteger)


class DisputeMove(Base):
    """One move of a dispute, in chain order: a game move, a committee draw, a vote, the
    resolution; ``actor`` who made it, ``detail`` what it said."""

    __tablename__ = "dispute_moves"
    block: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    log_index: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(8), index=True)
    dispute_id: Mapped[int] = mapped_column(BigInteger, index=True)
    move: Mapped[str] = mapped_column(String(32))
    actor: Mapped[str | None] = mapped_column(_addr())
    detail: Mapped[str] = mapped_column(Text, default="")
    timestamp: Mapped[int] = mapped_column(BigInteger, default=0)


class Stake(Base):
    """An account's stake in one role (wei), as ``stakeOf`` read at its last stake event."""

    __tablename__ = "stakes"
    account: Mapped[str] = mapped_column(_addr(), primary_key=True)
    role: Mapped[str] = mapped_column(String(16), primary_key=True)
    staked: Mapped[int] = mapped_column(Wei, default=0)
    locked: Mapped[int] = mapped_column(Wei, default=0)
    unbonding: Mapped[int] = mapped_column(Wei, default=0)
    release_at: Mapped[int] = mapped_column(BigInteger, default=0)
    slashed: Mapped[int] = mapped_column(Wei, default=0)


class Slash(Base):
    """One ``StakeSlashed`` (wei): who lost what, to whom; ``job_id`` and ``cause`` when a
    JobManager event of the same transaction names them (``"equivocation"``:
    ``VerifierEquivocated``, docs/SECURITY.md P-40), else None."""

    __tablename__ = "slashes"
    block: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    log_index: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    account: Mapped[str] = mapped_column(_addr(), index=True)
    role: Mapped[str] = mapped_column(String(16))
    requested: Mapped[int] = mapped_column(Wei)
    slashed: Mapped[int] = mapped_column(Wei)
    recipient: Mapped[str] = mapped_column(_addr())
    job_id: Mapped[int | None] = mapped_column(BigInteger)
    cause: Mapped[str | None] = mapped_column(String(24))


class Equivocation(Base):
    """A seat proven to have signed two seals for one submission (docs/SECURITY.md P-40): the
    proof (``EquivocationProven``: who sent it, the two commitments) and the slash
    (``VerifierEquivocated``: its stake and reject bonds to the jackpot pool, wei), one
    transaction at ``block``; ``timestamp`` its block's (s). Its verdicts are voided."""

    __tablename__ = "equivocations"
    job_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    verifier: Mapped[str] = mapped_column(_addr(), primary_key=True, index=True)
    block: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    log_index: Mapped[int] = mapped_column(Integer)
    submission_id: Mapped[str | None] = mapped_column(_hash())
    prover: Mapped[str | None] = mapped_column(_addr())
    commitment: Mapped[str | None] = mapped_column(_hash())
    other_commitment: Mapped[str | None] = mapped_column(_hash())
    slashed: Mapped[int] = mapped_column(Wei, default=0)
    bonds: Mapped[int] = mapped_column(Wei, default=0)
    timestamp: Mapped[int] = mapped_column(BigInteger, default=0)


class Earning(Base):
    """One payment to an account (wei): ``kind`` ``credit`` (credited in the escrow),
    ``paid`` (paid to the wallet by the escrow: a whistleblower's bond and jackpot, a
    catch's jackpot while a dispute stays open), ``restaked`` (added to the account's stake at
    a job's end: a solver's reward, a seat's fee and a catch's jackpot, ``StakesRestaked``),
    ``claimed`` (credit withdrawn), ``jackpot``, ``reward`` (a job's solver reward) or
    ``revenue`` (model revenue claimed). ``seq`` tells apart the rows of one event that pays
    several accounts (a ``StakesRestaked`` of the seats: its account's position), else 0."""

    __tablename__ = "earnings"
    block: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    log_index: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False, default=0)
    account: Mapped[str] = mapped_column(_addr(), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    amount: Mapped[int] = mapped_column(Wei)
    job_id: Mapped[int | None] = mapped_column(BigInteger)
    model_id: Mapped[str | None] = mapped_column(_hash())


class Account(Base):
    """An account the index has seen, with the roles it played (comma-separated)."""

    __tablename__ = "accounts"
    address: Mapped[str] = mapped_column(_addr(), primary_key=True)
    roles: Mapped[str] = mapped_column(String(80), default="")


class Model(Base):
    """A registered model: its name (when a spec or a preset names it), owner, shares token,
    registration commitments and lineage head."""

    __tablename__ = "models"
    model_id: Mapped[str] = mapped_column(_hash(), primary_key=True)
    name: Mapped[str | None] = mapped_column(String(200), index=True)
    owner: Mapped[str] = mapped_column(_addr())
    pending_owner: Mapped[str | None] = mapped_column(_addr())
    token: Mapped[str | None] = mapped_column(_addr(), index=True)
    architecture: Mapped[str] = mapped_column(_hash())
    family: Mapped[str] = mapped_column(_hash())
    compute_per_step: Mapped[int] = mapped_column(BigInteger)
    seed_state: Mapped[str] = mapped_column(_hash())
    head: Mapped[str] = mapped_column(_hash())
    posters: Mapped[list[str]] = mapped_column(JSON, default=list)
    total_shares: Mapped[int] = mapped_column(Wei, default=0)
    registered_block: Mapped[int] = mapped_column(BigInteger)


class LineageEntry(Base):
    """Entry ``index`` of a model's lineage: the job whose final state extended it."""

    __tablename__ = "lineage"
    model_id: Mapped[str] = mapped_column(_hash(), primary_key=True)
    index: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    job_id: Mapped[int] = mapped_column(BigInteger)
    final_state: Mapped[str] = mapped_column(_hash())
    block: Mapped[int] = mapped_column(BigInteger)


class ShareTransfer(Base):
    """One ``Transfer`` of a model's shares token (a mint comes from the zero address)."""

    __tablename__ = "share_transfers"
    block: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    log_index: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    model_id: Mapped[str] = mapped_column(_hash(), index=True)
    sender: Mapped[str] = mapped_column(_addr())
    recipient: Mapped[str] = mapped_column(_addr())
    amount: Mapped[int] = mapped_column(Wei)


class ShareBalance(Base):
    """A holder's balance of a model's shares."""

    __tablename__ = "share_balances"
    model_id: Mapped[str] = mapped_column(_hash(), primary_key=True)
    account: Mapped[str] = mapped_column(_addr(), primary_key=True)
    balance: Mapped[int] = mapped_column(Wei, default=0)


class Revenue(Base):
    """Revenue of a model (wei): ``kind`` ``paid`` (by ``account``, the payer) or ``claimed``
    (by a holder)."""

    __tablename__ = "revenue"
    block: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    log_index: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    model_id: Mapped[str] = mapped_column(_hash(), index=True)
    kind: Mapped[str] = mapped_column(String(8))
    account: Mapped[str] = mapped_column(_addr())
    amount: Mapped[int] = mapped_column(Wei)


class Run(Base):
    """A DiLoCo training run (docs/RUNS.md): M seats, R rounds of H inner steps."""

    __tablename__ = "runs"
    run_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    model_id: Mapped[str] = mapped_column(_hash(), index=True)
    run_hash: Mapped[str] = mapped_column(_hash())
    opener: Mapped[str] = mapped_column(_addr())
    start_hash: Mapped[str] = mapped_column(_hash())
    seats: Mapped[int] = mapped_column(BigInteger)
    rounds: Mapped[int] = mapped_column(BigInteger)
    inner_steps: Mapped[int] = mapped_column(BigInteger)
    round: Mapped[int] = mapped_column(BigInteger, default=0)
    opened_block: Mapped[int] = mapped_column(BigInteger)
    spec_uri: Mapped[str | None] = mapped_column(Text, nullable=True)
    """Where the run's spec is read (``RunOpened.specURI``); its contributions carry none."""


class RunRound(Base):
    """Round t of a run: its claim's phase, the registered and counted seats (bit masks)."""

    __tablename__ = "run_rounds"
    run_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    round: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    phase: Mapped[str] = mapped_column(String(16))
    registered: Mapped[int] = mapped_column(Wei, default=0)
    accepted: Mapped[int] = mapped_column(Wei, default=0)
    state_hash: Mapped[str | None] = mapped_column(_hash())
    proposer: Mapped[str | None] = mapped_column(_addr())
    challenger: Mapped[str | None] = mapped_column(_addr())
    challenge_deadline: Mapped[int | None] = mapped_column(BigInteger)
    dispute_id: Mapped[int | None] = mapped_column(BigInteger)
    shares_per_seat: Mapped[int] = mapped_column(Wei, default=0)
    proposals: Mapped[int] = mapped_column(Integer, default=0)
    challenges: Mapped[int] = mapped_column(Integer, default=0)


class Contribution(Base):
    """A seat's contribution job in a round, and the shares it earned once counted."""

    __tablename__ = "contributions"
    run_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    round: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    seat: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    job_id: Mapped[int] = mapped_column(BigInteger)
    solver: Mapped[str | None] = mapped_column(_addr())
    shares: Mapped[int] = mapped_column(Wei, default=0)


# ---------------------------------------------------------------------------------- cache


class RunMetric(Base):
    """The run's metric after round t (validation bits/char for a GPT, accuracy for an MLP),
    keyed by the round's final state hash; ``value`` None when it could not be computed."""

    __tablename__ = "run_metrics"
    run_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    round: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    state_hash: Mapped[str] = mapped_column(_hash(), primary_key=True)
    name: Mapped[str] = mapped_column(String(32))
    value: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)


DERIVED_TABLES: tuple[type[Base], ...] = (
    Job,
    JobPhase,
    Assignment,
    ForcedError,
    Dispute,
    DisputeMove,
    Stake,
    Slash,
    Equivocation,
    Earning,
    Account,
    Model,
    LineageEntry,
    ShareTransfer,
    ShareBalance,
    Revenue,
    Run,
    RunRound,
    Contribution,
)
"""Tables rebuilt from the events (deleted and derived again after a reorganisation)."""
