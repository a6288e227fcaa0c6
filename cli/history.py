"""Chain history for the inspection commands: decoded events since the deployment block.

`events` reads one contract's events in chain order with one filtered ``eth_getLogs`` per
2,000 blocks (`chain.transport.Transport.event_logs`); `stamp` turns a block number into
its timestamp (cached per call site), so a timeline shows both.

Run: not a script; ``events(client, client.game.contract, ["Bisected"], first_indexed=1)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chain.types import DecodedEvent

__all__ = ["BlockTimes", "events", "when"]


def events(
    client: Any,
    contract: Any,
    names: Sequence[str],
    *,
    first_indexed: int | None = None,
    from_block: int | None = None,
    to_block: int | None = None,
) -> list[DecodedEvent]:
    """The decoded events ``names`` of ``contract`` in chain order.

    Args:
        client: a `ChainClient` bound to a deployment.
        contract: the web3 contract handle (``client.jobs.contract``).
        names: event names of its ABI.
        first_indexed: only events whose first indexed uint256 is this (job or dispute id).
        from_block: first block (default: the deployment block).
        to_block: last block (default: the head).

    Returns:
        `DecodedEvent`s sorted by (block, log index).

    Raises:
        chain.errors.ChainValueError: a name is not an event of the contract.
        chain.errors.RpcUnavailable: the endpoint is down.
    """
    from chain.events import MAX_BLOCK_RANGE

    dep = client.deployment
    start = int(from_block if from_block is not None else (dep.block if dep is not None else 0))
    head = int(to_block if to_block is not None else client.block_number())
    out: list[DecodedEvent] = []
    for lo in range(start, head + 1, MAX_BLOCK_RANGE):
        hi = min(head, lo + MAX_BLOCK_RANGE - 1)
        out.extend(client.event_logs(contract, list(names), lo, hi, first_indexed))
    out.sort(key=lambda e: e.position)
    return out


class BlockTimes:
    """Block number -> timestamp (seconds), each block read once.

    Args:
        client: any `ChainClient`.
    """

    def __init__(self, client: Any) -> None:
        self._client = client
        self._times: dict[int, int] = {}

    def __call__(self, block: int) -> int:
        """The timestamp of ``block`` in seconds (UTC epoch)."""
        if block not in self._times:
            self._times[block] = int(self._client.timestamp(block))
        return self._times[block]


def when(timestamp: int) -> str:
    """A block timestamp (seconds) as ``YYYY-MM-DD HH:MM:SS`` UTC."""
    import datetime as dt

    return dt.datetime.fromtimestamp(int(timestamp), dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
