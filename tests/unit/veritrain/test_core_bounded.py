"""`veritrain.bounded.read_body`: the one rule both spec-URI and checkpoint reads bound by."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from veritrain.bounded import BodyTooLarge, BodyTooSlow, read_body


def _chunks(n: int, size: int, pause: float = 0.0) -> Iterator[bytes]:
    for _ in range(n):
        time.sleep(pause)
        yield b"x" * size


def test_a_body_at_the_limit_is_read_whole_and_one_byte_more_is_not() -> None:
    assert read_body(_chunks(4, 256), 1024, lambda _n: 60.0) == b"x" * 1024
    with pytest.raises(BodyTooLarge) as info:
        read_body(_chunks(5, 256), 1024, lambda _n: 60.0)
    assert info.value.size == 1280


def test_a_body_past_its_allowance_is_cut_and_the_allowance_may_grow_with_it() -> None:
    with pytest.raises(BodyTooSlow) as info:
        read_body(_chunks(10, 1, pause=0.05), 1024, lambda _n: 0.2)
    assert info.value.size < 10 and info.value.allowed == 0.2
    # one more 0.1 s allowed per byte: the same drip is in time
    assert read_body(_chunks(10, 1, pause=0.05), 1024, lambda n: 0.2 + 0.1 * n) == b"x" * 10
