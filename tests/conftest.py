"""Fixtures shared by every test suite."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _node_log_handlers_removed() -> Iterator[None]:
    """Remove the stream handlers a test's command installed on the root logger: one that calls
    `noderuntime.logs.setup_logging` writes to the stream pytest captured for that test, which
    is closed afterwards, so later tests' log lines would fail on it. pytest's own capture
    handlers are left to pytest."""
    root = logging.getLogger()
    before, level = set(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        if handler not in before and type(handler) is logging.StreamHandler:
            root.removeHandler(handler)
    root.setLevel(level)
