"""Deploy the veritrain protocol (the manifests themselves live in `chain.manifest`).

`deploy_protocol` mirrors the wiring order of ``contracts/script/Deploy.s.sol`` (which the
Forge tests use), signing every transaction locally through a `ChainClient`, so it works on a
real testnet as well as on Anvil::

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

import logging
from typing import TYPE_CHECKING, Any

import chain.artifacts as artifacts
from chain.errors import ChainValueError
from chain.manifest import ContractAddresses, Deployment, ProtocolParams

if TYPE_CHECKING:
    from chain.client import ChainClient

logger = logging.getLogger(__name__)

__all__ = ["deploy_protocol"]


def _ctor_args(name: str, values: dict[str, Any], params: ProtocolParams) -> list[Any]:
    """Constructor arguments of artifact ``name``, resolved by parameter name.

    Resolving by name (not position) keeps this function correct when a constructor reorders
    its parameters; an unknown parameter name fails loudly instead of deploying garbage.
    """
    abi = artifacts.load_artifact(name)["abi"]
    ctor = next((e for e in abi if e.get("type") == "constructor"), None)
    if ctor is None:
        return []
    args = []
    for inp in ctor.get("inputs", []):
        key = inp["name"].strip("_")
        if key in values:
            args.append(values[key])
            continue
        if inp.get("type") == "tuple":  # JobManager.Params
            args.append(params.job_params_tuple())
            continue
        raise ChainValueError(
            f"deploy: don't know how to fill {name} constructor parameter {inp['name']!r} "
            f"({inp.get('type')}); update chain/deploy.py"
        )
    return args


def deploy_protocol(
    client: ChainClient,
    params: ProtocolParams | None = None,
    token: str | None = None,
    *,
    build: bool = True,
) -> Deployment:
    """Deploy and wire the protocol, signing every transaction with the client's account.

    Order (as in ``contracts/script/Deploy.s.sol``): VeriToken (unless ``token`` is given),
    StakeManager, ShareRegistry, JobManager, VerificationRound(jobManager,
    forcedErrorRateBps) and ``JobManager.setVerificationRound(round)``, ArbitrationCommittee;
    then
    ``StakeManager.grantRole(PROTOCOL_ROLE, jobManager)`` and ``(..., committee)``,
    ``ShareRegistry.setMinter(jobManager)`` and ``JobManager.setAdjudicator(committee)``.
    With ``params.adjudicator == "bisection"``: BisectionGame(jobManager, committee,
    clockSeconds, moveBond) right after the committee, ``committee.setStepParent(game)``, and
    ``JobManager.setAdjudicator(game)`` instead.
    The deployer is the admin of every contract and the JobManager's treasury (rounding dust).
    Last, the deployer puts ``params.jackpot_funding`` into the jackpot pool
    (``JobManager.fundJackpot``; minted with the faucet first when VeriToken was deployed here;
    skipped with a warning when the deployer holds too little of an existing token).

    Args:
        client: a `ChainClient` that pays for and signs every transaction; on success it is
            bound to the new deployment (`ChainClient.use_deployment`).
        params: protocol parameters (default `ProtocolParams()`).
        token: an existing ERC-20 payment token; None deploys VeriToken (devnet).
        build: run `chain.artifacts.build()` first when the artifacts are stale.

    Returns:
        The `Deployment` (write it with `write_manifest`).

    Raises:
        ContractRevert: a constructor or wiring call reverted (decoded custom error).
        ArtifactError: the contracts are not compiled and cannot be built.
        ChainValueError: a constructor takes a parameter this function cannot fill.
        RpcUnavailable: the RPC endpoint is down.
    """
    params = params or ProtocolParams()
    if build:
        artifacts.build()
    deployer = client.address
    start_block = client.block_number() + 1
    values: dict[str, Any] = {
        "admin": deployer,
        "owner": deployer,
        "treasury": deployer,
        "unbondingDelay": params.unbonding_delay,
        "minStake": params.min_stakes,
        "minStakes": params.min_stakes,
        "params": params.job_params_tuple(),
        "committeeSize": params.committee_size,
        "voteCommitWindow": params.vote_commit_window,
        "voteRevealWindow": params.vote_reveal_window,
        "seatStake": params.verifier_stake,
        "clockSeconds": params.clock_seconds,
        "moveBond": params.move_bond,
        "forcedErrorRateBps": params.forced_error_rate_bps,
        "rateBps": params.forced_error_rate_bps,
    }

    def deploy(name: str) -> str:
        address, _ = client.deploy_contract(name, *_ctor_args(name, values, params))
        logger.info("deployed %s at %s", name, address)
        return address

    token_deployed = token is None
    token_addr = deploy("VeriToken") if token is None else client.w3.to_checksum_address(token)
    values["token"] = values["paymentToken"] = token_addr
    stake = deploy("StakeManager")
    values["stakeManager"] = stake
    registry = deploy("ShareRegistry")
    values["shareRegistry"] = values["registry"] = registry
    job_manager = deploy("JobManager")
    values["jobManager"] = job_manager
    verification_round = deploy("VerificationRound")
    client.transact(
        client.contract("JobManager", job_manager), "setVerificationRound", verification_round
    )
    committee = deploy("ArbitrationCommittee")
    adjudicator = committee
    game: str | None = None
    if params.adjudicator == "bisection":
        values["stepAdjudicator"] = committee
        game = deploy("BisectionGame")
        client.transact(client.contract("ArbitrationCommittee", committee), "setStepParent", game)
        adjudicator = game

    sm = client.contract("StakeManager", stake)
    protocol_role = client.call(sm, "PROTOCOL_ROLE")
    client.transact(sm, "grantRole", protocol_role, job_manager)
    client.transact(sm, "grantRole", protocol_role, committee)
    client.transact(client.contract("ShareRegistry", registry), "setMinter", job_manager)
    client.transact(client.contract("JobManager", job_manager), "setAdjudicator", adjudicator)

    deployment = Deployment(
        chain_id=client.chain_id,
        addresses=ContractAddresses(
            token=token_addr,
            stake_manager=stake,
            job_manager=job_manager,
            arbitration=committee,
            share_registry=registry,
            verification_round=verification_round,
            bisection_game=game,
        ),
        params=params,
        block=start_block,
        deployer=deployer,
        token_deployed=token_deployed,
    )
    client.use_deployment(deployment)
    if params.jackpot_funding > 0:
        if token_deployed and client.token.balance_of() < params.jackpot_funding:
            client.token.faucet(params.jackpot_funding - client.token.balance_of())
        if client.token.balance_of() >= params.jackpot_funding:
            client.jobs.fund_jackpot(params.jackpot_funding)
        else:
            logger.warning(
                "jackpot pool NOT funded: the deployer holds %d < %d wei of the payment token; "
                "fund it with `veritrain jackpot fund`",
                client.token.balance_of(),
                params.jackpot_funding,
            )
    return deployment
