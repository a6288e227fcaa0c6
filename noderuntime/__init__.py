"""Node runtime: the floor between the chain bindings and the three roles.

What every node does the same way: the polling loop with back-off, the duties anyone may
perform (finalize, draw a committee, resolve, claim credit), the bisection game play, and the
shared CLI options (`noderuntime.options`).

The names below load on first use (PEP 562), so that the CLI's option declarations
(`noderuntime.options`) import without web3 and ``veritrain --help`` stays fast.

Run: not a script; ``from noderuntime import NodeBase``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from noderuntime.lifecycle import run_until_signalled, sleep_until
    from noderuntime.logs import JsonLogFormatter, progress_bar, setup_logging
    from noderuntime.node import TERMINAL_JOB_STATUSES, UNUSABLE_DATA, NodeBase

__all__ = [
    "TERMINAL_JOB_STATUSES",
    "UNUSABLE_DATA",
    "JsonLogFormatter",
    "NodeBase",
    "progress_bar",
    "run_until_signalled",
    "setup_logging",
    "sleep_until",
]

_HOMES = {
    "run_until_signalled": "noderuntime.lifecycle",
    "sleep_until": "noderuntime.lifecycle",
    "JsonLogFormatter": "noderuntime.logs",
    "progress_bar": "noderuntime.logs",
    "setup_logging": "noderuntime.logs",
    "TERMINAL_JOB_STATUSES": "noderuntime.node",
    "UNUSABLE_DATA": "noderuntime.node",
    "NodeBase": "noderuntime.node",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'noderuntime' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
