"""`ChainClient`: typed, locally signed access to the veritrain contracts.

Every transaction is signed in-process by the client's account (never an unlocked node
account), so the same code runs on Anvil and on a public testnet. Transacting methods return the
mined receipt, or raise a decoded `chain.errors.ContractRevert`; views return frozen dataclasses
(`chain.types`). Methods that pull tokens (``stake``, ``post_job``, ``reveal_verdicts`` with
rejects, ``challenge_approval``, ``fund_jackpot``, ``pay_revenue``) first approve the spender
when the allowance is short.

The verification round (docs/FORCED_ERRORS.md) lives in its own contract
(``client.verification_round``): ``post_claims``, ``commit_verdicts``, ``reveal_verdicts``,
``reveal_secret`` and the views ``outcome``, ``claims_of``, ``round_of``, ``windows_of``,
``verdict_commitment_of``, ``draw_forced_error``, ``forced_claim``.

Usage::

    client = ChainClient(rpc_url, private_key, load_manifest(31337))
    client.faucet(1_000 * 10**18)                          # devnet token
    client.stake(Role.Solver, 100 * 10**18)
    receipt = client.post_job(model_id, spec_hash, 100, 10, reward, spec_uri)
    job_id = client.job_id_from(receipt)
    client.get_job(job_id).status                          # JobStatus.Open

Units: token amounts in wei, times in seconds (block timestamps), gas in gas units.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from typing import Any, cast

import requests
from eth_abi import encode as abi_encode
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_utils import keccak, to_checksum_address
from hexbytes import HexBytes
from web3 import Web3
from web3.contract import Contract
from web3.exceptions import (
    ContractLogicError,
    ProviderConnectionError,
    TimeExhausted,
    Web3RPCError,
)
from web3.types import TxParams, TxReceipt

from chain.artifacts import load_artifact
from chain.deploy import Deployment
from chain.errors import (
    ChainError,
    ChainValueError,
    ContractRevert,
    RpcUnavailable,
    TransactionFailed,
    decode_revert,
)
from chain.types import (
    Assignment,
    ClaimsView,
    DecodedEvent,
    DisputePhase,
    DisputeStatus,
    DisputeView,
    GameStatus,
    GameView,
    JobParamsView,
    JobStatus,
    JobView,
    Role,
    RoundOutcome,
    RoundView,
    RoundWindows,
    Side,
    StakeView,
    StepClaimView,
    Verdict,
    from_struct,
    struct_to_dict,
)
from veritrain.commitments import vote_commitment

logger = logging.getLogger(__name__)

__all__ = ["ChainClient", "MAX_UINT256"]

MAX_UINT256 = 2**256 - 1

# Contract handle attribute -> artifact name.
_HANDLES: dict[str, str] = {
    "token": "VeriToken",
    "stake_manager": "StakeManager",
    "job_manager": "JobManager",
    "arbitration": "ArbitrationCommittee",
    "share_registry": "ShareRegistry",
}
# Handles present only in some deployments (``ContractAddresses`` field may be None).
_OPTIONAL_HANDLES: dict[str, str] = {
    "verification_round": "VerificationRound",
    "bisection_game": "BisectionGame",
}

_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    requests.exceptions.ConnectionError,
    requests.exceptions.Timeout,
    ProviderConnectionError,
    ConnectionError,
    TimeoutError,
)


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


class ChainClient:
    """Typed client of the veritrain contracts for one signing account.

    Args:
        rpc_url: HTTP JSON-RPC endpoint.
        account: a `LocalAccount` or a 0x-hex private key (never logged).
        deployment: addresses and params; None for a client that only deploys (see
            `chain.deploy.deploy_protocol`, which sets it).
        request_timeout: seconds per RPC request.
        receipt_timeout: seconds to wait for a transaction to be mined.
        poll_latency: seconds between receipt polls.
        gas_multiplier: safety factor applied to ``eth_estimateGas``.
        approve_max: when auto-approving, approve ``MAX_UINT256`` instead of the exact amount.
        w3: an existing `Web3` to reuse (tests); built from ``rpc_url`` otherwise.

    Raises:
        RpcUnavailable: the endpoint cannot be reached to read the chain id.
    """

    def __init__(
        self,
        rpc_url: str,
        account: LocalAccount | str,
        deployment: Deployment | None = None,
        *,
        request_timeout: float = 30.0,
        receipt_timeout: float = 120.0,
        poll_latency: float = 0.1,
        gas_multiplier: float = 1.25,
        approve_max: bool = False,
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
        self.receipt_timeout = receipt_timeout
        self.poll_latency = poll_latency
        self.gas_multiplier = gas_multiplier
        self.approve_max = approve_max
        self._lock = threading.RLock()
        self._nonce: int | None = None
        self._contracts: dict[str, Contract] = {}
        self._shares: dict[bytes, Contract] = {}
        self._is_anvil: bool | None = None
        with self._rpc():
            self.chain_id = int(self.w3.eth.chain_id)
        self.deployment: Deployment | None = None
        if deployment is not None:
            self.use_deployment(deployment)

    def __repr__(self) -> str:
        return f"ChainClient({self.rpc_url!r}, address={self.address}, chain_id={self.chain_id})"

    # ------------------------------------------------------------------ setup

    @property
    def address(self) -> str:
        """The signing account's checksummed address."""
        return str(self.account.address)

    def use_deployment(self, deployment: Deployment) -> None:
        """Bind the client to a deployment (loads the ABIs of every protocol contract).

        Raises:
            ChainValueError: the deployment is for another chain id.
        """
        if deployment.chain_id != self.chain_id:
            raise ChainValueError(
                f"deployment is for chain {deployment.chain_id}, RPC is chain {self.chain_id}"
            )
        self.deployment = deployment
        self._contracts.clear()
        self._shares.clear()
        for attr, name in _HANDLES.items():
            address = getattr(deployment.addresses, attr)
            self._contracts[attr] = self.contract(name, address)
        for attr, name in _OPTIONAL_HANDLES.items():
            address = getattr(deployment.addresses, attr, None)
            if address:
                self._contracts[attr] = self.contract(name, address)
        load_artifact("ModelShares")  # registers its errors for decoding

    def contract(self, name: str, address: str) -> Contract:
        """A web3 contract handle for artifact ``name`` at ``address``."""
        art = load_artifact(name)
        return self.w3.eth.contract(address=to_checksum_address(address), abi=art["abi"])

    def _handle(self, attr: str) -> Contract:
        try:
            return self._contracts[attr]
        except KeyError:
            raise ChainValueError("ChainClient has no deployment; call use_deployment()") from None

    @property
    def token(self) -> Contract:
        """The payment token (VeriToken on devnet; any ERC-20 on a testnet)."""
        return self._handle("token")

    @property
    def stake_manager(self) -> Contract:
        """StakeManager."""
        return self._handle("stake_manager")

    @property
    def job_manager(self) -> Contract:
        """JobManager."""
        return self._handle("job_manager")

    @property
    def arbitration(self) -> Contract:
        """ArbitrationCommittee (the adjudicator)."""
        return self._handle("arbitration")

    @property
    def share_registry(self) -> Contract:
        """ShareRegistry."""
        return self._handle("share_registry")

    @property
    def verification_round(self) -> Contract:
        """VerificationRound (claims, sealed verdicts, the forced-error draw).

        Raises:
            ChainValueError: the deployment has no verification round (an old manifest).
        """
        try:
            return self._contracts["verification_round"]
        except KeyError:
            raise ChainValueError("this deployment has no VerificationRound") from None

    @property
    def bisection_game(self) -> Contract:
        """BisectionGame (the adjudicator of a ``ProtocolParams.adjudicator == "bisection"``
        deployment).

        Raises:
            ChainValueError: the deployment has no bisection game.
        """
        try:
            return self._contracts["bisection_game"]
        except KeyError:
            raise ChainValueError("this deployment has no BisectionGame") from None

    def contract_name(self, address: str) -> str | None:
        """Artifact name of a deployed protocol contract address (or ``"ModelShares"``)."""
        address = to_checksum_address(address)
        for attr, contract in self._contracts.items():
            if contract.address == address:
                return _HANDLES.get(attr) or _OPTIONAL_HANDLES[attr]
        for shares in self._shares.values():
            if shares.address == address:
                return "ModelShares"
        return None

    def contract_by_name(self, name: str) -> Contract:
        """The bound contract handle for an artifact name (``"JobManager"``) or attribute
        name (``"job_manager"``)."""
        if name in self._contracts or name in _HANDLES:
            return self._handle(name)
        for attr, art in {**_HANDLES, **_OPTIONAL_HANDLES}.items():
            if art == name:
                return self._handle(attr)
        raise ChainValueError(f"unknown protocol contract {name!r}")

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
            raise RpcUnavailable(f"{self.rpc_url}: {exc}") from exc
        except requests.exceptions.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            if status >= 500 or status == 429:
                raise RpcUnavailable(f"{self.rpc_url}: HTTP {status}") from exc
            raise ChainError(f"RPC HTTP error: {exc}") from exc
        except Web3RPCError as exc:
            data = _revert_data(exc)
            if data is not None:
                raise decode_revert(data, contract) from exc
            raise ChainError(f"RPC error: {exc}") from exc

    def call(self, contract: Contract, fn_name: str, *args: Any, block: Any = "latest") -> Any:
        """Call a view function and return its decoded output.

        Raises:
            ContractRevert: the call reverted (decoded).
            RpcUnavailable: the endpoint is down.
        """
        name = self.contract_name(contract.address)
        with self._rpc(name):
            return contract.functions[fn_name](*args).call(block_identifier=block)

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

    def deploy_contract(self, name: str, *args: Any) -> tuple[str, TxReceipt]:
        """Deploy artifact ``name`` with constructor ``args``.

        Returns:
            (checksummed address, receipt).

        Raises:
            ContractRevert: the constructor reverted.
            ChainValueError: the artifact has no bytecode (an interface or abstract contract).
        """
        art = load_artifact(name)
        if not art["bytecode"] or art["bytecode"] == "0x":
            raise ChainValueError(f"{name} has no creation bytecode")
        factory = self.w3.eth.contract(abi=art["abi"], bytecode=art["bytecode"])
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

    # ------------------------------------------------------------------ token

    def balance_of(self, account: str | None = None) -> int:
        """Payment-token balance in wei (default: this client's account)."""
        return int(self.call(self.token, "balanceOf", to_checksum_address(account or self.address)))

    def allowance(self, spender: str, owner: str | None = None) -> int:
        """Payment-token allowance of ``spender`` over ``owner`` (default: this account), wei."""
        return int(
            self.call(
                self.token,
                "allowance",
                to_checksum_address(owner or self.address),
                to_checksum_address(spender),
            )
        )

    def approve(self, spender: str, amount: int) -> TxReceipt:
        """Approve ``spender`` for ``amount`` wei of the payment token."""
        return self.transact(self.token, "approve", to_checksum_address(spender), amount)

    def transfer(self, to: str, amount: int) -> TxReceipt:
        """Transfer ``amount`` wei of the payment token."""
        return self.transact(self.token, "transfer", to_checksum_address(to), amount)

    def faucet(self, amount: int) -> TxReceipt:
        """Mint ``amount`` wei of VeriToken to this account (devnet token; at most
        ``FAUCET_LIMIT`` = 1e24 wei per call).

        Raises:
            ContractRevert: ``FaucetLimitExceeded`` or the token has no faucet.
        """
        return self.transact(self.token, "faucet", amount)

    def ensure_allowance(self, spender: str, amount: int) -> TxReceipt | None:
        """Approve ``spender`` when its allowance is below ``amount`` wei.

        Returns:
            The approve receipt, or None when the allowance already sufficed.
        """
        if amount <= 0 or self.allowance(spender) >= amount:
            return None
        return self.approve(spender, MAX_UINT256 if self.approve_max else amount)

    def mint_and_approve(self, amount: int, spender: str | None = None) -> None:
        """Devnet convenience: faucet ``amount`` wei (in chunks of the faucet limit) and approve
        ``spender`` (default: every protocol contract that pulls tokens) for it."""
        limit = 10**24
        left = amount
        while left > 0:
            chunk = min(left, limit)
            self.faucet(chunk)
            left -= chunk
        spenders = [spender] if spender else [self.stake_manager.address, self.job_manager.address]
        for s in spenders:
            self.approve(s, amount)

    # ------------------------------------------------------------------ StakeManager

    def stake(self, role: Role | int, amount: int) -> TxReceipt:
        """Stake ``amount`` wei for ``role`` (auto-approves the StakeManager)."""
        self.ensure_allowance(self.stake_manager.address, amount)
        return self.transact(self.stake_manager, "stake", int(role), amount)

    def request_unbond(self, role: Role | int, amount: int) -> TxReceipt:
        """Move ``amount`` wei of free stake to unbonding (releases after the unbonding delay)."""
        return self.transact(self.stake_manager, "requestUnbond", int(role), amount)

    def withdraw(self, role: Role | int) -> TxReceipt:
        """Withdraw all released unbonding stake of ``role``."""
        return self.transact(self.stake_manager, "withdraw", int(role))

    def stake_of(self, account: str | None = None, role: Role | int = Role.Solver) -> StakeView:
        """``stakeOf(account, role)`` (wei; release_at in seconds)."""
        staked, locked, unbonding, release_at = self.call(
            self.stake_manager, "stakeOf", to_checksum_address(account or self.address), int(role)
        )
        return StakeView(int(staked), int(locked), int(unbonding), int(release_at))

    def free_stake(self, account: str | None = None, role: Role | int = Role.Solver) -> int:
        """Staked minus locked, in wei."""
        return int(
            self.call(
                self.stake_manager,
                "freeStake",
                to_checksum_address(account or self.address),
                int(role),
            )
        )

    def is_active(self, account: str | None = None, role: Role | int = Role.Solver) -> bool:
        """True when ``account`` has at least the minimum stake for ``role``."""
        return bool(
            self.call(
                self.stake_manager,
                "isActive",
                to_checksum_address(account or self.address),
                int(role),
            )
        )

    def min_stake(self, role: Role | int) -> int:
        """Minimum stake of ``role`` in wei."""
        return int(self.call(self.stake_manager, "minStake", int(role)))

    def active_verifiers(self) -> list[str]:
        """The set of active verifiers (``verifierAt(0..verifierCount)``)."""
        n = int(self.call(self.stake_manager, "verifierCount"))
        return [str(self.call(self.stake_manager, "verifierAt", i)) for i in range(n)]

    # ------------------------------------------------------------------ JobManager

    def job_params(self) -> JobParamsView:
        """``JobManager.params()`` (wei, seconds)."""
        raw = self.call(self.job_manager, "params")
        abi = self.job_manager.get_function_by_name("params").abi
        outputs = abi["outputs"]
        if len(outputs) == 1 and outputs[0].get("type") == "tuple":
            data = struct_to_dict(outputs[0]["components"], raw)
        else:
            data = struct_to_dict(outputs, raw)
        return from_struct(JobParamsView, data)

    def post_job(
        self,
        model_id: bytes,
        spec_hash: bytes,
        total_steps: int,
        checkpoint_interval: int,
        reward: int,
        spec_uri: str,
    ) -> TxReceipt:
        """Post a job, escrowing ``reward + V * verifierFee`` wei (auto-approves).

        Args:
            model_id: ``keccak256(model name)`` (32 bytes).
            spec_hash: ``keccak256(canonical spec JSON)`` (32 bytes).
            total_steps: N optimizer steps.
            checkpoint_interval: k steps between checkpoints (N % k == 0).
            reward: solver reward in wei.
            spec_uri: where the spec can be fetched (``data:`` URI or URL).

        Returns:
            The receipt; `job_id_from` extracts the new job id.
        """
        p = self.job_params()
        self.ensure_allowance(
            self.job_manager.address, reward + p.verifiers_per_job * p.verifier_fee
        )
        return self.transact(
            self.job_manager,
            "postJob",
            model_id,
            spec_hash,
            total_steps,
            checkpoint_interval,
            reward,
            spec_uri,
        )

    def job_id_from(self, receipt: TxReceipt) -> int:
        """The job id of the ``JobPosted`` event in a `post_job` receipt.

        Raises:
            ChainValueError: the receipt has no JobPosted event.
        """
        for ev in self.decode_receipt(receipt, "JobPosted"):
            return int(ev.args["jobId"])
        raise ChainValueError("receipt holds no JobPosted event")

    def dispute_id_from(self, receipt: TxReceipt) -> int | None:
        """The dispute id opened by a `finalize` receipt (``JobDisputed``), or None."""
        for ev in self.decode_receipt(receipt):
            if ev.event in ("JobDisputed", "DisputeOpened"):
                return int(ev.args["disputeId"])
        return None

    def cancel_job(self, job_id: int) -> TxReceipt:
        """Cancel an Open job (submitter only); the escrow becomes claimable credit."""
        return self.transact(self.job_manager, "cancelJob", job_id)

    def claim_job(self, job_id: int) -> TxReceipt:
        """Claim an Open job as solver (locks ``solverStake`` wei)."""
        return self.transact(self.job_manager, "claimJob", job_id)

    def commit_checkpoints(
        self, job_id: int, merkle_root: bytes, checkpoint_url: str, secret_commitment: bytes
    ) -> TxReceipt:
        """Commit the checkpoint Merkle root, the URL serving checkpoints and proofs, and the
        solver's secret commitment (``veritrain.forced.secret_commitment``; non-zero)."""
        return self.transact(
            self.job_manager,
            "commitCheckpoints",
            job_id,
            merkle_root,
            checkpoint_url,
            secret_commitment,
        )

    def reclaim_expired(self, job_id: int) -> TxReceipt:
        """Reopen a job whose solver missed the commit deadline (slashes the solver)."""
        return self.transact(self.job_manager, "reclaimExpired", job_id)

    def assign_verifiers(self, job_id: int) -> TxReceipt:
        """Draw verifiers and sampled segments (after the randomness block is mined)."""
        return self.transact(self.job_manager, "assignVerifiers", job_id)

    def challenge_approval(self, job_id: int, sample_index: int, verifier: str) -> TxReceipt:
        """Challenge ``verifier``'s approval of sample ``sample_index`` as a whistleblower
        (posts ``challengeBond`` wei; auto-approves)."""
        self.ensure_allowance(self.job_manager.address, self.job_params().challenge_bond)
        return self.transact(
            self.job_manager,
            "challengeApproval",
            job_id,
            sample_index,
            to_checksum_address(verifier),
        )

    def finalize(self, job_id: int) -> TxReceipt:
        """Settle a job after its challenge window, or open/continue arbitration."""
        return self.transact(self.job_manager, "finalize", job_id)

    def claim_credit(self) -> TxReceipt:
        """Withdraw this account's credit (pull payment)."""
        return self.transact(self.job_manager, "claimCredit")

    def credit_of(self, account: str | None = None) -> int:
        """Claimable credit in wei."""
        return int(
            self.call(self.job_manager, "creditOf", to_checksum_address(account or self.address))
        )

    def job_count(self) -> int:
        """Number of jobs posted (ids are 1..job_count)."""
        return int(self.call(self.job_manager, "jobCount"))

    def get_job(self, job_id: int, *, with_uris: bool = True) -> JobView:
        """``getJob(jobId)`` as a `JobView` (status a `JobStatus`).

        Args:
            job_id: the job.
            with_uris: also read ``specURIOf`` and ``checkpointURLOf`` (two more calls).

        Raises:
            ContractRevert: the contract rejects the id (decoded).
        """
        raw = self.call(self.job_manager, "getJob", job_id)
        outputs = self.job_manager.get_function_by_name("getJob").abi["outputs"]
        if len(outputs) == 1 and outputs[0].get("type") == "tuple":
            data = struct_to_dict(outputs[0]["components"], raw)
        else:
            data = struct_to_dict(outputs, raw)
        data["status"] = JobStatus(int(data["status"]))
        for key in ("model_id", "spec_hash", "merkle_root"):
            data[key] = bytes(data[key])
        if with_uris:
            data["spec_uri"] = self.spec_uri(job_id)
            data["checkpoint_url"] = self.checkpoint_url(job_id)
        return from_struct(JobView, data, job_id=job_id)

    def spec_uri(self, job_id: int) -> str:
        """The job's ``specURI`` (``specURIOf``)."""
        return str(self.call(self.job_manager, "specURIOf", job_id))

    def checkpoint_url(self, job_id: int) -> str:
        """The solver's committed ``checkpointURL`` (``checkpointURLOf``; "" before commit)."""
        return str(self.call(self.job_manager, "checkpointURLOf", job_id))

    def disputed_sample_of(self, job_id: int) -> int:
        """Sample index under dispute (``disputedSampleOf``)."""
        return int(self.call(self.job_manager, "disputedSampleOf", job_id))

    def disputed_mask_of(self, job_id: int) -> int:
        """Bit mask of disputed sample indices (bit i = sample i; ``disputedMaskOf``)."""
        return int(self.call(self.job_manager, "disputedMaskOf", job_id))

    def get_assignment(self, job_id: int) -> Assignment:
        """Assigned verifiers and sampled segments of a job."""
        verifiers, segments = self.call(self.job_manager, "getAssignment", job_id)
        return Assignment(tuple(str(v) for v in verifiers), tuple(int(s) for s in segments))

    def verdicts_of(self, job_id: int, verifier: str) -> list[Verdict]:
        """A verifier's verdicts in sample order (`Verdict.None_` before submission)."""
        raw = self.call(self.job_manager, "verdictOf", job_id, to_checksum_address(verifier))
        return [Verdict(int(v)) for v in raw]

    def challenger_of(self, job_id: int, sample_index: int, verifier: str) -> str | None:
        """Whistleblower that challenged ``verifier``'s approval of a sample, or None."""
        who = str(
            self.call(
                self.job_manager,
                "challengerOf",
                job_id,
                sample_index,
                to_checksum_address(verifier),
            )
        )
        return None if int(who, 16) == 0 else who

    def jackpot_pool(self) -> int:
        """Tokens in the forced-error jackpot pool (wei)."""
        return int(self.call(self.job_manager, "jackpotPool"))

    def fund_jackpot(self, amount: int) -> TxReceipt:
        """Put ``amount`` wei into the jackpot pool (anyone; auto-approves the JobManager)."""
        self.ensure_allowance(self.job_manager.address, amount)
        return self.transact(self.job_manager, "fundJackpot", amount)

    def liabilities(self) -> tuple[int, int, int, int]:
        """``liabilities()``: (escrowed, bonds, credits, jackpot pool) in wei; their sum is the
        JobManager's token balance."""
        escrowed, bonds, credits, pool = self.call(self.job_manager, "liabilities")
        return int(escrowed), int(bonds), int(credits), int(pool)

    def verification_round_address(self) -> str:
        """The round the JobManager forwards commitments to (``verificationRound()``)."""
        return str(self.call(self.job_manager, "verificationRound"))

    # ------------------------------------------------------------------ VerificationRound

    def post_claims(
        self, job_id: int, start_hashes: Sequence[bytes], end_hashes: Sequence[bytes]
    ) -> TxReceipt:
        """Solver: post the claims on the sampled segments (one start and one end state hash
        per sample, in sample order), by the verdict deadline.

        Raises:
            ContractRevert: e.g. ``ClaimsAlreadyPosted``, ``LengthMismatch``, ``OutsideWindow``.
        """
        return self.transact(
            self.verification_round,
            "postClaims",
            job_id,
            [bytes(h) for h in start_hashes],
            [bytes(h) for h in end_hashes],
        )

    def commit_verdicts(self, job_id: int, commitment: bytes) -> TxReceipt:
        """Assigned verifier: seal its verdicts (``veritrain.forced.verdict_commitment``).

        Raises:
            ContractRevert: e.g. ``ClaimsNotPosted``, ``VerdictAlreadyCommitted``,
                ``OutsideWindow``.
        """
        return self.transact(self.verification_round, "commitVerdicts", job_id, commitment)

    def reveal_verdicts(self, job_id: int, approvals: Sequence[bool], salt: bytes) -> TxReceipt:
        """Assigned verifier: reveal its sealed verdicts (recorded at the JobManager, which
        pulls ``challengeBond`` wei per reject; auto-approves the JobManager).

        Raises:
            ContractRevert: e.g. ``VerdictCommitmentMismatch``, ``NothingToReveal``,
                ``OutsideWindow``.
        """
        rejects = sum(1 for a in approvals if not a)
        if rejects:
            bond = self.job_params().challenge_bond
            self.ensure_allowance(self.job_manager.address, rejects * bond)
        return self.transact(
            self.verification_round,
            "revealVerdicts",
            job_id,
            [bool(a) for a in approvals],
            salt,
        )

    def reveal_secret(
        self,
        job_id: int,
        secret: bytes,
        forced_true_end: bytes,
        start_proofs: Sequence[Sequence[bytes]],
        end_proofs: Sequence[Sequence[bytes]],
    ) -> TxReceipt:
        """Solver: reveal the job's secret after the challenge deadline and prove every claim
        against the Merkle root (``forced_true_end`` is the committed end hash of the forced
        sample, zero when the job carries none).

        Raises:
            ContractRevert: e.g. ``SecretCommitmentMismatch``, ``InvalidClaimProof``,
                ``ForcedClaimMismatch``, ``OutsideWindow``.
        """
        return self.transact(
            self.verification_round,
            "revealSecret",
            job_id,
            secret,
            forced_true_end,
            [[bytes(p) for p in proof] for proof in start_proofs],
            [[bytes(p) for p in proof] for proof in end_proofs],
        )

    def outcome(self, job_id: int) -> tuple[RoundOutcome, int]:
        """``outcome(jobId)``: the round's `RoundOutcome` and the forced sample index
        (meaningful only for ``Forced``)."""
        outcome, sample = self.call(self.verification_round, "outcome", job_id)
        return RoundOutcome(int(outcome)), int(sample)

    def claims_of(self, job_id: int) -> ClaimsView:
        """The solver's posted claims (empty until posted)."""
        starts, ends = self.call(self.verification_round, "claimsOf", job_id)
        return ClaimsView(tuple(bytes(h) for h in starts), tuple(bytes(h) for h in ends))

    def verdict_commitment_of(self, job_id: int, verifier: str | None = None) -> tuple[bytes, bool]:
        """A verifier's sealed commitment (zero if none) and whether it was revealed."""
        commitment, revealed = self.call(
            self.verification_round,
            "verdictCommitmentOf",
            job_id,
            to_checksum_address(verifier or self.address),
        )
        return bytes(commitment), bool(revealed)

    def round_of(self, job_id: int) -> RoundView:
        """``roundOf(jobId)`` as a `RoundView`."""
        commitment, secret, revealed, committed = self.call(
            self.verification_round, "roundOf", job_id
        )
        return RoundView(
            job_id=job_id,
            secret_commitment=bytes(commitment),
            secret=bytes(secret),
            revealed=bool(revealed),
            committed=int(committed),
        )

    def windows_of(self, job_id: int) -> RoundWindows:
        """``windowsOf(jobId)``: the verdict-reveal and secret-reveal windows (timestamps)."""
        a, b, c, d = self.call(self.verification_round, "windowsOf", job_id)
        return RoundWindows(int(a), int(b), int(c), int(d))

    def draw_forced_error(self, job_id: int, secret: bytes) -> tuple[bool, int]:
        """The contract's forced-error draw for ``secret`` on an assigned job:
        (forced, sample index)."""
        forced, sample = self.call(self.verification_round, "drawForcedError", job_id, secret)
        return bool(forced), int(sample)

    def forced_claim(self, true_end: bytes) -> bytes:
        """The contract's forced claim of a true end state hash."""
        return bytes(self.call(self.verification_round, "forcedClaim", true_end))

    def forced_error_rate_bps(self) -> int:
        """Share of jobs carrying a forced error, in basis points."""
        return int(self.call(self.verification_round, "forcedErrorRateBps"))

    def forced_error_tag(self) -> bytes:
        """``FORCED_ERROR_TAG`` = keccak256("veritrain.forced-error.v1")."""
        return bytes(self.call(self.verification_round, "FORCED_ERROR_TAG"))

    def verify_checkpoint(
        self, job_id: int, leaf_index: int, state_hash: bytes, proof: Sequence[bytes]
    ) -> bool:
        """``verifyCheckpoint``: does the proof place ``state_hash`` at ``leaf_index``?"""
        return bool(
            self.call(
                self.job_manager, "verifyCheckpoint", job_id, leaf_index, state_hash, list(proof)
            )
        )

    # ------------------------------------------------------------------ ArbitrationCommittee

    def draw_committee(self, dispute_id: int) -> TxReceipt:
        """Draw the dispute's committee (after its randomness block is mined)."""
        return self.transact(self.arbitration, "drawCommittee", dispute_id)

    def commit_vote(self, dispute_id: int, commitment: bytes) -> TxReceipt:
        """Commit ``vote_commitment(dispute_id, self.address, valid, salt)`` as a seated arbiter."""
        return self.transact(self.arbitration, "commitVote", dispute_id, commitment)

    def reveal_vote(self, dispute_id: int, segment_valid: bool, salt: bytes) -> TxReceipt:
        """Reveal a committed vote."""
        return self.transact(self.arbitration, "revealVote", dispute_id, segment_valid, salt)

    def vote_commitment(self, dispute_id: int, segment_valid: bool, salt: bytes) -> bytes:
        """This account's commitment for a vote (computed locally; see `vote_commitment`)."""
        return vote_commitment(dispute_id, self.address, segment_valid, salt)

    def resolve(self, dispute_id: int) -> TxReceipt:
        """Resolve a dispute (all revealed, or after the reveal deadline)."""
        return self.transact(self.arbitration, "resolve", dispute_id)

    def get_dispute(self, dispute_id: int) -> DisputeView:
        """``getDispute(disputeId)`` as a `DisputeView`."""
        raw = self.call(self.arbitration, "getDispute", dispute_id)
        outputs = self.arbitration.get_function_by_name("getDispute").abi["outputs"]
        if len(outputs) == 1 and outputs[0].get("type") == "tuple":
            data = struct_to_dict(outputs[0]["components"], raw)
        else:
            data = struct_to_dict(outputs, raw)
        data["status"] = DisputeStatus(int(data["status"]))
        return from_struct(DisputeView, data, dispute_id=dispute_id)

    def dispute_phase(self, dispute_id: int) -> DisputePhase:
        """The dispute's current `DisputePhase` (``phaseOf``)."""
        return DisputePhase(int(self.call(self.arbitration, "phaseOf", dispute_id)))

    def committee_of(self, dispute_id: int) -> list[str]:
        """Addresses seated on a dispute's committee."""
        return [str(a) for a in self.call(self.arbitration, "committeeOf", dispute_id)]

    def ballot_of(self, dispute_id: int, member: str) -> tuple[bytes, bool, bool]:
        """``ballotOf``: (commitment, revealed, segment_valid) of a committee member."""
        commitment, revealed, valid = self.call(
            self.arbitration, "ballotOf", dispute_id, to_checksum_address(member)
        )
        return bytes(commitment), bool(revealed), bool(valid)

    def is_excluded(self, dispute_id: int, account: str | None = None) -> bool:
        """True when ``account`` may not sit on the dispute's committee."""
        return bool(
            self.call(
                self.arbitration,
                "isExcluded",
                dispute_id,
                to_checksum_address(account or self.address),
            )
        )

    def dispute_count(self) -> int:
        """Number of disputes opened."""
        return int(self.call(self.arbitration, "disputeCount"))

    # ------------------------------------------------------------------ BisectionGame

    def post_endpoints(
        self,
        dispute_id: int,
        start_hash: bytes,
        end_hash: bytes,
        start_proof: Sequence[bytes],
        end_proof: Sequence[bytes],
    ) -> TxReceipt:
        """Defender's first move: the segment's committed endpoint hashes with their Merkle
        proofs (leaves s and s + 1). Auto-approves the game for one move bond.

        Raises:
            ContractRevert: e.g. ``InvalidEndpointProof``, ``OutOfTurn``, ``ClockExpired``.
        """
        game = self.bisection_game
        self.ensure_allowance(game.address, self.move_bond())
        return self.transact(
            game,
            "postEndpoints",
            dispute_id,
            start_hash,
            end_hash,
            list(start_proof),
            list(end_proof),
        )

    def bisect(
        self, dispute_id: int, expected_lo: int, expected_hi: int, mid_hash: bytes
    ) -> TxReceipt:
        """Defender: post the state hash at ``lo + (hi - lo) // 2`` of the current interval
        ``[expected_lo, expected_hi]`` (auto-approves one move bond).

        Raises:
            ContractRevert: e.g. ``WrongInterval`` (stale view), ``OutOfTurn``, ``ClockExpired``.
        """
        game = self.bisection_game
        self.ensure_allowance(game.address, self.move_bond())
        return self.transact(game, "bisect", dispute_id, expected_lo, expected_hi, mid_hash)

    def respond(
        self, dispute_id: int, expected_lo: int, expected_hi: int, agree: bool
    ) -> TxReceipt:
        """Challenger: agree (interval -> [mid, hi]) or disagree (-> [lo, mid]) with the pending
        midpoint hash (auto-approves one move bond). The last response opens the step dispute.

        Raises:
            ContractRevert: e.g. ``WrongInterval``, ``OutOfTurn``, ``ClockExpired``.
        """
        game = self.bisection_game
        self.ensure_allowance(game.address, self.move_bond())
        return self.transact(game, "respond", dispute_id, expected_lo, expected_hi, agree)

    def claim_timeout(self, dispute_id: int) -> TxReceipt:
        """Anyone: the side to move ran out of clock and loses.

        Raises:
            ContractRevert: ``ClockNotExpired`` or ``GameAlreadyResolved``.
        """
        return self.transact(self.bisection_game, "claimTimeout", dispute_id)

    def get_game(self, dispute_id: int) -> GameView:
        """``getGame(disputeId)`` as a `GameView`."""
        game = self.bisection_game
        raw = self.call(game, "getGame", dispute_id)
        outputs = game.get_function_by_name("getGame").abi["outputs"]
        data = struct_to_dict(outputs[0]["components"], raw)
        for key in ("agreed_hash", "claimed_hash", "pending_hash"):
            data[key] = bytes(data[key])
        data["turn"] = Side(int(data["turn"]))
        data["status"] = GameStatus(int(data["status"]))
        return from_struct(GameView, data, dispute_id=dispute_id)

    def game_moves(self, dispute_id: int) -> int:
        """Moves made in a game (``moveCount``; each posted one move bond)."""
        return int(self.call(self.bisection_game, "moveCount", dispute_id))

    def game_clocks(self, dispute_id: int) -> tuple[int, int]:
        """(defender, challenger) seconds left now, counting the running turn (``clocksOf``)."""
        defender, challenger = self.call(self.bisection_game, "clocksOf", dispute_id)
        return int(defender), int(challenger)

    def game_of_step(self, step_dispute_id: int) -> int:
        """The game waiting for a committee step dispute (0 if none)."""
        return int(self.call(self.bisection_game, "gameOfStep", step_dispute_id))

    def step_claim_of(self, dispute_id: int) -> StepClaimView:
        """Committee ``stepClaimOf`` as a `StepClaimView`. For a step dispute (``is_step``) the
        vote says whether ``claimed_end_hash`` is the state after replaying step ``step`` from
        ``start_hash``; ``is_step`` is False for a v0 segment dispute."""
        is_step, step, start, claimed = self.call(self.arbitration, "stepClaimOf", dispute_id)
        return StepClaimView(
            dispute_id=dispute_id,
            is_step=bool(is_step),
            step=int(step),
            start_hash=bytes(start),
            claimed_end_hash=bytes(claimed),
        )

    def move_bond(self) -> int:
        """Bond each game move posts (wei)."""
        return int(self.call(self.bisection_game, "moveBond"))

    def game_credit_of(self, account: str | None = None) -> int:
        """Won move bonds claimable from the game (wei)."""
        return int(
            self.call(self.bisection_game, "creditOf", to_checksum_address(account or self.address))
        )

    def claim_game_credit(self) -> TxReceipt:
        """Claim this account's credit on the game (won move bonds).

        Raises:
            ContractRevert: ``NoCreditToClaim``.
        """
        return self.transact(self.bisection_game, "claimCredit")

    # ------------------------------------------------------------------ ShareRegistry / ModelShares

    def shares_of(self, model_id: bytes) -> str | None:
        """Address of a model's ModelShares token, or None before its first job finalizes."""
        addr = str(self.call(self.share_registry, "sharesOf", model_id))
        return None if int(addr, 16) == 0 else addr

    def model_shares(self, model_id: bytes) -> Contract:
        """Contract handle of a model's ModelShares token.

        Raises:
            ChainValueError: the model has no shares yet.
        """
        key = bytes(model_id)
        if key not in self._shares:
            addr = self.shares_of(key)
            if addr is None:
                raise ChainValueError(f"model 0x{key.hex()} has no shares yet")
            self._shares[key] = self.contract("ModelShares", addr)
        return self._shares[key]

    def share_balance(self, model_id: bytes, account: str | None = None) -> int:
        """Shares held (1 share = 1 verified step; decimals 0)."""
        return int(
            self.call(
                self.model_shares(model_id),
                "balanceOf",
                to_checksum_address(account or self.address),
            )
        )

    def ownership_bps(self, model_id: bytes, account: str | None = None) -> int:
        """Ownership in basis points (balance * 10_000 / totalSupply)."""
        return int(
            self.call(
                self.model_shares(model_id),
                "ownershipBps",
                to_checksum_address(account or self.address),
            )
        )

    def revenue_of(self, model_id: bytes, account: str | None = None) -> int:
        """Claimable revenue in wei of the payment token."""
        return int(
            self.call(
                self.model_shares(model_id),
                "revenueOf",
                to_checksum_address(account or self.address),
            )
        )

    def pay_revenue(self, model_id: bytes, amount: int) -> TxReceipt:
        """Pay ``amount`` wei of revenue to a model's shareholders (auto-approves)."""
        shares = self.model_shares(model_id)
        self.ensure_allowance(shares.address, amount)
        return self.transact(shares, "payRevenue", amount)

    def claim_revenue(self, model_id: bytes) -> TxReceipt:
        """Claim this account's revenue from a model."""
        return self.transact(self.model_shares(model_id), "claimRevenue")

    # ------------------------------------------------------------------ events

    def decode_log(self, log: Any) -> DecodedEvent | None:
        """Decode one raw log emitted by a protocol contract (None if unknown)."""
        name = self.contract_name(log["address"])
        if name is None:
            return None
        contract = (
            self.contract_by_name(name)
            if name != "ModelShares"
            else self.contract("ModelShares", log["address"])
        )
        topic0 = HexBytes(log["topics"][0]) if log["topics"] else None
        for ev_abi in contract.abi:
            if ev_abi.get("type") != "event" or topic0 is None:
                continue
            event = contract.events[ev_abi["name"]]()
            if HexBytes(event.topic) != topic0:
                continue
            try:
                decoded = event.process_log(log)
            except Exception:  # noqa: BLE001 - overloaded events with the same topic
                continue
            return DecodedEvent(
                contract=name,
                event=decoded["event"],
                args=dict(decoded["args"]),
                block_number=int(log["blockNumber"]),
                log_index=int(log["logIndex"]),
                tx_hash=HexBytes(log["transactionHash"]).to_0x_hex(),
                address=to_checksum_address(log["address"]),
            )
        return None

    def decode_receipt(self, receipt: TxReceipt, event: str | None = None) -> list[DecodedEvent]:
        """Decode the protocol events of a receipt (optionally only those named ``event``)."""
        out = []
        for log in receipt["logs"]:
            ev = self.decode_log(log)
            if ev is not None and (event is None or ev.event == event):
                out.append(ev)
        return out
