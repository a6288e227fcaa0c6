"""`ChainClient`: typed, locally signed access to the veritrain contracts.

A `chain.transport.Transport` (signing, nonces, fees, send/wait/call, decoded reverts, devnet
RPCs) plus ONE TYPED FACADE PER CONTRACT, web3.py's ``w3.eth`` pattern:

- ``client.token`` (`VeriToken`/ERC-20), ``client.stakes`` (`StakeManager`),
  ``client.jobs`` (`JobManager`), ``client.round`` (`VerificationRound`),
  ``client.committee`` (`ArbitrationCommittee`), ``client.game`` (`BisectionGame`),
  ``client.shares`` (`ShareRegistry` and each `ModelShares`), ``client.escrow`` (`Escrow`:
  the token vault every account approves, and every credit), ``client.runs`` (`RunRegistry`:
  DiLoCo training runs and their round claims); modules in `chain.contracts`.
- ``client.adjudicator`` (whichever adjudicator the deployment runs): its ``name`` and
  ``resolved(dispute_id)``, so nodes need not know which mechanism decides.

Transacting methods return the mined receipt or raise a decoded `chain.errors.ContractRevert`;
views return frozen dataclasses (`chain.types`). Methods that pull tokens first approve the
spender when the allowance is short.

Usage::

    client = ChainClient(rpc_url, private_key, load_manifest(31337))
    client.token.faucet(1_000 * 10**18)                    # devnet token
    client.stakes.stake(Role.Solver, 100 * 10**18)
    client.shares.register_model(model_id, **commitments.model_dump())  # first come: owns it
    receipt = client.jobs.post_job(model_id, spec_hash, init_hash, 100, 10, reward, spec_uri)
    job_id = client.job_id_from(receipt)
    client.jobs.get_job(job_id).status                     # JobStatus.Open

Units: token amounts in wei, times in seconds (block timestamps), gas in gas units.
"""

from __future__ import annotations

import logging
from typing import Any, cast

from eth_account.signers.local import LocalAccount
from eth_utils.address import to_checksum_address
from hexbytes import HexBytes
from web3 import Web3
from web3.contract import Contract
from web3.exceptions import BlockNotFound
from web3.types import TxReceipt

from chain.artifacts import load_artifact
from chain.contracts.adjudicator import AdjudicatorFacade
from chain.contracts.committee import CommitteeFacade
from chain.contracts.escrow import EscrowFacade
from chain.contracts.game import GameFacade
from chain.contracts.jobs import JobsFacade
from chain.contracts.round import RoundFacade
from chain.contracts.runs import RunsFacade
from chain.contracts.shares import SharesFacade
from chain.contracts.stakes import StakesFacade
from chain.contracts.token import TokenFacade
from chain.errors import ChainValueError
from chain.manifest import Deployment
from chain.transport import MAX_UINT256, Transport
from chain.types import ChainIdentity, DecodedEvent

logger = logging.getLogger(__name__)

__all__ = ["ChainClient", "MAX_UINT256"]

# Contract handle key -> artifact name.
_HANDLES: dict[str, str] = {
    "token": "VeriToken",
    "stake_manager": "StakeManager",
    "job_manager": "JobManager",
    "arbitration": "ArbitrationCommittee",
    "share_registry": "ShareRegistry",
    "escrow": "Escrow",
}
# Handles present only in some deployments (``ContractAddresses`` field may be None).
_OPTIONAL_HANDLES: dict[str, str] = {
    "verification_round": "VerificationRound",
    "bisection_game": "BisectionGame",
    "run_registry": "RunRegistry",
}


class ChainClient(Transport):
    """Typed client of the veritrain contracts for one signing account.

    Args:
        rpc_url: HTTP JSON-RPC endpoint.
        account: a `LocalAccount` or a 0x-hex private key (never logged).
        deployment: addresses and params; None for a client that only deploys (see
            `chain.deploy.deploy_protocol`, which sets it).
        **options: `Transport` options (timeouts, gas multiplier, ``approve_max``, ``w3``).

    Attributes:
        token, stakes, jobs, round, committee, game, shares, escrow, runs: the per-contract
            facades.
        adjudicator: the deployment's adjudicator (`AdjudicatorFacade`: ``name``,
            ``resolved(dispute_id)``).

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
        super().__init__(
            rpc_url,
            account,
            request_timeout=request_timeout,
            receipt_timeout=receipt_timeout,
            poll_latency=poll_latency,
            gas_multiplier=gas_multiplier,
            approve_max=approve_max,
            w3=w3,
        )
        self._contracts: dict[str, Contract] = {}
        self.token = TokenFacade(self)
        self.stakes = StakesFacade(self)
        self.jobs = JobsFacade(self)
        self.round = RoundFacade(self)
        self.committee = CommitteeFacade(self)
        self.game = GameFacade(self)
        self.shares = SharesFacade(self)
        self.escrow = EscrowFacade(self)
        self.runs = RunsFacade(self)
        self.adjudicator = AdjudicatorFacade(self)
        self.deployment: Deployment | None = None
        if deployment is not None:
            self.use_deployment(deployment)

    # ------------------------------------------------------------------ setup

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
        self.shares.forget()
        for attr, name in _HANDLES.items():
            address = getattr(deployment.addresses, attr)
            self._contracts[attr] = self.contract(name, address)
        for attr, name in _OPTIONAL_HANDLES.items():
            address = getattr(deployment.addresses, attr, None)
            if address:
                self._contracts[attr] = self.contract(name, address)
        load_artifact("ModelShares")  # registers its errors for decoding

    def chain_identity(self) -> ChainIdentity:
        """The live identity of the chain this client's deployment is on: the chain id and the
        hash of the deployment block, read from the RPC now (two calls), with the JobManager
        address. A node compares it with the one its state was made on.

        Raises:
            ChainValueError: the client has no deployment.
            RpcUnavailable: the endpoint cannot be reached.
        """
        if self.deployment is None:
            raise ChainValueError("the client has no deployment")
        block = int(self.deployment.block)
        with self._rpc():
            chain_id = int(self.w3.eth.chain_id)
            try:
                found = self.w3.eth.get_block(block)
                block_hash = "0x" + bytes(found["hash"]).hex()
            except BlockNotFound:
                block_hash = ""
        return ChainIdentity(
            chain_id=chain_id,
            deployment=self.deployment.addresses.job_manager,
            block=block,
            block_hash=block_hash,
        )

    def handle(self, key: str) -> Contract:
        """The bound web3 handle of a protocol contract by key (``"job_manager"``).

        Raises:
            ChainValueError: no deployment is bound, or this one lacks the contract.
        """
        try:
            return self._contracts[key]
        except KeyError:
            if not self._contracts:
                raise ChainValueError(
                    "ChainClient has no deployment; call use_deployment()"
                ) from None
            name = _HANDLES.get(key) or _OPTIONAL_HANDLES.get(key, key)
            raise ChainValueError(f"this deployment has no {name}") from None

    def contract_name(self, address: str) -> str | None:
        """Artifact name of a deployed protocol contract address (or ``"ModelShares"``)."""
        address = to_checksum_address(address)
        for attr, contract in self._contracts.items():
            if contract.address == address:
                return _HANDLES.get(attr) or _OPTIONAL_HANDLES[attr]
        if self.shares.is_shares_token(address):
            return "ModelShares"
        return None

    def contract_by_name(self, name: str) -> Contract:
        """The bound contract handle for an artifact name (``"JobManager"``) or key
        (``"job_manager"``).

        Raises:
            ChainValueError: an unknown name.
        """
        if name in self._contracts or name in _HANDLES:
            return self.handle(name)
        for attr, art in {**_HANDLES, **_OPTIONAL_HANDLES}.items():
            if art == name:
                return self.handle(attr)
        raise ChainValueError(f"unknown protocol contract {name!r}")

    # ------------------------------------------------------------------ receipts

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
        for entry in contract.abi:
            ev_abi = cast(dict[str, Any], entry)
            if ev_abi.get("type") != "event" or topic0 is None:
                continue
            event = contract.events[str(ev_abi["name"])]()
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
