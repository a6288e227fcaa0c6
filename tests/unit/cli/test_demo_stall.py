"""`cli.progress`: the demos' stall timeout. `StallWatch` fails only after `stall_s` seconds
without progress (a changed observation, a never-seen log message), on an injected clock;
`LogTail` returns only the complete lines appended since its last read."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.progress import LogTail, StallWatch


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_changed_observation_restarts_the_stall_clock() -> None:
    clock = Clock()
    watch = StallWatch(30.0, clock=clock)
    assert watch.observe("chain", ("job 1", "Claimed")) is True  # first value of a key
    clock.now += 25.0
    assert watch.observe("chain", ("job 1", "Claimed")) is False
    assert watch.idle_s == 25.0
    watch.check("job 1")  # 25 s idle: within the timeout
    clock.now += 20.0
    assert watch.observe("chain", ("job 1", "Verifying")) is True
    assert watch.idle_s == 0.0
    clock.now += 30.0
    watch.check("job 1")  # exactly the timeout: not yet
    clock.now += 1.0
    with pytest.raises(TimeoutError, match=r"^job 1: nothing progressed for 31 s \(--timeout 30\)"):
        watch.check("job 1")


def test_a_slow_run_that_keeps_progressing_never_stalls() -> None:
    clock = Clock()
    watch = StallWatch(60.0, clock=clock)
    for minute in range(100):  # 100 minutes, a change every 50 s
        clock.now += 50.0
        watch.observe("chain", minute)
        watch.check("run")
    assert watch.idle_s == 0.0


def test_only_new_log_messages_are_progress() -> None:
    clock = Clock()
    watch = StallWatch(10.0, clock=clock)
    assert watch.observe_lines(["12:00:01 INFO v1: selftest: ok"]) is True
    clock.now += 6.0
    # the same message at another time stamp (a retry loop), and blank lines: no progress
    assert watch.observe_lines(["12:00:07 INFO v1: selftest: ok", "", "  "]) is False
    assert watch.observe_lines([]) is False
    clock.now += 6.0
    with pytest.raises(TimeoutError):
        watch.check("claim")
    assert watch.observe_lines(["12:00:13 INFO v1: job 1: replayed segment 3"]) is True
    watch.check("claim")


def test_keys_are_independent_and_bad_timeouts_are_refused() -> None:
    clock = Clock()
    watch = StallWatch(5.0, clock=clock)
    watch.observe("a", 1)
    clock.now += 4.0
    assert watch.observe("b", 1) is True  # a new key is progress
    clock.now += 4.0
    assert watch.observe("a", 1) is False
    watch.check("x")  # 4 s since b appeared
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="must be > 0 seconds"):
            StallWatch(bad)


def test_log_tail_reads_complete_new_lines_of_node_logs(tmp_path: Path) -> None:
    tail = LogTail(tmp_path / "logs")
    assert tail.read() == []  # no folder yet
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "anvil.log").write_text("block 1\nblock 2\n")  # left out
    (logs / "solver.log").write_text("a\nb\npartial")
    (logs / "notes.txt").write_text("not a log\n")
    assert tail.read() == ["a", "b"]
    assert tail.read() == []
    with (logs / "solver.log").open("a") as f:
        f.write(" line\nc\n")
    (logs / "verifier.log").write_text("v\n")
    assert tail.read() == ["partial line", "c", "v"]
    (logs / "verifier.log").write_text("")  # truncated (a restarted node): from its start
    assert tail.read() == []
    (logs / "verifier.log").write_text("w\n")
    assert tail.read() == ["w"]
