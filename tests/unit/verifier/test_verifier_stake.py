"""A verifier slashed below the minimum stake tops it up again (issue: slashed verifiers never
re-staked and the next job found no eligible verifier)."""

from __future__ import annotations

import logging
from pathlib import Path

from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import VERIFIERS
from verifier.node import VerifierNode
from veritrain.enums import Role

ME = VERIFIERS[0]


def test_a_verifier_slashed_below_the_minimum_tops_up(tmp_path: Path) -> None:
    chain = FakeChain()
    chain.min_stakes[int(Role.Verifier)] = 30
    node = VerifierNode(chain.client(ME), tmp_path)
    node.step()
    staked = chain.staked[(ME, int(Role.Verifier))]
    assert staked >= 30 and chain.count("stake", ME) == 1
    chain.staked[(ME, int(Role.Verifier))] = 12  # slashed below the minimum
    node.step()
    assert chain.staked[(ME, int(Role.Verifier))] == staked  # back to its configured stake
    assert chain.count("stake", ME) == 2
    node.step()  # nothing to do while the stake is whole
    assert chain.count("stake", ME) == 2


def test_a_verifier_that_cannot_top_up_says_why_once(tmp_path: Path, caplog) -> None:
    chain = FakeChain()
    chain.min_stakes[int(Role.Verifier)] = 30
    chain.faucet_enabled = False  # a public chain: no free tokens
    chain.balances[ME] = 40
    node = VerifierNode(chain.client(ME), tmp_path)
    node.step()
    assert chain.staked[(ME, int(Role.Verifier))] == 40
    chain.staked[(ME, int(Role.Verifier))] = 12
    caplog.set_level(logging.INFO, logger="verifier")
    node.step()
    node.step()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert "below the minimum" in errors[0].getMessage()
    chain.balances[ME] = 18  # enough to reach the minimum (not the full configured stake)
    node.step()
    assert chain.staked[(ME, int(Role.Verifier))] == 30
