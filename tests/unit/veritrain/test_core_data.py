"""Datasets, dataset root, batch order."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from veritrain.data import (
    batch_indices,
    dataset_root,
    dataset_root_hex,
    load_dataset,
    load_digits_split,
    split_arrays,
)
from veritrain.errors import DatasetError, DatasetRootMismatch
from veritrain.spec import DatasetConfig, default_digits_spec
from veritrain.training import TrainingEngine


def test_digits_split_shapes_and_scale():
    ds = load_digits_split(0.25, 0)
    assert ds.x_train.dtype == np.float32 and ds.y_train.dtype == np.int64
    assert ds.x_train.shape == (1797 - 449, 64) and ds.x_test.shape == (449, 64)
    assert 0.0 <= ds.x_train.min() and ds.x_train.max() <= 1.0
    assert set(np.unique(ds.y_train)) == set(range(10))


def test_dataset_root_is_stable_and_sensitive():
    a, b = load_digits_split(0.25, 0), load_digits_split(0.25, 0)
    assert dataset_root(a) == dataset_root(b) and len(dataset_root(a)) == 32
    assert dataset_root(load_digits_split(0.25, 1)) != dataset_root(a)
    x = a.x_train.copy()
    x[0, 0] += np.float32(1e-6)
    assert dataset_root(split_arrays(x, a.y_train, 0.5, 0)) != dataset_root(
        split_arrays(a.x_train, a.y_train, 0.5, 0)
    )
    assert default_digits_spec().dataset.root == dataset_root_hex(a)


def test_batch_order_depends_only_on_seed_and_step():
    first = [batch_indices(3, t, 1000, 64) for t in range(5)]
    # interleaved, reversed, other calls in between: same result
    for t in reversed(range(5)):
        batch_indices(99, t, 1000, 64)
        assert np.array_equal(batch_indices(3, t, 1000, 64), first[t])
    assert not np.array_equal(first[0], first[1])
    assert not np.array_equal(batch_indices(4, 0, 1000, 64), first[0])


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**64 - 1),
    step=st.integers(0, 2**32),
    n=st.integers(1, 5000),
    data=st.data(),
)
def test_batch_indices_properties(seed, step, n, data):
    batch = data.draw(st.integers(1, n))
    idx = batch_indices(seed, step, n, batch)
    assert idx.dtype == np.int64 and idx.shape == (batch,)
    assert len(set(idx.tolist())) == batch and idx.min() >= 0 and idx.max() < n
    assert np.array_equal(idx, batch_indices(seed, step, n, batch))


def test_batch_larger_than_data_rejected():
    with pytest.raises(DatasetError):
        batch_indices(0, 0, 10, 11)


@pytest.mark.parametrize("fmt", ["npz", "pt", "pt-split"])
def test_tensor_file_dataset(tmp_path, fmt):
    rng = np.random.default_rng(0)
    x = rng.random((200, 8, 8), dtype=np.float32)
    y = rng.integers(0, 10, 200)
    if fmt == "npz":
        path = tmp_path / "d.npz"
        np.savez(path, x=x, y=y)
    elif fmt == "pt":
        path = tmp_path / "d.pt"
        torch.save({"x": torch.from_numpy(x), "y": torch.from_numpy(y)}, path)
    else:
        path = tmp_path / "d.pt"
        torch.save(
            {
                "x_train": torch.from_numpy(x[:150]),
                "y_train": torch.from_numpy(y[:150]),
                "x_test": torch.from_numpy(x[150:]),
                "y_test": torch.from_numpy(y[150:]),
            },
            path,
        )
    ds0 = load_dataset(DatasetConfig(name="tensor-file", root="0x" + "0" * 64, path=str(path)))
    assert ds0.x_train.shape[1] == 64 and ds0.x_train.dtype == np.float32
    root = dataset_root_hex(ds0)
    spec = default_digits_spec(total_steps=4, checkpoint_interval=2, batch_size=16)
    spec = spec.model_copy(
        update={"dataset": DatasetConfig(name="tensor-file", root=root, path=str(path))}
    )
    engine = TrainingEngine(spec)
    state = engine.init_state()
    engine.run(state, 4)
    assert state.step == 4 and 0.0 <= engine.evaluate(state) <= 1.0


def test_engine_refuses_wrong_dataset_root():
    spec = default_digits_spec()
    bad = spec.model_copy(
        update={"dataset": spec.dataset.model_copy(update={"root": "0x" + "ab" * 32})}
    )
    with pytest.raises(DatasetRootMismatch):
        TrainingEngine(bad)


def test_tensor_file_errors(tmp_path):
    with pytest.raises(DatasetError):
        load_dataset(DatasetConfig(name="tensor-file", root="0x" + "0" * 64, path="/nope.npz"))
    p = tmp_path / "d.npz"
    np.savez(p, a=np.zeros(3))
    with pytest.raises(DatasetError):
        load_dataset(DatasetConfig(name="tensor-file", root="0x" + "0" * 64, path=str(p)))
