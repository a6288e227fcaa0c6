"""The chain calls the nodes make, as typed `Protocol`s (the nodes' port to the chain).

Nodes depend on `ChainPort`, not on `chain.client.ChainClient`: the real client satisfies it
(checked by mypy below) and so does the in-memory fake of the unit tests
(tests/utils/fake_chain.py). One protocol per contract facade, mirroring ``client.token``,
``client.stakes``, ``client.jobs``, ``client.round``, ``client.committee``, ``client.game``.
Transactions return an opaque receipt (`object`): nodes only learn whether one was mined.

Units: wei, seconds (block timestamps), blocks; hashes are 32-byte ``bytes``.

Run: not a script; ``def __init__(self, client: ChainPort) -> None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from chain.types import (
    Assignment,
    ClaimsView,
    DisputeView,
    JobParamsView,
    JobView,
    RoundView,
    RoundWindows,
    StepClaimView,
)
from veritrain.bisection import GameView
from veritrain.enums import DisputePhase, Role, RoundOutcome, Verdict

__all__ = [
    "AdjudicatorPort",
    "ChainPort",
    "CommitteePort",
    "GamePort",
    "JobsPort",
    "RoundPort",
    "StakesPort",
    "TokenPort",
]


class TokenPort(Protocol):
    """``client.token``: the payment token."""

    def balance_of(self, account: str | None = None, /) -> int: ...
    def faucet(self, amount: int, /) -> object: ...


class StakesPort(Protocol):
    """``client.stakes``: StakeManager."""

    def stake(self, role: Role | int, amount: int, /) -> object: ...
    def free_stake(self, account: str | None = None, role: Role | int = ..., /) -> int: ...
    def is_active(self, account: str | None = None, role: Role | int = ..., /) -> bool: ...
    def min_stake(self, role: Role | int, /) -> int: ...


class JobsPort(Protocol):
    """``client.jobs``: JobManager."""

    def job_params(self) -> JobParamsView: ...
    def job_count(self) -> int: ...
    def get_job(self, job_id: int, /) -> JobView: ...
    def get_assignment(self, job_id: int, /) -> Assignment: ...
    def verdicts_of(self, job_id: int, verifier: str, /) -> list[Verdict]: ...
    def challenger_of(self, job_id: int, sample_index: int, verifier: str, /) -> str | None: ...
    def submission_of(self, job_id: int, /) -> bytes: ...
    def claim_job(self, job_id: int, /) -> object: ...
    def commit_checkpoints(
        self,
        job_id: int,
        merkle_root: bytes,
        init_proof: Sequence[bytes],
        checkpoint_url: str,
        secret_commitment: bytes,
        /,
    ) -> object: ...
    def assign_verifiers(self, job_id: int, /) -> object: ...
    def challenge_approval(self, job_id: int, sample_index: int, verifier: str, /) -> object: ...
    def finalize(self, job_id: int, /) -> object: ...


class EscrowPort(Protocol):
    """``client.escrow``: Escrow (every credit: payouts, committee rewards, move bonds)."""

    def credit_of(self, account: str | None = None, /) -> int: ...
    def claim_credit(self) -> object: ...


class RoundPort(Protocol):
    """``client.round``: VerificationRound (docs/FORCED_ERRORS.md), keyed by submission id."""

    def forced_error_rate_bps(self) -> int: ...
    def outcome(self, submission_id: bytes, /) -> tuple[RoundOutcome, int]: ...
    def claims_of(self, submission_id: bytes, /) -> ClaimsView: ...
    def round_of(self, submission_id: bytes, /) -> RoundView: ...
    def windows_of(self, submission_id: bytes, /) -> RoundWindows: ...
    def verdict_commitment_of(
        self, submission_id: bytes, verifier: str | None = None, /
    ) -> tuple[bytes, bool]: ...
    def post_claims(
        self, submission_id: bytes, start_hashes: Sequence[bytes], end_hashes: Sequence[bytes], /
    ) -> object: ...
    def commit_verdicts(self, submission_id: bytes, commitment: bytes, /) -> object: ...
    def reveal_verdicts(
        self, submission_id: bytes, approvals: Sequence[bool], salt: bytes, /
    ) -> object: ...
    def reveal_secret(
        self,
        submission_id: bytes,
        secret: bytes,
        forced_true_end: bytes,
        start_proofs: Sequence[Sequence[bytes]],
        end_proofs: Sequence[Sequence[bytes]],
        /,
    ) -> object: ...


class CommitteePort(Protocol):
    """``client.committee``: ArbitrationCommittee."""

    def dispute_count(self) -> int: ...
    def get_dispute(self, dispute_id: int, /) -> DisputeView: ...
    def dispute_phase(self, dispute_id: int, /) -> DisputePhase: ...
    def committee_of(self, dispute_id: int, /) -> list[str]: ...
    def ballot_of(self, dispute_id: int, member: str, /) -> tuple[bytes, bool, bool]: ...
    def step_claim_of(self, dispute_id: int, /) -> StepClaimView: ...
    def draw_committee(self, dispute_id: int, /) -> object: ...
    def commit_vote(self, dispute_id: int, commitment: bytes, /) -> object: ...
    def reveal_vote(self, dispute_id: int, segment_valid: bool, salt: bytes, /) -> object: ...
    def resolve(self, dispute_id: int, /) -> object: ...


class GamePort(Protocol):
    """``client.game``: BisectionGame (docs/DISPUTES.md)."""

    def get_game(self, dispute_id: int, /) -> GameView: ...
    def move_bond(self) -> int: ...
    def post_endpoints(
        self,
        dispute_id: int,
        start_hash: bytes,
        end_hash: bytes,
        start_proof: Sequence[bytes],
        end_proof: Sequence[bytes],
        /,
    ) -> object: ...
    def bisect(
        self, dispute_id: int, expected_lo: int, expected_hi: int, mid_hash: bytes, /
    ) -> object: ...
    def respond(
        self, dispute_id: int, expected_lo: int, expected_hi: int, agree: bool, /
    ) -> object: ...
    def claim_timeout(self, dispute_id: int, /) -> object: ...


class AdjudicatorPort(Protocol):
    """``client.adjudicator``: whichever adjudicator the deployment runs."""

    @property
    def name(self) -> str: ...
    def resolved(self, dispute_id: int, /) -> bool: ...


class ChainPort(Protocol):
    """Everything a node asks of the chain: its account, the clock, the adjudicator (its name
    and "dispute resolved?" view), and one port per contract."""

    @property
    def address(self) -> str: ...
    @property
    def adjudicator(self) -> AdjudicatorPort: ...
    @property
    def token(self) -> TokenPort: ...
    @property
    def stakes(self) -> StakesPort: ...
    @property
    def jobs(self) -> JobsPort: ...
    @property
    def round(self) -> RoundPort: ...
    @property
    def committee(self) -> CommitteePort: ...
    @property
    def game(self) -> GamePort: ...
    @property
    def escrow(self) -> EscrowPort: ...
    def timestamp(self) -> int: ...
    def block_number(self) -> int: ...


if TYPE_CHECKING:
    from chain.client import ChainClient

    def _chain_client_is_a_port(client: ChainClient) -> ChainPort:
        return client  # mypy checks that ChainClient satisfies ChainPort
