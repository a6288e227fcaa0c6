"""Chain plumbing against a real Anvil: locally signed transactions, decoded reverts, and an
event watcher that resumes from a cursor and survives an RPC outage.

Uses only VeriToken and StakeManager, so it runs as soon as those compile.
Run: ``.venv/bin/python -m pytest tests/integration/test_chain_infra.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from chain import (
    DEV_PRIVATE_KEYS,
    Anvil,
    ChainClient,
    ContractRevert,
    EventWatcher,
    RpcUnavailable,
    errors,
)
from chain.anvil import dev_accounts
from chain.manifest import ContractAddresses, Deployment, ProtocolParams
from tests.utils.rpc_proxy import RpcProxy
from veritrain.enums import Role

E18 = 10**18


@pytest.fixture
def mini(anvil: Anvil, contracts_out) -> Deployment:
    """VeriToken + StakeManager deployed inside the test's snapshot (other addresses are
    placeholders: only token and stake_manager are used here)."""
    deployer = ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[0])
    token, _ = deployer.deploy_contract("VeriToken")
    params = ProtocolParams.demo()
    placeholder = "0x" + "00" * 19 + "01"
    # the protocol contracts that may lock and slash: placeholders (nothing here locks stake)
    stake, receipt = deployer.deploy_contract(
        "StakeManager",
        token,
        params.unbonding_delay,
        params.min_stakes,
        placeholder,
        placeholder,
        placeholder,
    )
    addrs = ContractAddresses(
        token=token,
        stake_manager=stake,
        job_manager=placeholder,
        arbitration=placeholder,
        share_registry=placeholder,
        escrow=placeholder,
        run_registry=placeholder,
    )
    return Deployment(
        chain_id=31337,
        addresses=addrs,
        params=params,
        block=receipt["blockNumber"] - 1,
        deployer=deployer.address,
    )


def _client(anvil: Anvil, dep: Deployment, i: int, url: str | None = None) -> ChainClient:
    c = ChainClient(url or anvil.rpc_url, DEV_PRIVATE_KEYS[i], None)
    c.deployment = dep
    c._contracts = {  # noqa: SLF001 - only token and stake manager exist in this fixture
        "token": c.contract("VeriToken", dep.addresses.token),
        "stake_manager": c.contract("StakeManager", dep.addresses.stake_manager),
    }
    return c


def test_anvil_ready_and_dev_keys(anvil: Anvil):
    assert "anvil" in anvil.rpc("web3_clientVersion")
    accounts = [a.lower() for a in anvil.rpc("eth_accounts")]
    assert accounts[:3] == [a.address.lower() for a in dev_accounts(3)]


def test_transactions_and_decoded_reverts(anvil: Anvil, mini: Deployment):
    c = _client(anvil, mini, 1)
    c.token.faucet(1_000 * E18)
    assert c.token.balance_of() == 1_000 * E18
    c.stakes.stake(Role.Solver, 150 * E18)  # auto-approves the StakeManager
    view = c.stakes.stake_of(role=Role.Solver)
    assert (view.staked, view.locked, view.free) == (150 * E18, 0, 150 * E18)
    assert c.stakes.is_active(role=Role.Solver)

    with pytest.raises(ContractRevert) as info:
        c.token.faucet(10**25)
    assert info.value.name == "FaucetLimitExceeded"
    assert str(info.value).startswith("VeriToken reverted: FaucetLimitExceeded(requested=")

    with pytest.raises(errors.InsufficientFreeStake) as info2:
        c.stakes.request_unbond(Role.Solver, 1_000 * E18)
    err = info2.value
    assert err.named_args["account"] == c.address
    assert err.named_args["free"] == 150 * E18 and err.named_args["requested"] == 1_000 * E18

    # A transaction that is mined and reverts (explicit gas skips estimation) is decoded too.
    with pytest.raises(errors.InsufficientFreeStake):
        c.transact(c.stakes.contract, "requestUnbond", int(Role.Solver), 10**24, gas=300_000)
    # ...and the nonce cache stays right afterwards.
    c.stakes.request_unbond(Role.Solver, 10 * E18)
    assert c.stakes.stake_of(role=Role.Solver).unbonding == 10 * E18

    with pytest.raises(errors.NothingUnbonding):
        c.stakes.withdraw(Role.Verifier)


def test_devnet_time_helpers(anvil: Anvil, mini: Deployment):
    c = _client(anvil, mini, 0)
    t0, b0 = c.timestamp(), c.block_number()
    c.increase_time(1_000)
    assert c.timestamp() >= t0 + 1_000 and c.block_number() == b0 + 1
    c.mine(5)
    assert c.block_number() == b0 + 6


def test_event_watcher_resumes_from_cursor(anvil: Anvil, mini: Deployment):
    stakers = [_client(anvil, mini, i) for i in (1, 2, 3)]
    for s in stakers:
        s.token.faucet(1_000 * E18)
    for rnd in range(3):
        for s in stakers:
            s.stakes.stake(Role.Verifier, (rnd + 1) * E18)
    expected = [(s.address, (rnd + 1) * E18) for rnd in range(3) for s in stakers]

    watcher = EventWatcher(
        stakers[0], "StakeManager", ["Staked"], from_block=mini.block, max_block_range=2
    )
    first = []
    for ev in watcher.poll():
        first.append(ev)
        if len(first) == 4:
            break  # a node stops mid-stream...
    cursor = watcher.cursor
    # ...and a new process resumes from the persisted cursor.
    resumed = EventWatcher(
        stakers[0], "StakeManager", ["Staked"], from_block=cursor, max_block_range=3
    )
    rest = resumed.drain()
    got = [(e.args["account"], e.args["amount"]) for e in first + rest]
    assert got == expected
    positions = [e.position for e in first + rest]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert resumed.drain() == []  # caught up: nothing twice


@pytest.fixture
def proxy(anvil: Anvil) -> Iterator[RpcProxy]:
    p = RpcProxy(anvil.rpc_url)
    p.start()
    yield p
    p.stop()


def test_event_watcher_survives_rpc_outage(anvil: Anvil, mini: Deployment, proxy: RpcProxy):
    writer = _client(anvil, mini, 1)
    writer.token.faucet(100 * E18)
    writer.stakes.stake(Role.Verifier, 1 * E18)
    reader = _client(anvil, mini, 2, url=proxy.url)
    watcher = EventWatcher(
        reader, "StakeManager", ["Staked"], from_block=mini.block, max_backoff=0.5
    )
    assert len(watcher.drain()) == 1

    proxy.stop()  # the RPC goes away
    with pytest.raises(RpcUnavailable):
        reader.block_number()
    writer.stakes.stake(Role.Verifier, 2 * E18)
    restarter = threading.Timer(1.0, proxy.start)  # ...and comes back a second later
    restarter.start()
    events = watcher.drain()  # retries with backoff (logs warnings) instead of failing
    restarter.join()
    assert [e.args["amount"] for e in events] == [2 * E18]


def test_event_watcher_gives_up_after_max_retries(anvil: Anvil, mini: Deployment, proxy: RpcProxy):
    reader = _client(anvil, mini, 2, url=proxy.url)
    watcher = EventWatcher(
        reader, "StakeManager", ["Staked"], from_block=mini.block, max_backoff=0.05, max_retries=2
    )
    proxy.stop()
    with pytest.raises(RpcUnavailable):
        watcher.drain()
