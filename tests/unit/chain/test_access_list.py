"""The EIP-2930 access list a transaction is sent with (`chain.transport.useful_access_list`):
every account and storage word the node says the call touches, less what is warm anyway.

Run: ``.venv/bin/python -m pytest tests/unit/chain/test_access_list.py``.
"""

from __future__ import annotations

from chain.transport import (
    ACCESS_LIST_MAX_ACCOUNTS,
    ACCESS_LIST_MAX_KEYS,
    ACCESS_LIST_MIN_KEYS_OF_WARM,
    useful_access_list,
)

SENDER = "0x" + "aa" * 20
TARGET = "0x" + "bb" * 20
OTHER = "0x" + "cc" * 20
KEY = "0x" + "01" * 32


def _entry(address: str, keys: int) -> dict[str, object]:
    return {"address": address, "storageKeys": [f"0x{i:064x}" for i in range(keys)]}


def test_other_accounts_are_kept_with_their_keys() -> None:
    kept = useful_access_list(
        [_entry(OTHER, 2), _entry(OTHER.replace("c", "d"), 0)], SENDER, TARGET
    )
    assert [(e["address"].lower(), len(e["storageKeys"])) for e in kept] == [
        (OTHER, 2),
        (OTHER.replace("c", "d"), 0),
    ]


def test_warm_accounts_and_precompiles_are_dropped() -> None:
    """The sender and the target are warm: listing one costs 2,400 gas for its keys' 100 each."""
    few = ACCESS_LIST_MIN_KEYS_OF_WARM - 1
    entries = [
        _entry(SENDER, few),
        _entry(TARGET.upper().replace("0X", "0x"), few),
        _entry("0x" + "00" * 19 + "01", 0),  # ecrecover
        _entry(OTHER, 1),
    ]
    assert [e["address"].lower() for e in useful_access_list(entries, SENDER, TARGET)] == [OTHER]


def test_a_warm_target_with_many_keys_is_kept() -> None:
    many = ACCESS_LIST_MIN_KEYS_OF_WARM
    kept = useful_access_list([_entry(TARGET, many)], SENDER, TARGET)
    assert len(kept) == 1 and len(kept[0]["storageKeys"]) == many


def test_a_deployment_keeps_every_other_account() -> None:
    assert len(useful_access_list([_entry(OTHER, 1), _entry(SENDER, 1)], SENDER, None)) == 1


def test_an_oversized_answer_is_not_sent() -> None:
    """A hostile or faulty endpoint's list would make the sender prepay gas for nothing."""
    accounts = [_entry(f"0x{i + 0x1000:040x}", 0) for i in range(ACCESS_LIST_MAX_ACCOUNTS + 1)]
    assert useful_access_list(accounts, SENDER, TARGET) == []
    assert useful_access_list(accounts[:-1], SENDER, TARGET) != []
    keys = [_entry(OTHER, ACCESS_LIST_MAX_KEYS + 1)]
    assert useful_access_list(keys, SENDER, TARGET) == []
    assert useful_access_list([_entry(OTHER, ACCESS_LIST_MAX_KEYS)], SENDER, TARGET) != []
