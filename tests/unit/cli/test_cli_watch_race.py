"""`job watch` never stops at a terminal status before it printed the event that made it so: the
finalize can be mined between the watcher's reads, and the status it read must not be newer
than the blocks it read events from (a CI run printed "status Verifying -> Finalized" without
the "finalized: reward" line)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from cli import watch as cli_watch

FINALIZED_AT = 11


class _RacingChain:
    """A chain at block 10 whose job is Verifying; the finalize (block 11, `JobFinalized`) is
    mined the moment the job is read, as when it lands between two of the watcher's reads."""

    def __init__(self) -> None:
        self.head = FINALIZED_AT - 1
        self.deployment = SimpleNamespace(block=0)
        self.jobs = SimpleNamespace(
            contract="jobs", get_job=self._get_job, submission_of=lambda _job: bytes(32)
        )
        self.round = SimpleNamespace(contract="round")
        self.escrow = SimpleNamespace(contract="escrow")

    def block_number(self) -> int:
        return self.head

    def _get_job(self, _job_id: int, with_uris: bool = True) -> Any:
        self.head = FINALIZED_AT  # the finalize is mined now
        return SimpleNamespace(status=SimpleNamespace(name="Finalized"))

    def events(self, contract: str, names: list[str], from_block: int, to_block: int) -> list:
        if contract != "jobs" or "JobFinalized" not in names:
            return []
        final = SimpleNamespace(
            event="JobFinalized",
            block_number=FINALIZED_AT,
            position=(FINALIZED_AT, 0),
            tx_hash=b"\x01",
            args={"jobId": 1, "solver": "0x" + "ab" * 20, "reward": 10**18, "shares": 16},
        )
        return [final] if from_block <= FINALIZED_AT <= to_block else []


def test_watch_prints_the_finalizing_event_before_it_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    chain = _RacingChain()

    def events(client: Any, contract: str, names: list[str], **kw: Any) -> list:
        return client.events(contract, names, kw["from_block"], kw["to_block"])

    monkeypatch.setattr("cli.history.events", events)
    lines: list[dict[str, Any]] = []
    assert cli_watch.watch(chain, 1, timeout=5.0, interval=0.01, emit=lines.append)
    texts = [line["text"] for line in lines]
    assert any(t.startswith("finalized: reward 1") for t in texts), texts
    assert texts.index(next(t for t in texts if t.startswith("finalized"))) < texts.index(
        "status Finalized"
    )
