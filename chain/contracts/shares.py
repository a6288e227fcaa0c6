"""`client.shares`: `ShareRegistry` and each model's ModelShares token: model registration
(owner, hand-over, authorised posters, architecture/family/compute commitments), the model's
lineage (head, finalized states), shares, ownership, revenue.

Typed calls of `ShareRegistry` (ABI loaded from contracts/out). Transacting methods return the
mined receipt or raise a decoded `chain.errors.ContractRevert`; views return plain values or
the frozen views of `chain.types`. Units: wei, seconds, blocks.

Run: not a script; ``client.shares.shares_of(...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eth_utils.address import to_checksum_address
from pydantic import BaseModel, ConfigDict
from web3.contract import Contract
from web3.types import TxReceipt

from chain.contracts._base import ContractFacade
from chain.errors import ChainValueError

if TYPE_CHECKING:
    from chain.client import ChainClient

__all__ = ["POST_KINDS", "HeadSlot", "LineageEntry", "RegisteredModel", "SharesFacade"]

#: ``PostKind`` of contracts/src/types/LineageTypes.sol, by its ABI value: what a job is to its
#: model's shares, fixed when it is posted.
POST_KINDS = ("none", "lineage", "paid-only", "contribution")


class RegisteredModel(BaseModel):
    """What a model was registered with (``ShareRegistry.modelSpecOf``; field meanings in
    `veritrain.lineage.ModelCommitments`).

    Attributes:
        architecture, family: 32-byte commitments.
        compute_per_step: FLOP per optimizer step (1 share = 1 FLOP of verified training).
        seed_state: 32-byte state hash of the seed initialisation (the lineage's root).
    """

    model_config = ConfigDict(frozen=True)

    architecture: bytes
    family: bytes
    compute_per_step: int
    seed_state: bytes


class LineageEntry(BaseModel):
    """One finalized state of a model's lineage (``ShareRegistry.lineageAt``).

    Attributes:
        index: position (0 = the first state after the seed).
        state: 32-byte state hash at the end of the job.
        job_id: the job that produced it.
    """

    model_config = ConfigDict(frozen=True)

    index: int
    state: bytes
    job_id: int


class HeadSlot(BaseModel):
    """The extension slot of a model's current head (``ShareRegistry.slotOf``, docs/SECURITY.md
    P-18): the job that took it at post, and once that job finalized, the last time its final
    state may be appended to the lineage (which mints its shares).

    Attributes:
        job_id: the slot job (0: the slot is free or has lapsed).
        extend_by: unix seconds; 0 while the slot job has not finalized.
    """

    model_config = ConfigDict(frozen=True)

    job_id: int
    extend_by: int


class SharesFacade(ContractFacade):
    """Typed facade of `ShareRegistry` for one client (``client.shares``).

    Args:
        client: the owning `ChainClient` (signing, nonces, calls).
    """

    HANDLE = "share_registry"

    def __init__(self, client: ChainClient) -> None:
        super().__init__(client)
        self._tokens: dict[bytes, Contract] = {}

    def forget(self) -> None:
        """Drop the cached ModelShares handles (a new deployment was bound)."""
        self._tokens.clear()

    def is_shares_token(self, address: str) -> bool:
        """Whether ``address`` is a ModelShares token this facade has resolved."""
        return any(t.address == address for t in self._tokens.values())

    # ------------------------------------------------------------------------- models
    def register_model(
        self,
        model_id: bytes,
        *,
        architecture: bytes,
        family: bytes,
        compute_per_step: int,
        seed_state: bytes,
    ) -> TxReceipt:
        """Register ``model_id`` with this account as its owner (first come, first served),
        bound to its commitments (`veritrain.lineage.ModelCommitments.of(spec, seed_state)`
        gives them for a spec: pass ``**commitments.model_dump()``).

        Args:
            model_id: ``keccak256(model name)`` (32 bytes, non-zero).
            architecture: architecture commitment (32 bytes, non-zero).
            family: family commitment (32 bytes, non-zero).
            compute_per_step: FLOP per optimizer step (> 0, uint64).
            seed_state: state hash the first job starts from (32 bytes, non-zero).

        Raises:
            ContractRevert: ``ModelAlreadyRegistered`` (another owner holds it), ``ZeroModelId``,
                ``ZeroModelCommitment``.
        """
        return self._client.transact(
            self.contract,
            "registerModel",
            bytes(model_id),
            bytes(architecture),
            bytes(family),
            int(compute_per_step),
            bytes(seed_state),
        )

    def registered_model(self, model_id: bytes) -> RegisteredModel | None:
        """The commitments ``model_id`` was registered with, or None if it is unregistered."""
        arch, family, compute, seed = self._client.call(
            self.contract, "modelSpecOf", bytes(model_id)
        )
        if int(compute) == 0:
            return None
        return RegisteredModel(
            architecture=bytes(arch),
            family=bytes(family),
            compute_per_step=int(compute),
            seed_state=bytes(seed),
        )

    def head_of(self, model_id: bytes) -> bytes:
        """Current head of ``model_id``: its last lineage state, or its seed state (32 bytes;
        zeros if unregistered). Only a job that starts from it can mint shares."""
        return bytes(self._client.call(self.contract, "headOf", bytes(model_id)))

    def slot_of(self, model_id: bytes) -> HeadSlot:
        """The job holding ``model_id``'s head slot now (job 0 when the slot is free or has
        lapsed) and, once it finalized, the deadline (unix seconds) of its ``extend_lineage``."""
        job_id, extend_by = self._client.call(self.contract, "slotOf", bytes(model_id))
        return HeadSlot(job_id=int(job_id), extend_by=int(extend_by))

    def post_kind_of(self, job_id: int) -> str:
        """What job ``job_id`` is to its model's shares, fixed at its post: ``"lineage"`` (it
        took its head's slot), ``"paid-only"``, ``"contribution"`` (a run's), or ``"none"`` (no
        such job)."""
        return POST_KINDS[int(self._client.call(self.contract, "postKindOf", int(job_id)))]

    def is_lineage_job(self, job_id: int) -> bool:
        """Whether job ``job_id`` took its head's slot at post (its solver is minted when its
        final state is appended within the lineage window)."""
        return bool(self._client.call(self.contract, "isLineageJob", int(job_id)))

    def lineage_window(self) -> int:
        """Seconds a finalized slot job's final state may wait to be appended (the JobManager's
        open window); after it the slot is free for the next post from the head."""
        return int(self._client.call(self.contract, "lineageWindow"))

    def release_slot(self, model_id: bytes) -> TxReceipt:
        """Release ``model_id``'s lapsed slot (anyone may; a post from the head does it too).

        Raises:
            ContractRevert: ``SlotHeld`` while the slot is free or its job still holds it.
        """
        return self._client.transact(self.contract, "releaseSlot", bytes(model_id))

    def lineage(self, model_id: bytes) -> list[LineageEntry]:
        """Every finalized state of ``model_id``'s lineage, in order."""
        length = int(self._client.call(self.contract, "lineageLength", bytes(model_id)))
        out = []
        for i in range(length):
            state, job_id = self._client.call(self.contract, "lineageAt", bytes(model_id), i)
            out.append(LineageEntry(index=i, state=bytes(state), job_id=int(job_id)))
        return out

    def extend_lineage(self, model_id: bytes, final_state: bytes, proof: list[bytes]) -> TxReceipt:
        """Append the final state of ``model_id``'s finalized slot job to its lineage and mint
        that job's solver its shares (anyone may call, within the lineage window after the
        job's finalization; the state is checked against the job's committed Merkle root).

        Args:
            final_state: state hash at step N of that job (32 bytes).
            proof: Merkle proof of its last leaf (N / k).

        Raises:
            ContractRevert: ``SlotJobNotFinalized``, ``LineageWindowClosed``,
                ``FinalStateNotCommitted``.
        """
        return self._client.transact(
            self.contract,
            "extendLineage",
            bytes(model_id),
            bytes(final_state),
            [bytes(p) for p in proof],
        )

    def training_job_of(self, model_id: bytes, init_hash: bytes, spec_hash: bytes) -> int:
        """Latest job posted as this training (model, start state, spec hash); 0 if none. A new
        post of it reverts ``TrainingAlreadyPosted`` unless that job was Cancelled, Expired or
        Rejected."""
        key = self._client.call(
            self.contract, "trainingKey", bytes(model_id), bytes(init_hash), bytes(spec_hash)
        )
        return int(self._client.call(self.contract, "trainingJobOf", bytes(key)))

    def max_segment_compute(self) -> int:
        """Most FLOP one segment may cost to replay (checkpointInterval * computePerStep)."""
        return int(self._client.call(self.contract, "maxSegmentCompute"))

    def transfer_model_ownership(self, model_id: bytes, new_owner: str) -> TxReceipt:
        """Start handing ``model_id`` to ``new_owner``, who must accept (owner only). The zero
        address cancels a pending hand-over.

        Raises:
            ContractRevert: ``NotModelOwner``.
        """
        return self._client.transact(
            self.contract, "transferModelOwnership", bytes(model_id), to_checksum_address(new_owner)
        )

    def accept_model_ownership(self, model_id: bytes) -> TxReceipt:
        """Accept a pending hand-over of ``model_id`` (pending owner only); the previous
        owner's posters lapse.

        Raises:
            ContractRevert: ``NotPendingModelOwner``.
        """
        return self._client.transact(self.contract, "acceptModelOwnership", bytes(model_id))

    def authorize_poster(self, model_id: bytes, poster: str) -> TxReceipt:
        """Let ``poster`` post jobs under ``model_id`` (owner only).

        Raises:
            ContractRevert: ``NotModelOwner``, ``PosterAlreadyAuthorized``, ``ZeroAddress``.
        """
        return self._client.transact(
            self.contract, "authorizePoster", bytes(model_id), to_checksum_address(poster)
        )

    def revoke_poster(self, model_id: bytes, poster: str) -> TxReceipt:
        """Stop ``poster`` posting under ``model_id`` (owner only); its past jobs are unaffected.

        Raises:
            ContractRevert: ``NotModelOwner``, ``PosterNotAuthorized``.
        """
        return self._client.transact(
            self.contract, "revokePoster", bytes(model_id), to_checksum_address(poster)
        )

    def model_owner(self, model_id: bytes) -> str | None:
        """Owner of ``model_id``, or None if it is unregistered."""
        addr = str(self._client.call(self.contract, "modelOwner", bytes(model_id)))
        return None if int(addr, 16) == 0 else addr

    def pending_model_owner(self, model_id: bytes) -> str | None:
        """Account that may accept ``model_id``, or None if no hand-over is pending."""
        addr = str(self._client.call(self.contract, "pendingModelOwner", bytes(model_id)))
        return None if int(addr, 16) == 0 else addr

    def is_poster(self, model_id: bytes, account: str | None = None) -> bool:
        """Whether the current owner authorised ``account`` (default: this account)."""
        who = to_checksum_address(account or self._client.address)
        return bool(self._client.call(self.contract, "isPoster", bytes(model_id), who))

    def can_post(self, model_id: bytes, account: str | None = None) -> bool:
        """Whether ``account`` (default: this account) may post jobs under ``model_id``: it is
        the owner or an authorised poster (False for an unregistered model)."""
        who = to_checksum_address(account or self._client.address)
        return bool(self._client.call(self.contract, "canPost", bytes(model_id), who))

    def posters(self, model_id: bytes) -> list[str]:
        """Accounts the current owner of ``model_id`` has authorised, in order of first
        authorisation (candidates from ``PosterAuthorized`` logs since the deployment block,
        each confirmed with ``isPoster``; at most ``MAX_POSTERS``, the bound the claim
        committees' exclusion list relies on)."""
        start = self._client.deployment.block if self._client.deployment is not None else 0
        logs = self.contract.events.PosterAuthorized().get_logs(
            from_block=start, argument_filters={"modelId": bytes(model_id)}
        )
        seen: dict[str, None] = {str(log["args"]["poster"]): None for log in logs}
        return [a for a in seen if self.is_poster(model_id, a)]

    # ------------------------------------------------------------------------- shares
    def shares_of(self, model_id: bytes) -> str | None:
        """Address of a model's ModelShares token, or None for a model that was never registered
        nor minted (`registerModel` creates the token, with no shares until a job finalizes)."""
        addr = str(self._client.call(self.contract, "sharesOf", model_id))
        return None if int(addr, 16) == 0 else addr

    def model_shares(self, model_id: bytes) -> Contract:
        """Contract handle of a model's ModelShares token.

        Raises:
            ChainValueError: the model has no shares token (never registered nor minted).
        """
        token = self._token(model_id)
        if token is None:
            raise ChainValueError(f"model 0x{bytes(model_id).hex()} has no shares yet")
        return token

    def _token(self, model_id: bytes) -> Contract | None:
        """The cached handle of a model's ModelShares token (one `sharesOf` call the first time
        it exists), or None while it has none."""
        key = bytes(model_id)
        if key not in self._tokens:
            addr = self.shares_of(key)
            if addr is None:
                return None
            self._tokens[key] = self._client.contract("ModelShares", addr)
        return self._tokens[key]

    def total_supply(self, model_id: bytes) -> int:
        """Shares of the model minted so far (0 without a token or before any verified job)."""
        token = self._token(model_id)
        return 0 if token is None else int(self._client.call(token, "totalSupply"))

    def balance_of(self, model_id: bytes, account: str | None = None) -> int:
        """Shares held (1 share = 1 FLOP of verified training on the lineage; decimals 0)."""
        return int(
            self._client.call(
                self.model_shares(model_id),
                "balanceOf",
                to_checksum_address(account or self._client.address),
            )
        )

    def ownership_bps(self, model_id: bytes, account: str | None = None) -> int:
        """Ownership in basis points (balance * 10_000 / totalSupply)."""
        return int(
            self._client.call(
                self.model_shares(model_id),
                "ownershipBps",
                to_checksum_address(account or self._client.address),
            )
        )

    def revenue_of(self, model_id: bytes, account: str | None = None) -> int:
        """Claimable revenue in wei of the payment token."""
        return int(
            self._client.call(
                self.model_shares(model_id),
                "revenueOf",
                to_checksum_address(account or self._client.address),
            )
        )

    def pay_revenue(self, model_id: bytes, amount: int) -> TxReceipt:
        """Pay ``amount`` wei of revenue to a model's shareholders (auto-approves)."""
        shares = self.model_shares(model_id)
        self._client.token.ensure_allowance(shares.address, amount)
        return self._client.transact(shares, "payRevenue", amount)

    def claim_revenue(self, model_id: bytes) -> TxReceipt:
        """Claim this account's revenue from a model."""
        return self._client.transact(self.model_shares(model_id), "claimRevenue")
