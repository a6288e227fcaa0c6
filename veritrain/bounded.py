"""Reading a body someone else sends, bounded in bytes and in time.

Spec URIs are the job poster's and checkpoint servers the solver's: either may send without
end, or drip a byte at a time with each read well within its timeout. `read_body` reads the
chunks of one body and stops at a byte limit or a time allowance, whichever comes first; the
callers (`veritrain.spec.read_uri`, `veritrain.wire.CheckpointClient`) say which in their own
error::

    with httpx.stream("GET", url, timeout=10) as resp:
        body = read_body(resp.iter_bytes(), 1 << 20, lambda size: 10.0)

A local file named by someone else (a spec's or a dataset's ``file://`` URI) gets the same
byte limit, and is refused unless it is a regular file (a FIFO or a device would block or
never end): `read_regular_file`.

Run: not a script.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable

__all__ = ["BodyTooLarge", "BodyTooSlow", "NotARegularFile", "read_body", "read_regular_file"]


class BodyTooLarge(Exception):
    """More than the limit arrived. Attributes: `size` (bytes received so far)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


class BodyTooSlow(Exception):
    """The body was still arriving when its allowance ran out. Attributes: `size` (bytes
    received so far), `allowed` (seconds it was given for them)."""

    def __init__(self, size: int, allowed: float) -> None:
        super().__init__(size, allowed)
        self.size, self.allowed = size, allowed


def read_body(chunks: Iterable[bytes], limit: int, allowance: Callable[[int], float]) -> bytes:
    """The chunks joined, at most `limit` bytes, each received in time.

    Args:
        chunks: the body's chunks as they arrive (e.g. ``httpx.Response.iter_bytes()``).
        limit: the most bytes the body may have.
        allowance: seconds allowed from the start for a body of that many bytes so far (a
            flat deadline, or one that grows with the bytes received: a minimum rate).

    Raises:
        BodyTooLarge: more than `limit` bytes arrived (the rest is not read).
        BodyTooSlow: a chunk arrived after the allowance for the bytes so far.
    """
    start = time.monotonic()
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(size)
        parts.append(chunk)
        allowed = allowance(size)
        if time.monotonic() - start > allowed:
            raise BodyTooSlow(size, allowed)
    return b"".join(parts)


class NotARegularFile(Exception):
    """The path names a FIFO, a device, a directory or anything but a regular file."""


def read_regular_file(path: str, limit: int) -> bytes:
    """A regular file's bytes, at most `limit`, opened without blocking on a FIFO.

    Raises:
        OSError: the file cannot be opened or read.
        NotARegularFile: the path is not a regular file (nothing is read).
        BodyTooLarge: the file has more than `limit` bytes (the rest is not read).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile(path)
        parts, size = [], 0
        while size <= limit:
            part = os.read(fd, limit + 1 - size)
            if not part:
                break
            parts.append(part)
            size += len(part)
    finally:
        os.close(fd)
    if size > limit:
        raise BodyTooLarge(size)
    return b"".join(parts)
