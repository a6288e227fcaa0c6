"""`job watch` never stops at a terminal status before it printed the event that made it so: the
finalize can be mined between the watcher's reads, and the status it read must not be newer
than the blocks it read events from (a CI run printed "status Verifying -> Finalized" without
the "finalized: reward" line); the finalize's earnings read as restaked for each party."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from cli import watch as cli_watch

FINALIZED_AT = 11
STAKE_MANAGER = "0x" + "5a" * 20
SOLVER = "0x" + "ab" * 20
SEATS = ("0x" + "c1" * 20, "0x" + "c2" * 20)


class _RacingChain:
    """A chain at block 10 whose job is Verifying; the finalize (block 11, `JobFinalized`) is
    mined the moment the job is read, as when it lands between two of the watcher's reads."""

    def __init__(self) -> None:
        self.head = FINALIZED_AT - 1
        self.deployment = SimpleNamespace(
            block=0, addresses=SimpleNamespace(stake_manager=STAKE_MANAGER)
        )
        self.jobs = SimpleNamespace(
            contract="jobs", get_job=self._get_job, submission_of=lambda _job: bytes(32)
        )
        self.round = SimpleNamespace(contract="round")
        self.escrow = SimpleNamespace(contract="escrow")
        self.stakes = SimpleNamespace(contract="stakes")

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


class _RestakingChain(_RacingChain):
    """The racing chain whose finalize also pays the reward and the seats' fees to the
    StakeManager (`Paid`), which restakes them (`StakesRestaked`, the solver's, then the seats'
    with one fee for both)."""

    def events(self, contract: str, names: list[str], from_block: int, to_block: int) -> list:
        if not from_block <= FINALIZED_AT <= to_block:
            return []

        def log(name: str, index: int, **args: Any) -> SimpleNamespace:
            return SimpleNamespace(event=name, block_number=FINALIZED_AT,
                                   position=(FINALIZED_AT, index), tx_hash=b"\x01",
                                   args=args)  # fmt: skip

        if contract == "escrow":
            return [log("Paid", 1, protocol="jm", account=STAKE_MANAGER, amount=3 * 10**18)]
        if contract == "stakes":
            return [
                log("StakesRestaked", 2, role=0, accounts=[SOLVER], unlocked=[5], earned=[10**18]),
                log("StakesRestaked", 3, role=1, accounts=[SEATS[0], SEATS[1]], unlocked=[2],
                    earned=[10**18 // 2]),
            ]  # fmt: skip
        return super().events(contract, names, from_block, to_block)


def test_watch_shows_the_earnings_restaked_not_the_payment_to_the_stake_manager(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A finalize's reward and fees are restaked, not paid to the wallets: the watch names each
    party's restaked earnings in VTT and hides the one payment to the StakeManager."""

    def events(client: Any, contract: str, names: list[str], **kw: Any) -> list:
        return client.events(contract, names, kw["from_block"], kw["to_block"])

    monkeypatch.setattr("cli.history.events", events)
    lines: list[dict[str, Any]] = []
    assert cli_watch.watch(_RestakingChain(), 1, timeout=5.0, interval=0.01, emit=lines.append)
    texts = [line["text"] for line in lines]
    assert not any(STAKE_MANAGER in t for t in texts), texts
    assert (
        "solver stakes unlocked; earnings restaked (added to the solver stake, not paid to the "
        f"wallet): {SOLVER} 1 VTT" in texts
    ), texts
    assert (
        "verifier stakes unlocked; earnings restaked (added to the verifier stake, not paid to "
        f"the wallet): {SEATS[0]} 0.5 VTT, {SEATS[1]} 0.5 VTT" in texts
    ), texts


class _DisputedChain:
    """A chain whose job sits in Disputed; its one new event is read on the first poll."""

    def __init__(self) -> None:
        self.deployment = SimpleNamespace(
            block=0, addresses=SimpleNamespace(stake_manager=STAKE_MANAGER)
        )
        self.jobs = SimpleNamespace(
            contract="jobs",
            get_job=lambda _job, with_uris=True: SimpleNamespace(
                status=SimpleNamespace(name="Disputed")
            ),
            submission_of=lambda _job: bytes(32),
        )
        self.round = SimpleNamespace(contract="round")
        self.escrow = SimpleNamespace(contract="escrow")
        self.stakes = SimpleNamespace(contract="stakes")

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
