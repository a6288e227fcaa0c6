"""EIP-712 seals (`chain.seals`): a signature names its signer, and only for the exact submission,
commitment, chain and round it was made for (the contract checks the same digest on chain:
`tests/integration/test_gas_bound.py` submits such seals through `commitVerdictsFor`)."""

from __future__ import annotations

import pytest
from eth_account import Account

from chain.seals import seal_signer, sign_seal

ROUND = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
OTHER_ROUND = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
SID = b"\x11" * 32
COMMITMENT = b"\x22" * 32
CHAIN = 31337


def test_a_seal_names_its_signer_for_exactly_what_was_signed() -> None:
    account = Account.from_key("0x" + "ab" * 32)
    seal = sign_seal(account, CHAIN, ROUND, SID, COMMITMENT)
    assert len(seal.signature) == 65
    assert seal.verifier == account.address
    assert seal_signer(CHAIN, ROUND, SID, COMMITMENT, seal.signature) == account.address
    # the same signature over anything else names someone else (or nobody)
    for other in (
        (CHAIN + 1, ROUND, SID, COMMITMENT),
        (CHAIN, OTHER_ROUND, SID, COMMITMENT),
        (CHAIN, ROUND, b"\x12" * 32, COMMITMENT),
        (CHAIN, ROUND, SID, b"\x23" * 32),
    ):
        assert seal_signer(*other, seal.signature) != account.address


def test_a_malformed_signature_names_nobody() -> None:
    account = Account.from_key("0x" + "cd" * 32)
    seal = sign_seal(account, CHAIN, ROUND, SID, COMMITMENT)
    assert seal_signer(CHAIN, ROUND, SID, COMMITMENT, seal.signature[:64]) is None
    assert seal_signer(CHAIN, ROUND, SID, COMMITMENT, seal.signature[:64] + b"\x05") is None


def test_a_seal_of_a_wrong_size_field_is_refused() -> None:
    account = Account.from_key("0x" + "ef" * 32)
    with pytest.raises(ValueError, match="commitment must be 32 bytes"):
        sign_seal(account, CHAIN, ROUND, SID, b"\x01" * 31)
