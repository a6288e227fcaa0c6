"""`client.stakes`: `StakeManager`: stakes per role, unbonding, the active verifier set.

Typed calls of `StakeManager` (ABI loaded from contracts/out). Transacting methods return the
mined receipt or raise a decoded `chain.errors.ContractRevert`; views return plain values or
the frozen views of `chain.types`. Units: wei, seconds, blocks.

Run: not a script; ``client.stakes.stake(...)``.
"""

from __future__ import annotations

from eth_utils.address import to_checksum_address
from web3.types import TxReceipt

from chain.contracts._base import ContractFacade
from chain.types import (
    Role,
    StakeView,
)

__all__ = ["StakesFacade"]


class StakesFacade(ContractFacade):
    """Typed facade of `StakeManager` for one client (``client.stakes``).

    Args:
        client: the owning `ChainClient` (signing, nonces, calls).
    """

    HANDLE = "stake_manager"

    def stake(self, role: Role | int, amount: int) -> TxReceipt:
        """Stake ``amount`` wei for ``role`` (auto-approves the StakeManager)."""
        self._client.token.ensure_allowance(self.contract.address, amount)
        return self._client.transact(self.contract, "stake", int(role), amount)

    def request_unbond(self, role: Role | int, amount: int) -> TxReceipt:
        """Move ``amount`` wei of free stake to unbonding (releases after the unbonding delay)."""
        return self._client.transact(self.contract, "requestUnbond", int(role), amount)

    def withdraw(self, role: Role | int) -> TxReceipt:
        """Withdraw all released unbonding stake of ``role``."""
        return self._client.transact(self.contract, "withdraw", int(role))

    def stake_of(self, account: str | None = None, role: Role | int = Role.Solver) -> StakeView:
        """``stakeOf(account, role)`` (wei; release_at in seconds)."""
        staked, locked, unbonding, release_at = self._client.call(
            self.contract,
            "stakeOf",
            to_checksum_address(account or self._client.address),
            int(role),
        )
        return StakeView(int(staked), int(locked), int(unbonding), int(release_at))

    def free_stake(self, account: str | None = None, role: Role | int = Role.Solver) -> int:
        """Staked minus locked, in wei."""
        return int(
            self._client.call(
                self.contract,
                "freeStake",
                to_checksum_address(account or self._client.address),
                int(role),
            )
        )

    def is_active(self, account: str | None = None, role: Role | int = Role.Solver) -> bool:
        """True when ``account`` has at least the minimum stake for ``role``."""
        return bool(
            self._client.call(
                self.contract,
                "isActive",
                to_checksum_address(account or self._client.address),
                int(role),
            )
        )

    def min_stake(self, role: Role | int) -> int:
        """Minimum stake of ``role`` in wei."""
        return int(self._client.call(self.contract, "minStake", int(role)))

    def active_verifiers(self) -> list[str]:
        """The set of active verifiers (``verifierAt(0..verifierCount)``)."""
        n = int(self._client.call(self.contract, "verifierCount"))
        return [str(self._client.call(self.contract, "verifierAt", i)) for i in range(n)]
