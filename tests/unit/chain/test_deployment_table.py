"""The declarative deployment table (contracts/script/deployment.json) that chain.deploy executes:
well formed, every reference resolvable in order, every wiring call a function of its target."""

from __future__ import annotations

import json

from chain.deploy import load_table, table_path
from chain.manifest import ProtocolParams

PARAM_REFS = {
    "unbondingDelay",
    "minStakes",
    "jobParams",
    "forcedErrorRateBps",
    "committeeSize",
    "voteCommitWindow",
    "voteRevealWindow",
    "clockSeconds",
    "maxSegmentCompute",
    "moveBond",
    "claimBond",
    "claimChallengeWindow",
    "registrationWindow",
}


def test_table_order_is_the_documented_one() -> None:
    steps = load_table()
    for variant in ("committee", "bisection"):
        deployed = [s.contract for s in steps if s.kind != "call" and s.applies_to(variant)]
        expected = [
            "VeriToken",
            "StakeManager",
            "ShareRegistry",
            "Escrow",
            "LibSettlement",
            "LibAssignment",
            "LibPosting",
            "JobManager",
            "VerificationRound",
            "ArbitrationCommittee",
        ]
        bisection = ["BisectionGame"] if variant == "bisection" else []
        assert deployed == [*expected, *bisection, "RunRegistry"]
        calls = [
            f"{s.target}.{s.function}" for s in steps if s.kind == "call" and s.applies_to(variant)
        ]
        assert calls == [
            *(["committee.setStepParent"] if variant == "bisection" else []),
            "committee.setClaimParent",
            "jobManager.setAdjudicator",
        ]


def test_every_reference_names_a_param_or_an_earlier_deployment() -> None:
    """Every argument is a parameter, an earlier deployment (or its view), ``~<name>``, a
    later deployment whose address is given in advance, or ``~<name>?``, one that only some
    variants deploy (zero in the others)."""
    for variant in ("committee", "bisection"):
        known = {"admin"}
        for step in load_table():
            if not step.applies_to(variant):
                continue
            for ref in step.args:
                head, _, tail = ref.partition(".")
                if ref.startswith("~"):
                    name = ref[1:].removesuffix("?")
                    later = [s.name for s in load_table() if s.applies_to(variant)]
                    anywhere = [s.name for s in load_table()]
                    assert name not in known, f"{ref}: deployed before"
                    if ref.endswith("?"):  # zero where this variant lacks it
                        assert name in anywhere, f"{ref}: no such deployment"
                    else:
                        assert name in later, f"{ref}: no later deployment"
                elif head == "params":
                    assert tail in PARAM_REFS, ref
                else:
                    assert head in known, f"{ref} used before it is deployed ({variant})"
            if step.kind == "call":
                assert step.target in known
            else:
                known.add(step.name)


def test_param_refs_cover_the_protocol_params() -> None:
    from chain.deploy import _param_values

    assert set(_param_values(ProtocolParams())) == PARAM_REFS


def test_table_is_plain_json_next_to_deploy_sol() -> None:
    path = table_path()
    assert path.parent.name == "script" and (path.parent / "Deploy.sol").is_file()
    assert isinstance(json.loads(path.read_text())["steps"], list)
