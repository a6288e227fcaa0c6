"""`ChunkStore`: the chunks of a tokens dataset, fetched by index and checked against its root.

A spec binds a tokens dataset (`veritrain.tokens`) by its 32-byte root and names where to fetch
it: one or more base URIs, `file://DIR` or `http(s)://HOST/PATH`, each holding
`<uri>/manifest.json` and `<uri>/chunks/<chunk_name(i)>` (what `veritrain data prepare` writes
and `noderuntime.serving.mount_datasets` serves), or `corpus:NAME`, a pinned public corpus
(`veritrain.corpora`) that this machine prepares from its own sha256-checked archives into the
data directory on first use and then reads like a `file://` URI (a machine whose build gave other
bytes is refused by the root like any other source). The store

- fetches the manifest from the first URI that gives one whose header hashes to the root (so the
  root alone decides the tokenizer, vocabulary, shape and every chunk's leaf);
- fetches a chunk only when asked for it, from the URIs in order: a body that is too large, too
  slow, unreachable or fails its Merkle proof (`veritrain.tokens.verify_chunk`) is skipped and
  the next URI tried;
- caches verified chunks in a local directory named by their leaf hash, and re-checks the hash
  when it reads one back (a corrupt cached file is deleted and fetched again);
- bounds every body: the manifest to `MAX_MANIFEST_BYTES`, a chunk to its exact size; each must
  arrive within `timeout` seconds plus one second per `MIN_RATE` bytes (`veritrain.bounded`).

`fetched` counts chunk bodies taken from a URI (cache hits not counted), so a test can check
that replaying a segment fetched only the chunks that segment reads.

Run: not a script; `ChunkStore(root, ["file:///data/ds"], cache_dir).tokens(3)`.
"""

from __future__ import annotations

import logging
import os
import urllib.parse
import urllib.request
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from veritrain.bounded import (
    BodyTooLarge,
    BodyTooSlow,
    NotARegularFile,
    read_body,
    read_regular_file,
)
from veritrain.errors import DatasetError, DatasetRootMismatch
from veritrain.tokens import (
    CHUNKS_DIR,
    MANIFEST_NAME,
    Manifest,
    chunk_leaf,
    chunk_name,
    chunk_tokens_of,
    verify_chunk,
)

logger = logging.getLogger(__name__)

__all__ = [
    "cached_chunk_path",
    "cached_manifest_path",
    "CACHE_ENV",
    "MAX_MANIFEST_BYTES",
    "MIN_RATE",
    "ChunkStore",
    "chunk_cache_dir",
    "read_bounded",
]

CACHE_ENV = "VERITRAIN_CHUNK_CACHE"

MAX_MANIFEST_BYTES = 64 << 20
"""The most bytes a manifest may have (about 900,000 chunks' leaves)."""
MIN_RATE = 1 << 20
"""Bytes per second a body must arrive at, beyond the flat `timeout` allowance."""
MEMORY_BYTES = 512 << 20
"""Verified chunks kept in memory, in bytes (least recently used dropped first)."""


def cached_manifest_path(cache_dir: str | Path, root_hex: str) -> Path:
    """Where a store caches the manifest of dataset `root_hex` (`0x` + 64 hex digits)."""
    return Path(cache_dir) / f"manifest-{root_hex.removeprefix('0x')}.json"


def cached_chunk_path(cache_dir: str | Path, leaf_hex: str) -> Path:
    """Where a store caches the verified chunk with leaf `leaf_hex` (`0x` + 64 hex digits)."""
    return Path(cache_dir) / f"{leaf_hex.removeprefix('0x')}.bin"


def chunk_cache_dir() -> Path:
    """Where verified chunks are cached: `$VERITRAIN_CHUNK_CACHE`, else `<data dir>/chunks`
    (`veritrain.text.data_dir`: `$VERITRAIN_DATA_DIR`, else `<repo>/cache/data`)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    from veritrain.text import data_dir

    return data_dir() / "chunks"


def read_bounded(uri: str, limit: int, timeout: float) -> bytes:
    """The bytes at a `file://` or `http(s)://` URI: at most `limit`, in time.

    Args:
        uri: the URI of one file.
        limit: the most bytes accepted.
        timeout: seconds for connecting plus a flat allowance for the body; a body gets one
            more second per `MIN_RATE` bytes.

    Raises:
        DatasetError: the URI cannot be read, names something that is not a regular file, is
            larger than `limit`, arrives too slowly, or has an unsupported scheme.
    """
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme == "file":
        return _read_file(urllib.request.url2pathname(parsed.path), limit)
    if parsed.scheme in ("http", "https"):
        import httpx

        try:
            with httpx.stream("GET", uri, timeout=timeout, follow_redirects=True) as resp:
                resp.raise_for_status()
                return read_body(resp.iter_bytes(), limit, lambda n: timeout + n / MIN_RATE)
        except BodyTooLarge:
            raise DatasetError(f"{uri} sent more than {limit:,} bytes") from None
        except BodyTooSlow as exc:
            raise DatasetError(f"{uri} was still sending after {exc.allowed:.1f} s") from None
        except httpx.HTTPError as exc:
            raise DatasetError(f"cannot fetch {uri}: {exc}") from exc
    raise DatasetError(f"unsupported data URI scheme {parsed.scheme!r} in {uri[:60]!r}")


def _read_file(path: str, limit: int) -> bytes:
    """A regular file's bytes, at most `limit` (`veritrain.bounded.read_regular_file`)."""
    try:
        return read_regular_file(path, limit)
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except NotARegularFile:
        raise DatasetError(f"{path} is not a regular file") from None
    except BodyTooLarge:
        raise DatasetError(f"{path} is larger than {limit:,} bytes") from None


class ChunkStore:
    """The verified chunks of the tokens dataset with root `root` (module docstring).

    Args:
        root: the dataset root, 32 bytes or `0x` + 64 hex digits (a spec's `dataset.root`).
        uris: base URIs, tried in order (`file://DIR`, `http(s)://HOST/PATH`, no trailing
            slash needed, or `corpus:NAME`, prepared under `veritrain.text.data_dir()`).
        cache_dir: local directory for verified chunks and the manifest (created on use).
        timeout: seconds per fetch (connect plus the flat part of the body's allowance).
        memory_bytes: verified chunks kept in memory (their file bytes; at least one chunk).

    Attributes:
        fetched: chunk bodies taken from a URI and accepted (cache hits not counted).
        rejected: chunk bodies a URI gave that failed their check.

    Raises:
        DatasetError: no URIs, or a root that is not 32 bytes.
    """

    def __init__(
        self,
        root: bytes | str,
        uris: Sequence[str],
        cache_dir: str | Path,
        *,
        timeout: float = 30.0,
        memory_bytes: int = MEMORY_BYTES,
    ) -> None:
        raw = bytes.fromhex(root[2:]) if isinstance(root, str) else bytes(root)
        if len(raw) != 32:
            raise DatasetError("a dataset root is 32 bytes")
        if not uris:
            raise DatasetError("a tokens dataset needs at least one URI")
        self.root = raw
        self.uris = tuple(u.rstrip("/") for u in uris)
        self.cache_dir = Path(cache_dir)
        self.timeout = timeout
        self.fetched = 0
        self.rejected = 0
        self._manifest: Manifest | None = None
        self.memory_bytes = memory_bytes
        self._memory: OrderedDict[int, np.ndarray] = OrderedDict()
        self._memory_used = 0
        self._corpus_dirs: dict[str, str] = {}

    def _source(self, base: str) -> str:
        """The fetchable base URI of `base`: itself, or for `corpus:NAME` the `file://` URI of
        the corpus prepared on this machine (built on first use, `prepared_corpus`).

        Raises:
            DatasetError: the corpus cannot be prepared here (e.g. its archives are missing).
        """
        from veritrain.corpora import corpus_name_of, prepared_corpus

        name = corpus_name_of(base)
        if name is None:
            return base
        if base not in self._corpus_dirs:
            self._corpus_dirs[base] = prepared_corpus(name).resolve().as_uri()
        return self._corpus_dirs[base]

    # --- manifest --------------------------------------------------------------------------
    def _manifest_cache(self) -> Path:
        return cached_manifest_path(self.cache_dir, self.root.hex())

    def manifest(self) -> Manifest:
        """The dataset's manifest, its header hashing to the root (fetched once, cached).

        Raises:
            DatasetRootMismatch: every URI's manifest was valid but for another root.
            DatasetError: no URI gave a valid manifest (the last reason is in the message).
        """
        if self._manifest is not None:
            return self._manifest
        cached = self._manifest_cache()
        if cached.is_file():
            try:
                m = Manifest.parse(cached.read_bytes())
                if m.root() == self.root:
                    self._manifest = m
                    return m
            except (OSError, DatasetError):
                pass
            cached.unlink(missing_ok=True)
        reason = "no URI"
        other_root: str | None = None
        for base in self.uris:
            uri = f"{base}/{MANIFEST_NAME}"
            try:
                uri = f"{self._source(base)}/{MANIFEST_NAME}"
                m = Manifest.parse(read_bounded(uri, MAX_MANIFEST_BYTES, self.timeout))
            except DatasetError as exc:
                reason = str(exc)
                logger.warning("dataset manifest: %s", reason)
                continue
            if m.root() != self.root:
                other_root = m.header.root_hex()
                reason = f"{uri} describes dataset {other_root}"
                logger.warning("dataset manifest: %s", reason)
                continue
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            _write_atomic(cached, m.to_json())
            self._manifest = m
            return m
        if other_root is not None:
            raise DatasetRootMismatch("0x" + self.root.hex(), other_root)
        raise DatasetError(f"no source gave the manifest of dataset 0x{self.root.hex()}: {reason}")

    # --- chunks ----------------------------------------------------------------------------
    def chunk_bytes(self, index: int) -> bytes:
        """The verified bytes of chunk `index`: from the cache if its hash checks, else from
        the first URI whose body passes `verify_chunk`.

        Raises:
            DatasetError: index out of range, or no URI gave a chunk that checks.
        """
        m = self.manifest()
        h = m.header
        if not 0 <= index < h.num_chunks:
            raise DatasetError(f"chunk {index} out of range [0, {h.num_chunks})")
        leaf = bytes.fromhex(m.leaves[index][2:])
        path = cached_chunk_path(self.cache_dir, leaf.hex())
        if path.is_file():
            try:
                data = path.read_bytes()
            except OSError:
                data = b""
            if len(data) == h.chunk_bytes and chunk_leaf(data) == leaf:
                return data
            logger.warning("cached chunk %d at %s is corrupt: fetching it again", index, path)
            path.unlink(missing_ok=True)
        proof = m.chunk_proof(index)
        reason = "no URI"
        for base in self.uris:
            uri = f"{base}/{CHUNKS_DIR}/{chunk_name(index)}"
            try:
                uri = f"{self._source(base)}/{CHUNKS_DIR}/{chunk_name(index)}"
                data = read_bounded(uri, h.chunk_bytes, self.timeout)
            except DatasetError as exc:
                reason = str(exc)
                logger.warning("chunk %d: %s", index, reason)
                continue
            if not verify_chunk(h, index, data, proof, self.root):
                self.rejected += 1
                reason = f"{uri} sent bytes that are not chunk {index} of the dataset"
                logger.warning("chunk %d: %s", index, reason)
                continue
            self.fetched += 1
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            _write_atomic(path, data)
            return data
        raise DatasetError(f"no source gave chunk {index} of dataset 0x{self.root.hex()}: {reason}")

    def tokens(self, index: int) -> np.ndarray:
        """Chunk `index` as a read-only (chunk_tokens,) array of its stored dtype (uint16 or
        uint32; `gather_windows` widens to int64). Kept in memory up to `memory_bytes`.

        Raises:
            DatasetError: see `chunk_bytes`; or an id >= vocab_size.
        """
        hit = self._memory.get(index)
        if hit is not None:
            self._memory.move_to_end(index)
            return hit
        ids = chunk_tokens_of(self.manifest().header, self.chunk_bytes(index))
        self._memory[index] = ids
        self._memory_used += ids.nbytes
        while self._memory_used > self.memory_bytes and len(self._memory) > 1:
            _, old = self._memory.popitem(last=False)
            self._memory_used -= old.nbytes
        return ids

    def gather(self, chunk_ids: Sequence[int] | np.ndarray) -> dict[int, np.ndarray]:
        """`{chunk id: tokens(chunk id)}` for each distinct id (what `gather_windows` takes)."""
        return {int(i): self.tokens(int(i)) for i in sorted({int(c) for c in chunk_ids})}


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
