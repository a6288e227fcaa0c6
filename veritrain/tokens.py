"""Tokenized datasets bound by one 32-byte root: tokenizers, chunk files, Merkle proofs, batches.

A "tokens" dataset is a corpus of text files turned into token ids once (`prepare`) and cut into
fixed-size chunks, each a file any static server can serve, so that a verifier replaying one
segment fetches only the chunks that segment reads (`veritrain.chunkstore.ChunkStore`).

Layout of a prepared directory::

    manifest.json          the `Manifest` (header fields + one leaf per chunk)
    chunks/000000.bin      chunk 0: `chunk_tokens` ids, little-endian uint16 (vocab <= 65536)
    chunks/000001.bin      or uint32, nanoGPT's flat binary layout (`np.fromfile(dtype)`)
    ...

Construction (all hashes keccak256, as `veritrain.merkle`):

- tokenizer: `"byte"` (UTF-8 bytes are the ids 0..255, vocab 256, no end-of-text id: documents
  are concatenated with nothing between them, as the character corpora of `veritrain.text`) or
  `"bpe"` (a local `tokenizer.json` read by the `tokenizers` library; never fetched from a hub).
  Its hash is `keccak256(b"VTTK\\x01byte")` for bytes, `keccak256(file bytes)` for BPE. A BPE
  tokenizer with an end-of-text token (`END_OF_TEXT_TOKENS`, first one present) gets it appended
  after every document; without one documents are concatenated;
- tokens are concatenated over the files in the order given, cut into chunks of `chunk_tokens`
  ids; a short last chunk is dropped (every chunk has the same size; `PrepareReport.dropped`
  says how many tokens that cost); of the n chunks the last
  `min(n - 1, max(1, floor(n * val_fraction + 0.5)))` validate, the others train (at least one
  each). Tokenizing happens once, here: replayers read only the chunk ids the root binds, so the
  `tokenizers` version on their machine never matters;
- chunk leaf: `keccak256(keccak256(b"VTCH\\x01" || chunk bytes))` (double-hashed, as the
  checkpoint leaves of `veritrain.merkle`), at the chunk's index in a `MerkleTree` (ordered pairs,
  padded with `ZERO_LEAF`): the tree root fixes every chunk at its position;
- dataset root: `keccak256(b"VTDS\\x01" || abi.encode(uint256 format, uint256 tokenizer kind,
  bytes32 tokenizer hash, uint256 vocab, uint256 itemsize, uint256 chunk_tokens,
  uint256 train_chunks, uint256 val_chunks, bytes32 chunks root))` (`DatasetHeader.root`): the
  root alone determines every chunk byte, the tokenizer and the vocabulary size;
- batch of step t: `B` windows of `T + 1` tokens inside one train chunk each: with
  `W = chunk_tokens - T` window starts per chunk, `g = Generator(PCG64(SeedSequence([seed, t,
  TOKENS_STREAM]))).integers(0, train_chunks * W, B)`, window b is chunk `g // W` at offset
  `g % W` (`batch_windows`); so the chunks a range of steps reads are known without data
  (`chunks_for_steps`);
- validation: at most `EVAL_WINDOWS` windows at offsets `0, T, 2T, ...` of each validation
  chunk in turn (`val_windows`).

Run: not a script; `from veritrain.tokens import prepare, batch_windows, verify_chunk`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from veritrain._keccak import keccak256
from veritrain.errors import DatasetError
from veritrain.merkle import MerkleTree, verify_proof

__all__ = [
    "BYTE_TOKENIZER_HASH",
    "END_OF_TEXT_TOKENS",
    "EVAL_WINDOWS",
    "FORMAT_VERSION",
    "MANIFEST_NAME",
    "DatasetHeader",
    "Manifest",
    "PrepareReport",
    "Tokenizer",
    "batch_windows",
    "chunk_leaf",
    "chunk_name",
    "chunk_tokens_of",
    "chunks_for_steps",
    "gather_windows",
    "load_tokenizer",
    "prepare",
    "token_dtype",
    "val_windows",
    "verify_chunk",
]

FORMAT_VERSION: Final = 1
"""Version of the manifest layout and of the root's construction."""
MANIFEST_NAME = "manifest.json"
CHUNKS_DIR = "chunks"
DATASET_MAGIC = b"VTDS\x01"
CHUNK_MAGIC = b"VTCH\x01"
BYTE_TOKENIZER_HASH = keccak256(b"VTTK\x01byte")
"""The hash that stands for the byte tokenizer (it has no file)."""
END_OF_TEXT_TOKENS = ("<|endoftext|>", "</s>", "<eos>", "[SEP]")
"""Special tokens taken as a BPE tokenizer's end-of-text id, the first one it has."""
EVAL_WINDOWS = 128
"""The most validation windows `val_windows` gives."""
TOKENS_STREAM = 0x746F6B73
"""Third word of the batch seed sequence (`b"toks"`): keeps these draws apart from others."""
_KINDS = {"byte": 1, "bpe": 2}
MIN_CHUNK_TOKENS = 2


def _hex32(b: bytes) -> str:
    return "0x" + bytes(b).hex()


def _word(n: int) -> bytes:
    return int(n).to_bytes(32, "big")


def token_dtype(vocab_size: int) -> Literal["uint16", "uint32"]:
    """The chunk files' id dtype: `"uint16"` when `vocab_size <= 65536`, else `"uint32"`."""
    return "uint16" if vocab_size <= 65536 else "uint32"


# --- tokenizers ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tokenizer:
    """A tokenizer bound by its hash.

    Attributes:
        kind: `"byte"` or `"bpe"`.
        hash: 32 bytes: `BYTE_TOKENIZER_HASH`, or keccak256 of the `tokenizer.json` bytes.
        vocab_size: number of ids V (256 for bytes; with added tokens for BPE).
        eot_id: the id appended after each document, or None (see the module docstring).
        impl: the `tokenizers.Tokenizer` for BPE, None for bytes.
    """

    kind: Literal["byte", "bpe"]
    hash: bytes
    vocab_size: int
    eot_id: int | None
    impl: Any = None

    def encode(self, text_bytes: bytes) -> np.ndarray:
        """The (n,) int64 ids of one document (UTF-8 bytes), without the end-of-text id.

        Raises:
            DatasetError: the bytes are not UTF-8.
        """
        try:
            text = text_bytes.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetError(f"text is not UTF-8: {exc}") from exc
        if self.kind == "byte":
            return np.frombuffer(text_bytes, dtype=np.uint8).astype(np.int64)
        # encode_batch_fast (tokenizers >= 0.20) gives the same ids without computing offsets
        encode = getattr(self.impl, "encode_batch_fast", self.impl.encode_batch)
        ids = encode([text], add_special_tokens=False)[0].ids
        return np.asarray(ids, dtype=np.int64)


def load_tokenizer(name: str | Path, expected_hash: bytes | None = None) -> Tokenizer:
    """`"byte"`, or the BPE tokenizer of a local `tokenizer.json` file.

    Args:
        name: `"byte"` or the path of a `tokenizer.json` (Hugging Face `tokenizers` format).
        expected_hash: the 32-byte tokenizer hash the owner published (a dataset header's
            `tokenizer_hash`), or None. Checked before the file is parsed.

    Returns:
        The `Tokenizer`, its hash over the exact file bytes.

    Raises:
        DatasetError: the file is missing or unreadable, its hash is not `expected_hash`, the
            `tokenizers` library is not installed, or the library refuses the file.
    """
    if str(name) == "byte":
        _check_tokenizer_hash("the byte tokenizer", BYTE_TOKENIZER_HASH, expected_hash)
        return Tokenizer("byte", BYTE_TOKENIZER_HASH, 256, None)
    path = Path(name)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read tokenizer file {path}: {exc.strerror or exc}") from exc
    _check_tokenizer_hash(f"tokenizer file {path}", keccak256(raw), expected_hash)
    try:
        import tokenizers
    except ImportError as exc:
        raise DatasetError("a BPE tokenizer needs the 'tokenizers' package (pip install)") from exc
    try:
        impl = tokenizers.Tokenizer.from_str(raw.decode("utf-8"))
    except Exception as exc:  # the library raises plain Exception subclasses
        line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DatasetError(f"{path} is not a tokenizer.json: {line}") from exc
    vocab = int(impl.get_vocab_size(with_added_tokens=True))
    if vocab < 2:
        raise DatasetError(f"{path}: a tokenizer needs at least two ids, has {vocab}")
    eot = next(
        (i for t in END_OF_TEXT_TOKENS if (i := impl.token_to_id(t)) is not None),
        None,
    )
    return Tokenizer("bpe", keccak256(raw), vocab, None if eot is None else int(eot), impl)


def _check_tokenizer_hash(what: str, got: bytes, expected: bytes | None) -> None:
    """Refuse a tokenizer whose hash is not the published one (one line naming both)."""
    if expected is not None and got != expected:
        raise DatasetError(
            f"{what} hashes to {_hex32(got)}, not the published {_hex32(expected)}: "
            "use the tokenizer file the dataset's owner published"
        )


# --- header, manifest, root ------------------------------------------------------------------
class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DatasetHeader(_Frozen):
    """The fields the dataset root binds (see the module docstring).

    Attributes:
        format: `FORMAT_VERSION`.
        tokenizer: `"byte"` or `"bpe"`.
        tokenizer_hash: `0x` + 64 hex digits (`Tokenizer.hash`).
        vocab_size: number of token ids V (every id is < V).
        dtype: `"uint16"` or `"uint32"`, as `token_dtype(vocab_size)`.
        chunk_tokens: ids per chunk.
        train_chunks, val_chunks: chunk counts (train first, then validation; >= 1 each).
        chunks_root: `0x` + hex of the Merkle root over the chunk leaves.
    """

    format: Literal[1] = FORMAT_VERSION
    tokenizer: Literal["byte", "bpe"]
    tokenizer_hash: str = Field(pattern=r"^0x[0-9a-f]{64}$")
    vocab_size: int = Field(ge=2, le=2**32)
    dtype: Literal["uint16", "uint32"]
    chunk_tokens: int = Field(ge=MIN_CHUNK_TOKENS, le=2**31)
    train_chunks: int = Field(ge=1, le=2**31)
    val_chunks: int = Field(ge=1, le=2**31)
    chunks_root: str = Field(pattern=r"^0x[0-9a-f]{64}$")

    @model_validator(mode="after")
    def _dtype_fits(self) -> DatasetHeader:
        if self.dtype != token_dtype(self.vocab_size):
            raise ValueError(f"vocab {self.vocab_size} is stored as {token_dtype(self.vocab_size)}")
        return self

    @property
    def num_chunks(self) -> int:
        """Train plus validation chunks."""
        return self.train_chunks + self.val_chunks

    @property
    def itemsize(self) -> int:
        """Bytes per id (2 or 4)."""
        return 2 if self.dtype == "uint16" else 4

    @property
    def chunk_bytes(self) -> int:
        """Bytes of every chunk file."""
        return self.chunk_tokens * self.itemsize

    @property
    def total_tokens(self) -> int:
        """Ids in all chunks."""
        return self.num_chunks * self.chunk_tokens

    def root(self) -> bytes:
        """The 32-byte dataset root (module docstring)."""
        return keccak256(
            DATASET_MAGIC
            + _word(self.format)
            + _word(_KINDS[self.tokenizer])
            + bytes.fromhex(self.tokenizer_hash[2:])
            + _word(self.vocab_size)
            + _word(self.itemsize)
            + _word(self.chunk_tokens)
            + _word(self.train_chunks)
            + _word(self.val_chunks)
            + bytes.fromhex(self.chunks_root[2:])
        )

    def root_hex(self) -> str:
        """`0x` + hex of `root()`, as a spec's `DatasetConfig.root` holds it."""
        return _hex32(self.root())


class Manifest(_Frozen):
    """`manifest.json`: the header and every chunk's leaf (so proofs need no extra fetch).

    Attributes:
        header: the `DatasetHeader`.
        leaves: `0x` + hex of each chunk's leaf (`chunk_leaf`), in chunk order.
    """

    header: DatasetHeader
    leaves: tuple[str, ...]

    @model_validator(mode="after")
    def _leaves_match(self) -> Manifest:
        if len(self.leaves) != self.header.num_chunks:
            raise ValueError(f"{len(self.leaves)} leaves for {self.header.num_chunks} chunks")
        if _hex32(_tree_of(self.leaves).root) != self.header.chunks_root:
            raise ValueError("the leaves do not hash to the header's chunks_root")
        return self

    def tree(self) -> MerkleTree:
        """The Merkle tree over the leaves (built at validation; the last few are cached)."""
        return _tree_of(self.leaves)

    def root(self) -> bytes:
        """The dataset root (`DatasetHeader.root`)."""
        return self.header.root()

    def chunk_proof(self, index: int) -> list[bytes]:
        """Sibling hashes proving chunk `index` (bottom-up, `MerkleTree.proof`).

        Raises:
            MerkleError: index out of range.
        """
        return self.tree().proof(index)

    def to_json(self) -> bytes:
        """The canonical manifest bytes (sorted keys, two-space indent, trailing newline)."""
        return (json.dumps(self.model_dump(mode="json"), sort_keys=True, indent=2) + "\n").encode()

    @classmethod
    def parse(cls, raw: bytes) -> Manifest:
        """Parse manifest bytes.

        Raises:
            DatasetError: not a valid manifest (bad JSON, fields, or leaves that do not hash to
                the header's chunks root).
        """
        try:
            return cls.model_validate_json(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first.get("loc", ()))
            msg = str(first.get("msg", "invalid")).removeprefix("Value error, ")
            raise DatasetError(f"not a valid dataset manifest: {loc}: {msg}") from exc


@lru_cache(maxsize=8)
def _tree_of(leaves: tuple[str, ...]) -> MerkleTree:
    return MerkleTree([_leaf_bytes(x) for x in leaves])


def _leaf_bytes(hex_leaf: str) -> bytes:
    if len(hex_leaf) != 66 or not hex_leaf.startswith("0x"):
        raise ValueError("a leaf is 0x + 64 hex digits")
    return bytes.fromhex(hex_leaf[2:])


def chunk_leaf(data: bytes) -> bytes:
    """`keccak256(keccak256(b"VTCH\\x01" || data))`, the leaf of a chunk's bytes (32 bytes)."""
    return keccak256(keccak256(CHUNK_MAGIC + bytes(data)))


def chunk_name(index: int) -> str:
    """File name of chunk `index` under `chunks/`: six digits at least (`000123.bin`)."""
    return f"{index:06d}.bin"


def verify_chunk(
    header: DatasetHeader,
    index: int,
    data: bytes,
    proof: Sequence[bytes],
    root: bytes | None = None,
) -> bool:
    """Whether `data` is chunk `index` of the dataset `header` describes.

    Args:
        header: the dataset's header (its `chunks_root` is what the proof folds to).
        index: the chunk's position in [0, num_chunks).
        data: the chunk's bytes (exactly `header.chunk_bytes` of them).
        proof: its sibling hashes (`Manifest.chunk_proof`).
        root: the dataset root the caller trusts (e.g. a spec's); when given, `header` must
            hash to it (a header with another tokenizer, vocab or shape is refused).

    Returns:
        False for a header that is not `root`'s, an index out of range, a wrong size, or a
        proof that does not fold to the chunks root from this leaf at this position.
    """
    if root is not None and header.root() != bytes(root):
        return False
    if len(data) != header.chunk_bytes:
        return False
    chunks_root = bytes.fromhex(header.chunks_root[2:])
    return verify_proof(proof, chunks_root, chunk_leaf(data), index, header.num_chunks)


def chunk_tokens_of(header: DatasetHeader, data: bytes) -> np.ndarray:
    """The (chunk_tokens,) ids of a chunk's bytes: a read-only little-endian `header.dtype`
    view of `data` (no copy).

    Raises:
        DatasetError: a wrong size, or an id >= vocab_size.
    """
    if len(data) != header.chunk_bytes:
        raise DatasetError(f"chunk of {len(data)} bytes, expected {header.chunk_bytes}")
    ids = np.frombuffer(data, dtype="<u2" if header.dtype == "uint16" else "<u4")
    if ids.size and int(ids.max()) >= header.vocab_size:
        raise DatasetError(f"chunk holds id {int(ids.max())} >= vocab {header.vocab_size}")
    return ids


# --- prepare ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class PrepareReport:
    """What `prepare` wrote.

    Attributes:
        manifest: the manifest (also at `out_dir/manifest.json`).
        text_bytes: bytes of text read from the files.
        dropped: ids of the short last chunk left out (0 <= dropped < chunk_tokens).
        chunk_bytes: bytes written across all chunk files.
    """

    manifest: Manifest
    text_bytes: int
    dropped: int
    chunk_bytes: int


def prepare(
    files: Sequence[str | Path],
    tokenizer: Tokenizer,
    out_dir: str | Path,
    *,
    chunk_tokens: int = 1 << 16,
    val_fraction: float = 0.1,
) -> PrepareReport:
    """Tokenize text files into a chunked dataset under `out_dir` (module docstring).

    Args:
        files: UTF-8 text files, one document each, in this order.
        tokenizer: `load_tokenizer`'s result.
        out_dir: a directory that does not exist or is empty.
        chunk_tokens: ids per chunk (>= 2).
        val_fraction: share of chunks held out for validation, 0 < f < 1 (at least one chunk).

    Returns:
        The `PrepareReport`; `report.manifest.root()` is the dataset root.

    Raises:
        DatasetError: no files, an unreadable or non-UTF-8 file, an out dir that is not
            empty, a bad chunk size or fraction, or fewer than two whole chunks of tokens.
    """
    if not files:
        raise DatasetError("no text files given")
    if chunk_tokens < MIN_CHUNK_TOKENS:
        raise DatasetError(f"chunk size {chunk_tokens} is too small (at least {MIN_CHUNK_TOKENS})")
    if not 0.0 < val_fraction < 1.0:
        raise DatasetError(f"validation fraction {val_fraction} must be in (0, 1)")
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DatasetError(f"output directory {out} is not empty")
    parts: list[np.ndarray] = []
    text_bytes = 0
    for f in files:
        path = Path(f)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise DatasetError(f"cannot read text file {path}: {exc.strerror or exc}") from exc
        text_bytes += len(raw)
        try:
            parts.append(tokenizer.encode(raw))
        except DatasetError as exc:
            raise DatasetError(f"{path}: {exc}") from exc
        if tokenizer.eot_id is not None:
            parts.append(np.array([tokenizer.eot_id], dtype=np.int64))
    ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    if text_bytes == 0:
        raise DatasetError("the text files are empty: nothing to tokenize")
    n_chunks = int(ids.size) // chunk_tokens
    if n_chunks < 2:
        raise DatasetError(
            f"{ids.size} tokens make {n_chunks} chunk(s) of {chunk_tokens}: at least two are "
            "needed (one train, one validation); give more text or a smaller --chunk-tokens"
        )
    n_val = min(max(1, int(np.floor(n_chunks * val_fraction + 0.5))), n_chunks - 1)
    dtype = token_dtype(tokenizer.vocab_size)
    body = ids[: n_chunks * chunk_tokens].astype("<u2" if dtype == "uint16" else "<u4")
    (out / CHUNKS_DIR).mkdir(parents=True, exist_ok=True)
    leaves: list[bytes] = []
    for i in range(n_chunks):
        data = body[i * chunk_tokens : (i + 1) * chunk_tokens].tobytes()
        (out / CHUNKS_DIR / chunk_name(i)).write_bytes(data)
        leaves.append(chunk_leaf(data))
    header = DatasetHeader(
        tokenizer=tokenizer.kind,
        tokenizer_hash=_hex32(tokenizer.hash),
        vocab_size=tokenizer.vocab_size,
        dtype=dtype,
        chunk_tokens=chunk_tokens,
        train_chunks=n_chunks - n_val,
        val_chunks=n_val,
        chunks_root=_hex32(MerkleTree(leaves).root),
    )
    manifest = Manifest(header=header, leaves=tuple(_hex32(x) for x in leaves))
    (out / MANIFEST_NAME).write_bytes(manifest.to_json())
    return PrepareReport(
        manifest=manifest,
        text_bytes=text_bytes,
        dropped=int(ids.size) - n_chunks * chunk_tokens,
        chunk_bytes=int(body.nbytes),
    )


# --- batches ---------------------------------------------------------------------------------
def _check_shape(train_chunks: int, chunk_tokens: int, block: int) -> int:
    if train_chunks < 1:
        raise DatasetError("a tokens dataset needs at least one train chunk")
    if chunk_tokens <= block:
        raise DatasetError(
            f"chunks of {chunk_tokens} tokens cannot hold a window of {block + 1} (block_size "
            f"{block}): prepare the data with chunk_tokens > block_size"
        )
    return chunk_tokens - block


def batch_windows(
    seed: int, step: int, batch: int, block: int, train_chunks: int, chunk_tokens: int
) -> tuple[np.ndarray, np.ndarray]:
    """The windows of step `step`: which train chunk, at which offset (module docstring).

    Args:
        seed: the job's uint64 seed.
        step: 0-based step t.
        batch: windows per step B.
        block: context length T (each window is T + 1 ids).
        train_chunks: number of train chunks.
        chunk_tokens: ids per chunk (> T).

    Returns:
        (chunk_ids, offsets), both (B,) int64.

    Raises:
        DatasetError: negative seed or step, or chunks that cannot hold a window.
    """
    if step < 0 or seed < 0:
        raise DatasetError("seed and step must be >= 0")
    per_chunk = _check_shape(train_chunks, chunk_tokens, block)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, step, TOKENS_STREAM])))
    g = rng.integers(0, train_chunks * per_chunk, size=batch, dtype=np.int64)  # (B,)
    return g // per_chunk, g % per_chunk


def chunks_for_steps(
    seed: int,
    start: int,
    stop: int,
    batch: int,
    block: int,
    train_chunks: int,
    chunk_tokens: int,
) -> list[int]:
    """The sorted distinct train chunk ids the steps `start, ..., stop - 1` read.

    What a verifier replaying one segment `[a, b)` fetches (`batch_windows` for each step).

    Raises:
        DatasetError: see `batch_windows`; or `start > stop`.
    """
    if start > stop:
        raise DatasetError(f"step range [{start}, {stop}) is empty the wrong way round")
    _check_shape(train_chunks, chunk_tokens, block)
    seen: set[int] = set()
    for t in range(start, stop):
        ids, _ = batch_windows(seed, t, batch, block, train_chunks, chunk_tokens)
        seen.update(int(i) for i in ids)
    return sorted(seen)


def gather_windows(
    chunks: dict[int, np.ndarray], chunk_ids: np.ndarray, offsets: np.ndarray, block: int
) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and targets of windows of `block + 1` ids at (chunk, offset).

    Args:
        chunks: chunk id -> its (chunk_tokens,) ids, any integer dtype (every id in `chunk_ids`
            present).
        chunk_ids, offsets: (B,) int64 from `batch_windows` or `val_windows`.
        block: T.

    Returns:
        (x, y), both (B, T) int64, `y[b, i] = x[b, i + 1]` within the window.
    """
    rows = [
        chunks[int(c)][int(o) : int(o) + block + 1] for c, o in zip(chunk_ids, offsets, strict=True)
    ]
    windows = np.stack(rows).astype(np.int64)  # (B, T+1)
    return np.ascontiguousarray(windows[:, :-1]), np.ascontiguousarray(windows[:, 1:])


def val_windows(header: DatasetHeader, block: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixed validation windows: offsets `0, T, 2T, ...` of validation chunk 0, then 1, ...

    At most `EVAL_WINDOWS` in all. Chunk ids are absolute (`train_chunks + j`).

    Returns:
        (chunk_ids, offsets), both (W,) int64 with W >= 1.

    Raises:
        DatasetError: the chunks cannot hold a window of `block + 1`.
    """
    _check_shape(header.train_chunks, header.chunk_tokens, block)
    per_chunk = (header.chunk_tokens - 1) // block
    ids: list[int] = []
    offs: list[int] = []
    for j in range(header.val_chunks):
        for k in range(per_chunk):
            if len(ids) == EVAL_WINDOWS:
                break
            ids.append(header.train_chunks + j)
            offs.append(k * block)
    return np.asarray(ids, dtype=np.int64), np.asarray(offs, dtype=np.int64)
