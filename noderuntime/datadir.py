"""`DataDirLock`: one running node per data dir.

Two nodes sharing a data dir would overwrite each other's state file and race the same
transactions. A node holds an exclusive `fcntl.flock` on ``<data_dir>/node.lock`` while it runs;
the lock file records the holder's pid for the error message. The operating system drops the
lock when the process dies, so a killed node never leaves a stale lock behind.

Run: not a script; ``with DataDirLock(data_dir): node loop``.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from veritrain.errors import DataDirBusy

__all__ = ["DataDirLock"]

LOCK_NAME = "node.lock"


class DataDirLock:
    """An exclusive, non-blocking lock of a node's data dir, held inside a ``with`` block.

    Args:
        data_dir: the node's data dir (created if missing).

    Raises:
        DataDirBusy: on entering, when another process, or another node of this process, holds
            the lock.
    """

    def __init__(self, data_dir: str | Path) -> None:
        self.path = Path(data_dir) / LOCK_NAME
        self._fd: int | None = None

    def __enter__(self) -> DataDirLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise DataDirBusy(
                f"data dir {self.path.parent} is in use by another node (pid {holder}): "
                "stop it first or use another --data-dir"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        self._fd = fd
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the lock (idempotent)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
