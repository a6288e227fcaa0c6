"""`noderuntime.adjudication`: one strategy per adjudicator, picked once per node from the
deployment's adjudicator name, extensible by registration (no adjudicator string in nodes)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chain.types import Assignment
from noderuntime.adjudication import (
    Adjudication,
    BisectionAdjudication,
    CommitteeAdjudication,
    UnknownAdjudicator,
    adjudication_for,
    register_adjudication,
    registered_adjudications,
)
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import SUBMITTER, VERIFIERS
from verifier.node import VerifierNode
from veritrain.enums import JobStatus
from veritrain.spec import default_digits_spec


def test_committee_and_bisection_are_registered() -> None:
    assert {"committee", "bisection"} <= set(registered_adjudications())
    assert isinstance(adjudication_for("committee"), CommitteeAdjudication)
    assert isinstance(adjudication_for("bisection"), BisectionAdjudication)


def test_unknown_adjudicator_is_refused() -> None:
    with pytest.raises(UnknownAdjudicator, match="no adjudication strategy 'oracle'"):
        adjudication_for("oracle")


def test_node_picks_its_strategy_once_from_the_client(tmp_path: Path) -> None:
    chain = FakeChain()
    node = VerifierNode(chain.client(VERIFIERS[0]), tmp_path)
    first = node.adjudication
    assert isinstance(first, CommitteeAdjudication)  # the fake deploys the committee
    assert node.adjudication is first


def test_a_registered_strategy_is_used_by_the_nodes(tmp_path: Path) -> None:
    calls: list[str] = []

    @register_adjudication
    class Recording(Adjudication):
        name = "recording-test"

        def defend(self, node: Any, job: Any, play: Callable[[], None]) -> None:
            calls.append("defend")

        def challenge(self, node: Any, job: Any, records: Any, *, choose: Any = None) -> None:
            calls.append("challenge")

        def step_claim(self, node: Any, dispute_id: int) -> None:
            return None

    assert "recording-test" in registered_adjudications()
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, default_digits_spec(total_steps=20, checkpoint_interval=10))
    chain.set_job(job_id, status=JobStatus.Disputed)
    chain.assignments[job_id] = Assignment((VERIFIERS[0],), (0,))
    chain.emit(
        "VerifiersAssigned", jobId=job_id, verifiers=[VERIFIERS[0]], sampleMasks=[1], segments=[0]
    )
    node = VerifierNode(
        chain.client(VERIFIERS[0]), tmp_path, adjudication=adjudication_for("recording-test")
    )
    node.step()
    assert calls == ["challenge"]  # the disputed job went to the injected strategy
