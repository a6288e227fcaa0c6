"""`client.shares`: `ShareRegistry` and each model's ModelShares token: shares, ownership, revenue.

Typed calls of `ShareRegistry` (ABI loaded from contracts/out). Transacting methods return the
mined receipt or raise a decoded `chain.errors.ContractRevert`; views return plain values or
the frozen views of `chain.types`. Units: wei, seconds, blocks.

Run: not a script; ``client.shares.shares_of(...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eth_utils.address import to_checksum_address
from web3.contract import Contract
from web3.types import TxReceipt

from chain.contracts._base import ContractFacade
from chain.errors import ChainValueError

if TYPE_CHECKING:
    from chain.client import ChainClient

__all__ = ["SharesFacade"]


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

    def shares_of(self, model_id: bytes) -> str | None:
        """Address of a model's ModelShares token, or None before its first job finalizes."""
        addr = str(self._client.call(self.contract, "sharesOf", model_id))
        return None if int(addr, 16) == 0 else addr

    def model_shares(self, model_id: bytes) -> Contract:
        """Contract handle of a model's ModelShares token.

        Raises:
            ChainValueError: the model has no shares yet.
        """
        key = bytes(model_id)
        if key not in self._tokens:
            addr = self.shares_of(key)
            if addr is None:
                raise ChainValueError(f"model 0x{key.hex()} has no shares yet")
            self._tokens[key] = self._client.contract("ModelShares", addr)
        return self._tokens[key]

    def balance_of(self, model_id: bytes, account: str | None = None) -> int:
        """Shares held (1 share = 1 verified step; decimals 0)."""
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
