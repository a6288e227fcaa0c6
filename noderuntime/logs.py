"""Log output and progress bars of a node process.

- `setup_logging`: plain or JSON-lines log output on stderr.
- `JsonLogFormatter`: one JSON object per record (`ts`, `level`, `logger`, `msg`).
- `progress_bar`: a Rich progress bar that is disabled when stderr is not a terminal.

Run: not a script; ``setup_logging(json_logs=True)``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["JsonLogFormatter", "progress_bar", "setup_logging"]


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


@contextlib.contextmanager
def progress_bar(
    description: str, total: int, *, enabled: bool | None = None
) -> Iterator[Callable[[int], None]]:
    """A Rich progress bar over `total` steps; disabled when stderr is not a TTY.

    Args:
        description: label shown left of the bar.
        total: number of steps.
        enabled: force on/off; None means "only on a terminal".

    Yields:
        `advance(n)`: call it with the number of steps just done.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    show = sys.stderr.isatty() if enabled is None else enabled
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
