"""Node runtime: the floor between the chain bindings and the three roles.

What every node does the same way: the polling loop with back-off, the duties anyone may
perform (finalize, draw a committee, resolve, claim credit), the bisection game play, and the
shared CLI options (`noderuntime.options`).

Run: not a script; ``from noderuntime import NodeBase``.
"""

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
