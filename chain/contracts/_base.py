"""The shape every per-contract facade shares: its owning client and its contract's handle.

Run: not a script; subclassed by the facades of `chain.contracts`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from web3.contract import Contract

from chain.types import struct_to_dict

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

    def _call_struct(self, fn: str, *args: Any) -> dict[str, Any]:
        """Call the view `fn` and decode what it returns, one struct or several named values,
        into a dict keyed by snake_case names (`chain.types.struct_to_dict`).

        Raises:
            ContractRevert: the contract rejects the call (decoded).
        """
        raw = self._client.call(self.contract, fn, *args)
        outputs = self.contract.get_function_by_name(fn).abi["outputs"]
        if len(outputs) == 1 and outputs[0].get("type") == "tuple":
            return struct_to_dict(outputs[0]["components"], raw)
        return struct_to_dict(outputs, raw)
