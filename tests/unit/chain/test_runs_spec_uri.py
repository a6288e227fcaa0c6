"""A contribution's spec URI (`RunsFacade.contribution_spec_uri`): the run publishes its URI once
in ``RunOpened`` and a contribution carries none, so a reader builds ``<run URI>#contribution=
<round>,<seat>`` from the job's ``ContributionAdded``; a run URI that names no spec gives "".
The facade runs on a client whose log reads return recorded events (`_scan_events` is the one
log query it makes).

Run: .venv/bin/python -m pytest tests/unit/chain/test_runs_spec_uri.py -q
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from chain.contracts.runs import RunsFacade
from chain.types import DecodedEvent
from veritrain.diloco import parse_contribution_uri


def _event(name: str, **args: Any) -> DecodedEvent:
    return DecodedEvent(
        contract="RunRegistry",
        event=name,
        args=args,
        block_number=1,
        log_index=0,
        tx_hash="0x" + "00" * 32,
        address="0x" + "11" * 20,
    )


class _Logged(RunsFacade):
    """`RunsFacade` over recorded events: (event name, {topic position: value}) -> events."""

    def __init__(self, opened: dict[int, str], added: dict[int, tuple[int, int, int]]) -> None:
        self.reads: list[tuple[str, dict[int, int]]] = []
        self._opened, self._added = opened, added
        self._run_uris = {}

    def _scan_events(self, event: str, indexed: Mapping[int, int]) -> list[DecodedEvent]:
        self.reads.append((event, dict(indexed)))
        if event == "RunOpened" and indexed[1] in self._opened:
            return [_event(event, runId=indexed[1], specURI=self._opened[indexed[1]])]
        if event == "ContributionAdded" and indexed[3] in self._added:
            run_id, t, seat = self._added[indexed[3]]
            return [_event(event, runId=run_id, round=t, seat=seat, jobId=indexed[3])]
        return []


def test_a_contribution_resolves_to_its_runs_uri_at_its_round_and_seat() -> None:
    runs = _Logged({1: "https://runs.example/r.json"}, {7: (1, 2, 3), 8: (1, 0, 1)})
    uri = runs.contribution_spec_uri(7)
    assert uri == "https://runs.example/r.json#contribution=2,3"
    assert parse_contribution_uri(uri) == ("https://runs.example/r.json", 2, 3)
    assert runs.contribution_spec_uri(8).endswith("#contribution=0,1")
    # the job is looked up by its indexed jobId (the third topic), the run's URI read once
    assert ("ContributionAdded", {3: 7}) in runs.reads
    assert sum(1 for name, _ in runs.reads if name == "RunOpened") == 1


@pytest.mark.parametrize("run_uri", ["", "https://runs.example/r.json#seat=9"])
def test_a_run_uri_that_names_no_spec_gives_none_never_an_error(run_uri: str) -> None:
    """Nothing on chain checks the opener's URI: an empty one, or one with a fragment of its
    own, resolves to "" (nodes then skip the job as any job whose spec cannot be loaded)."""
    runs = _Logged({1: run_uri}, {7: (1, 0, 0)})
    assert runs.contribution_spec_uri(7) == ""


def test_a_job_that_is_no_contribution_has_no_run_uri() -> None:
    runs = _Logged({1: "https://runs.example/r.json"}, {})
    assert runs.contribution_spec_uri(5) == ""
    assert runs.run_spec_uri(2) == ""  # an unknown run
