"""Content-addressed checkpoint store and node JSON state."""

from __future__ import annotations

import os

import pytest

from veritrain.errors import CheckpointHashMismatch, CheckpointNotFound
from veritrain.state import state_hash
from veritrain.store import CheckpointStore


def test_put_get_has(tmp_path):
    store = CheckpointStore(tmp_path / "ck")
    blob = b"VTCK\x01 some bytes"
    h = store.put(blob)
    assert h == state_hash(blob)
    assert store.has(h) and store.has("0x" + h.hex())
    assert store.get(h) == blob and store.get("0x" + h.hex()) == blob
    assert store.put(blob) == h  # idempotent
    assert [p.name for p in (tmp_path / "ck").iterdir()] == [h.hex() + ".ckpt"]


def test_missing_and_corrupt(tmp_path):
    store = CheckpointStore(tmp_path)
    with pytest.raises(CheckpointNotFound):
        store.get(b"\x01" * 32)
    h = store.put(b"payload")
    store.path(h).write_bytes(b"tampered")
    with pytest.raises(CheckpointHashMismatch) as err:
        store.get(h)
    assert err.value.expected == h and err.value.actual == state_hash(b"tampered")


def test_put_overwrites_a_corrupt_file(tmp_path):
    store = CheckpointStore(tmp_path)
    h = store.put(b"payload")
    store.path(h).write_bytes(b"payloae")  # one flipped bit
    assert store.put(b"payload") == h
    assert store.get(h) == b"payload"


def test_failed_write_leaves_nothing(tmp_path, monkeypatch):
    store = CheckpointStore(tmp_path)

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        store.put(b"data")
    assert list(tmp_path.iterdir()) == []


def test_a_short_write_is_continued_and_a_failed_one_leaves_nothing(tmp_path, monkeypatch):
    """`os.write` may write part of a buffer: the rest follows (a 1 MB checkpoint written 4 KB
    at a time is whole); a write that fails removes its temp file and keeps the old file."""
    store = CheckpointStore(tmp_path)
    blob = bytes(range(256)) * 4096
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data[:4096])))
    digest = store.put(memoryview(blob))
    assert store.get(digest) == blob
    assert oct(store.path(digest).stat().st_mode & 0o777) == oct(0o600)

    def full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError, match="No space left"):
        store.put(b"another checkpoint")
    assert [p.name for p in tmp_path.iterdir()] == [store.path(digest).name]


def test_a_stale_or_planted_temp_file_is_replaced_never_followed(tmp_path):
    """The temp file's name is fixed per process and thread: one left by a killed writer, or a
    link planted there, is removed and the file created afresh; what a link points at is never
    written."""
    import threading

    from veritrain.store import atomic_write_bytes

    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    target = tmp_path / "state.json"
    tmp = tmp_path / f".state.json.{os.getpid()}.{threading.get_ident()}.tmp"
    tmp.symlink_to(victim)
    atomic_write_bytes(target, b"new state")
    assert target.read_bytes() == b"new state" and not target.is_symlink()
    assert victim.read_bytes() == b"keep me"
    assert not tmp.exists() and not tmp.is_symlink()
    tmp.write_bytes(b"stale")  # a killed writer's leftover
    atomic_write_bytes(target, b"newer state")
    assert target.read_bytes() == b"newer state" and not tmp.exists()


def test_deferred_puts_are_made_durable_by_one_sync(tmp_path, monkeypatch):
    store = CheckpointStore(tmp_path)
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    store.put(b"durable")
    assert len(synced) == 2  # the file, then the directory (its rename)
    synced.clear()
    hashes = [store.put(b"one", durable=False), store.put(b"two", durable=False)]
    assert synced == []  # nothing on the training path
    store.sync(hashes)
    assert len(synced) == 3  # each file once, then the directory
    with pytest.raises(CheckpointNotFound):
        store.sync([b"\x07" * 32])


def test_sync_skips_what_this_store_already_made_durable(tmp_path, monkeypatch):
    store = CheckpointStore(tmp_path)
    durable = [store.put(b"a"), store.put(b"b")]  # each fsynced as it was written
    deferred = store.put(b"c", durable=False)
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    store.sync([*durable, deferred])
    assert len(synced) == 2  # only the deferred file, then the directory
    synced.clear()
    store.sync([*durable, deferred])
    assert len(synced) == 1  # all durable now: the directory alone
    # a file from before a restart (another store object) is not known durable
    synced.clear()
    CheckpointStore(tmp_path).sync(durable)
    assert len(synced) == 3
    # a durable file that is gone is still an error, never skipped
    store.path(durable[0]).unlink()
    with pytest.raises(CheckpointNotFound):
        store.sync(durable)
    # rewritten without fsync (a repaired file): it needs its sync again
    store.path(durable[1]).write_bytes(b"corrupt")
    store.put(b"b", durable=False)
    synced.clear()
    store.sync([durable[1]])
    assert len(synced) == 2
