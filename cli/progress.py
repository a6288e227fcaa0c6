"""Wait on progress, not a clock: the demos fail only when nothing progressed for a while.

`StallWatch` takes observations (the chain's state as the live view reads it, the new lines of
the nodes' logs) with the time they were made, and says how long nothing new was seen; a demo
raises `TimeoutError` (`StallWatch.check`) only when that exceeds its stall timeout, so a slow
but healthy run (a loaded machine, a long replay) never fails for being slow, and a stuck one
still fails. A log line counts as progress only when its message (the line without its leading
time stamp) was never seen before: a node retrying the same failure at its maximal back-off
writes the same line again and again, which is no progress.

`LogTail` reads the lines appended to the nodes' log files since its last read (the chain
node's own log, which grows with every block, is left out).

Run: not a script; `from cli.progress import LogTail, StallWatch` (`cli.demo`, `cli.demo_run`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["LogTail", "StallWatch"]


def _message(line: str) -> str:
    """`line` without its leading time stamp (``HH:MM:SS LEVEL name: message`` ->
    ``LEVEL name: message``) and surrounding blanks."""
    head, _, rest = line.strip().partition(" ")
    if head.count(":") == 2 and head.replace(":", "").isdigit():
        return rest.strip()
    return line.strip()


class StallWatch:
    """How long nothing progressed, from timed observations.

    Args:
        stall_s: seconds without progress after which `check` raises (> 0).
        clock: the time in seconds (monotonic; injectable for tests), read at construction
            (the watch starts as if progress was just seen) and at each observation.

    Raises:
        ValueError: `stall_s` is not a positive number.
    """

    def __init__(self, stall_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        if not stall_s > 0:
            raise ValueError(f"stall timeout must be > 0 seconds, got {stall_s}")
        self.stall_s = float(stall_s)
        self._clock = clock
        self._last_progress = clock()
        self._values: dict[str, object] = {}
        self._lines: set[str] = set()

    def _progressed(self) -> bool:
        self._last_progress = self._clock()
        return True

    def observe(self, key: str, value: object) -> bool:
        """Record `value` (compared by ``==``) as what `key` (e.g. ``"chain"``) shows now.

        Returns:
            True (progress, the stall clock restarts) when it differs from the last value of
            `key`, or `key` is new.
        """
        if key in self._values and self._values[key] == value:
            return False
        self._values[key] = value
        return self._progressed()

    def observe_lines(self, lines: Iterable[str]) -> bool:
        """Record log lines read now.

        Returns:
            True (progress) when one of their messages (without the time stamp, blank lines
            ignored) was never seen before.
        """
        new = False
        for line in lines:
            message = _message(line)
            if message and message not in self._lines:
                self._lines.add(message)
                new = True
        return self._progressed() if new else False

    @property
    def idle_s(self) -> float:
        """Seconds since the last progress (or since the watch started)."""
        return self._clock() - self._last_progress

    def check(self, what: str) -> None:
        """Raise when nothing progressed for more than `stall_s` seconds.

        Raises:
            TimeoutError: ``<what>: nothing progressed for N s (--timeout T); see logs``.
        """
        idle = self.idle_s
        if idle > self.stall_s:
            raise TimeoutError(
                f"{what}: nothing progressed for {idle:.0f} s (--timeout {self.stall_s:.0f}); "
                "see logs"
            )


class LogTail:
    """The lines appended to the ``*.log`` files of a directory since the last `read`.

    Args:
        directory: the logs' folder (it and its files may appear later).
        skip: file names left out (default: ``anvil.log``, which grows with every block).
    """

    def __init__(self, directory: Path, skip: Iterable[str] = ("anvil.log",)) -> None:
        self.directory = Path(directory)
        self.skip = frozenset(skip)
        self._offsets: dict[Path, int] = {}

    def read(self) -> list[str]:
        """The complete lines written since the last call (a partial last line waits for its
        end); a file that shrank (rewritten) is read again from its start."""
        lines: list[str] = []
        try:
            paths = sorted(self.directory.glob("*.log"))
        except OSError:
            return lines
        for path in paths:
            if path.name in self.skip:
                continue
            offset = self._offsets.get(path, 0)
            try:
                size = path.stat().st_size
                if size < offset:
                    offset = self._offsets[path] = 0
                if size == offset:
                    continue
                with path.open("rb") as f:
                    f.seek(offset)
                    chunk = f.read(size - offset)
            except OSError:
                continue
            end = chunk.rfind(b"\n") + 1
            self._offsets[path] = offset + end
            lines.extend(chunk[:end].decode("utf-8", errors="replace").splitlines())
        return lines
