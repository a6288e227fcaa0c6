"""Deploy the veritrain protocol from the declarative deployment table.

`deploy_protocol` executes ``contracts/script/deployment.json``, the ONE table of the deployment
order and wiring (each contract to deploy with its constructor arguments, the LibSettlement,
LibAssignment and LibPosting libraries to link, each admin call, and the adjudicator variant
each step belongs to). Forge's ``contracts/test/DeployOrder.t.sol`` checks
``contracts/script/Deploy.sol`` against the same table, so neither deployer can drift from it.
Every transaction is signed locally through a `ChainClient`, so it works on a real testnet as
well as on Anvil::

    client = ChainClient(rpc_url, account)            # no deployment yet
    dep = deploy_protocol(client, ProtocolParams.demo())
    write_manifest(dep, "deployments")                # deployments/<chain_id>.json
    dep = load_manifest(31337)                        # or a path

Units: token amounts in wei of the payment token (18 decimals), windows and delays in
seconds.

Run a devnet deployment by hand:
``.venv/bin/python -m chain.deploy --rpc-url http://127.0.0.1:8545 --demo``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eth_typing import HexAddress, HexStr
from web3.constants import ADDRESS_ZERO
from web3.types import Nonce
from web3.utils.address import get_create_address

import chain.artifacts as artifacts
from chain.errors import ChainValueError
from chain.manifest import ContractAddresses, Deployment, ProtocolParams

if TYPE_CHECKING:
    from chain.client import ChainClient

logger = logging.getLogger(__name__)

__all__ = ["DeploymentStep", "deploy_protocol", "load_table", "table_path"]


@dataclass(frozen=True)
class DeploymentStep:
    """One row of the deployment table (``contracts/script/deployment.json``).

    Attributes:
        kind: ``"deploy"`` (a contract), ``"library"`` (linked into later deployments) or
            ``"call"`` (``target.function(*args)`` sent by the admin).
        name: the deployment's name (``"jobManager"``), referenced by later arguments.
        contract: the artifact (deploy, library) or the target's artifact (call).
        args: references: ``admin``, ``params.<name>``, ``<name>``, ``<name>.<VIEW>``,
            ``~<name>`` (the address a later deployment of this plan will get: the deployer's
            CREATE address at that step's nonce, checked once it is deployed) or ``~<name>?``
            (the same, or the zero address where this variant has no such deployment).
        variant: ``"all"``, ``"committee"`` or ``"bisection"`` (`ProtocolParams.adjudicator`).
        skip_if_given: a deploy skipped when its address is passed in (the payment token).
        target: the deployment a call goes to.
        function: the function a call sends.
    """

    kind: str
    name: str
    contract: str
    args: tuple[str, ...]
    variant: str
    skip_if_given: bool
    target: str
    function: str

    def applies_to(self, adjudicator: str) -> bool:
        """Whether this step runs for a deployment with this adjudicator."""
        return self.variant in ("all", adjudicator)


def table_path() -> Path:
    """``contracts/script/deployment.json`` of this checkout."""
    return artifacts.repo_root() / "contracts" / "script" / "deployment.json"


def load_table(path: Path | None = None) -> list[DeploymentStep]:
    """The deployment table's steps, in order.

    Raises:
        ChainValueError: the file is missing or a step is malformed.
    """
    path = path or table_path()
    try:
        rows = json.loads(path.read_text())["steps"]
        steps = [
            DeploymentStep(
                kind=str(r["kind"]),
                name=str(r["name"]),
                contract=str(r["contract"]),
                args=tuple(str(a) for a in r["args"]),
                variant=str(r["variant"]),
                skip_if_given=bool(r["skipIfGiven"]),
                target=str(r["target"]),
                function=str(r["function"]),
            )
            for r in rows
        ]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ChainValueError(f"deployment table {path.name} unreadable: {exc}") from exc
    for step in steps:
        if step.kind not in ("deploy", "library", "call") or step.variant not in (
            "all",
            "committee",
            "bisection",
        ):
            raise ChainValueError(f"deployment table: bad step {step}")
    return steps


def _param_values(params: ProtocolParams) -> dict[str, Any]:
    """The ``params.<name>`` references of the table."""
    return {
        "unbondingDelay": params.unbonding_delay,
        "minStakes": params.min_stakes,
        "jobParams": params.job_params_tuple(),
        "forcedErrorRateBps": params.forced_error_rate_bps,
        "committeeSize": params.committee_size,
        "voteCommitWindow": params.vote_commit_window,
        "voteRevealWindow": params.vote_reveal_window,
        "clockSeconds": params.clock_seconds,
        "moveBond": params.move_bond,
        "maxSegmentCompute": params.segment_compute_bound,
        "claimBond": params.claim_bond,
        "claimChallengeWindow": params.claim_challenge_window,
        "registrationWindow": params.registration_window,
    }


class _Executor:
    """Runs the table's steps for one client, remembering each deployment's address.

    Each step of the plan sends exactly one transaction from the client's account, so a later
    deployment's address is known in advance (``~<name>``): the CREATE address of the account at
    the current nonce plus the steps in between (`web3.utils.address.get_create_address`).
    """

    def __init__(self, client: ChainClient, params: ProtocolParams) -> None:
        self.client = client
        self.params = _param_values(params)
        self.addresses: dict[str, str] = {"admin": client.address}
        self.artifact_of: dict[str, str] = {}
        self.libraries: dict[str, str] = {}
        self.plan: list[DeploymentStep] = []
        self.position = 0
        self.promised: dict[str, str] = {}  # deployment name -> the address given before it

    def future_address(self, name: str, optional: bool = False) -> str:
        """The address deployment `name`, later in the plan, will get.

        Args:
            name: the deployment.
            optional: return the zero address when the plan has no such deployment (a
                contract of the other adjudicator variant).

        Raises:
            ChainValueError: no later step of the plan deploys `name` (and not `optional`).
        """
        for offset, step in enumerate(self.plan[self.position :]):
            if offset > 0 and step.kind != "call" and step.name == name:
                nonce = Nonce(self.client.next_nonce() + offset)
                address = str(get_create_address(HexAddress(HexStr(self.client.address)), nonce))
                self.promised[name] = address
                return address
        if optional and all(step.name != name for step in self.plan):
            return str(ADDRESS_ZERO)
        raise ChainValueError(f"deployment table: ~{name} names no later deployment")

    def resolve(self, ref: str) -> Any:
        """The value of one argument reference.

        Raises:
            ChainValueError: the reference names nothing deployed or known.
        """
        if ref.startswith("~"):
            optional = ref.endswith("?")
            return self.future_address(ref[1:-1] if optional else ref[1:], optional)
        head, _, tail = ref.partition(".")
        if head == "params" and tail in self.params:
            return self.params[tail]
        if head in self.addresses and not tail:
            return self.addresses[head]
        if head in self.addresses and tail:
            contract = self.client.contract(self.artifact_of[head], self.addresses[head])
            return self.client.call(contract, tail)
        raise ChainValueError(f"deployment table: unknown reference {ref!r}")

    def run(self, step: DeploymentStep) -> None:
        """Deploy, deploy-and-remember a library, or send one wiring call."""
        if step.kind == "call":
            target = self.client.contract(step.contract, self.addresses[step.target])
            args = [self.resolve(a) for a in step.args]
            self.client.transact(target, step.function, *args)
            logger.info("%s.%s(%s)", step.target, step.function, ", ".join(step.args))
            return
        args = [self.resolve(a) for a in step.args]
        address, _ = self.client.deploy_contract(step.contract, *args, libraries=self.libraries)
        logger.info("deployed %s at %s", step.contract, address)
        promised = self.promised.get(step.name)
        if promised is not None and promised.lower() != address.lower():
            raise ChainValueError(
                f"{step.contract} landed at {address}, not at {promised} where an earlier "
                "contract expects it (another transaction of the deployer took a nonce in "
                "between): deploy again from a fresh state"
            )
        self.addresses[step.name] = address
        self.artifact_of[step.name] = step.contract
        if step.kind == "library":
            self.libraries[step.contract] = address


def deploy_protocol(
    client: ChainClient,
    params: ProtocolParams | None = None,
    token: str | None = None,
    *,
    build: bool = True,
    on_deployed: Callable[[dict[str, str]], None] | None = None,
) -> Deployment:
    """Deploy and wire the protocol, signing every transaction with the client's account.

    The steps are the rows of the deployment table (`load_table`) whose variant is ``"all"``
    or ``params.adjudicator``: VeriToken (unless ``token`` is given), StakeManager,
    ShareRegistry (given the JobManager's and the RunRegistry's addresses in advance), Escrow,
    the LibSettlement, LibAssignment and LibPosting libraries (linked into the JobManager),
    JobManager (given the VerificationRound's address in advance), VerificationRound,
    ArbitrationCommittee (then BisectionGame and ``setStepParent`` with bisection), RunRegistry
    and ``setClaimParent``, ``setAdjudicator``. The StakeManager, the ShareRegistry and the
    Escrow are given the protocol contracts that may lock and slash stake, mint shares and move
    balances before those exist (immutables: no admin can add one later); an address given in
    advance is the deployer's CREATE address at the nonce of that contract's step (each step is
    one transaction), checked when it lands.
    The deployer is the admin of every contract and the JobManager's treasury (rounding dust).
    Last, the deployer puts ``params.jackpot_funding`` into the jackpot pool
    (``Escrow.fundJackpot``; minted with the faucet first when VeriToken was deployed here;
    skipped with a warning when the deployer holds too little of an existing token).

    Args:
        client: a `ChainClient` that pays for and signs every transaction; on success it is
            bound to the new deployment (`ChainClient.use_deployment`).
        params: protocol parameters (default `ProtocolParams()`).
        token: an existing ERC-20 payment token; None deploys VeriToken (devnet).
        build: run `chain.artifacts.build()` first when the artifacts are stale.
        on_deployed: called after each contract is deployed with every address so far
            (``{"stakeManager": "0x..", ...}``), so that a deployment failing half-way (gas
            spent) leaves a record of what is on chain.

    Returns:
        The `Deployment` (write it with `write_manifest`).

    Raises:
        ContractRevert: a constructor or wiring call reverted (decoded custom error).
        ArtifactError: the contracts are not compiled and cannot be built.
        ChainValueError: a constructor takes a parameter this function cannot fill, a contract
            did not land at the address given in advance to an earlier one (another transaction
            of the deployer's account took a nonce in between), or the deployed JobManager's
            forced-error premium is not the one `params` prices.
        RpcUnavailable: the RPC endpoint is down.
    """
    params = params or ProtocolParams()
    if build:
        artifacts.build()
    deployer = client.address
    start_block = client.block_number() + 1
    run = _Executor(client, params)
    token_deployed = token is None
    if token is not None:
        run.addresses["token"] = client.w3.to_checksum_address(token)
        run.artifact_of["token"] = "VeriToken"
    run.plan = [
        step
        for step in load_table()
        if step.applies_to(params.adjudicator)
        and not (step.skip_if_given and step.name in run.addresses)
    ]
    for position, step in enumerate(run.plan):
        run.position = position
        before = len(run.addresses)
        run.run(step)
        if on_deployed is not None and len(run.addresses) > before:
            on_deployed(dict(run.addresses))
    a = run.addresses
    deployment = Deployment(
        chain_id=client.chain_id,
        addresses=ContractAddresses(
            token=a["token"],
            stake_manager=a["stakeManager"],
            job_manager=a["jobManager"],
            arbitration=a["committee"],
            share_registry=a["shareRegistry"],
            escrow=a["escrow"],
            verification_round=a["verificationRound"],
            bisection_game=a.get("bisectionGame"),
            run_registry=a["runRegistry"],
            lib_settlement=a["libSettlement"],
            lib_assignment=a["libAssignment"],
            lib_posting=a["libPosting"],
        ),
        params=params,
        block=start_block,
        deployer=deployer,
        token_deployed=token_deployed,
    )
    client.use_deployment(deployment)
    # docs/FORCED_ERRORS.md section 5: the premium the checked inequality assumes is the one
    # the JobManager charges.
    premium = client.jobs.forced_error_premium()
    if premium != params.forced_error_premium:
        raise ChainValueError(
            f"JobManager.forcedErrorPremium() = {premium} wei, the parameters price "
            f"{params.forced_error_premium} wei"
        )
    if params.jackpot_funding > 0:
        if token_deployed and client.token.balance_of() < params.jackpot_funding:
            client.token.faucet(params.jackpot_funding - client.token.balance_of())
        if client.token.balance_of() >= params.jackpot_funding:
            client.escrow.fund_jackpot(params.jackpot_funding)
        else:
            logger.warning(
                "jackpot pool NOT funded: the deployer holds %d < %d wei of the payment token; "
                "fund it with `veritrain jackpot fund`",
                client.token.balance_of(),
                params.jackpot_funding,
            )
    return deployment
