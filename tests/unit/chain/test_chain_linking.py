"""`chain.artifacts.link_bytecode` on hand-made bytecode: the address goes exactly at the given
offsets (the artifact's link references), never where a placeholder merely looks alike."""

from __future__ import annotations

import pytest

from chain.artifacts import LinkReference, link_bytecode
from chain.errors import ChainValueError

PLACEHOLDER = "__$" + "0123456789abcdef0123456789abcdef01" + "$__"  # 40 hex chars = 20 bytes
LIB = "0x" + "cd" * 20


def test_link_writes_the_address_at_each_offset_only() -> None:
    code = "0x6080" + PLACEHOLDER + "5050" + PLACEHOLDER + "00" + PLACEHOLDER
    refs = {"Lib": [LinkReference(start=2, length=20), LinkReference(start=24, length=20)]}
    linked = link_bytecode(code, refs, {"Lib": LIB})
    assert linked == "0x6080" + "cd" * 20 + "5050" + "cd" * 20 + "00" + PLACEHOLDER


def test_link_refuses_a_missing_or_malformed_address_and_a_bad_offset() -> None:
    code = "0x6080" + PLACEHOLDER
    refs = {"Lib": [LinkReference(start=2, length=20)]}
    with pytest.raises(ChainValueError, match="no address given for library Lib"):
        link_bytecode(code, refs, {})
    with pytest.raises(ChainValueError, match="not 20 bytes"):
        link_bytecode(code, refs, {"Lib": "0xabcd"})
    with pytest.raises(ChainValueError, match="is not a placeholder"):
        link_bytecode(code, {"Lib": [LinkReference(start=1, length=20)]}, {"Lib": LIB})
    with pytest.raises(ChainValueError, match="bad reference"):
        link_bytecode(code, {"Lib": [LinkReference(start=2, length=19)]}, {"Lib": LIB})
