"""`veritrain run drive`: the command over the in-memory `RunRegistry` of the run tests; each
poll's sleep is where the other parties act (jobs settle, a claim is proposed, chain time
passes), so a whole run is driven in a second. Bad input is one line on stderr."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.app import app
from tests.unit.noderuntime.test_rundriver import COST, Chain, _settle_and_propose
from tests.unit.noderuntime.test_runs import RUN, FakeRegistry

runner = CliRunner()


class Others:
    """The other parties of the run, acting while the driver sleeps between polls."""

    def __init__(
        self, chain: Chain, interrupt_after: int | None = None, *, sigterm: bool = False
    ) -> None:
        self.chain, self.polls, self.interrupt_after = chain, 0, interrupt_after
        self.sigterm = sigterm

    def sleep(self, seconds: float) -> None:
        self.polls += 1
        if self.interrupt_after is not None and self.polls > self.interrupt_after:
            if self.sigterm:  # `kill PID`: the driver's handler stops it as Ctrl-C does
                os.kill(os.getpid(), signal.SIGTERM)
            raise KeyboardInterrupt  # Ctrl-C
        registry = self.chain.runs
        t = registry.run.round
        claim = registry.get_round(1, t)
        if claim.phase.name == "Proposed":
            registry.now = claim.challenge_deadline + 1
        elif len(registry.contributions(1, t)) == RUN.seats:
            _settle_and_propose(self.chain)


def _drive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chain: Chain, *extra: str, others: Any = None
) -> Any:
    (tmp_path / "run.json").write_bytes(RUN.canonical_json())
    chain.shares.can_post = lambda model: model == RUN.inner.model_id_hash()
    monkeypatch.setattr("cli.run_drive.connect_signer", lambda *a: chain)
    others = others or Others(chain)
    monkeypatch.setattr("cli.run_drive.time", SimpleNamespace(time=lambda: 0, sleep=others.sleep))

    finalize = chain.runs.finalize_round

    def finalize_and_open(run_id: int) -> object:
        """Finalize; the next round opens with its own registration window (RoundOpened)."""
        out = finalize(run_id)
        chain.runs.deadline = chain.runs.now + 100
        return out

    chain.runs.finalize_round = finalize_and_open  # type: ignore[method-assign]
    return runner.invoke(app, ["run", "drive", str(tmp_path / "run.json"), "--poll", "1", *extra])


def test_drive_runs_the_run_to_its_end_one_line_per_action(tmp_path, monkeypatch) -> None:
    chain = Chain(FakeRegistry())
    result = _drive(tmp_path, monkeypatch, chain, "--dev-account", "0")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("driving run 1 (0x") and "round 0 of 3" in lines[0]
    assert lines[1] == (
        "1970-01-01 00:00:00 UTC  run 1 round 0: posted seat(s) 0, 1, 2 as job(s) 100, 101, 102 "
        "(escrow 69 VTT)"
    )
    assert lines[2] == (
        "1970-01-01 00:00:00 UTC  run 1 round 0: 3 of 3 seats registered: waiting for the jobs "
        "to settle and a claim"
    )
    assert lines[3] == (
        "1970-01-01 00:00:00 UTC  run 1 round 0: its claim can be challenged until "
        "1970-01-01 00:17:40 UTC"
    )
    assert lines[4] == (
        "1970-01-01 00:00:00 UTC  run 1 round 0: finalized (its claim's challenge window is over)"
    )
    assert lines[-1] == "1970-01-01 00:00:00 UTC  run 1: complete, its 3 round(s) final"
    assert sum("posted" in line for line in lines) == 3
    assert sorted((t, s) for t, s, _ in chain.posted) == [
        (t, s) for t in range(3) for s in range(3)
    ]


def test_drive_json_is_one_object_per_line_in_wei_and_unix_seconds(tmp_path, monkeypatch) -> None:
    chain = Chain(FakeRegistry())
    result = _drive(tmp_path, monkeypatch, chain, "--json")
    assert result.exit_code == 0, result.output
    steps = [json.loads(line) for line in result.stdout.splitlines()]
    assert steps[0] == {
        "action": "posted",
        "run_id": 1,
        "round": 0,
        "reason": None,
        "seats": [0, 1, 2],
        "jobs": [100, 101, 102],
        "escrow_wei": 3 * COST,
        "until": None,
        "detail": None,
        "time": 0,
    }
    assert steps[2]["reason"] == "challenge_window" and steps[2]["until"] == 1060
    assert [s["action"] for s in steps if s["action"] != "waiting"] == [
        "posted",
        "finalized",
        "posted",
        "finalized",
        "posted",
        "finalized",
        "complete",
    ]


@pytest.mark.parametrize("sigterm", [False, True], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_cleanly_and_a_restart_goes_on_from_the_chain(
    tmp_path, monkeypatch, sigterm
) -> None:
    chain = Chain(FakeRegistry())
    before = signal.getsignal(signal.SIGTERM)
    others = Others(chain, interrupt_after=3, sigterm=sigterm)
    stopped = _drive(tmp_path, monkeypatch, chain, others=others)
    assert stopped.exit_code == 130, stopped.output
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is put back
    assert "stopped at round 1: run `veritrain run drive` again" in stopped.stderr
    # round 1 was posted and its claim proposed when Ctrl-C came: a restart waits on it
    assert sorted((t, s) for t, s, _ in chain.posted) == [
        (t, s) for t in range(2) for s in range(3)
    ]
    again = _drive(tmp_path, monkeypatch, chain)
    assert again.exit_code == 0, again.output
    assert "round 1: finalized" in again.stdout and "round 1: posted" not in again.stdout
    assert "round 2: posted" in again.stdout
    assert sorted((t, s) for t, s, _ in chain.posted) == [
        (t, s) for t in range(3) for s in range(3)
    ]


@pytest.mark.parametrize(
    "balance, can_post, message",
    [
        (3 * COST - 1, True, "is below the 69 VTT escrow of round 0's 3 contribution job(s)"),
        (3 * COST, False, "may not post jobs of model digits-mlp"),
    ],
)
def test_drive_refuses_a_short_balance_or_a_wrong_key_in_one_line(
    tmp_path, monkeypatch, balance, can_post, message
) -> None:
    chain = Chain(FakeRegistry(), balance=balance)
    (tmp_path / "run.json").write_bytes(RUN.canonical_json())
    chain.shares.can_post = lambda model: can_post
    monkeypatch.setattr("cli.run_drive.connect_signer", lambda *a: chain)
    result = runner.invoke(app, ["run", "drive", str(tmp_path / "run.json")])
    assert result.exit_code == 1, result.output
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert chain.posted == []


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("missing.json", None, "cannot read run file"),
        ("junk.json", '{"seats": 2}', "is not a run spec"),
        ("run.json", "run", "--mirror"),
    ],
)
def test_drive_bad_input_is_one_line(tmp_path, name, content, message) -> None:
    path = tmp_path / name
    if content == "run":
        path.write_bytes(RUN.canonical_json())
    elif content is not None:
        path.write_text(content)
    # the run's URI is published at `run open`; a bad mirror is refused before the chain
    extra = ["--mirror", "ftp://x"] if content == "run" else []
    argv = ["run", "drive", str(path), *extra, "--rpc-url", "http://127.0.0.1:9"]
    result = runner.invoke(app, argv)
    assert result.exit_code != 0, result.output
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and message in lines[0], lines
