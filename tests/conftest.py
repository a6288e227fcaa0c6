"""Fixtures shared by every test suite."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.utils.postgres import PostgresServer


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


@pytest.fixture(autouse=True, scope="session")
def _selftest_cache_per_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Nodes started by the tests (threads and child processes alike) share one selftest cache
    for the session (`veritrain.selftest.shared_cache_dir`), never the checkout's."""
    from veritrain.selftest import SHARED_CACHE_ENV

    before = os.environ.get(SHARED_CACHE_ENV)
    os.environ[SHARED_CACHE_ENV] = str(tmp_path_factory.mktemp("selftest-cache"))
    yield
    if before is None:
        os.environ.pop(SHARED_CACHE_ENV, None)
    else:
        os.environ[SHARED_CACHE_ENV] = before


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL server for the session (`tests.utils.postgres`); tests call its
    ``new_database()`` for a fresh ``postgresql+psycopg://`` URL. Without the server binaries
    or psycopg the tests SKIP, except under CI (``CI`` set, not ``0``/``false``), where they
    FAIL: CI must really test PostgreSQL."""
    from tests.utils.postgres import missing_postgres, throwaway_postgres

    reason = missing_postgres()
    if reason is not None:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false"):
            pytest.fail(f"CI is set but PostgreSQL cannot run: {reason}", pytrace=False)
        pytest.skip(f"PostgreSQL unavailable: {reason}")
    with throwaway_postgres() as server:
        yield server
