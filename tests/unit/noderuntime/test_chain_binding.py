"""A node's data dir is bound to one chain and deployment, held by one node at a time, and
staked only with the operator's consent: a devnet restarted from genesis (same chain id and
addresses, another deployment block hash) is refused or, with ``--reset-state``, the old state
is moved aside; a chain swapped under a running node stops it; a second node on the same data
dir is refused; a node never re-stakes while its operator's unbond is pending, nor with
auto-staking off."""

from __future__ import annotations

import dataclasses
import logging
import threading
from pathlib import Path

import pytest

from noderuntime.datadir import DataDirLock
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import WHISTLEBLOWER
from veritrain.enums import Role
from veritrain.errors import ChainMismatch, DataDirBusy
from whistleblower.node import WhistleblowerNode


def _restart(chain: FakeChain) -> None:
    """The devnet restarted from genesis: same chain id and addresses, new block hash."""
    chain.identity = dataclasses.replace(chain.identity, block_hash="0x" + "22" * 32)


def test_a_new_data_dir_is_bound_and_another_chain_is_refused(tmp_path: Path) -> None:
    chain = FakeChain()
    chain.identity = dataclasses.replace(chain.identity, block=7)
    node = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb")
    node.bind_chain()
    records = node.state.read()
    assert records.chain is not None
    assert (records.chain.chain_id, records.chain.block) == (31337, 7)
    assert records.chain.block_hash == chain.identity.block_hash
    assert records.index.cursor == 7  # event scans start at the deployment, not block 0
    with node.state.transaction() as rec:
        rec.index.watch.append(3)

    _restart(chain)
    again = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb")
    with pytest.raises(ChainMismatch, match="--reset-state"):
        again.bind_chain()
    assert again.state.read().index.watch == [3]  # nothing lost, nothing rewritten
    assert not (tmp_path / "wb" / "stale").exists()


def test_reset_state_moves_the_old_state_aside(tmp_path: Path) -> None:
    chain = FakeChain()
    node = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb")
    node.bind_chain()
    with node.state.transaction() as rec:
        rec.index.watch.append(3)
        rec.index.cursor = 500
    cache = tmp_path / "wb" / "step_hashes"
    cache.mkdir()
    (cache / "job3-seg1.json").write_text("{}")
    old_hash = chain.identity.block_hash

    _restart(chain)
    again = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb")
    again.bind_chain(reset=True)
    records = again.state.read()
    assert records.chain is not None and records.chain.block_hash == chain.identity.block_hash
    assert records.index.watch == [] and records.index.cursor == chain.identity.block
    stale = tmp_path / "wb" / "stale" / old_hash[2:14]
    assert (stale / "whistleblower_state.json").exists()
    assert (stale / "step_hashes" / "job3-seg1.json").exists()
    assert not cache.exists()


def test_a_node_stops_when_the_chain_changes_under_it(tmp_path: Path) -> None:
    chain = FakeChain()
    node = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb", poll_interval=0.01)
    node.chain_check_interval = 0.0
    node.selftest_enabled = False
    rounds = []
    real_step = node.step

    def step() -> None:
        rounds.append(1)
        if len(rounds) == 2:
            _restart(chain)
        real_step()

    node.step = step  # type: ignore[method-assign]
    with pytest.raises(ChainMismatch, match="the chain changed under the running"):
        node.run(threading.Event())
    assert len(rounds) == 2  # no round ran on the new chain
    # the lock was released: a restart with --reset-state may take the data dir
    with DataDirLock(tmp_path / "wb"):
        pass


def test_one_node_per_data_dir(tmp_path: Path) -> None:
    chain = FakeChain()
    with DataDirLock(tmp_path / "wb"):
        node = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb")
        with pytest.raises(DataDirBusy, match="in use by another node"):
            node.run(threading.Event())
    with DataDirLock(tmp_path / "wb"):
        pass  # released on exit


def test_no_stake_while_an_unbond_is_pending_or_auto_staking_is_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    chain = FakeChain()
    chain.min_stakes = {int(Role.Whistleblower): 5}
    chain.balances[WHISTLEBLOWER] = 1_000
    key = (WHISTLEBLOWER, int(Role.Whistleblower))
    chain.staked[key] = 0
    chain.unbonding[key] = 20  # the operator asked to leave
    node = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb")
    with caplog.at_level(logging.ERROR):
        node.ensure_stake(Role.Whistleblower)
        node.ensure_stake(Role.Whistleblower)
    assert chain.count("stake") == 0
    assert [r.message for r in caplog.records if "unbond" in r.message] != []
    assert len([r for r in caplog.records if "unbond" in r.message]) == 1  # said once

    chain.unbonding[key] = 0
    node.auto_stake = False
    node.ensure_stake(Role.Whistleblower)
    assert chain.count("stake") == 0
    node.auto_stake = True
    node.ensure_stake(Role.Whistleblower)
    assert chain.count("stake") == 1 and chain.staked[key] >= 5


def test_a_job_stuck_without_verifiers_is_a_warning_that_says_what_to_do(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.utils.fake_chain import revert

    chain = FakeChain()
    node = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb")

    def assign(job_id: int) -> None:
        raise revert("NoEligibleVerifiers")

    with caplog.at_level(logging.DEBUG, logger="whistleblower"):
        for _ in range(3):
            assert node.send("assignVerifiers job 4", assign, 4, quiet=True) is None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "stake verifier" in warnings[0], warnings
