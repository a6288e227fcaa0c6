"""Consoles and table columns for the CLI's reports: an address is never cut.

Rich fits a table to the terminal, and to 80 columns when stdout is not a terminal (a pipe, a
file, CI), cutting long cells with an ellipsis: a 42-character address lost its tail, which hid
the answer to "who owns this model?". `report_console` gives piped output room for full
addresses, and `address_column` folds an address onto a second line in a narrow terminal
instead of cutting it.

Run: not a script; ``console = report_console(); table.add_column(**address_column("solver"))``.
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console

__all__ = ["PIPE_WIDTH", "address_column", "report_console"]

PIPE_WIDTH = 200
"""Columns of a report written to a pipe or a file (a terminal uses its own width)."""


def report_console(**kwargs: Any) -> Console:
    """A `rich.console.Console` for a report: the terminal's width on a terminal, `PIPE_WIDTH`
    columns otherwise (unless ``COLUMNS`` is set). Keyword arguments go to `Console`."""
    import os

    if "width" not in kwargs and not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        kwargs["width"] = PIPE_WIDTH
    return Console(**kwargs)


def address_column(header: str) -> dict[str, Any]:
    """Keyword arguments of `rich.table.Table.add_column` for a column of 0x addresses: never
    cut with an ellipsis (folded instead when the terminal is too narrow)."""
    return {"header": header, "overflow": "fold", "min_width": 42}
