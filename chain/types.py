"""Typed views of on-chain values: frozen dataclasses for structs and the decoded event record.

The enums mirroring the Solidity enums live in the core (`veritrain.enums`) and the game view
in `veritrain.bisection`; both are re-exported here for the bindings' callers.

Amounts are in wei of the payment token, times are block timestamps in seconds, block numbers
are blocks. Addresses are checksummed hex strings; bytes32 values are ``bytes`` of length 32.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, NewType, TypeVar

from veritrain.bisection import GameView
from veritrain.enums import (
    DisputePhase,
    DisputeStatus,
    GameStatus,
    JobStatus,
    Role,
    RoundOutcome,
    RunRoundPhase,
    Side,
    Verdict,
)

__all__ = [
    "ABSTENTION_BOND",
    "SLASH_ANNOUNCEMENTS",
    "Address",
    "JobId",
    "DisputeId",
    "Role",
    "JobStatus",
    "Verdict",
    "DisputeStatus",
    "DisputePhase",
    "GameStatus",
    "Side",
    "RoundOutcome",
    "RunRoundPhase",
    "RunView",
    "RunRoundView",
    "RoundView",
    "RoundWindows",
    "ClaimsView",
    "GameView",
    "StepClaimView",
    "JobView",
    "Assignment",
    "StakeView",
    "ChainIdentity",
    "JobParamsView",
    "DisputeView",
    "DecodedEvent",
    "snake_case",
    "struct_to_dict",
    "from_struct",
]

Address = NewType("Address", str)
JobId = NewType("JobId", int)
DisputeId = NewType("DisputeId", int)


def snake_case(name: str) -> str:
    """``checkpointURL`` -> ``checkpoint_url``, ``jobId`` -> ``job_id``."""
    out = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    out = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", out)
    return out.lower()


def struct_to_dict(components: Sequence[Mapping[str, Any]], value: Sequence[Any]) -> dict[str, Any]:
    """Turn a decoded ABI tuple into a dict keyed by snake_case component names (recursively).

    Args:
        components: the ABI ``components`` (or ``outputs``) list describing the tuple.
        value: the decoded tuple.
    """
    out: dict[str, Any] = {}
    for comp, item in zip(components, value, strict=True):
        key = snake_case(comp.get("name") or f"field{len(out)}")
        if comp.get("type") == "tuple" and "components" in comp:
            item = struct_to_dict(comp["components"], item)
        out[key] = item
    return out


T = TypeVar("T")


def from_struct(cls: type[T], data: Mapping[str, Any], **extra: Any) -> T:
    """Build a dataclass from a snake_case dict, ignoring unknown keys and filling defaults."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    kwargs = {k: v for k, v in {**data, **extra}.items() if k in names}
    return cls(**kwargs)


@dataclass(frozen=True)
class JobView:
    """``JobManager.getJob(jobId)``; deadlines are timestamps (s), randomness_block a block.

    ``spec_hash``: from the job's ``JobPosted`` event (the contract keeps it only inside the
    job's training key); ``open_deadline``: last second an Open job may be claimed (after it
    anyone may expire it);
    ``claims_deadline``: last second the solver may post its claims; verifiers seal by
    ``verdict_deadline = claims_deadline + verdict_window``.
    """

    job_id: int
    submitter: str
    solver: str
    model_id: bytes
    spec_hash: bytes
    init_hash: bytes
    merkle_root: bytes
    total_steps: int
    checkpoint_interval: int
    reward: int
    status: JobStatus
    commit_deadline: int
    randomness_block: int
    verdict_deadline: int
    challenge_deadline: int
    dispute_id: int
    open_deadline: int = 0
    claims_deadline: int = 0
    spec_uri: str = ""
    checkpoint_url: str = ""

    @property
    def num_segments(self) -> int:
        """Number of segments N / k."""
        return self.total_steps // self.checkpoint_interval if self.checkpoint_interval else 0


@dataclass(frozen=True)
class Assignment:
    """``JobManager.getAssignment(jobId)``: assigned verifiers and sampled segment indices."""

    verifiers: tuple[str, ...]
    segments: tuple[int, ...]


@dataclass(frozen=True)
class ChainIdentity:
    """Which chain and deployment a node's persisted state belongs to
    (`ChainClient.chain_identity`).

    A devnet restarted from genesis keeps its chain id and, deploying with the same account
    and nonces, its contract addresses; the hash of the deployment block tells it apart.

    Attributes:
        chain_id: EIP-155 chain id, read live from the RPC.
        deployment: the JobManager address of the deployment (checksummed).
        block: the deployment block number (the manifest's ``block``).
        block_hash: 0x-hex hash of that block on this chain, or ``""`` when the chain has no
            such block (it was restarted and is shorter).
    """

    chain_id: int
    deployment: str
    block: int
    block_hash: str

    def describe(self) -> str:
        """``chain 31337, deployment 0x.., block 1 (0xab..)``: how nodes, the index and their
        refusals name a chain and deployment."""
        shown = self.block_hash[:12] + ".." if self.block_hash else "missing"
        return f"chain {self.chain_id}, deployment {self.deployment}, block {self.block} ({shown})"


@dataclass(frozen=True)
class StakeView:
    """``StakeManager.stakeOf(account, role)``; amounts in wei, release_at a timestamp (s)."""

    staked: int
    locked: int
    unbonding: int
    release_at: int

    @property
    def free(self) -> int:
        """Staked minus locked, in wei."""
        return self.staked - self.locked


@dataclass(frozen=True)
class JobParamsView:
    """``JobManager.params()``: amounts in wei, windows in seconds, bounds in steps or
    segments, ``max_reassignments`` a count."""

    solver_stake: int
    verifier_stake: int
    challenge_bond: int
    verifier_fee: int
    arbiter_fee: int
    verifiers_per_job: int
    samples_per_job: int
    commit_window: int
    verdict_window: int
    challenge_window: int
    jackpot: int = 0
    reveal_window: int = 0
    claims_window: int = 0
    open_window: int = 0
    max_total_steps: int = 0
    max_segments: int = 0
    max_segment_steps: int = 0
    max_reassignments: int = 0


@dataclass(frozen=True)
class ClaimsView:
    """``client.round.claims_of(submission_id)`` (read from the ``ClaimsPosted`` event): the
    solver's claims, in sample order (empty tuples until posted), and the secret commitment the
    round's stored claims hash binds, as the round kept it (its top 208 bits,
    `veritrain.commitments.round_hash`; every call that passes the claims back passes it too)."""

    start_hashes: tuple[bytes, ...]
    end_hashes: tuple[bytes, ...]
    secret_commitment: bytes

    @property
    def posted(self) -> bool:
        """True once the solver posted its claims."""
        return bool(self.start_hashes)


@dataclass(frozen=True)
class RoundView:
    """``VerificationRound.roundOf(submissionId)``, read from the round's one storage word: the
    top 208 bits of the solver's secret commitment until its claims are posted, then of the
    claims hash that binds it (`veritrain.commitments.round_hash`; zero once the secret is
    revealed), whether the secret was revealed (the secret itself is only in the
    ``SecretRevealed`` event), how many assigned verifiers sealed their verdicts on chain, and
    the block of the ``ClaimsPosted`` event (0 until the claims are posted, kept after the
    reveal)."""

    submission_id: bytes
    commitment: bytes
    revealed: bool
    committed: int
    claims_block: int = 0


@dataclass(frozen=True)
class RoundWindows:
    """``JobManager.windowsOf(submissionId)`` (timestamps, s): verdict reveals run from
    ``verdict_reveal_opens`` (earlier once every verifier committed) to
    ``verdict_reveal_closes``; the secret reveal runs (``secret_reveal_opens``,
    ``secret_reveal_closes``]."""

    verdict_reveal_opens: int
    verdict_reveal_closes: int
    secret_reveal_opens: int
    secret_reveal_closes: int


@dataclass(frozen=True)
class DisputeView:
    """``ArbitrationCommittee.getDispute(disputeId)`` (struct ``Dispute``).

    Deadlines are timestamps (s), randomness_block a block number, seat_stake wei.
    """

    dispute_id: int
    job_id: int
    segment: int
    status: DisputeStatus
    randomness_block: int
    commit_deadline: int
    reveal_deadline: int
    seat_stake: int
    committed: int
    revealed: int
    valid_votes: int
    invalid_votes: int
    segment_valid: bool


@dataclass(frozen=True)
class StepClaimView:
    """``ArbitrationCommittee.stepClaimOf(disputeId)`` (struct ``StepClaim``).

    For a step dispute (``is_step``) the committee replays ``steps`` steps (one, or the interval
    a challenger escalated) from step ``step``, from the state whose hash is ``start_hash``, and
    votes whether ``claimed_end_hash`` is the state at ``step + steps``.
    """

    dispute_id: int
    is_step: bool
    step: int
    start_hash: bytes
    claimed_end_hash: bytes
    steps: int = 1


@dataclass(frozen=True)
class RunView:
    """``RunRegistry.getRun(runId)`` (struct ``RunInfo``): a DiLoCo training run.

    ``run_hash`` is keccak256 of the run's canonical JSON, ``start_hash`` the state hash of its
    outer state 0; ``seats`` M, ``rounds`` R, ``inner_steps`` H (steps); ``round`` is the
    current round (== ``rounds`` once the run has ended).
    """

    run_id: int
    model_id: bytes
    run_hash: bytes
    opener: str
    start_hash: bytes
    seats: int
    rounds: int
    inner_steps: int
    round: int

    @property
    def ended(self) -> bool:
        """Whether every round is final."""
        return self.round >= self.rounds


@dataclass(frozen=True)
class RunRoundView:
    """``RunRegistry.getRound(runId, round)`` (struct ``RunRound``).

    ``registered`` and ``accepted`` are seat bitmasks (bit j: seat j); ``state_hash`` is the
    standing (or final) claim's outer state t + 1; ``challenge_deadline`` a timestamp (s).
    """

    run_id: int
    round: int
    phase: RunRoundPhase
    registered: int
    accepted: int
    state_hash: bytes
    proposer: str
    challenger: str
    challenge_deadline: int
    dispute_id: int

    def seats(self, mask: int) -> list[int]:
        """The seats whose bits are set in ``mask`` (``registered`` or ``accepted``)."""
        return [j for j in range(mask.bit_length()) if mask >> j & 1]


@dataclass(frozen=True)
class DecodedEvent:
    """One decoded log. ``args`` keeps the Solidity parameter names."""

    contract: str
    event: str
    args: Mapping[str, Any]
    block_number: int
    log_index: int
    tx_hash: str
    address: str

    @property
    def position(self) -> tuple[int, int]:
        """Ordering key (block number, log index)."""
        return (self.block_number, self.log_index)


ABSTENTION_BOND = "abstention bond"
"""Cause of a slash that forfeits a seat's abstention bond (docs/SECURITY.md P-33): the seat sealed
no end on a sample that another seat replayed. The price of missing data, not of a wrong verdict."""

SLASH_ANNOUNCEMENTS: Mapping[str, tuple[str, str]] = {
    "BondForfeited": ("account", "reject bond"),
    "AbstentionForfeited": ("verifier", ABSTENTION_BOND),
    "VerifierEquivocated": ("verifier", "equivocation"),
}
"""The JobManager events that announce a seat's slash from its verifier stake: the
``StakeSlashed`` that carries it out is the very next log of the same transaction and names the
same account. Per event: the argument naming the seat, and the slash's cause. A ``StakeSlashed``
after none of them is any other slash (a cheating solver's, a lazy approver's)."""


def restaked_amounts(args: Mapping[str, Any]) -> list[tuple[str, int]]:
    """Each account of a ``StakesRestaked`` (the StakeManager's event of a job's end) with the
    earnings (wei) added to its stake: the solver's reward, a seat's fee, a catching seat's
    jackpot with it. Earnings are restaked, not paid to the wallet: they leave the stake with
    ``requestUnbond`` and ``withdraw`` like any stake.

    Args:
        args: the event's arguments (``accounts``, ``earned``: one amount per account, or a
            single amount every account earned).

    Returns:
        ``[(account, wei)]`` in the event's order, accounts that earned nothing left out.
    """
    accounts = list(args["accounts"])
    earned = [int(e) for e in args["earned"]]
    if len(earned) == 1:
        earned *= len(accounts)
    return [(a, e) for a, e in zip(accounts, earned, strict=True) if e]


def revealed_approvals(args: Mapping[str, Any]) -> list[bool]:
    """A ``VerdictsRevealed`` event's approvals, one per sampled segment in sample order.

    The event carries them as a mask (bit i set = the seat approved sample i) beside its ends,
    one per sample, or none for a signed reveal's entry that opened the claimed ends (every
    sample approved: the mask then has one bit per sample); this is the one place that unpacks
    it. Only the seat's own samples count (`JobManager.sampleMaskOf`): its verdicts on the
    others are ignored.

    Args:
        args: the decoded event's arguments (``approveMask``, an int, and ``ends``, one
            32-byte end per sample or none).

    Returns:
        One boolean per sample: True = approved, False = rejected or abstained.
    """
    mask, ends = int(args["approveMask"]), args["ends"]
    samples = len(ends) if len(ends) else mask.bit_length()
    return [bool((mask >> i) & 1) for i in range(samples)]
