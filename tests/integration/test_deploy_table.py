"""The Python deployer against the declarative deployment table (contracts/script/deployment.json):
every applicable step is one transaction of the deployer, in the table's order, so each contract
sits at the CREATE address of its step's nonce, and every wiring call left its state on chain.
Forge checks Deploy.sol against the same table (contracts/test/DeployOrder.t.sol).

Run: ``.venv/bin/python -m pytest tests/integration/test_deploy_table.py``.
"""

from __future__ import annotations

import pytest
import rlp
from eth_utils import keccak, to_canonical_address, to_checksum_address
from web3.constants import ADDRESS_ZERO

from chain import Anvil, ChainClient, ProtocolParams, deploy_protocol
from chain.anvil import DEV_PRIVATE_KEYS
from chain.deploy import load_table
from chain.errors import ChainValueError


def _create_address(deployer: str, nonce: int) -> str:
    return to_checksum_address(keccak(rlp.encode([to_canonical_address(deployer), nonce]))[12:])


def _round_of(client: ChainClient) -> str:
    """The JobManager's immutable VerificationRound."""
    return str(client.call(client.jobs.contract, "verificationRound"))


@pytest.mark.parametrize("adjudicator", ["committee", "bisection"])
def test_python_deployer_follows_the_table(
    anvil: Anvil, protocol_artifacts, adjudicator: str
) -> None:
    client = ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[5])
    nonce0 = client.w3.eth.get_transaction_count(client.address)
    params = ProtocolParams.demo(adjudicator=adjudicator, jackpot_funding=0)
    dep = deploy_protocol(client, params, build=False)
    steps = [s for s in load_table() if s.applies_to(adjudicator)]
    assert client.w3.eth.get_transaction_count(client.address) == nonce0 + len(steps)

    by_name = {
        "token": dep.addresses.token,
        "stakeManager": dep.addresses.stake_manager,
        "shareRegistry": dep.addresses.share_registry,
        "escrow": dep.addresses.escrow,
        "libSettlement": dep.addresses.lib_settlement,
        "libAssignment": dep.addresses.lib_assignment,
        "libPosting": dep.addresses.lib_posting,
        "jobManager": dep.addresses.job_manager,
        "verificationRound": dep.addresses.verification_round,
        "committee": dep.addresses.arbitration,
        "bisectionGame": dep.addresses.bisection_game,
        "runRegistry": dep.addresses.run_registry,
    }
    deployed = [s for s in steps if s.kind != "call"]
    assert {s.name for s in deployed} == {k for k, v in by_name.items() if v is not None}
    for i, step in enumerate(steps):
        if step.kind != "call":
            assert by_name[step.name] == _create_address(client.address, nonce0 + i), step.name
    # the JobManager keeps the round it was given in advance (~verificationRound): the deployed one,
    assert _round_of(client) == dep.addresses.verification_round
    # and the ShareRegistry its minters (~jobManager, ~runRegistry)
    assert client.call(client.shares.contract, "minter") == dep.addresses.job_manager
    assert client.call(client.shares.contract, "runMinter") == dep.addresses.run_registry
    # the JobManager runs with the libraries the table deployed linked in
    code = client.w3.eth.get_code(dep.addresses.job_manager).hex()
    assert str(dep.addresses.lib_settlement).lower()[2:] in code
    assert str(dep.addresses.lib_assignment).lower()[2:] in code
    assert str(dep.addresses.lib_posting).lower()[2:] in code

    # each wiring call of the table left its state
    c = client
    adjudicator_addr = by_name["committee" if adjudicator == "committee" else "bisectionGame"]
    for step in (s for s in steps if s.kind == "call"):
        args = [by_name[a] for a in step.args]
        match step.function:
            case "setStepParent":
                assert c.call(c.committee.contract, "stepParent") == args[0]
            case "setClaimParent":
                assert c.call(c.committee.contract, "claimParent") == args[0]
            case "setAdjudicator":
                assert args == [adjudicator_addr]
                assert c.call(c.jobs.contract, "adjudicator") == adjudicator_addr
            case other:
                pytest.fail(f"table step {other} has no check here")
    # the StakeManager's and the Escrow's protocol contracts, given in advance (~jobManager,
    # ~committee, ~runRegistry, ~bisectionGame?): the deployed ones, the game zero without it
    a = dep.addresses
    assert c.call(c.stakes.contract, "protocols") == [a.job_manager, a.arbitration, a.run_registry]
    game = a.bisection_game or ADDRESS_ZERO
    assert c.call(c.escrow.contract, "protocols") == [a.job_manager, game, a.run_registry]
    assert not c.call(c.stakes.contract, "isProtocol", c.address)
    assert not c.escrow.is_authorized(c.address)
    assert c.escrow.is_authorized(dep.addresses.arbitration) is False
    assert not c.escrow.is_authorized(ADDRESS_ZERO)


def test_a_nonce_taken_between_the_jobmanager_and_its_round_fails_loudly(
    anvil: Anvil, protocol_artifacts
) -> None:
    """The JobManager keeps its round's address from before the round exists: when another
    transaction of the deployer's account takes the round's nonce in between, the deployer stops
    with one clear error instead of leaving a JobManager bound to an empty address."""
    client = ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[6])

    sent: list[object] = []

    def interleave(addresses: dict[str, str]) -> None:
        # right after the JobManager: a transfer to itself takes the round's nonce
        if "jobManager" in addresses and not sent:
            sent.append(client.send({"to": client.address, "value": 0, "data": b""}))

    params = ProtocolParams.demo(jackpot_funding=0)
    with pytest.raises(ChainValueError, match="landed at .* not at .*nonce in between"):
        deploy_protocol(client, params, build=False, on_deployed=interleave)
    assert len(sent) == 1
