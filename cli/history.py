"""Chain history for the inspection commands: decoded events since the deployment block.

`events` reads one contract's events in chain order with one filtered ``eth_getLogs`` per
2,000 blocks (`chain.transport.Transport.event_logs`); `IndexedEvents` is the same call
answered by the chain's index (`dashboard.queries.events`, no RPC); `BlockTimes` turns a block
number into its timestamp (cached per call site), so a timeline shows both.

Run: not a script; ``events(client, client.game.contract, ["Bisected"], first_indexed=1)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # chain/ loads web3: imported where an event is built, so that `--help` stays light.
    from chain.types import DecodedEvent

__all__ = ["BlockTimes", "EventReader", "IndexedEvents", "events", "when"]

EventReader = Callable[..., "list[DecodedEvent]"]
"""The signature of `events`: ``(client, contract, names, *, first_indexed, from_block,
to_block) -> [DecodedEvent]``; `IndexedEvents` is one too."""


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


def _from_json(abi_type: str, value: Any) -> Any:
    """An index event argument (bytes as ``0x`` hex) back as web3 decodes it."""
    if abi_type.endswith("]") and isinstance(value, list):
        inner = abi_type[: abi_type.rindex("[")]
        return [_from_json(inner, v) for v in value]
    if abi_type.startswith("bytes") and isinstance(value, str):
        return bytes.fromhex(value.removeprefix("0x"))
    return value


class IndexedEvents:
    """`events`, answered by the chain's index instead of ``eth_getLogs``: the same
    `DecodedEvent`s in the same order (bytes arguments decoded back from the index's ``0x``
    hex with the contract's ABI), and the block timestamps the index stored.

    Args:
        session: a session of an index brought up to date (`cli.dashboard.synced_index`).
    """

    def __init__(self, session: Any) -> None:
        self._session = session
        self._times: dict[int, int] = {}

    def __call__(
        self,
        client: Any,
        contract: Any,
        names: Sequence[str],
        *,
        first_indexed: int | None = None,
        from_block: int | None = None,
        to_block: int | None = None,
    ) -> list[DecodedEvent]:
        """The stored events ``names`` of ``contract`` in chain order (`events`' arguments;
        ``client`` is unused)."""
        from chain.types import DecodedEvent
        from dashboard.queries import events as stored

        abis = {str(e["name"]): e for e in contract.abi if e.get("type") == "event" and "name" in e}
        out: list[DecodedEvent] = []
        for ev in stored(
            self._session,
            str(contract.address),
            list(names),
            from_block=from_block,
            to_block=to_block,
        ):
            inputs = abis[ev.name]["inputs"]
            if first_indexed is not None:
                first = next((i for i in inputs if i.get("indexed")), None)
                if first is None or not str(first["type"]).startswith("uint"):
                    continue
                if int(ev.args[first["name"]]) != first_indexed:
                    continue
            args = {i["name"]: _from_json(str(i["type"]), ev.args[i["name"]]) for i in inputs}
            self._times[ev.block] = ev.timestamp
            out.append(
                DecodedEvent(
                    contract=ev.contract,
                    event=ev.name,
                    args=args,
                    block_number=ev.block,
                    log_index=ev.log_index,
                    tx_hash=ev.tx_hash,
                    address=ev.address,
                )
            )
        return out

    def timestamp(self, block: int) -> int:
        """The timestamp (s) of a block of an event this object returned.

        Raises:
            KeyError: no event it returned is in ``block``.
        """
        return self._times[block]


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
    """A block timestamp (seconds) as ``YYYY-MM-DD HH:MM:SS`` UTC (`veritrain.units.utc_time`)."""
    from veritrain.units import utc_time

    return utc_time(timestamp)


def clock(timestamp: int, now: float | None = None) -> str:
    """A deadline (seconds) as ``HH:MM:SS`` UTC when it falls on the UTC day of `now` (default:
    this machine's clock), else with its date (`when`): a day-long window never reads as
    minutes ago."""
    import datetime as dt
    import time

    day = dt.datetime.fromtimestamp(int(timestamp), dt.UTC)
    today = dt.datetime.fromtimestamp(time.time() if now is None else now, dt.UTC)
    return day.strftime("%H:%M:%S") if day.date() == today.date() else when(timestamp)
