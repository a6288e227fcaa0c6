"""Content-addressed checkpoint store on plain files (PROTOCOL.md 2.2).

A checkpoint lives at `<root_dir>/<64 hex digits of the state hash>.ckpt`. Writes go to a
temporary file in the same directory, are fsynced (unless the caller defers that to one `sync`,
which skips what this store already made durable)
and then `os.replace`d into place, so a reader (or a node restarted after a kill) sees either
the whole file or none. Reads re-hash the bytes and
reject anything that does not match its name; `put` rewrites a file whose bytes no longer
match its name (a flipped bit on disk), so a node can repair its store by recomputing the
checkpoint.

Run: not a script; `CheckpointStore("data/solver/checkpoints").put(blob)`.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from veritrain.errors import CheckpointHashMismatch, CheckpointNotFound
from veritrain.hexutil import as_bytes32
from veritrain.state import state_hash

__all__ = ["CheckpointStore", "atomic_write_bytes"]


def atomic_write_bytes(
    path: str | Path, data: bytes | bytearray | memoryview, *, durable: bool = True
) -> None:
    """Write `data` to `path` atomically (temp file in the same directory, fsync, rename).

    Plain `os` calls, no buffered file object: the solver's checkpoint writer runs this on a
    thread next to a Python-bound training loop, and every line of Python here takes the GIL
    from it. The temp file is named after the process and thread (one writer each), created
    afresh (O_EXCL, never through a link: a stale or planted one is removed first) with mode
    0600, and removed again if anything fails.

    Args:
        path: destination file; its directory must exist.
        data: bytes to write.
        durable: fsync the file and its directory (False: the rename is still atomic for
            other processes, but a power cut may leave an empty or partial file).

    Raises:
        OSError: the directory is missing or not writable, the disk is full...
    """
    target = os.fspath(path)
    directory = os.path.dirname(target) or "."
    tmp = os.path.join(
        directory, f".{os.path.basename(target)}.{os.getpid()}.{threading.get_ident()}.tmp"
    )
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(tmp, flags, 0o600)
    except FileExistsError:  # left by a killed writer with this pid and thread id (or planted)
        os.unlink(tmp)  # a planted link goes, never what it points at
        fd = os.open(tmp, flags, 0o600)
    try:
        try:
            view = memoryview(data).cast("B")
            while view:  # a write may be partial
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(Path(directory))


def _fsync_dir(directory: Path) -> None:
    """Persist renames in `directory` (best effort: not every filesystem allows it)."""
    with contextlib.suppress(OSError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


class CheckpointStore:
    """Checkpoints keyed by their state hash (BLAKE3, `veritrain.state.state_hash`).

    Args:
        root_dir: directory for the files (created if missing).
    """

    def __init__(self, root_dir: str | Path) -> None:
        self.root_dir = Path(root_dir)
        self.root_dir.mkdir(parents=True, exist_ok=True)
        # digests whose files this object wrote with an fsync (or synced): `sync` skips them
        self._durable: set[bytes] = set()

    def path(self, state_hash_: bytes | str) -> Path:
        """File path of the checkpoint with this hash (bytes or 0x-hex)."""
        return self.root_dir / f"{as_bytes32(state_hash_).hex()}.ckpt"

    def put(self, blob: bytes | bytearray | memoryview, *, durable: bool = True) -> bytes:
        """Store checkpoint bytes under their state hash (idempotent).

        A file already there is kept when it re-hashes to its name and atomically replaced
        when it does not (corruption on disk), so putting the recomputed bytes repairs it.

        Args:
            blob: checkpoint bytes.
            durable: fsync the file and the directory before returning (the solver's
                checkpoint writer does, off the training thread); False defers that to one
                `sync` before the caller commits to the checkpoint (one lost in between is
                recomputed by replay, `solver.trainer.restore_checkpoint`).

        Returns:
            The 32-byte state hash.

        Raises:
            OSError: the file cannot be written (disk full, permissions...).
        """
        digest = state_hash(blob)
        target = self.path(digest)
        if not self._intact(target, digest):
            atomic_write_bytes(target, blob, durable=durable)
            if durable:
                self._durable.add(digest)
            else:
                self._durable.discard(digest)
        return digest

    def sync(self, digests: Iterable[bytes | str]) -> None:
        """fsync the files of these checkpoints, then the directory (their renames).

        Files this object already wrote durably (`put(durable=True)`) or synced are skipped:
        what is left are files from before a restart, or written with `durable=False`.

        Raises:
            CheckpointNotFound: a file is missing.
        """
        synced: list[bytes] = []
        for digest in map(as_bytes32, digests):
            target = self.path(digest)
            if digest in self._durable and target.is_file():
                continue
            try:
                fd = os.open(target, os.O_RDONLY)
            except FileNotFoundError as exc:
                raise CheckpointNotFound(f"no checkpoint {target.name} in {self.root_dir}") from exc
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            synced.append(digest)
        _fsync_dir(self.root_dir)
        self._durable.update(synced)

    @staticmethod
    def _intact(target: Path, digest: bytes) -> bool:
        """Whether `target` exists and its bytes hash to `digest`."""
        try:
            return state_hash(target.read_bytes()) == digest
        except FileNotFoundError:
            return False

    def has(self, state_hash_: bytes | str) -> bool:
        """Whether a file for this hash exists (content not re-checked)."""
        return self.path(state_hash_).is_file()

    def get(self, state_hash_: bytes | str) -> bytes:
        """Read a checkpoint and re-hash it.

        Args:
            state_hash_: 32-byte hash or 0x-hex string.

        Returns:
            The checkpoint bytes.

        Raises:
            CheckpointNotFound: no file for this hash.
            CheckpointHashMismatch: the file's bytes do not hash to its name (corruption).
        """
        expected = as_bytes32(state_hash_)
        target = self.path(expected)
        try:
            blob = target.read_bytes()
        except FileNotFoundError as exc:
            raise CheckpointNotFound(
                f"no checkpoint 0x{expected.hex()} in {self.root_dir}"
            ) from exc
        actual = state_hash(blob)
        if actual != expected:
            raise CheckpointHashMismatch(expected, actual, str(target))
        return blob

    def delete(self, state_hash_: bytes | str) -> None:
        """Remove a checkpoint file if present."""
        self._durable.discard(as_bytes32(state_hash_))
        with contextlib.suppress(FileNotFoundError):
            self.path(state_hash_).unlink()
