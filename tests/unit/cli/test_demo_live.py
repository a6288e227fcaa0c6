"""The demo's live view without a chain: rendering, change lines, the event cursor, the poller.

Run: ``.venv/bin/python -m pytest tests/unit/cli/test_demo_live.py``.
"""

from __future__ import annotations

import dataclasses
import io
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from chain.types import (
    Assignment,
    ClaimsView,
    GameStatus,
    GameView,
    JobStatus,
    RoundOutcome,
    RoundView,
    Side,
)
from cli import demo
from cli.live import (
    ChainPoller,
    DisputeRow,
    EventTail,
    ForcedErrorRow,
    JobRow,
    LiveView,
    SlashRow,
    Snapshot,
    changes,
    render,
    round_phase,
)
from cli.progress import LogTail, StallWatch

E18 = 10**18
SOLVER = "0x" + "11" * 20
LAZY = "0x" + "88" * 20
CHALLENGER = "0x" + "44" * 20
SUBMISSION = bytes.fromhex("ab" * 32)
NAMES = {SOLVER: "solver-perturb", LAZY: "verifier-lazy", CHALLENGER: "verifier-1"}


def _snapshot(**overrides: Any) -> Snapshot:
    base: dict[str, Any] = dict(
        elapsed_s=65.0,
        jobs=(
            JobRow(
                job_id=3,
                solver="solver-perturb",
                status="Disputed",
                round="outcome Forced (sample 1)",
                segments=(2, 5, 7, 9),
                dispute_id=2,
            ),
        ),
        disputes=(
            DisputeRow(
                dispute_id=2,
                job_id=3,
                adjudicator="bisection",
                moves=5,
                state="AwaitingBisection [56, 62]",
                clocks=(41, 57),
            ),
        ),
        slashes=(
            SlashRow(
                block=120, log_index=3, name="verifier-lazy", role="verifier", amount_wei=25 * E18
            ),
        ),
        forced_errors=(
            ForcedErrorRow(job_id=1, sample=2, slashed_wei=25 * E18, paid_wei=20 * E18),
        ),
    )
    base.update(overrides)
    return Snapshot(**base)


def _text(snapshot: Snapshot) -> str:
    console = Console(record=True, width=160, file=io.StringIO())
    console.print(render(snapshot))
    return console.export_text()


# ------------------------------------------------------------------------------- render


def test_render_shows_the_job_the_dispute_and_the_slash() -> None:
    text = _text(_snapshot(dead=("verifier-3",)))
    assert "elapsed 1:05" in text
    job_line = next(line for line in text.splitlines() if "solver-perturb" in line)
    for part in ("3", "Disputed - outcome Forced (sample 1)", "2, 5, 7, 9"):
        assert part in job_line
    dispute_line = next(line for line in text.splitlines() if "bisection" in line)
    for part in ("AwaitingBisection [56, 62]", "clocks 41s / 57s", " 5 "):
        assert part in dispute_line
    slash_line = next(line for line in text.splitlines() if "verifier-lazy" in line)
    assert "verifier" in slash_line.replace("verifier-lazy", "") and "│ 25 " in slash_line
    assert "Forced errors settled" in text and "25 / 20" in text
    assert "node process(es) exited: verifier-3" in text


def test_render_shows_the_winner_once_resolved_and_hides_empty_tables() -> None:
    resolved = DisputeRow(
        2, 3, "bisection", 9, "ChallengerWon at step 60", None, True, "verifier-1 (challenger)"
    )
    text = _text(_snapshot(disputes=(resolved,)))
    assert "winner verifier-1 (challenger)" in text and "clocks" not in text
    bare = _text(Snapshot(elapsed_s=3.0, jobs=(JobRow(1, "-", "Open"),)))
    assert "Disputes" not in bare and "Slashes" not in bare and "Forced errors" not in bare
    assert "Open" in bare


def test_round_phase_reports_the_furthest_phase_reached() -> None:
    args: dict[str, Any] = dict(
        claims_posted=False, sealed=0, revealed=0, verifiers=5, secret_revealed=False
    )
    assert round_phase(**args) == ""
    assert round_phase(**{**args, "claims_posted": True}) == "claims posted"
    assert round_phase(**{**args, "claims_posted": True, "sealed": 3}) == "verdicts sealed 3/5"
    assert round_phase(**{**args, "sealed": 5, "revealed": 4}) == "verdicts revealed 4/5"
    assert round_phase(**{**args, "revealed": 5, "secret_revealed": True}) == "secret revealed"
    assert (
        round_phase(**{**args, "secret_revealed": True, "outcome": "Forced", "forced_sample": 2})
        == "outcome Forced (sample 2)"
    )
    assert round_phase(**{**args, "outcome": "Clean"}) == "outcome Clean"


# ------------------------------------------------------------------------------ changes


def test_changes_report_each_change_once() -> None:
    first = _snapshot()
    lines = changes(None, first)
    assert any("job 3 (solver-perturb): Disputed" in line for line in lines)
    assert any("sampled segments 2, 5, 7, 9" in line for line in lines)
    assert any("dispute 2 opened on job 3 (bisection)" in line for line in lines)
    assert any("slashed verifier-lazy (verifier): 25 VTT" in line for line in lines)
    assert any("forced error settled on job 1" in line for line in lines)
    assert all(line.startswith("[1:05] ") for line in lines)

    assert changes(first, first) == []
    second_slash = SlashRow(
        block=130, log_index=0, name="solver-perturb", role="solver", amount_wei=50 * E18
    )
    resolved = DisputeRow(
        2, 3, "bisection", 9, "ChallengerWon at step 60", None, True, "verifier-1 (challenger)"
    )
    later = _snapshot(
        elapsed_s=70.0,
        slashes=first.slashes + (second_slash,),
        disputes=(resolved,),
        dead=("verifier-2",),
    )
    assert changes(first, later) == [
        "[1:10] dispute 2: ChallengerWon at step 60, moves 9; winner verifier-1 (challenger)",
        "[1:10] slashed solver-perturb (solver): 50 VTT (block 130)",
        "[1:10] node process exited: verifier-2",
    ]


def test_live_view_off_a_terminal_prints_plain_lines_per_change() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    with LiveView(console) as view:
        assert not view.live_mode
        view.update(_snapshot())
        view.update(_snapshot())  # nothing changed: nothing printed
        view.update(_snapshot(elapsed_s=80.0, jobs=(JobRow(3, "solver-perturb", "Rejected"),)))
    text = out.getvalue()
    assert "\x1b" not in text
    assert text.count("slashed verifier-lazy") == 1
    assert text.splitlines()[-1] == "[1:20] job 3 (solver-perturb): Rejected"


# ------------------------------------------------------------------------------- cursor


class FakeLogs:
    """A `LogSource` over a growing list of logs; ``sloppy`` ignores the range asked for."""

    def __init__(self, sloppy: bool = False) -> None:
        self.logs: list[dict[str, Any]] = []
        self.sloppy = sloppy
        self.calls: list[tuple[int, int]] = []

    def add(self, block: int, log_index: int, event: str = "StakeSlashed", **args: Any) -> None:
        self.logs.append(
            {"event": event, "blockNumber": block, "logIndex": log_index, "args": args}
        )

    def __call__(
        self, contract: str, event: str, from_block: int, to_block: int
    ) -> Sequence[Mapping[str, Any]]:
        self.calls.append((from_block, to_block))
        logs = [log for log in self.logs if log["event"] == event]
        if self.sloppy:
            return logs
        return [log for log in logs if from_block <= log["blockNumber"] <= to_block]


@pytest.mark.parametrize("sloppy", [False, True])
def test_event_tail_delivers_each_log_once_even_within_the_head_block(sloppy: bool) -> None:
    source = FakeLogs(sloppy=sloppy)
    tail = EventTail(source, "StakeManager", "StakeSlashed", from_block=10)
    assert tail.poll(head=9) == []  # head before the deployment block: nothing read
    source.add(12, 0, n=1)
    source.add(12, 4, n=2)
    assert [log["args"]["n"] for log in tail.poll(head=12)] == [1, 2]
    assert tail.cursor == (12, 4)
    # Block 12 fills further after the poll (a pending block): only the new log comes back.
    source.add(12, 7, n=3)
    source.add(14, 1, n=4)
    assert [log["args"]["n"] for log in tail.poll(head=14)] == [3, 4]
    assert tail.poll(head=14) == [] and tail.poll(head=20) == []
    source.add(21, 0, n=5)
    assert [log["args"]["n"] for log in tail.poll(head=21)] == [5]
    # Each scan starts at the last block scanned, not back at the deployment block.
    assert [lo for lo, _ in source.calls] == [10, 12, 14, 14, 20]


# ------------------------------------------------------------------------------- poller


def _job(job_id: int, status: JobStatus, dispute_id: int = 0) -> Any:
    from chain.types import JobView

    return JobView(
        job_id=job_id,
        submitter="0x" + "00" * 19 + "01",
        solver=SOLVER,
        model_id=b"",
        spec_hash=b"",
        init_hash=b"",
        merkle_root=b"",
        total_steps=300,
        checkpoint_interval=25,
        reward=0,
        status=status,
        commit_deadline=0,
        randomness_block=0,
        verdict_deadline=0,
        challenge_deadline=0,
        dispute_id=dispute_id,
    )


class _Ns:
    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


class FakeClient:
    """The client facades `ChainPoller` reads, over in-memory state."""

    def __init__(self) -> None:
        self.head = 100
        self.status = JobStatus.Verifying
        self.dispute_id = 0
        self.game = _Ns(
            get_game=lambda d: GameView(
                dispute_id=d,
                job_id=1,
                segment=5,
                defender=SOLVER,
                challenger=CHALLENGER,
                lo=125,
                hi=150,
                agreed_hash=b"",
                claimed_hash=b"",
                pending_hash=b"",
                turn=Side.Challenger,
                status=GameStatus.AwaitingBisection,
                defender_clock=60,
                challenger_clock=60,
                turn_started_at=0,
                moves=3,
            ),
            clocks=lambda d: (55, 48),
        )
        self.jobs = _Ns(
            job_count=lambda: 1,
            get_job=lambda j, with_uris=True: _job(j, self.status, self.dispute_id),
            get_assignment=lambda j: Assignment((CHALLENGER, LAZY), (5, 9)),
            submission_of=lambda j: SUBMISSION,
        )
        # The round is keyed by the submission id, never by the job id.
        self.round = _Ns(
            claims_of=lambda s: (
                ClaimsView((b"a", b"b"), (b"c", b"d"), b"") if s == SUBMISSION else None
            ),
            round_of=lambda s: RoundView(s, b"", False, 2) if s == SUBMISSION else None,
            outcome=lambda s: (RoundOutcome.Pending, 0) if s == SUBMISSION else None,
            verdict_commitment_of=lambda s, v: (b"x", v == CHALLENGER and s == SUBMISSION),
        )
        self.adjudicator = _Ns(name="bisection")
        self.committee = _Ns()

    def block_number(self) -> int:
        return self.head


def test_poller_reports_every_slash_once_across_polls() -> None:
    client, source = FakeClient(), FakeLogs()
    poller = ChainPoller(client, NAMES, from_block=1, logs=source)
    source.add(100, 2, account=LAZY, role=1, requested=30 * E18, slashed=25 * E18, recipient=SOLVER)
    first = poller.poll(5.0)
    assert [(s.name, s.role, s.amount_wei) for s in first.slashes] == [
        ("verifier-lazy", "verifier", 25 * E18)
    ]
    assert first.jobs == (
        JobRow(1, "solver-perturb", "Verifying", "verdicts revealed 1/2", (5, 9), 0),
    )
    # Same head, then a new slash in the same block: each slash appears exactly once.
    assert poller.poll(6.0).slashes == first.slashes
    source.add(100, 9, account=SOLVER, role=0, requested=E18, slashed=E18, recipient=LAZY)
    client.head = 101
    client.status, client.dispute_id = JobStatus.Disputed, 4
    third = poller.poll(7.0)
    assert [(s.block, s.log_index, s.name) for s in third.slashes] == [
        (100, 2, "verifier-lazy"),
        (100, 9, "solver-perturb"),
    ]
    assert third.disputes == (
        DisputeRow(4, 1, "bisection", 3, "AwaitingBisection [125, 150]", (55, 48)),
    )
    lines = changes(first, third)
    assert sum("slashed" in line for line in lines) == 1


def test_a_dispute_read_that_reverts_shows_as_unreadable_and_the_poll_goes_on() -> None:
    """A view that reverts for one poll (Anvil's eth_call can run at a time before the latest
    block, which made `clocksOf` panic) shows its dispute as unreadable for that poll instead of
    stopping the demo; the next poll reads it again."""
    from chain.errors import ContractRevert

    client = FakeClient()
    client.status, client.dispute_id = JobStatus.Disputed, 4

    def panics(dispute_id: int) -> tuple[int, int]:
        raise ContractRevert("Panic", {"code": 0x11}, contract="BisectionGame")

    client.game.clocks = panics
    poller = ChainPoller(client, NAMES, from_block=1, logs=FakeLogs())
    (row,) = poller.poll(5.0).disputes
    assert (row.dispute_id, row.job_id, row.resolved) == (4, 1, False)
    assert row.state.startswith("unreadable: ") and "Panic" in row.state
    client.game.clocks = lambda d: (55, 48)
    assert poller.poll(6.0).disputes == (
        DisputeRow(4, 1, "bisection", 3, "AwaitingBisection [125, 150]", (55, 48)),
    )


def test_wait_settled_draws_until_every_job_is_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient()
    client.jobs.job_count = lambda: 2  # 1 digits job + the GPT job
    client.status = JobStatus.Finalized
    monkeypatch.setattr(demo, "POLL_S", 0.0)
    monkeypatch.setattr("cli.live.web3_logs", lambda c: FakeLogs())
    cfg = demo.DemoConfig(jobs=1, timeout_s=60)
    watch, tail = StallWatch(cfg.timeout_s), LogTail(Path("no-such-logs"))
    demo._wait_settled(client, cfg, time.monotonic(), {}, watch, tail, names=NAMES, from_block=1)

    dead: dict[str, subprocess.Popen[bytes]] = {"verifier-3": _Ns(poll=lambda: 1)}  # type: ignore[dict-item]
    client.status = JobStatus.Verifying
    with pytest.raises(RuntimeError, match="verifier-3"):
        demo._wait_settled(
            client, cfg, time.monotonic(), dead, watch, tail, names=NAMES, from_block=1
        )


def test_wait_settled_fails_only_when_nothing_progressed_for_the_timeout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A job stuck in Verifying: 10 s polls, the chain unchanged. New node log lines keep the
    wait alive past the timeout; once they stop, it fails after the stall timeout."""
    client = FakeClient()
    client.jobs.job_count = lambda: 2
    client.status = JobStatus.Verifying
    monkeypatch.setattr(demo, "POLL_S", 0.0)
    monkeypatch.setattr("cli.live.web3_logs", lambda c: FakeLogs())
    now = [0.0]
    last_line = [0.0]
    log = tmp_path / "verifier-1.log"
    log.write_text("")

    def clock() -> float:
        return now[0]

    def ticking_job(job_id: int, with_uris: bool = True) -> Any:
        now[0] += 10.0
        if now[0] <= 200.0:  # 200 s of replay progress lines, then silence
            last_line[0] = now[0]
            with log.open("a") as f:
                f.write(f"12:00:{int(now[0]) % 60:02d} INFO verifier-1: at {now[0]:.0f} s\n")
        return _job(job_id, client.status)

    client.jobs.get_job = ticking_job
    cfg = demo.DemoConfig(jobs=1, timeout_s=60)
    watch = StallWatch(cfg.timeout_s, clock=clock)
    with pytest.raises(TimeoutError, match="jobs not settled: nothing progressed for"):
        demo._wait_settled(
            client, cfg, 0.0, {}, watch, LogTail(tmp_path), names=NAMES, from_block=1
        )
    assert last_line[0] == 200.0  # alive long past the 60 s timeout while lines came
    assert 260.0 < now[0] <= 300.0, now[0]  # failed within a few polls after 60 s of silence


def test_poller_shows_the_slash_of_a_job_it_sees_settled() -> None:
    """A block mined between the reads: the job is seen Rejected, so its slash is shown too."""
    client, source = FakeClient(), FakeLogs()
    poller = ChainPoller(client, NAMES, from_block=1, logs=source)
    assert poller.poll(1.0).slashes == ()

    def settle_while_reading(job_id: int, with_uris: bool = True) -> Any:
        client.head += 1  # the finalize tx lands now: the job settles and the solver is slashed
        source.add(
            client.head, 0, account=SOLVER, role=0, requested=E18, slashed=E18, recipient=LAZY
        )
        return _job(job_id, JobStatus.Rejected)

    client.jobs.get_job = settle_while_reading
    snapshot = poller.poll(2.0)
    assert [j.status for j in snapshot.jobs] == ["Rejected"]
    assert [s.name for s in snapshot.slashes] == ["solver-perturb"]


def test_poller_and_view_name_each_jobs_model() -> None:
    from veritrain.spec import model_id_hash

    client, source = FakeClient(), FakeLogs()
    known = model_id_hash("shakespeare-char")
    unknown = model_id_hash("someone-elses")

    def job_of(job_id: int, with_uris: bool = True) -> Any:
        model = known if job_id == 1 else unknown
        return dataclasses.replace(_job(job_id, JobStatus.Verifying), model_id=model)

    client.jobs.job_count = lambda: 2
    client.jobs.get_job = job_of
    poller = ChainPoller(
        client, NAMES, from_block=1, logs=source, models={known: "shakespeare-char"}
    )
    snapshot = poller.poll(1.0)
    assert [j.model for j in snapshot.jobs] == ["shakespeare-char", "0x" + unknown[:4].hex()]
    text = _text(snapshot)
    assert "model" in text and "shakespeare-char" in text
