"""`Transport`: locally signed JSON-RPC access for one account (no protocol knowledge).

Signing (in-process, never an unlocked node account, so the same code runs on Anvil and on a
public testnet), nonces, EIP-1559 fees, gas estimation, send and wait, view calls, decoded
reverts (`chain.errors.ContractRevert`) and the devnet RPCs (`mine`, `increase_time`,
`snapshot`, `revert_to`). `chain.client.ChainClient` builds the per-contract facades on it.

Run: not a script; ``Transport(rpc_url, private_key).block_number()``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from typing import Any, cast

import requests
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_utils.address import to_checksum_address
from hexbytes import HexBytes
from web3 import Web3
from web3.contract import Contract
from web3.exceptions import (
    ContractLogicError,
    ProviderConnectionError,
    TimeExhausted,
    Web3RPCError,
)
from web3.types import RPCEndpoint, TxParams, TxReceipt

from chain.artifacts import link_bytecode, load_artifact
from chain.errors import (
    ChainError,
    ChainValueError,
    ContractRevert,
    RpcUnavailable,
    TransactionFailed,
    decode_revert,
)
from chain.types import DecodedEvent

logger = logging.getLogger(__name__)

__all__ = ["MAX_UINT256", "Transport"]

MAX_UINT256 = 2**256 - 1

_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    requests.exceptions.ConnectionError,
    requests.exceptions.Timeout,
    ProviderConnectionError,
    ConnectionError,
    TimeoutError,
)


def _reason(exc: BaseException) -> str:
    """A short reason for a transport failure (the full text of requests' errors spans lines
    and repeats the URL)."""
    text = str(exc)
    if "Connection refused" in text or isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, requests.exceptions.Timeout | TimeoutError) or "timed out" in text:
        return "timed out"
    if "Name or service not known" in text or "getaddrinfo failed" in text:
        return "unknown host"
    return type(exc).__name__


def _rpc_message(exc: BaseException) -> str:
    """The node's own error message of a JSON-RPC error (``error.message``), on one line,
    rather than the response's dict."""
    resp = getattr(exc, "rpc_response", None)
    err = resp.get("error") if isinstance(resp, dict) else None
    message = err.get("message") if isinstance(err, dict) else None
    text = str(message) if message else str(getattr(exc, "message", "") or exc)
    return " ".join(text.split())


def _revert_data(exc: BaseException) -> bytes | str | None:
    data = getattr(exc, "data", None)
    if isinstance(data, dict):
        data = data.get("data")
    if isinstance(data, str | bytes) and data:
        return data
    # Web3RPCError: {"error": {"data": "0x..."}}
    resp = getattr(exc, "rpc_response", None)
    if isinstance(resp, dict):
        err = resp.get("error") or {}
        inner = err.get("data") if isinstance(err, dict) else None
        if isinstance(inner, dict):
            inner = inner.get("data")
        if isinstance(inner, str) and inner.startswith("0x"):
            return inner
    return None


ACCESS_LIST_MIN_KEYS_OF_WARM = 25
"""Storage keys of an address that is warm anyway (the sender, the target) below which listing it
costs more than it saves: its entry costs 2,400 gas and each key saves at most 100-200."""

PRECOMPILE_ADDRESS_BOUND = 0x100
"""Addresses below this are precompiles (warm from the start of every transaction, EIP-2929)."""

ACCESS_LIST_MAX_KEYS = 256
"""Most storage keys (all accounts together) an access list may carry: a protocol transaction
touches about 10 accounts and 40 words, and an answer far above that (a faulty or hostile RPC
endpoint) would make the sender prepay 1,900 gas per key for nothing, so it is not sent."""

ACCESS_LIST_MAX_ACCOUNTS = 32
"""Most accounts an access list may carry (2,400 gas each, prepaid), for the same reason."""


def useful_access_list(
    entries: Sequence[Any], sender: str, target: str | None
) -> list[dict[str, Any]]:
    """The entries of an ``eth_createAccessList`` answer worth sending (EIP-2930): every account
    and storage key the call touches, less what is warm anyway.

    An entry costs 2,400 gas per address and 1,900 per storage key, paid up front; each listed
    address then saves 2,500 gas of its first access (2,600 cold) and each key 2,000 of its
    first read or 2,100 of its first write (EIP-2929), so a touched entry saves 100-200 gas. The
    sender and the target (and the precompiles) are warm from the start: listing one pays 2,400
    for nothing but its keys, so it is dropped unless it has at least
    `ACCESS_LIST_MIN_KEYS_OF_WARM` keys.

    Args:
        entries: the answer's ``accessList`` (``address`` and ``storageKeys`` per entry).
        sender: the transaction's ``from``.
        target: its ``to`` (None for a deployment).

    Returns:
        The entries to send, as ``{"address", "storageKeys"}`` dicts; none at all when they
        exceed `ACCESS_LIST_MAX_ACCOUNTS` accounts or `ACCESS_LIST_MAX_KEYS` keys (an answer no
        protocol call needs, whose prepaid gas only the sender would lose).
    """
    warm = {sender.lower(), (target or "").lower()}
    out: list[dict[str, Any]] = []
    for entry in entries:
        address = str(entry["address"])
        keys = [HexBytes(k).to_0x_hex() for k in entry.get("storageKeys", [])]
        if int(address, 16) < PRECOMPILE_ADDRESS_BOUND:
            continue
        if address.lower() in warm and len(keys) < ACCESS_LIST_MIN_KEYS_OF_WARM:
            continue
        out.append({"address": to_checksum_address(address), "storageKeys": keys})
    keys_listed = sum(len(e["storageKeys"]) for e in out)
    if len(out) > ACCESS_LIST_MAX_ACCOUNTS or keys_listed > ACCESS_LIST_MAX_KEYS:
        logger.warning(
            "access list of %d accounts and %d keys not sent (more than any protocol call touches)",
            len(out),
            keys_listed,
        )
        return []
    return out


class Transport:
    """Signed JSON-RPC transport of one account.

    Args:
        rpc_url: HTTP JSON-RPC endpoint.
        account: a `LocalAccount` or a 0x-hex private key (never logged).
        request_timeout: seconds per RPC request.
        receipt_timeout: seconds to wait for a transaction to be mined.
        poll_latency: seconds between receipt polls.
        gas_multiplier: safety factor applied to ``eth_estimateGas``.
        approve_max: when auto-approving, approve ``MAX_UINT256`` instead of the exact amount.
        access_lists: send each transaction with the EIP-2930 access list the node computes for
            it (``eth_createAccessList``, `useful_access_list`): 100-200 gas less per account
            and storage word it touches; a node that cannot compute one gets none.
        w3: an existing `Web3` to reuse (tests); built from ``rpc_url`` otherwise.

    Raises:
        RpcUnavailable: the endpoint cannot be reached to read the chain id.
    """

    def __init__(
        self,
        rpc_url: str,
        account: LocalAccount | str,
        *,
        request_timeout: float = 30.0,
        receipt_timeout: float = 120.0,
        poll_latency: float = 0.1,
        gas_multiplier: float = 1.25,
        approve_max: bool = False,
        access_lists: bool = True,
        w3: Web3 | None = None,
    ) -> None:
        self.rpc_url = rpc_url
        self.account: LocalAccount = (
            account if isinstance(account, LocalAccount) else Account.from_key(account)
        )
        self.w3 = w3 or Web3(
            Web3.HTTPProvider(
                rpc_url,
                request_kwargs={"timeout": request_timeout},
                exception_retry_configuration=None,  # we retry in EventWatcher, not blindly
            )
        )
        # web3's validation middleware asks for eth_chainId before every eth_call (two of the
        # three requests of a view call): a chain's id never changes, so the provider caches it
        self.w3.provider.cache_allowed_requests = True
        self.w3.provider.cacheable_requests = {RPCEndpoint("eth_chainId")}
        self.receipt_timeout = receipt_timeout
        self.poll_latency = poll_latency
        self.gas_multiplier = gas_multiplier
        self.approve_max = approve_max
        self.access_lists = access_lists
        self._lock = threading.RLock()
        self._nonce: int | None = None
        self._is_anvil: bool | None = None
        with self._rpc():
            self.chain_id = int(self.w3.eth.chain_id)

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}({self.rpc_url!r}, address={self.address}, chain_id={self.chain_id})"

    @property
    def address(self) -> str:
        """The signing account's checksummed address."""
        return str(self.account.address)

    def contract(self, name: str, address: str) -> Contract:
        """A web3 contract handle for artifact ``name`` at ``address``."""
        art = load_artifact(name)
        return self.w3.eth.contract(address=to_checksum_address(address), abi=art["abi"])

    def contract_name(self, address: str) -> str | None:
        """Artifact name of a known contract address, for decoding reverts (None here;
        `ChainClient` names the protocol's contracts)."""
        return None

    # ------------------------------------------------------------------ low level

    @contextlib.contextmanager
    def _rpc(self, contract: str | None = None) -> Iterator[None]:
        """Translate web3 exceptions: reverts -> ContractRevert, transport -> RpcUnavailable."""
        try:
            yield
        except ContractRevert:
            raise
        except ContractLogicError as exc:
            raise decode_revert(_revert_data(exc), contract) from exc
        except _CONNECTION_ERRORS as exc:
            raise RpcUnavailable(
                f"cannot reach the RPC endpoint {self.rpc_url} ({_reason(exc)})"
            ) from exc
        except requests.exceptions.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            if status >= 500 or status == 429:
                raise RpcUnavailable(
                    f"cannot reach the RPC endpoint {self.rpc_url} (HTTP {status})"
                ) from exc
            raise ChainError(f"RPC endpoint {self.rpc_url} answered HTTP {status}") from exc
        except requests.exceptions.RequestException as exc:  # a URL requests cannot use
            raise RpcUnavailable(
                f"cannot use the RPC endpoint {self.rpc_url} ({_reason(exc)})"
            ) from exc
        except Web3RPCError as exc:
            data = _revert_data(exc)
            if data is not None:
                raise decode_revert(data, contract) from exc
            message = _rpc_message(exc)
            if "insufficient funds" in message.lower():
                raise ChainError(
                    f"{self.address} holds too little native currency on chain "
                    f"{self.chain_id} to pay the gas: send it some first ({message})"
                ) from exc
            raise ChainError(f"RPC error: {message}") from exc

    def call(self, contract: Contract, fn_name: str, *args: Any, block: Any = "latest") -> Any:
        """Call a view function and return its decoded output.

        Raises:
            ContractRevert: the call reverted (decoded).
            RpcUnavailable: the endpoint is down.
        """
        name = self.contract_name(contract.address)
        with self._rpc(name):
            return contract.functions[fn_name](*args).call(block_identifier=block)

    def call_many(self, calls: Sequence[tuple[Contract, str, tuple[Any, ...]]]) -> list[Any]:
        """Call view functions in ONE JSON-RPC batch request (one round trip, whatever the
        number of calls) and return their decoded outputs in order.

        Args:
            calls: ``(contract, function name, arguments)`` each.

        Raises:
            ContractRevert: a call reverted (decoded).
            RpcUnavailable: the endpoint is down.
        """
        if not calls:
            return []
        with self._rpc(), self.w3.batch_requests() as batch:
            for contract, fn_name, args in calls:
                batch.add(contract.functions[fn_name](*args))
            return list(batch.execute())

    def event_logs(
        self,
        contract: Contract,
        names: Sequence[str],
        from_block: int,
        to_block: int,
        first_indexed: int | None = None,
    ) -> list[DecodedEvent]:
        """The decoded events `names` of `contract` in blocks [from_block, to_block], in
        chain order: ONE ``eth_getLogs`` filtered by the events' topics (a node following
        the chain pays per block range, not per job).

        Args:
            contract: the contract handle (e.g. ``client.jobs.contract``).
            names: event names of its ABI.
            from_block: first block (inclusive).
            to_block: last block (inclusive); keep the range within the RPC's cap (2,000
                blocks is safe on public endpoints).
            first_indexed: only events whose first indexed argument is this uint256 (a job
                or dispute id: every protocol event indexes it first); None for all.

        Returns:
            `DecodedEvent`s sorted by (block number, log index).

        Raises:
            ChainValueError: a name is not an event of the contract's ABI.
            RpcUnavailable: the endpoint is down.
        """
        label = self.contract_name(contract.address) or "contract"
        abi_events = {str(e.get("name")) for e in contract.abi if e.get("type") == "event"}
        unknown = [n for n in names if n not in abi_events]
        if unknown:
            raise ChainValueError(f"{label} has no event(s) {unknown}")
        events = {n: contract.events[n]() for n in names}
        by_topic = {HexBytes(ev.topic): n for n, ev in events.items()}
        params: dict[str, Any] = {
            "address": to_checksum_address(contract.address),
            "fromBlock": int(from_block),
            "toBlock": int(to_block),
            "topics": [[t.to_0x_hex() for t in by_topic]],
        }
        if first_indexed is not None:
            params["topics"].append("0x" + int(first_indexed).to_bytes(32, "big").hex())
        with self._rpc(label):
            logs = list(self.w3.eth.get_logs(cast(Any, params)))
        decoded: list[DecodedEvent] = []
        for log in logs:
            name = by_topic.get(HexBytes(log["topics"][0])) if log["topics"] else None
            if name is None:
                continue
            event = events[name].process_log(log)
            decoded.append(
                DecodedEvent(
                    contract=label,
                    event=name,
                    args=dict(event["args"]),
                    block_number=int(log["blockNumber"]),
                    log_index=int(log["logIndex"]),
                    tx_hash=HexBytes(log["transactionHash"]).to_0x_hex(),
                    address=to_checksum_address(contract.address),
                )
            )
        return sorted(decoded, key=lambda ev: ev.position)

    def _fees(self) -> dict[str, int]:
        block = self.w3.eth.get_block("latest")
        base = block.get("baseFeePerGas")
        if base is None:
            return {"gasPrice": int(self.w3.eth.gas_price)}
        try:
            tip = int(self.w3.eth.max_priority_fee)
        except (Web3RPCError, ValueError):
            tip = 10**9
        return {"maxFeePerGas": 2 * int(base) + tip, "maxPriorityFeePerGas": tip}

    def _next_nonce(self) -> int:
        if self._nonce is None:
            self._nonce = int(self.w3.eth.get_transaction_count(self.account.address, "pending"))
        return self._nonce

    def next_nonce(self) -> int:
        """The nonce this client's next transaction will carry (its cached count, else the node's
        pending transaction count of the account).

        Raises:
            RpcUnavailable: the RPC endpoint is down.
        """
        with self._lock, self._rpc():
            return self._next_nonce()

    def resync_nonce(self) -> None:
        """Forget the cached nonce; the next transaction reads the pending count again."""
        with self._lock:
            self._nonce = None

    def send(self, tx: TxParams, contract: str | None = None) -> TxReceipt:
        """Estimate gas, sign with the client's key, send, and wait for the receipt.

        Args:
            tx: transaction fields (``to``, ``data``, ``value``); ``from``, ``nonce``,
                ``chainId``, ``gas`` and fees are filled in.
            contract: contract name for error messages.

        Returns:
            The receipt (status 1).

        Raises:
            ContractRevert: gas estimation or the mined transaction reverted (decoded).
            TransactionFailed: mined with status 0 and no reason, or not mined in time.
            RpcUnavailable: the endpoint is down.
        """
        with self._lock:
            for attempt in range(2):
                with self._rpc(contract):
                    params: dict[str, Any] = {"value": 0, **cast(dict[str, Any], tx)}
                    params["from"] = self.account.address
                    params["chainId"] = self.chain_id
                    if self.access_lists and "accessList" not in params:
                        listed = self._access_list(params)
                        if listed:
                            params["accessList"] = listed
                    if "gas" not in params:
                        estimate = self.w3.eth.estimate_gas(cast(TxParams, params))
                        params["gas"] = int(estimate * self.gas_multiplier) + 10_000
                    params.update(self._fees())
                    params["nonce"] = self._next_nonce()
                    signed = self.account.sign_transaction(params)
                try:
                    with self._rpc(contract):
                        tx_hash = self.w3.eth.send_raw_transaction(signed.raw_transaction)
                except ChainError as exc:
                    self._nonce = None  # resync after any send failure
                    if attempt == 0 and "nonce" in str(exc).lower():
                        logger.warning("nonce mismatch, resyncing and retrying once")
                        continue
                    raise
                self._nonce = int(params["nonce"]) + 1
                break
        return self.wait(tx_hash, params, contract)

    def _access_list(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """`useful_access_list` of the node's ``eth_createAccessList`` for ``params`` at the
        latest block; empty when the node cannot compute one (an RPC without the method, or a
        call that reverts: the gas estimate then reports the revert)."""
        call = {k: params[k] for k in ("from", "to", "data", "value") if k in params}
        try:
            answer = self.w3.eth.create_access_list(cast(TxParams, call), "latest")
        except Exception as exc:  # any failure only means no list: the send goes on without
            logger.debug("no access list: %s", exc)
            return []
        return useful_access_list(
            answer.get("accessList", []), str(params["from"]), params.get("to")
        )

    def wait(
        self,
        tx_hash: HexBytes | bytes | str,
        tx: dict[str, Any] | None = None,
        contract: str | None = None,
    ) -> TxReceipt:
        """Wait for a transaction's receipt; on status 0, replay it to decode the revert.

        Raises:
            ContractRevert: the transaction reverted (decoded when the replay reproduces it).
            TransactionFailed: reverted without a recoverable reason, or not mined within
                ``receipt_timeout`` seconds.
        """
        hex_hash = HexBytes(tx_hash).to_0x_hex()
        try:
            with self._rpc(contract):
                receipt = self.w3.eth.wait_for_transaction_receipt(
                    HexBytes(tx_hash), timeout=self.receipt_timeout, poll_latency=self.poll_latency
                )
        except TimeExhausted as exc:
            raise TransactionFailed(
                f"transaction {hex_hash} not mined within {self.receipt_timeout:.0f} s", hex_hash
            ) from exc
        if receipt["status"] == 1:
            return receipt
        if tx is not None:
            replay = {k: tx[k] for k in ("from", "to", "data", "value", "gas") if k in tx}
            try:
                with self._rpc(contract):
                    self.w3.eth.call(cast(TxParams, replay), receipt["blockNumber"] - 1)
            except ContractRevert as err:
                raise err from None
            except ChainError:
                pass
        raise TransactionFailed(f"transaction {hex_hash} reverted (status 0)", hex_hash)

    def transact(
        self,
        contract: Contract,
        fn_name: str,
        *args: Any,
        value: int = 0,
        gas: int | None = None,
    ) -> TxReceipt:
        """Send ``contract.fn_name(*args)`` signed by this client's account.

        Args:
            contract: a contract handle (e.g. ``client.job_manager``).
            fn_name: Solidity function name.
            *args: function arguments.
            value: wei of ether to send.
            gas: explicit gas limit (skips estimation, so reverts surface from the receipt).

        Returns:
            The mined receipt.

        Raises:
            ContractRevert: the call reverts (decoded custom error).
            TransactionFailed: mined with status 0 without a reason, or not mined in time.
            RpcUnavailable: the endpoint is down.
        """
        name = self.contract_name(contract.address)
        with self._rpc(name):
            data = contract.encode_abi(fn_name, args=list(args))
        tx: dict[str, Any] = {"to": contract.address, "data": data, "value": value}
        if gas is not None:
            tx["gas"] = gas
        return self.send(cast(TxParams, tx), name)

    def deploy_contract(
        self, name: str, *args: Any, libraries: dict[str, str] | None = None
    ) -> tuple[str, TxReceipt]:
        """Deploy artifact ``name`` with constructor ``args``.

        Args:
            name: the artifact (contract or library) name.
            *args: constructor arguments.
            libraries: ``{library name: address}`` linked into the bytecode at the artifact's
                link references (`chain.artifacts.link_bytecode`); required when it has any.

        Returns:
            (checksummed address, receipt).

        Raises:
            ContractRevert: the constructor reverted.
            ChainValueError: the artifact has no bytecode (an interface or abstract contract),
                or a library it links is missing from ``libraries``.
        """
        art = load_artifact(name)
        if not art["bytecode"] or art["bytecode"] == "0x":
            raise ChainValueError(f"{name} has no creation bytecode")
        bytecode = art["bytecode"]
        if art["link_references"]:
            bytecode = link_bytecode(bytecode, art["link_references"], libraries or {})
        factory = self.w3.eth.contract(abi=art["abi"], bytecode=bytecode)
        with self._rpc(name):
            data = factory.constructor(*args).data_in_transaction
        receipt = self.send(cast(TxParams, {"data": data, "value": 0}), name)
        address = receipt["contractAddress"]
        if address is None:
            raise TransactionFailed(f"{name} deployment produced no contract address")
        return to_checksum_address(address), receipt

    # ------------------------------------------------------------------ chain / devnet

    def block_number(self) -> int:
        """Latest block number (blocks)."""
        with self._rpc():
            return int(self.w3.eth.block_number)

    def transaction_call(self, tx_hash: str) -> tuple[str | None, bytes]:
        """A mined transaction's target (checksummed; None for a deployment) and calldata.

        Raises:
            RpcUnavailable: the endpoint is down.
        """
        with self._rpc():
            tx = self.w3.eth.get_transaction(HexBytes(tx_hash))
        to = tx.get("to")
        return (None if to is None else to_checksum_address(to)), bytes(HexBytes(tx["input"]))

    def timestamp(self, block: Any = "latest") -> int:
        """Timestamp of a block (default latest), in seconds."""
        with self._rpc():
            return int(self.w3.eth.get_block(block)["timestamp"])

    def eth_balance(self, account: str | None = None) -> int:
        """Ether balance in wei (default: this client's account)."""
        with self._rpc():
            return int(self.w3.eth.get_balance(to_checksum_address(account or self.address)))

    @property
    def is_devnet(self) -> bool:
        """True when the node is Anvil (so ``evm_mine``/``evm_increaseTime`` exist)."""
        if self._is_anvil is None:
            with self._rpc():
                self._is_anvil = "anvil" in str(self.w3.client_version).lower()
        return self._is_anvil

    def _dev_rpc(self, method: str, params: list[Any]) -> Any:
        if not self.is_devnet:
            raise ChainValueError(f"{method} is only available on a devnet (Anvil)")
        with self._rpc():
            resp = self.w3.provider.make_request(cast(Any, method), params)
        if "error" in resp:
            raise ChainError(f"{method} failed: {resp['error']}")
        return resp.get("result")

    def mine(self, blocks: int = 1) -> None:
        """Mine ``blocks`` blocks (devnet only).

        Raises:
            ChainValueError: not a devnet.
        """
        if blocks == 1:
            self._dev_rpc("evm_mine", [])
        else:
            self._dev_rpc("anvil_mine", [hex(blocks)])

    def increase_time(self, seconds: int) -> None:
        """Advance chain time by ``seconds`` and mine one block (devnet only)."""
        self._dev_rpc("evm_increaseTime", [int(seconds)])
        self.mine(1)

    def snapshot(self) -> str:
        """``evm_snapshot`` (devnet only); returns the snapshot id."""
        return str(self._dev_rpc("evm_snapshot", []))

    def revert_to(self, snapshot_id: str) -> bool:
        """``evm_revert`` (devnet only); resets the cached nonce."""
        ok = bool(self._dev_rpc("evm_revert", [snapshot_id]))
        self.resync_nonce()
        return ok
