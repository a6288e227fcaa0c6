"""`chain.artifacts.link_bytecode`: each library's address (LibSettlement, LibAssignment,
LibPosting) goes into the JobManager's bytecode at the artifact's link references, and nowhere
else."""

from __future__ import annotations

import pytest

from chain.artifacts import LinkReference, link_bytecode, load_artifact
from chain.errors import ChainValueError

LIB = "0x" + "ab" * 20
LIBRARIES = {
    "LibSettlement": LIB,
    "LibAssignment": "0x" + "cd" * 20,
    "LibPosting": "0x" + "ef" * 20,
}


def test_job_manager_links_each_library_at_every_reference(contracts_out) -> None:
    art = load_artifact("JobManager")
    refs = art["link_references"]
    assert set(refs) == set(LIBRARIES)
    unlinked = art["bytecode"]
    assert "__$" in unlinked
    linked = link_bytecode(unlinked, refs, LIBRARIES)
    assert "__$" not in linked and "$__" not in linked
    assert len(linked) == len(unlinked)
    code = linked[2:]
    for library, address in LIBRARIES.items():
        assert len(refs[library]) >= 1
        for ref in refs[library]:
            assert code[2 * ref["start"] : 2 * (ref["start"] + ref["length"])] == address[2:]
    # every other byte is untouched
    starts = {2 * r["start"] for lib_refs in refs.values() for r in lib_refs}
    plain = "".join(
        c for i, c in enumerate(unlinked[2:]) if not any(s <= i < s + 40 for s in starts)
    )
    assert plain == "".join(
        c for i, c in enumerate(code) if not any(s <= i < s + 40 for s in starts)
    )


def test_link_refuses_a_missing_library_or_a_reference_off_a_placeholder(contracts_out) -> None:
    art = load_artifact("JobManager")
    with pytest.raises(ChainValueError, match="no address given for library LibSettlement"):
        link_bytecode(
            art["bytecode"],
            art["link_references"],
            {k: v for k, v in LIBRARIES.items() if k != "LibSettlement"},
        )
    with pytest.raises(ChainValueError, match="not 20 bytes"):
        link_bytecode(
            art["bytecode"], art["link_references"], {**LIBRARIES, "LibSettlement": "0x1234"}
        )
    bad = {"LibSettlement": [LinkReference(start=0, length=20)]}
    with pytest.raises(ChainValueError, match="is not a placeholder"):
        link_bytecode(art["bytecode"], bad, {"LibSettlement": LIB})


def test_contracts_without_libraries_have_no_link_references(contracts_out) -> None:
    assert load_artifact("Escrow")["link_references"] == {}
    assert load_artifact("VerificationRound")["link_references"] == {}
