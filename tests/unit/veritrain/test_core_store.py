"""Content-addressed checkpoint store and node JSON state."""

from __future__ import annotations

import json
import os

import pytest

from veritrain.errors import CheckpointHashMismatch, CheckpointNotFound, NodeStateError
from veritrain.nodestate import JsonState
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


def test_failed_write_leaves_nothing(tmp_path, monkeypatch):
    store = CheckpointStore(tmp_path)

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        store.put(b"data")
    assert list(tmp_path.iterdir()) == []


def test_json_state_persists_and_resumes(tmp_path):
    path = tmp_path / "node" / "state.json"
    st = JsonState(path, default={"cursor": 0, "jobs": {}})
    assert not path.exists() and st.get("cursor") == 0
    st.set("cursor", 5)
    with st.transaction() as data:
        data["jobs"]["1"] = {"phase": "trained"}
    st.update({"a": 1}, b=2)
    again = JsonState(path, default={"cursor": 0})
    assert again.snapshot() == {"cursor": 5, "jobs": {"1": {"phase": "trained"}}, "a": 1, "b": 2}
    assert json.loads(path.read_text())["cursor"] == 5
    again.delete("a")
    assert "a" not in JsonState(path)


def test_json_state_rollback(tmp_path):
    st = JsonState(tmp_path / "s.json", default={"x": 1})
    with pytest.raises(RuntimeError), st.transaction() as data:
        data["x"] = 2
        raise RuntimeError
    assert st.get("x") == 1 and not (tmp_path / "s.json").exists()
    with pytest.raises(NodeStateError):
        st.set("bad", object())
    assert st.get("bad") is None
    st.get("x")
    assert list(tmp_path.iterdir()) == []


def test_json_state_corrupt_file(tmp_path):
    p = tmp_path / "s.json"
    p.write_text("[1, 2]")
    with pytest.raises(NodeStateError):
        JsonState(p)
    p.write_text("{not json")
    with pytest.raises(NodeStateError):
        JsonState(p)
