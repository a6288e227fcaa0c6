"""`EventWatcher`: ordered, resumable, fault-tolerant polling of contract events.

The watcher scans ``eth_getLogs`` in bounded block ranges from a cursor (the next block to
scan), decodes the events it is asked for, and yields them in chain order (block number, log
index). The cursor only advances past a block range once all of its events have been yielded,
so a node that persists ``watcher.cursor`` after handling each batch resumes without missing or
re-processing events::

    watcher = EventWatcher(client, "JobManager", ["JobPosted", "VerifiersAssigned"],
                           from_block=state.get("cursor", deployment.block))
    for event in watcher.poll():          # one pass, returns when caught up
        handle(event)
        state["cursor"] = watcher.cursor  # persist (see also EventCursor for within-block resume)

    for event in watcher.stream(stop_event):   # forever, sleeping poll_interval between passes
        ...

RPC failures are retried with exponential backoff (a warning is logged); `poll` never loses
its position. Use ``confirmations`` on chains that reorganise.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from eth_utils.address import to_checksum_address
from hexbytes import HexBytes

from chain.errors import ChainError, ChainValueError
from chain.types import DecodedEvent

if TYPE_CHECKING:
    from web3.contract import Contract

    from chain.client import ChainClient

logger = logging.getLogger(__name__)

__all__ = ["MAX_BLOCK_RANGE", "EventWatcher", "EventCursor", "merge_in_order"]

MAX_BLOCK_RANGE = 2_000
"""Most blocks per ``eth_getLogs`` call: public RPCs cap the range, and 2,000 is safe."""


@dataclass(frozen=True)
class EventCursor:
    """A resumable position: the next event to deliver is the first one strictly after
    ``(block, log_index)``; ``log_index == -1`` means "from the start of ``block``"."""

    block: int
    log_index: int = -1

    def to_json(self) -> dict[str, int]:
        """JSON-able form for node state files."""
        return {"block": self.block, "log_index": self.log_index}

    @classmethod
    def from_json(cls, data: dict[str, int] | int) -> EventCursor:
        """Inverse of `to_json`; a bare int is a block to start from."""
        if isinstance(data, int):
            return cls(data)
        return cls(int(data["block"]), int(data.get("log_index", -1)))


class EventWatcher:
    """Poll decoded events of one contract from a block cursor.

    Args:
        client: a `ChainClient` bound to a deployment.
        contract: contract name (``"JobManager"``), attribute name (``"job_manager"``), or a
            web3 `Contract` handle (e.g. a ModelShares token).
        event_names: events to deliver (None: every event of the contract's ABI).
        from_block: where to start: a block number (inclusive), an `EventCursor`, or None for
            the deployment block.
        poll_interval: seconds between passes in `stream`.
        max_block_range: most blocks per ``eth_getLogs`` call (public RPCs cap it; 2_000 is safe).
        confirmations: blocks to stay behind the head (0 on Anvil).
        max_backoff: ceiling of the retry delay after RPC errors, in seconds.
        max_retries: give up (raise) after this many consecutive failures; None retries forever.

    Raises:
        ChainValueError: an event name is not in the contract's ABI.
    """

    def __init__(
        self,
        client: ChainClient,
        contract: str | Contract,
        event_names: Sequence[str] | None = None,
        from_block: int | EventCursor | None = None,
        poll_interval: float = 1.0,
        *,
        max_block_range: int = MAX_BLOCK_RANGE,
        confirmations: int = 0,
        max_backoff: float = 30.0,
        max_retries: int | None = None,
    ) -> None:
        self.client = client
        if isinstance(contract, str):
            self.contract = client.contract_by_name(contract)
        else:
            self.contract = contract
        self.contract_label = client.contract_name(self.contract.address) or "contract"
        self.address = to_checksum_address(self.contract.address)
        entries = [cast(dict[str, Any], e) for e in self.contract.abi]
        abi_events = {str(e["name"]): e for e in entries if e.get("type") == "event"}
        names = list(event_names) if event_names is not None else list(abi_events)
        unknown = [n for n in names if n not in abi_events]
        if unknown:
            raise ChainValueError(f"{self.contract_label} has no event(s) {unknown}")
        self.event_names = names
        self._events = {n: self.contract.events[n]() for n in names}
        self._by_topic = {HexBytes(ev.topic): n for n, ev in self._events.items()}
        if from_block is None:
            dep = client.deployment
            from_block = dep.block if dep is not None else 0
        self._cursor = (
            from_block if isinstance(from_block, EventCursor) else EventCursor(int(from_block))
        )
        self.poll_interval = poll_interval
        self.max_block_range = max(1, int(max_block_range))
        self.confirmations = max(0, int(confirmations))
        self.max_backoff = max_backoff
        self.max_retries = max_retries
        self._failures = 0

    # ------------------------------------------------------------------ cursor

    @property
    def cursor(self) -> EventCursor:
        """Position after the last delivered event (persist it; pass it back as
        ``from_block``)."""
        return self._cursor

    @property
    def next_block(self) -> int:
        """First block whose events may not all have been delivered yet."""
        return self._cursor.block

    # ------------------------------------------------------------------ polling

    def _with_retry(self, what: str, fn: Any, *args: Any) -> Any:
        while True:
            try:
                result = fn(*args)
                self._failures = 0
                return result
            except (ChainError, OSError) as exc:
                self._failures += 1
                if self.max_retries is not None and self._failures > self.max_retries:
                    raise
                delay = min(self.max_backoff, 0.25 * 2 ** min(self._failures - 1, 10))
                logger.warning(
                    "%s failed (%s: %s); retry %d in %.2f s",
                    what,
                    type(exc).__name__,
                    exc,
                    self._failures,
                    delay,
                )
                time.sleep(delay)

    def _get_logs(self, start: int, end: int) -> list[Any]:
        topics = [list(self._by_topic)] if self._by_topic else None
        params: dict[str, Any] = {
            "address": self.address,
            "fromBlock": start,
            "toBlock": end,
        }
        if topics:
            params["topics"] = [[t.to_0x_hex() for t in topics[0]]]
        with self.client._rpc(self.contract_label):  # noqa: SLF001 - shared error mapping
            return list(self.client.w3.eth.get_logs(params))  # type: ignore[arg-type]

    def _decode(self, log: Any) -> DecodedEvent | None:
        topic0 = HexBytes(log["topics"][0]) if log["topics"] else None
        name = self._by_topic.get(topic0) if topic0 is not None else None
        if name is None:
            return None
        decoded = self._events[name].process_log(log)
        return DecodedEvent(
            contract=self.contract_label,
            event=name,
            args=dict(decoded["args"]),
            block_number=int(log["blockNumber"]),
            log_index=int(log["logIndex"]),
            tx_hash=HexBytes(log["transactionHash"]).to_0x_hex(),
            address=self.address,
        )

    def _head(self) -> int:
        return self.client.block_number() - self.confirmations

    def poll(self) -> Iterator[DecodedEvent]:
        """One pass: yield every new matching event up to the (confirmed) head, in order.

        The cursor advances as events are yielded, so stopping the iteration midway and
        calling `poll` again resumes at the next event. RPC errors are retried with backoff.
        """
        head = self._with_retry("eth_blockNumber", self._head)
        while self._cursor.block <= head:
            start = self._cursor.block
            end = min(head, start + self.max_block_range - 1)
            logs = self._with_retry(f"eth_getLogs[{start}, {end}]", self._get_logs, start, end)
            events = sorted(
                (ev for ev in (self._decode(log) for log in logs) if ev is not None),
                key=lambda e: e.position,
            )
            for ev in events:
                if ev.position <= (self._cursor.block, self._cursor.log_index):
                    continue  # already delivered before a restart
                self._cursor = EventCursor(ev.block_number, ev.log_index)
                yield ev
            self._cursor = EventCursor(end + 1)

    def stream(
        self, stop_event: threading.Event | None = None, max_idle_passes: int | None = None
    ) -> Iterator[DecodedEvent]:
        """Yield events forever (until ``stop_event`` is set), polling every
        ``poll_interval`` seconds.

        Args:
            stop_event: set it to end the stream after the current pass.
            max_idle_passes: stop after this many consecutive passes with no event (tests).
        """
        idle = 0
        while stop_event is None or not stop_event.is_set():
            got = False
            for ev in self.poll():
                got = True
                yield ev
                if stop_event is not None and stop_event.is_set():
                    return
            idle = 0 if got else idle + 1
            if max_idle_passes is not None and idle >= max_idle_passes:
                return
            if stop_event is not None:
                stop_event.wait(self.poll_interval)
            else:
                time.sleep(self.poll_interval)

    def drain(self) -> list[DecodedEvent]:
        """Everything `poll` yields now, as a list."""
        return list(self.poll())


def merge_in_order(batches: Iterable[Iterable[DecodedEvent]]) -> list[DecodedEvent]:
    """Merge events of several watchers into chain order (block, log index)."""
    out = [ev for batch in batches for ev in batch]
    out.sort(key=lambda e: e.position)
    return out
