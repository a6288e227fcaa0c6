"""Datasets, their sha256 root, and the per-step batch order (PROTOCOL.md 2.1-2.2).

The batch of step t depends only on `(seed, t)`:
`Generator(PCG64(SeedSequence([seed, t]))).choice(n_train, batch_size, replace=False)`, so any
replayer can start from any checkpoint without replaying the data pipeline.

Run: not a script; `from veritrain.data import load_dataset, dataset_root, batch_indices`.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from veritrain.errors import DatasetError

if TYPE_CHECKING:
    from veritrain.spec import DatasetConfig

DATASET_MAGIC = b"VTDS\x01"


@dataclass(frozen=True)
class Dataset:
    """A train/test split held in memory.

    Attributes:
        x_train: (n_train, d) float32 features.
        y_train: (n_train,) int64 class labels in [0, num_classes).
        x_test: (n_test, d) float32.
        y_test: (n_test,) int64.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def n_train(self) -> int:
        """Number of training examples."""
        return int(self.x_train.shape[0])

    @property
    def num_features(self) -> int:
        """Feature width d."""
        return int(self.x_train.shape[1])


def _normalise(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    x_arr = np.ascontiguousarray(np.asarray(x, dtype=np.float32).reshape(len(x), -1))
    y_arr = np.ascontiguousarray(np.asarray(y).reshape(-1))
    if not np.issubdtype(y_arr.dtype, np.integer):
        if not np.all(np.equal(np.mod(y_arr, 1), 0)):
            raise DatasetError("labels must be integers")
    y_arr = y_arr.astype(np.int64)
    if x_arr.shape[0] != y_arr.shape[0]:
        raise DatasetError(f"x has {x_arr.shape[0]} rows but y has {y_arr.shape[0]}")
    if y_arr.size and y_arr.min() < 0:
        raise DatasetError("labels must be >= 0")
    return x_arr, y_arr


def split_arrays(x: np.ndarray, y: np.ndarray, test_fraction: float, split_seed: int) -> Dataset:
    """Split (x, y) into train/test with a seeded permutation.

    `n_test = floor(n * test_fraction + 0.5)`; the permutation is
    `Generator(PCG64(SeedSequence(split_seed))).permutation(n)`, first `n_test` go to test.

    Args:
        x: (n, ...) features, cast to float32 and flattened to (n, d).
        y: (n,) integer labels, cast to int64.
        test_fraction: share held out, 0 < f < 1.
        split_seed: uint64 permutation seed.

    Returns:
        The `Dataset`.

    Raises:
        DatasetError: if shapes disagree or a split would be empty.
    """
    x_arr, y_arr = _normalise(x, y)
    n = x_arr.shape[0]
    n_test = int(math.floor(n * test_fraction + 0.5))
    if n_test < 1 or n_test >= n:
        raise DatasetError(f"test_fraction {test_fraction} leaves an empty split of {n} rows")
    perm = np.random.Generator(np.random.PCG64(np.random.SeedSequence(split_seed))).permutation(n)
    test_idx, train_idx = perm[:n_test], perm[n_test:]
    return Dataset(
        x_train=np.ascontiguousarray(x_arr[train_idx]),
        y_train=np.ascontiguousarray(y_arr[train_idx]),
        x_test=np.ascontiguousarray(x_arr[test_idx]),
        y_test=np.ascontiguousarray(y_arr[test_idx]),
    )


def load_digits_split(test_fraction: float = 0.25, split_seed: int = 0) -> Dataset:
    """scikit-learn's bundled 8x8 digits (1,797 images), pixels scaled to [0, 1] by /16.

    Args:
        test_fraction: held-out share.
        split_seed: split permutation seed.

    Returns:
        `Dataset` with d = 64 features and 10 classes.
    """
    from sklearn.datasets import load_digits

    bunch = load_digits()
    x = (np.asarray(bunch.data, dtype=np.float64) / 16.0).astype(np.float32)
    return split_arrays(x, bunch.target, test_fraction, split_seed)


def _load_tensor_file(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise DatasetError(f"tensor file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        with np.load(path, allow_pickle=False) as npz:
            return {k: np.asarray(npz[k]) for k in npz.files}
    if suffix in (".pt", ".pth"):
        import torch

        obj = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(obj, dict):
            raise DatasetError(f"{path}: expected a dict of tensors, got {type(obj).__name__}")
        return {str(k): v.detach().cpu().numpy() for k, v in obj.items()}
    raise DatasetError(f"{path}: unsupported tensor file type {suffix!r} (use .pt or .npz)")


def load_tensor_file(path: str | Path, test_fraction: float = 0.25, split_seed: int = 0) -> Dataset:
    """Load a user's own tensors from a `.pt` (dict of tensors) or `.npz` file.

    The file holds either `x` and `y` (split here with `test_fraction` and `split_seed`) or
    explicit `x_train`, `y_train`, `x_test`, `y_test`. Features are cast to float32 and flattened
    to (n, d); labels to int64.

    Args:
        path: file path.
        test_fraction: held-out share when the file has only `x`/`y`.
        split_seed: split seed when the file has only `x`/`y`.

    Returns:
        The `Dataset`.

    Raises:
        DatasetError: missing file, unknown format or missing keys.
    """
    arrays = _load_tensor_file(Path(path))
    if {"x_train", "y_train", "x_test", "y_test"} <= arrays.keys():
        x_tr, y_tr = _normalise(arrays["x_train"], arrays["y_train"])
        x_te, y_te = _normalise(arrays["x_test"], arrays["y_test"])
        if x_tr.shape[1:] != x_te.shape[1:]:
            raise DatasetError("x_train and x_test have different feature widths")
        return Dataset(x_tr, y_tr, x_te, y_te)
    if {"x", "y"} <= arrays.keys():
        return split_arrays(arrays["x"], arrays["y"], test_fraction, split_seed)
    raise DatasetError(
        f"{path}: needs keys x,y or x_train,y_train,x_test,y_test; has {sorted(arrays)}"
    )


def load_dataset(cfg: DatasetConfig, path: str | Path | None = None) -> Dataset:
    """Load the dataset a spec names (does not check its root; see `check_dataset_root`).

    Args:
        cfg: the spec's `DatasetConfig`.
        path: local override of `cfg.path` for `"tensor-file"` (the root still binds content).

    Returns:
        The `Dataset`.

    Raises:
        DatasetError: the data cannot be loaded.
    """
    if cfg.name == "sklearn-digits":
        return load_digits_split(cfg.test_fraction, cfg.split_seed)
    if cfg.name == "tensor-file":
        file_path = path if path is not None else cfg.path
        if file_path is None:
            raise DatasetError("tensor-file dataset without a path")
        return load_tensor_file(file_path, cfg.test_fraction, cfg.split_seed)
    raise DatasetError(f"unknown dataset {cfg.name!r}")


def dataset_root(dataset: Dataset) -> bytes:
    """sha256 over the canonical bytes of the train split (32 bytes).

    Canonical bytes: `b"VTDS\\x01"`, u32 little-endian header length, header = canonical JSON
    `{"x": {"dtype": "float32", "shape": [n, d]}, "y": {"dtype": "int64", "shape": [n]}}`,
    then x as little-endian float32 (row-major), then y as little-endian int64.

    Args:
        dataset: the loaded dataset (only the train split is hashed).

    Returns:
        The 32-byte digest; the spec stores `"0x" + digest.hex()`.
    """
    x = np.ascontiguousarray(dataset.x_train, dtype="<f4")
    y = np.ascontiguousarray(dataset.y_train, dtype="<i8")
    header = json.dumps(
        {
            "x": {"dtype": "float32", "shape": list(x.shape)},
            "y": {"dtype": "int64", "shape": list(y.shape)},
        },
        sort_keys=True,
        separators=(",", ":"),
    ).encode("utf-8")
    h = hashlib.sha256()
    h.update(DATASET_MAGIC)
    h.update(struct.pack("<I", len(header)))
    h.update(header)
    h.update(x.tobytes())
    h.update(y.tobytes())
    return h.digest()


def dataset_root_hex(dataset: Dataset) -> str:
    """`"0x" + dataset_root(dataset).hex()`, the form stored in `DatasetConfig.root`."""
    return "0x" + dataset_root(dataset).hex()


def batch_indices(seed: int, step: int, n: int, batch: int) -> np.ndarray:
    """Indices of the training examples used by step `step` (PROTOCOL.md 2.2).

    Args:
        seed: the job's uint64 seed.
        step: 0-based step t (step t turns state t into state t+1).
        n: number of training examples.
        batch: batch size (<= n).

    Returns:
        (batch,) int64 array of distinct indices in [0, n).

    Raises:
        DatasetError: if `batch > n` or an argument is negative.
    """
    if step < 0 or seed < 0:
        raise DatasetError("seed and step must be >= 0")
    if batch > n:
        raise DatasetError(f"batch size {batch} exceeds the {n} training examples")
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, step])))
    return rng.choice(n, batch, replace=False).astype(np.int64)
