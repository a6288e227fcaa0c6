"""The dashboard's pages as pydantic models: the `/api` JSON, filled by `dashboard.queries`.

Amounts are wei as ints (JSON numbers may exceed 2**53: the API serialises them as decimal
strings, ``*_wei`` fields), addresses checksummed and never shortened, hashes ``0x`` hex,
deadlines and times block timestamps (s).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, PlainSerializer

__all__ = [
    "AccountSummary",
    "AccountView",
    "AssignmentView",
    "DisputeSummary",
    "DisputeView",
    "EquivocationView",
    "EventView",
    "ForcedErrorView",
    "HolderView",
    "JobSummary",
    "JobView",
    "ModelSummary",
    "ModelView",
    "MoveView",
    "Overview",
    "PhaseStep",
    "RoundView",
    "RunSummary",
    "RunView",
    "SlashRow",
    "StakeRow",
    "Status",
    "WeiInt",
]

WeiInt = Annotated[int, PlainSerializer(lambda v: str(v), return_type=str, when_used="json")]
"""An amount in wei: an int in Python, a decimal string in JSON (no float rounding)."""


class PhaseStep(BaseModel):
    """A phase a job entered, at (block, log index), by an event."""

    phase: str
    block: int
    event: str


class AssignmentView(BaseModel):
    """A verifier's seat: samples (indices into the job's sampled segments), verdicts (the
    approvals as revealed, the abstained sample indices); ``voided`` when the seat was proven
    to have signed two seals (its verdicts no longer count, docs/SECURITY.md P-40)."""

    verifier: str
    samples: list[int]
    sealed: bool
    approvals: list[bool] | None
    abstained: list[int]
    bond_wei: WeiInt
    missed: bool
    voided: bool


class EquivocationView(BaseModel):
    """A seat proven to have signed two seals (docs/SECURITY.md P-40): who proved it, the two
    commitments, its stake and reject bonds slashed into the jackpot pool (wei), the block and
    its timestamp (s)."""

    verifier: str
    prover: str | None
    commitment: str | None
    other_commitment: str | None
    slashed_wei: WeiInt
    bonds_wei: WeiInt
    block: int
    timestamp: int


class JobSummary(BaseModel):
    """One row of the jobs table."""

    job_id: int
    model_id: str
    model: str
    phase: str
    poster: str
    solver: str | None
    reward_wei: WeiInt
    dispute_id: int | None
    outcome: str | None
    total_steps: int
    checkpoint_interval: int
    init_hash: str | None
    merkle_root: str | None


class JobView(JobSummary):
    """A job in full: deadlines (s), spec, commitments, phases, seats, forced error."""

    spec_hash: str
    spec_uri: str
    checkpoint_url: str | None
    open_deadline: int | None
    commit_deadline: int | None
    verdict_deadline: int | None
    challenge_deadline: int | None
    segments: list[int]
    shares: WeiInt
    phases: list[PhaseStep]
    assignments: list[AssignmentView]
    forced_error: ForcedErrorView | None
    equivocations: list[EquivocationView]


class ForcedErrorView(BaseModel):
    """A settled forced error (wei)."""

    job_id: int
    sample_index: int
    slashed_wei: WeiInt
    paid_wei: WeiInt
    block: int


class MoveView(BaseModel):
    """One move of a dispute."""

    block: int
    log_index: int
    timestamp: int
    move: str
    actor: str | None
    detail: str


class DisputeSummary(BaseModel):
    """One row of the disputes table; ``key`` is the URL id (``N`` or ``claim-N``)."""

    key: str
    kind: str
    dispute_id: int
    job_id: int | None
    run_id: int | None
    round: int | None
    adjudicator: str
    status: str
    moves: int
    resolved: bool
    winner: str | None
    winner_side: str | None


class DisputeView(DisputeSummary):
    """A dispute in full, with every move in chain order."""

    sample_index: int | None
    segment: int | None
    defender: str | None
    challenger: str | None
    lo: int | None
    hi: int | None
    step_dispute_id: int | None
    committee: list[str]
    segment_valid: bool | None
    timeline: list[MoveView]


class EventView(BaseModel):
    """One stored protocol event: ``args`` JSON-able (bytes ``0x`` hex, ints kept), ``address``
    the emitting contract, ``timestamp`` its block's (s)."""

    block: int
    log_index: int
    tx_hash: str
    contract: str
    address: str
    name: str
    args: dict[str, Any]
    timestamp: int


class RoundView(BaseModel):
    """Round t of a run: claim phase, registered and counted seats, metric when known."""

    round: int
    phase: str
    registered: list[int]
    accepted: list[int]
    state_hash: str | None
    proposer: str | None
    challenger: str | None
    dispute_id: int | None
    proposals: int
    challenges: int
    shares_per_seat_wei: WeiInt
    contributions: dict[int, int]
    metric: float | None


class RunSummary(BaseModel):
    """One row of the runs table."""

    run_id: int
    model_id: str
    model: str
    seats: int
    rounds: int
    inner_steps: int
    round: int
    phase: str


class RunView(RunSummary):
    """A run in full: its rounds."""

    run_hash: str
    opener: str
    start_hash: str
    metric_name: str | None
    round_views: list[RoundView]


class HolderView(BaseModel):
    """A shareholder: balance and share of the total in basis points."""

    account: str
    shares: WeiInt
    bps: int


class ModelView(BaseModel):
    """A model: owner, shares token, holders, lineage, revenue paid and claimed (wei)."""

    model_id: str
    name: str | None
    owner: str
    pending_owner: str | None
    token: str | None
    posters: list[str]
    compute_per_step: int
    seed_state: str
    head: str
    total_shares: WeiInt
    holders: list[HolderView]
    lineage: list[dict[str, int | str]]
    revenue_paid_wei: WeiInt
    revenue_claimed_wei: WeiInt
    revenue_claims: dict[str, WeiInt]
    jobs: list[int]
    runs: list[int]


class StakeRow(BaseModel):
    """An account's stake in one role (wei); release_at a timestamp (s)."""

    role: str
    staked_wei: WeiInt
    locked_wei: WeiInt
    unbonding_wei: WeiInt
    release_at: int
    slashed_wei: WeiInt


class SlashRow(BaseModel):
    """One slash of the account (wei); the job and the cause (``"equivocation"``) when the
    index knows them, else None."""

    block: int
    role: str
    slashed_wei: WeiInt
    recipient: str
    job_id: int | None
    cause: str | None


class AccountView(BaseModel):
    """An account: roles, stakes, slashes, earnings per kind (wei), shares per model."""

    address: str
    roles: list[str]
    stakes: list[StakeRow]
    slashes: list[SlashRow]
    earnings: dict[str, WeiInt]
    shares: dict[str, WeiInt]
    jobs_solved: list[int]


class AccountSummary(BaseModel):
    """One row of the accounts table (wei)."""

    address: str
    roles: list[str]
    staked_wei: WeiInt
    locked_wei: WeiInt
    unbonding_wei: WeiInt
    slashed_wei: WeiInt
    earned_wei: WeiInt


class ModelSummary(BaseModel):
    """One row of the models table."""

    model_id: str
    name: str | None
    owner: str
    total_shares: WeiInt
    holders: int


class Status(BaseModel):
    """Where the index stands."""

    chain_id: int | None
    cursor: int | None
    events: int
    last_block: int | None


class Overview(BaseModel):
    """The home page."""

    status: Status
    jobs: list[JobSummary]
    runs: list[RunSummary]
    disputes: list[DisputeSummary]
    forced_errors: list[ForcedErrorView]
    models: list[ModelSummary]
    accounts: list[AccountSummary]


JobView.model_rebuild()
