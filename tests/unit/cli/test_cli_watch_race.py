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


class _DisputedChain:
    """A chain whose job sits in Disputed; its one new event is read on the first poll."""

    def __init__(self) -> None:
        self.deployment = SimpleNamespace(block=0)
        self.jobs = SimpleNamespace(
            contract="jobs",
            get_job=lambda _job, with_uris=True: SimpleNamespace(
                status=SimpleNamespace(name="Disputed")
            ),
            submission_of=lambda _job: bytes(32),
        )
        self.round = SimpleNamespace(contract="round")
        self.escrow = SimpleNamespace(contract="escrow")

    def block_number(self) -> int:
        return 5


def test_watch_that_times_out_after_a_change_still_says_why_it_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A CI run's `job watch --timeout 0.3` spent its whole timeout on the first poll, which
    printed new events, and stopped without the "waiting:" line: the user saw a timeout and no
    reason. The reason is printed before a timeout whatever the last poll found."""
    opened = SimpleNamespace(
        event="JobDisputed",
        block_number=5,
        position=(5, 0),
        tx_hash=b"\x02",
        args={"jobId": 1, "disputeId": 1, "sampleIndex": 3, "segment": 3},
    )
    monkeypatch.setattr(
        "cli.history.events",
        lambda client, contract, names, **kw: [opened] if contract == "jobs" else [],
    )
    monkeypatch.setattr(
        cli_watch,
        "waiting_reason",
        lambda client, job_id: "dispute 1 (arbitration committee): AwaitingCommittee",
    )
    lines: list[dict[str, Any]] = []
    assert not cli_watch.watch(_DisputedChain(), 1, timeout=1e-9, interval=0.01, emit=lines.append)
    texts = [line["text"] for line in lines]
    assert texts[-1] == "waiting: dispute 1 (arbitration committee): AwaitingCommittee", texts
    assert "dispute 1 opened on sample 3 (segment 3)" in texts, texts


def test_a_disputed_forced_end_is_named_in_words() -> None:
    """`ForcedEndDisputed` reads as a sentence, not as the event's name."""
    ev = SimpleNamespace(
        event="ForcedEndDisputed",
        args={"jobId": 1, "sampleIndex": 3, "verifier": "0x" + "cd" * 20},
    )
    assert cli_watch._event_text(ev) == (
        f"the forced sample 3's true end is disputed by verifier {'0x' + 'cd' * 20}: "
        "the sample goes to its dispute"
    )
