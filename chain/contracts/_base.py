"""The shape every per-contract facade shares: its owning client and its contract's handle.

Run: not a script; subclassed by the facades of `chain.contracts`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from web3.contract import Contract

if TYPE_CHECKING:
    from chain.client import ChainClient

__all__ = ["ContractFacade"]


class ContractFacade:
    """Base of the typed facades: one client, one deployed contract named by `HANDLE`.

    Args:
        client: the owning `ChainClient` (signing, nonces, calls).
    """

    HANDLE: ClassVar[str]
    """The deployment key of the contract (``"job_manager"``), as `ChainClient.handle` takes it."""

    def __init__(self, client: ChainClient) -> None:
        self._client = client

    @property
    def contract(self) -> Contract:
        """The web3 handle of the deployed contract.

        Raises:
            ChainValueError: the client has no deployment (or this contract is not deployed).
        """
        return self._client.handle(self.HANDLE)
