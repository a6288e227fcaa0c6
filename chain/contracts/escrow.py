"""`client.escrow`: `Escrow`: the one token vault of the protocol (job escrows, bonds, the
jackpot pool, dispute pots) and every account's credit (docs/PROTOCOL.md 3.7).

Typed calls of `Escrow` (ABI loaded from contracts/out). Every account approves THE ESCROW for
job escrows, bonds and `fund_jackpot`, and collects everything it is owed (JobManager payouts,
committee rewards, won move bonds) with ONE `claim_credit`. Units: wei.

Run: not a script; ``client.escrow.claim_credit()``.
"""

from __future__ import annotations

from eth_utils.address import to_checksum_address
from web3.types import TxReceipt

from chain.contracts._base import ContractFacade
from veritrain.enums import Bucket

__all__ = ["EscrowFacade"]


class EscrowFacade(ContractFacade):
    """Typed facade of `Escrow` for one client (``client.escrow``).

    Args:
        client: the owning `ChainClient` (signing, nonces, calls).
    """

    HANDLE = "escrow"

    @property
    def address(self) -> str:
        """The Escrow's address: the spender every account approves."""
        return str(self.contract.address)

    def claim_credit(self) -> TxReceipt:
        """Withdraw everything this account is owed (pull payment).

        Raises:
            ContractRevert: ``NoCreditToClaim``.
        """
        return self._client.transact(self.contract, "claimCredit")

    def credit_of(self, account: str | None = None) -> int:
        """Claimable credit in wei (default: this client's account)."""
        return int(
            self._client.call(
                self.contract, "creditOf", to_checksum_address(account or self._client.address)
            )
        )

    def fund_jackpot(self, amount: int) -> TxReceipt:
        """Put ``amount`` wei into the jackpot pool (anyone; auto-approves the Escrow)."""
        self._client.token.ensure_allowance(self.address, amount)
        return self._client.transact(self.contract, "fundJackpot", amount)

    def jackpot_pool(self) -> int:
        """Tokens in the forced-error jackpot pool (wei)."""
        return int(self._client.call(self.contract, "jackpotPool"))

    def bucket_of(self, bucket: Bucket) -> int:
        """Tokens booked in one bucket (wei)."""
        return int(self._client.call(self.contract, "bucketOf", int(bucket)))

    def liabilities(self) -> tuple[int, int, int, int]:
        """``liabilities()``: (escrowed, bonds, credits, jackpot pool) in wei; their sum plus
        the open dispute pots is the Escrow's token balance."""
        escrowed, bonds, credits, pool = self._client.call(self.contract, "liabilities")
        return int(escrowed), int(bonds), int(credits), int(pool)

    def is_authorized(self, account: str) -> bool:
        """Whether ``account`` is a protocol contract allowed to move the Escrow's balances."""
        return bool(self._client.call(self.contract, "isAuthorized", to_checksum_address(account)))
