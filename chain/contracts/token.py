"""`client.token`: `VeriToken`: the payment token (any ERC-20 with the same views off a devnet).

Typed calls of `VeriToken` (ABI loaded from contracts/out). Transacting methods return the
mined receipt or raise a decoded `chain.errors.ContractRevert`; views return plain values or
the frozen views of `chain.types`. Units: wei, seconds, blocks.

Run: not a script; ``client.token.balance_of(...)``.
"""

from __future__ import annotations

from eth_utils.address import to_checksum_address
from web3.types import TxReceipt

from chain.contracts._base import ContractFacade
from chain.transport import MAX_UINT256

__all__ = ["TokenFacade"]


class TokenFacade(ContractFacade):
    """Typed facade of `VeriToken` for one client (``client.token``).

    Args:
        client: the owning `ChainClient` (signing, nonces, calls).
    """

    HANDLE = "token"

    def balance_of(self, account: str | None = None) -> int:
        """Payment-token balance in wei (default: this client's account)."""
        return int(
            self._client.call(
                self.contract, "balanceOf", to_checksum_address(account or self._client.address)
            )
        )

    def allowance(self, spender: str, owner: str | None = None) -> int:
        """Payment-token allowance of ``spender`` over ``owner`` (default: this account), wei."""
        return int(
            self._client.call(
                self.contract,
                "allowance",
                to_checksum_address(owner or self._client.address),
                to_checksum_address(spender),
            )
        )

    def approve(self, spender: str, amount: int) -> TxReceipt:
        """Approve ``spender`` for ``amount`` wei of the payment token."""
        return self._client.transact(self.contract, "approve", to_checksum_address(spender), amount)

    def transfer(self, to: str, amount: int) -> TxReceipt:
        """Transfer ``amount`` wei of the payment token."""
        return self._client.transact(self.contract, "transfer", to_checksum_address(to), amount)

    def faucet(self, amount: int) -> TxReceipt:
        """Mint ``amount`` wei of VeriToken to this account (devnet token; at most
        ``FAUCET_LIMIT`` = 1e24 wei per call).

        Raises:
            ContractRevert: ``FaucetLimitExceeded`` or the token has no faucet.
        """
        return self._client.transact(self.contract, "faucet", amount)

    def ensure_allowance(self, spender: str, amount: int) -> TxReceipt | None:
        """Approve ``spender`` when its allowance is below ``amount`` wei.

        Returns:
            The approve receipt, or None when the allowance already sufficed.
        """
        if amount <= 0 or self.allowance(spender) >= amount:
            return None
        return self.approve(spender, MAX_UINT256 if self._client.approve_max else amount)

    def mint_and_approve(self, amount: int, spender: str | None = None) -> None:
        """Devnet convenience: faucet ``amount`` wei (in chunks of the faucet limit) and approve
        ``spender`` (default: every protocol contract that pulls tokens) for it."""
        limit = 10**24
        left = amount
        while left > 0:
            chunk = min(left, limit)
            self.faucet(chunk)
            left -= chunk
        spenders = (
            [spender]
            if spender
            else [self._client.stakes.contract.address, self._client.escrow.address]
        )
        for s in spenders:
            self.approve(s, amount)
