"""`client.committee`: `ArbitrationCommittee`: committee draw, commit-reveal votes,
resolution, step claims.

Typed calls of `ArbitrationCommittee` (ABI loaded from contracts/out). Transacting methods
return the mined receipt or raise a decoded `chain.errors.ContractRevert`; views return plain
values or the frozen views of `chain.types`. Units: wei, seconds, blocks.

Run: not a script; ``client.committee.draw_committee(...)``.
"""

from __future__ import annotations

from eth_utils.address import to_checksum_address
from web3.types import TxReceipt

from chain.contracts._base import ContractFacade
from chain.types import (
    DisputePhase,
    DisputeStatus,
    DisputeView,
    StepClaimView,
    from_struct,
)
from veritrain.commitments import vote_commitment

__all__ = ["CommitteeFacade"]


class CommitteeFacade(ContractFacade):
    """Typed facade of `ArbitrationCommittee` for one client (``client.committee``).

    Args:
        client: the owning `ChainClient` (signing, nonces, calls).
    """

    HANDLE = "arbitration"

    def draw_committee(self, dispute_id: int) -> TxReceipt:
        """Draw the dispute's committee (after its randomness block is mined)."""
        return self._client.transact(self.contract, "drawCommittee", dispute_id)

    def commit_vote(self, dispute_id: int, commitment: bytes) -> TxReceipt:
        """Commit ``vote_commitment(dispute_id, address, valid, salt)`` as a seated arbiter
        (`veritrain.commitments.vote_commitment`)."""
        return self._client.transact(self.contract, "commitVote", dispute_id, commitment)

    def reveal_vote(self, dispute_id: int, segment_valid: bool, salt: bytes) -> TxReceipt:
        """Reveal a committed vote."""
        return self._client.transact(self.contract, "revealVote", dispute_id, segment_valid, salt)

    def vote_commitment(self, dispute_id: int, segment_valid: bool, salt: bytes) -> bytes:
        """This account's commitment for a vote (computed locally; see `vote_commitment`)."""
        return vote_commitment(dispute_id, self._client.address, segment_valid, salt)

    def resolve(self, dispute_id: int) -> TxReceipt:
        """Resolve a dispute (all revealed, or after the reveal deadline)."""
        return self._client.transact(self.contract, "resolve", dispute_id)

    def get_dispute(self, dispute_id: int) -> DisputeView:
        """``getDispute(disputeId)`` as a `DisputeView`."""
        data = self._call_struct("getDispute", dispute_id)
        data["status"] = DisputeStatus(int(data["status"]))
        return from_struct(DisputeView, data, dispute_id=dispute_id)

    def dispute_phase(self, dispute_id: int) -> DisputePhase:
        """The dispute's current `DisputePhase` (``phaseOf``)."""
        return DisputePhase(int(self._client.call(self.contract, "phaseOf", dispute_id)))

    def committee_of(self, dispute_id: int) -> list[str]:
        """Addresses seated on a dispute's committee."""
        return [str(a) for a in self._client.call(self.contract, "committeeOf", dispute_id)]

    def ballot_of(self, dispute_id: int, member: str) -> tuple[bytes, bool, bool]:
        """``ballotOf``: (commitment, revealed, segment_valid) of a committee member."""
        commitment, revealed, valid = self._client.call(
            self.contract, "ballotOf", dispute_id, to_checksum_address(member)
        )
        return bytes(commitment), bool(revealed), bool(valid)

    def is_excluded(self, dispute_id: int, account: str | None = None) -> bool:
        """True when ``account`` may not sit on the dispute's committee."""
        return bool(
            self._client.call(
                self.contract,
                "isExcluded",
                dispute_id,
                to_checksum_address(account or self._client.address),
            )
        )

    def dispute_count(self) -> int:
        """Number of disputes opened."""
        return int(self._client.call(self.contract, "disputeCount"))

    def step_claim_of(self, dispute_id: int) -> StepClaimView:
        """Committee ``stepClaimOf`` as a `StepClaimView`. For a step dispute (``is_step``) the
        vote says whether ``claimed_end_hash`` is the state after replaying ``steps`` steps from
        step ``step`` from ``start_hash``; ``is_step`` is False for a v0 segment dispute."""
        is_step, step, start, claimed, steps = self._client.call(
            self.contract, "stepClaimOf", dispute_id
        )
        return StepClaimView(
            dispute_id=dispute_id,
            is_step=bool(is_step),
            step=int(step),
            start_hash=bytes(start),
            claimed_end_hash=bytes(claimed),
            steps=int(steps),
        )

    def is_claim_dispute(self, dispute_id: int) -> bool:
        """Whether the dispute judges a claim of the claim parent (a run's round claim,
        `RunRegistry.claimOf`) rather than a job's segment or step."""
        return bool(self._client.call(self.contract, "isClaimDispute", dispute_id))
