"""Log output and progress bars of a node process.

- `setup_logging`: plain or JSON-lines log output on stderr.
- `JsonLogFormatter`: one JSON object per record (`ts`, `level`, `logger`, `msg`).
- `progress_bar`: a Rich progress bar on a terminal, periodic progress log lines elsewhere.

Run: not a script; ``setup_logging(json_logs=True)``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["PROGRESS_LOG_SECONDS", "JsonLogFormatter", "progress_bar", "setup_logging"]


class JsonLogFormatter(logging.Formatter):
    """Formats each record as one JSON object per line (`ts`, `level`, `logger`, `msg`)."""

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str)


def setup_logging(*, json_logs: bool = False, level: int | str = logging.INFO) -> None:
    """Configure the root logger for a node process.

    Args:
        json_logs: emit JSON lines instead of the human-readable format.
        level: logging level (name or number).
    """
    handler = logging.StreamHandler(sys.stderr)
    if json_logs:
        handler.setFormatter(JsonLogFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")
        )
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for noisy in ("urllib3", "httpx", "httpcore", "web3", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


PROGRESS_LOG_SECONDS = 30.0
"""Without a terminal, `progress_bar` logs a progress line at most this often (seconds)."""

progress_logger = logging.getLogger("veritrain.progress")


@contextlib.contextmanager
def progress_bar(
    description: str, total: int, *, enabled: bool | None = None
) -> Iterator[Callable[[int], None]]:
    """A Rich progress bar over `total` steps on a terminal; elsewhere (a service, a pipe, a
    log file) an INFO line ``<description>: 120/300 steps (40%), 0.52 s/step, about 94 s
    left`` at most every `PROGRESS_LOG_SECONDS`, so that long work is never silent.

    Args:
        description: label shown left of the bar.
        total: number of steps.
        enabled: force the bar on/off; None means "only on a terminal".

    Yields:
        `advance(n)`: call it with the number of steps just done.
    """
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    show = sys.stderr.isatty() if enabled is None else enabled
    if not show:
        started = last = time.monotonic()
        done = 0

        def log_advance(n: int = 1) -> None:
            nonlocal done, last
            done += n
            now = time.monotonic()
            if now - last < PROGRESS_LOG_SECONDS or done >= total:
                return
            last = now
            per_step = (now - started) / max(done, 1)
            progress_logger.info(
                "%s: %d/%d steps (%d%%), %.2f s/step, about %.0f s left",
                description,
                done,
                total,
                100 * done // max(total, 1),
                per_step,
                per_step * (total - done),
            )

        yield log_advance
        return
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        disable=not show,
        transient=True,
    )
    with progress:
        task = progress.add_task(description, total=total)

        def advance(n: int = 1) -> None:
            progress.advance(task, n)

        yield advance
