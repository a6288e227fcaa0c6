"""Atomic JSON persistence of a node's progress, so a killed node resumes where it stopped.

Every change rewrites the whole file through a temporary file + fsync + rename
(`veritrain.store.atomic_write_bytes`), so the file on disk is always a complete JSON object.
A re-entrant lock serialises access from the node's threads.

Run: not a script; `state = JsonState(data_dir / "state.json", default={"cursor": 0})`.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from veritrain.errors import NodeStateError
from veritrain.store import atomic_write_bytes

__all__ = ["JsonState"]


class JsonState:
    """A JSON object persisted atomically on every change.

    Args:
        path: the JSON file (its directory is created if missing).
        default: initial content when the file does not exist yet (not written until the
            first change or `save()`).

    Raises:
        NodeStateError: the existing file is not valid JSON or not a JSON object.
    """

    def __init__(self, path: str | Path, default: Mapping[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        if self.path.exists():
            try:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise NodeStateError(f"cannot read node state {self.path}: {exc}") from exc
            if not isinstance(loaded, dict):
                raise NodeStateError(f"node state {self.path} is not a JSON object")
            self._data: dict[str, Any] = loaded
        else:
            self._data = copy.deepcopy(dict(default or {}))

    def snapshot(self) -> dict[str, Any]:
        """A deep copy of the current content."""
        with self._lock:
            return copy.deepcopy(self._data)

    def get(self, key: str, default: Any = None) -> Any:
        """Value of `key` (a deep copy), or `default`."""
        with self._lock:
            return copy.deepcopy(self._data.get(key, default))

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data

    def set(self, key: str, value: Any) -> None:
        """Set one key and persist. `value` must be JSON-serialisable."""
        with self.transaction() as data:
            data[key] = value

    def update(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> None:
        """Set several keys in one atomic write."""
        with self.transaction() as data:
            data.update(values or {})
            data.update(kwargs)

    def delete(self, key: str) -> None:
        """Remove a key (no error if absent) and persist."""
        with self.transaction() as data:
            data.pop(key, None)

    @contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        """Mutate the content under the lock; persisted once when the block exits cleanly.

        If the block raises, or the new content is not JSON-serialisable, nothing is written
        and the in-memory content is rolled back.
        """
        with self._lock:
            working = copy.deepcopy(self._data)
            yield working
            self._write(working)
            self._data = working

    def save(self) -> None:
        """Write the current content (e.g. to materialise the default)."""
        with self._lock:
            self._write(self._data)

    def _write(self, data: dict[str, Any]) -> None:
        try:
            text = json.dumps(data, sort_keys=True, indent=2)
        except (TypeError, ValueError) as exc:
            raise NodeStateError(f"node state is not JSON-serialisable: {exc}") from exc
        atomic_write_bytes(self.path, text.encode("utf-8"))
