"""The checkpoint server belongs to the solver, which may be hostile: a verifier's or
whistleblower's reads from it are bounded in bytes and in time, so a server that never stops
sending, or sends a byte now and then, costs the reader a refusal (`CheckpointUnavailable`, a
withheld checkpoint: the solver's loss), never its memory or the deadlines of its other jobs."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.utils.hostile_http import hostile_server
from veritrain.errors import CheckpointUnavailable
from veritrain.wire import MAX_JSON_BYTES, CheckpointClient


@pytest.fixture
def hostile() -> Iterator[str]:
    with hostile_server() as url:
        yield url


def test_an_endless_checkpoint_is_cut_at_the_readers_cap(hostile: str) -> None:
    with CheckpointClient(hostile + "/jobs/1", max_bytes=4 << 20) as solver:
        with pytest.raises(CheckpointUnavailable, match="more than 4,194,304 bytes"):
            solver.checkpoint(0, b"\x00" * 32)


def test_an_endless_json_answer_is_cut_at_its_cap(hostile: str) -> None:
    with CheckpointClient(hostile + "/jobs/1") as solver:
        with pytest.raises(CheckpointUnavailable, match=f"more than {MAX_JSON_BYTES:,} bytes"):
            solver.proof(0)


def test_a_dripped_answer_is_cut_at_the_timeout(hostile: str) -> None:
    """Each byte arrives well within the read timeout; the body as a whole does not: it used
    to hold the reader for as long as the server kept dripping."""
    start = time.monotonic()
    with CheckpointClient(hostile + "/drip/jobs/2", timeout=1.0) as solver:
        with pytest.raises(CheckpointUnavailable, match="too slowly"):
            solver.checkpoint(0, b"\x00" * 32)
    assert time.monotonic() - start < 5.0
