"""`Indexer`: follow the protocol's events into an `Index`, from a persisted block cursor.

    index = Index.open(url, binding_of(client))
    indexer = Indexer(index, client)
    indexer.sync()                       # one pass up to the head; returns events indexed
    indexer.follow(stop_event)           # forever, every poll_interval seconds

Each pass scans ``eth_getLogs`` over every protocol contract and every model's shares token
in ranges of at most ``max_block_range`` blocks, reads the views an event lacks at its block,
stores the events and derives the tables (`indexer.derive`) in ONE transaction per range, with
the cursor (the next block to scan): a crash or an RPC outage never loses or repeats an event.
RPC failures are retried with exponential backoff (``max_backoff`` seconds at most).

Reorganisations: the hashes of the last ``reorg_depth`` indexed blocks are kept; before each
pass the newest is compared with the chain's, and on a mismatch the indexer walks back to the
last block both agree on, deletes the events of the orphaned blocks, derives the tables again
and re-indexes from there. A reorganisation deeper than ``reorg_depth`` raises `ReorgTooDeep`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from eth_utils.address import to_checksum_address
from hexbytes import HexBytes
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from chain.client import ChainClient
from chain.errors import ChainError
from chain.types import DecodedEvent
from indexer import derive
from indexer.errors import ReorgTooDeep
from indexer.models import BlockHash, Event, Model
from indexer.store import Binding, Index

logger = logging.getLogger(__name__)

__all__ = ["Indexer", "binding_of", "jsonable"]

R = TypeVar("R")
MAX_BLOCK_RANGE = 2_000
STAKE_EVENTS = frozenset(
    ("Staked", "UnbondRequested", "Withdrawn", "StakeLocked", "StakeUnlocked", "StakeSlashed")
)
"""StakeManager events after which ``stakeOf`` is read at the block."""
BATCH_STAKE_EVENTS = frozenset(("StakesLocked", "StakesUnlocked", "StakesRestaked"))
"""StakeManager events of one call on several accounts (``accounts``): ``stakeOf`` of each is
read at the block (a ``StakesRestaked``'s accounts with their seats unlocked and their
earnings added)."""


def jsonable(value: Any) -> Any:
    """An event argument as JSON: bytes as ``0x`` hex, tuples as lists, ints kept."""
    if isinstance(value, bytes | bytearray | HexBytes):
        return "0x" + bytes(value).hex()
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    return value


def binding_of(client: ChainClient) -> Binding:
    """The `Binding` of the client's deployment on its chain: `ChainClient.chain_identity` (the
    live chain id and the deployment block's hash) and every contract address.

    Raises:
        chain.errors.RpcUnavailable: the RPC cannot be reached.
        chain.errors.ChainValueError: the client has no deployment, or the chain has no such
            block (the manifest is not for this chain).
    """
    from chain.errors import ChainValueError

    identity = client.chain_identity()
    deployment = client.deployment
    assert deployment is not None  # chain_identity raised otherwise
    if not identity.block_hash:
        raise ChainValueError(
            f"the chain has no block {deployment.block}: the manifest is not for it"
        )
    addresses = {
        k: str(to_checksum_address(v))
        for k, v in deployment.addresses.model_dump().items()
        if isinstance(v, str) and v
    }
    return Binding.of(identity, addresses)


class Indexer:
    """Follow a deployment's events into an index.

    Args:
        index: the open `Index` (bound to ``client``'s deployment).
        client: a `ChainClient` bound to the deployment (read-only use; any key).
        max_block_range: most blocks per ``eth_getLogs`` (public RPCs cap it).
        reorg_depth: block hashes kept to spot and undo a reorganisation (blocks).
        confirmations: blocks to stay behind the head (0 on Anvil).
        poll_interval: seconds between passes in `follow`.
        max_backoff: ceiling of the retry delay after RPC errors (s).
        max_retries: raise after this many consecutive failures (None: retry forever).
        sleep: how to wait (tests pass a fake).

    Attributes:
        events_indexed: events stored since this object was made.
        reorgs: reorganisations undone since this object was made.
        failures: RPC failures retried since this object was made.
    """

    def __init__(
        self,
        index: Index,
        client: ChainClient,
        *,
        max_block_range: int = MAX_BLOCK_RANGE,
        reorg_depth: int = 64,
        confirmations: int = 0,
        poll_interval: float = 1.0,
        max_backoff: float = 30.0,
        max_retries: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if index.binding is None:
            raise ValueError("the index is not bound to a deployment")
        self.index = index
        self.client = client
        self.binding = index.binding
        self.max_block_range = max(1, int(max_block_range))
        self.reorg_depth = max(1, int(reorg_depth))
        self.confirmations = max(0, int(confirmations))
        self.poll_interval = poll_interval
        self.max_backoff = max_backoff
        self.max_retries = max_retries
        self._sleep = sleep
        self._adjudicator = str(client.adjudicator.name)
        self._tokens: dict[str, Any] = {}
        self._sync_lock = threading.Lock()
        self.events_indexed = 0
        self.reorgs = 0
        self.failures = 0
        self._streak = 0
        self.last_error: str | None = None
        self.head = 0

    # ------------------------------------------------------------------ retries

    def _retry(self, what: str, fn: Callable[..., R], *args: Any) -> R:
        while True:
            try:
                result = fn(*args)
                self._streak = 0
                self.last_error = None
                return result
            except (ChainError, OSError) as exc:
                self._streak += 1
                self.failures += 1
                self.last_error = f"{what}: {exc}"
                if self.max_retries is not None and self._streak > self.max_retries:
                    raise
                delay = min(self.max_backoff, 0.25 * 2 ** min(self._streak - 1, 10))
                logger.warning("%s failed (%s); retry %d in %.2f s", what, exc, self._streak, delay)
                self._sleep(delay)

    def _rpc(self, fn: Callable[[], R]) -> R:
        with self.client._rpc():  # noqa: SLF001 - shared error mapping (RpcUnavailable)
            return fn()

    def _block(self, number: int) -> Any:
        return self._rpc(lambda: self.client.w3.eth.get_block(number))

    def _head(self) -> int:
        return int(self.client.block_number()) - self.confirmations

    # ------------------------------------------------------------------ passes

    def sync(self) -> int:
        """One pass: index every block from the cursor to the (confirmed) head.

        Returns:
            Events stored in this pass.

        Raises:
            ReorgTooDeep: the chain reorganised below the kept block hashes.
            chain.errors.ChainError: RPC failures beyond ``max_retries``.
        """
        with self._sync_lock:  # the dashboard's thread and a caller may both sync
            return self._sync()

    def _sync(self) -> int:
        stored = 0
        self._check_reorg()
        head = self._retry("eth_blockNumber", self._head)
        self.head = head
        cursor = self.index.cursor()
        assert cursor is not None  # bound indexes have one
        while cursor <= head:
            end = min(head, cursor + self.max_block_range - 1)
            n = self._index_range(cursor, end, head)
            if n is None:
                break  # a block changed while it was read: the next pass checks for a reorg
            stored += n
            cursor = end + 1
        return stored

    def follow(self, stop: threading.Event, on_pass: Callable[[int], None] | None = None) -> None:
        """Run `sync` every ``poll_interval`` seconds until ``stop`` is set.

        Args:
            stop: set it to stop after the current pass.
            on_pass: called with each pass's count of stored events.
        """
        while not stop.is_set():
            n = self.sync()
            if on_pass is not None:
                on_pass(n)
            stop.wait(self.poll_interval)

    # ------------------------------------------------------------------ one range

    def _addresses(self) -> list[str]:
        with self.index.reader() as s:
            tokens = [t for t in s.scalars(select(Model.token)) if t]
        return [*self.binding.addresses.values(), *tokens]

    def _logs(self, addresses: Sequence[str], start: int, end: int) -> list[Any]:
        params: dict[str, Any] = {"address": list(addresses), "fromBlock": start, "toBlock": end}
        return self._rpc(lambda: list(self.client.w3.eth.get_logs(params)))  # type: ignore[arg-type]

    def _decode(self, logs: Sequence[Any], tokens: Sequence[str]) -> list[DecodedEvent]:
        out = []
        for log in logs:
            address = to_checksum_address(log["address"])
            if address in tokens:
                ev = self._decode_token(log, address)
            else:
                ev = self.client.decode_log(log)
            if ev is not None:
                out.append(ev)
        out.sort(key=lambda e: e.position)
        return out

    def _decode_token(self, log: Any, address: str) -> DecodedEvent | None:
        """Decode a ModelShares log (Transfer, RevenuePaid, RevenueClaimed, ...)."""
        handle = self._tokens.get(address)
        if handle is None:
            handle = self._tokens[address] = self.client.contract("ModelShares", address)
        topic0 = HexBytes(log["topics"][0]) if log["topics"] else None
        for entry in handle.abi:
            abi = dict(entry)
            if abi.get("type") != "event":
                continue
            event = handle.events[str(abi["name"])]()
            if HexBytes(event.topic) != topic0:
                continue
            decoded = event.process_log(log)
            return DecodedEvent(
                contract="ModelShares",
                event=str(decoded["event"]),
                args=dict(decoded["args"]),
                block_number=int(log["blockNumber"]),
                log_index=int(log["logIndex"]),
                tx_hash=HexBytes(log["transactionHash"]).to_0x_hex(),
                address=address,
            )
        return None

    def _fetch(self, start: int, end: int) -> tuple[list[DecodedEvent], dict[int, str]]:
        """Decoded events of [start, end] (shares tokens created in the range included) and
        the block hash each log names."""
        addresses = self._addresses()
        tokens = addresses[len(self.binding.addresses) :]
        logs = self._retry(f"eth_getLogs[{start}, {end}]", self._logs, addresses, start, end)
        events = self._decode(logs, tokens)
        new_tokens = [
            to_checksum_address(ev.args["token"]) for ev in events if ev.event == "ModelCreated"
        ]
        if new_tokens:
            more = self._retry(
                f"eth_getLogs[{start}, {end}] (new shares tokens)",
                self._logs,
                new_tokens,
                start,
                end,
            )
            logs = [*logs, *more]
            events = self._decode(logs, [*tokens, *new_tokens])
        hashes = {int(log["blockNumber"]): HexBytes(log["blockHash"]).to_0x_hex() for log in logs}
        return events, hashes

    def _index_range(self, start: int, end: int, head: int) -> int | None:
        """Index blocks [start, end]; None (nothing stored) when a block changed meanwhile."""
        events, log_hashes = self._fetch(start, end)
        blocks: dict[int, Any] = {}
        for n in sorted(
            {ev.block_number for ev in events}
            | set(range(max(start, head - self.reorg_depth + 1), end + 1))
        ):
            blocks[n] = self._retry(f"eth_getBlockByNumber({n})", self._block, n)
        for n, h in log_hashes.items():
            if HexBytes(blocks[n]["hash"]).to_0x_hex() != h:
                logger.warning("block %d changed while it was read; reading it again", n)
                return None
        rows = []
        for ev in events:
            extra = self._retry(f"views at block {ev.block_number}", self._extra, ev)
            rows.append(
                Event(
                    block=ev.block_number,
                    log_index=ev.log_index,
                    tx_hash=ev.tx_hash,
                    contract=ev.contract,
                    address=ev.address,
                    name=ev.event,
                    args=jsonable(dict(ev.args)),
                    extra=extra,
                    timestamp=int(blocks[ev.block_number]["timestamp"]),
                )
            )
        with self.index.write_lock, self.index.session() as s:
            for row in rows:
                s.add(row)
                s.flush()
                derive.apply(s, row)
            for n, block in blocks.items():
                if n > head - self.reorg_depth:
                    s.merge(BlockHash(number=n, hash=HexBytes(block["hash"]).to_0x_hex()))
            s.execute(delete(BlockHash).where(BlockHash.number <= head - self.reorg_depth))
            Index.set_meta(s, "cursor", str(end + 1))
        self.events_indexed += len(rows)
        if rows:
            logger.debug("indexed %d events of blocks [%d, %d]", len(rows), start, end)
        return len(rows)

    def _extra(self, ev: DecodedEvent) -> dict[str, Any]:
        """The views an event lacks, read at its block."""
        c, block, a = self.client, ev.block_number, ev.args
        if ev.contract == "JobManager" and ev.event == "JobPosted":
            # The event carries the initHash; the open deadline is only in the job.
            job = c.call(c.jobs.contract, "getJob", int(a["jobId"]), block=block)
            data = _struct(c.jobs.contract, "getJob", job)
            return {"open_deadline": int(data.get("open_deadline", 0))}
        if ev.contract == "JobManager" and ev.event in (
            "JobReclaimed",
            "DisputeSettled",
            "VerifiersReassigning",
        ):
            job = c.call(c.jobs.contract, "getJob", int(a["jobId"]), block=block)
            return {"status": int(_struct(c.jobs.contract, "getJob", job)["status"])}
        if ev.contract == "StakeManager" and ev.event in STAKE_EVENTS:
            return self._stake_of(a["account"], int(a["role"]), block)
        if ev.contract == "StakeManager" and ev.event in BATCH_STAKE_EVENTS:
            role = int(a["role"])
            return {"stakes": {acct: self._stake_of(acct, role, block) for acct in a["accounts"]}}
        if ev.contract == "VerificationRound" and ev.event in (
            "SecretRevealed",
            "VerdictsCommitted",
            "EquivocationProven",
        ):
            job_id, _solver = c.call(
                c.jobs.contract, "getSubmission", bytes(a["submissionId"]), block=block
            )
            return {"job_id": int(job_id)}
        if ev.contract == "VerificationRound" and ev.event == "VerdictsRevealed":
            job_id, _solver = c.call(
                c.jobs.contract, "getSubmission", bytes(a["submissionId"]), block=block
            )
            params = c.call(c.jobs.contract, "params", block=block)
            bond = int(_struct(c.jobs.contract, "params", params)["challenge_bond"])
            return {"job_id": int(job_id), "challenge_bond": bond}
        if ev.contract == "ArbitrationCommittee" and ev.event == "DisputeOpened":
            return {"adjudicator": self._adjudicator}
        return {}

    def _stake_of(self, account: str, role: int, block: int) -> dict[str, int]:
        """``stakeOf(account, role)`` at ``block``, as an event's extra fields."""
        c = self.client
        staked, locked, unbonding, release_at = c.call(
            c.stakes.contract, "stakeOf", account, role, block=block
        )
        return {
            "staked": int(staked),
            "locked": int(locked),
            "unbonding": int(unbonding),
            "release_at": int(release_at),
        }

    # ------------------------------------------------------------------ reorgs

    def _check_reorg(self) -> None:
        """Compare the newest kept block hash with the chain's; undo a reorganisation."""
        with self.index.reader() as s:
            kept = list(
                s.execute(
                    select(BlockHash.number, BlockHash.hash).order_by(BlockHash.number.desc())
                )
            )
        if not kept:
            return
        for i, (number, hash_) in enumerate(kept):
            chain_hash = self._retry(f"eth_getBlockByNumber({number})", self._hash_at, number)
            if chain_hash == hash_:
                if i == 0:
                    return
                self._rollback(number + 1)
                return
        raise ReorgTooDeep(
            f"the chain reorganised below block {kept[-1][0]}, the oldest block hash the index "
            f"keeps ({self.reorg_depth} blocks): rebuild the index (--reset)"
        )

    def _hash_at(self, number: int) -> str | None:
        """The chain's hash of block ``number`` (None when the chain is shorter now)."""
        if number > int(self.client.block_number()):
            return None
        return HexBytes(self._block(number)["hash"]).to_0x_hex()

    def _rollback(self, fork: int) -> None:
        """Delete the events of blocks >= ``fork``, derive the tables again, rescan from it."""
        with self.index.write_lock, self.index.session() as s:
            dropped = s.scalar(select(func.count()).select_from(Event).where(Event.block >= fork))
            s.execute(delete(Event).where(Event.block >= fork))
            s.execute(delete(BlockHash).where(BlockHash.number >= fork))
            derive.rederive(s)
            Index.set_meta(s, "cursor", str(fork))
        self.reorgs += 1
        logger.warning(
            "chain reorganised from block %d: %s orphaned events rolled back", fork, dropped
        )


def _struct(contract: Any, fn: str, raw: Any) -> dict[str, Any]:
    from chain.types import struct_to_dict

    outputs = contract.get_function_by_name(fn).abi["outputs"]
    if len(outputs) == 1 and outputs[0].get("type") == "tuple":
        return struct_to_dict(outputs[0]["components"], raw)
    return struct_to_dict(outputs, raw)


def event_count(session: Session) -> int:
    """Events stored in the index."""
    return int(session.scalar(select(func.count()).select_from(Event)) or 0)
