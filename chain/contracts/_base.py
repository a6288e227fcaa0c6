"""The shape every per-contract facade shares: its owning client and its contract's handle.

Run: not a script; subclassed by the facades of `chain.contracts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from hexbytes import HexBytes
from web3.contract import Contract

from chain.events import MAX_BLOCK_RANGE
from chain.types import DecodedEvent, struct_to_dict

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

    def _scan_events(self, event: str, indexed: Mapping[int, int]) -> list[DecodedEvent]:
        """Every ``event`` of this contract whose indexed arguments at the given topic
        positions (1 = the first indexed argument) are the given uint256 values, oldest first,
        scanned from the deployment block in ranges of at most `MAX_BLOCK_RANGE` blocks (one
        ``eth_getLogs`` per range).

        Raises:
            RpcUnavailable: the endpoint is down.
        """
        contract = self.contract
        topics: list[str | None] = [HexBytes(contract.events[event]().topic).to_0x_hex()]
        for position in range(1, max(indexed, default=0) + 1):
            value = indexed.get(position)
            topics.append(None if value is None else "0x" + int(value).to_bytes(32, "big").hex())
        deployment = self._client.deployment
        start = deployment.block if deployment is not None else 0
        head = self._client.block_number()
        out: list[DecodedEvent] = []
        label = self._client.contract_name(contract.address) or "contract"
        while start <= head:
            end = min(head, start + MAX_BLOCK_RANGE - 1)
            params: dict[str, Any] = {
                "address": contract.address,
                "fromBlock": start,
                "toBlock": end,
                "topics": topics,
            }
            with self._client._rpc(label):  # noqa: SLF001 - shared error mapping
                logs = list(self._client.w3.eth.get_logs(params))  # type: ignore[arg-type]
            for log in logs:
                decoded = self._client.decode_log(log)
                if decoded is not None and decoded.event == event:
                    out.append(decoded)
            start = end + 1
        return out
