"""Tokens datasets: prepare is stable, the root binds every chunk byte, the tokenizer and the
shape; proofs refuse tampered or misplaced chunks; batches are a pure function of the spec.

Run: ``.venv/bin/python -m pytest tests/unit/veritrain/test_tokens.py -q``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from veritrain.errors import DatasetError
from veritrain.tokens import (
    BYTE_TOKENIZER_HASH,
    EVAL_WINDOWS,
    DatasetHeader,
    Manifest,
    batch_windows,
    chunk_name,
    chunk_tokens_of,
    chunks_for_steps,
    gather_windows,
    load_tokenizer,
    prepare,
    val_windows,
    verify_chunk,
)

SONNET = (
    "Shall I compare thee to a summer's day?\nThou art more lovely and more temperate:\n"
    "Rough winds do shake the darling buds of May,\nAnd summer's lease hath all too short a date;\n"
)


def _corpus(tmp_path, repeats=12):
    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    a.write_text(SONNET * repeats, encoding="utf-8")
    b.write_text("Sometime too hot the eye of heaven shines, ✓ café\n" * repeats, encoding="utf-8")
    return [a, b]


def test_byte_prepare_layout_and_stable_root(tmp_path):
    files = _corpus(tmp_path)
    tok = load_tokenizer("byte")
    r1 = prepare(files, tok, tmp_path / "one", chunk_tokens=256, val_fraction=0.2)
    r2 = prepare(files, tok, tmp_path / "two", chunk_tokens=256, val_fraction=0.2)
    h = r1.manifest.header
    total = sum(len(f.read_bytes()) for f in files)
    assert r1.text_bytes == total
    assert h.num_chunks == total // 256 and r1.dropped == total % 256
    assert h.val_chunks == int(np.floor(h.num_chunks * 0.2 + 0.5)) and h.train_chunks >= 1
    assert (h.tokenizer, h.vocab_size, h.dtype) == ("byte", 256, "uint16")
    assert h.tokenizer_hash == "0x" + BYTE_TOKENIZER_HASH.hex()
    assert r1.manifest.root() == r2.manifest.root()
    assert (tmp_path / "one" / "manifest.json").read_bytes() == r1.manifest.to_json()
    # the chunks are the files' bytes, in order, as little-endian uint16
    data = b"".join(f.read_bytes() for f in files)
    chunk3 = (tmp_path / "one" / "chunks" / chunk_name(3)).read_bytes()
    assert len(chunk3) == 512
    assert np.array_equal(chunk_tokens_of(h, chunk3), np.frombuffer(data[768:1024], np.uint8))
    assert np.array_equal(
        np.fromfile(tmp_path / "one/chunks/000003.bin", "<u2"), chunk_tokens_of(h, chunk3)
    )


def test_root_changes_with_one_byte_shape_and_tokenizer(tmp_path):
    files = _corpus(tmp_path)
    tok = load_tokenizer("byte")
    base = prepare(files, tok, tmp_path / "base", chunk_tokens=256).manifest
    text = bytearray(files[1].read_bytes())
    text[10] ^= 1  # one byte of the second file: lands in one chunk
    files[1].write_bytes(bytes(text))
    changed = prepare(files, tok, tmp_path / "changed", chunk_tokens=256).manifest
    diff = [i for i, (x, y) in enumerate(zip(base.leaves, changed.leaves, strict=True)) if x != y]
    assert len(diff) == 1 and changed.root() != base.root()
    for update in (
        {"tokenizer_hash": "0x" + "11" * 32},
        {"tokenizer": "bpe"},
        {"vocab_size": 300},
        {"train_chunks": base.header.train_chunks - 1, "val_chunks": base.header.val_chunks + 1},
    ):
        assert base.header.model_copy(update=update).root() != base.root(), update


def test_verify_chunk_refuses_tampered_swapped_and_foreign(tmp_path):
    m = prepare(
        _corpus(tmp_path), load_tokenizer("byte"), tmp_path / "ds", chunk_tokens=128
    ).manifest
    h, root = m.header, m.root()
    c2 = (tmp_path / "ds/chunks" / chunk_name(2)).read_bytes()
    c3 = (tmp_path / "ds/chunks" / chunk_name(3)).read_bytes()
    assert verify_chunk(h, 2, c2, m.chunk_proof(2), root)
    bad = bytearray(c2)
    bad[5] ^= 0x01
    assert not verify_chunk(h, 2, bytes(bad), m.chunk_proof(2), root)  # tampered
    assert not verify_chunk(h, 2, c3, m.chunk_proof(2), root)  # another chunk's bytes
    assert not verify_chunk(h, 3, c2, m.chunk_proof(2), root)  # right bytes, wrong index
    assert not verify_chunk(h, 2, c2 + b"\x00\x00", m.chunk_proof(2), root)  # wrong size
    assert not verify_chunk(h, h.num_chunks, c2, m.chunk_proof(2), root)  # out of range
    other_tok = h.model_copy(update={"tokenizer_hash": "0x" + "22" * 32})
    assert not verify_chunk(other_tok, 2, c2, m.chunk_proof(2), root)  # header not the root's


def test_manifest_refuses_leaves_that_do_not_hash_to_the_header(tmp_path):
    m = prepare(
        _corpus(tmp_path), load_tokenizer("byte"), tmp_path / "ds", chunk_tokens=128
    ).manifest
    obj = json.loads(m.to_json())
    obj["leaves"][0], obj["leaves"][1] = obj["leaves"][1], obj["leaves"][0]
    with pytest.raises(DatasetError, match="chunks_root"):
        Manifest.parse(json.dumps(obj).encode())
    assert Manifest.parse(m.to_json()) == m


def test_prepare_refusals(tmp_path):
    files = _corpus(tmp_path)
    tok = load_tokenizer("byte")
    with pytest.raises(DatasetError, match="not empty"):
        (tmp_path / "full").mkdir()
        (tmp_path / "full" / "x").write_text("x")
        prepare(files, tok, tmp_path / "full")
    with pytest.raises(DatasetError, match="at least two"):
        prepare(files, tok, tmp_path / "big", chunk_tokens=1 << 20)
    with pytest.raises(DatasetError, match="too small"):
        prepare(files, tok, tmp_path / "small", chunk_tokens=1)
    with pytest.raises(DatasetError, match="cannot read"):
        prepare([tmp_path / "missing.txt"], tok, tmp_path / "m")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9 " * 200)
    with pytest.raises(DatasetError, match="UTF-8"):
        prepare([tmp_path / "latin1.txt"], tok, tmp_path / "l", chunk_tokens=64)
    with pytest.raises(DatasetError, match="not a tokenizer.json"):
        (tmp_path / "bad.json").write_text('{"model": 3}')
        load_tokenizer(tmp_path / "bad.json")


def test_bpe_tokenizer_built_here(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    files = _corpus(tmp_path, repeats=30)
    bpe = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["[UNK]", "<|endoftext|>"], show_progress=False
    )
    bpe.train([str(f) for f in files], trainer)
    path = tmp_path / "tokenizer.json"
    bpe.save(str(path))
    tok = load_tokenizer(path)
    assert tok.kind == "bpe" and tok.eot_id == bpe.token_to_id("<|endoftext|>")
    r = prepare(files, tok, tmp_path / "ds", chunk_tokens=64, val_fraction=0.25)
    h = r.manifest.header
    assert h.tokenizer == "bpe" and h.vocab_size == bpe.get_vocab_size(with_added_tokens=True)
    ids = np.concatenate(
        [
            chunk_tokens_of(h, (tmp_path / "ds/chunks" / chunk_name(i)).read_bytes())
            for i in range(h.num_chunks)
        ]
    )
    expect = bpe.encode(files[0].read_text(encoding="utf-8"), add_special_tokens=False).ids
    assert ids[: len(expect)].tolist() == expect
    assert int(ids[len(expect)]) == tok.eot_id  # the end-of-text id between documents
    assert bpe.decode(expect) == files[0].read_text(encoding="utf-8")
    # the published hash is checked before the file is parsed
    assert load_tokenizer(path, tok.hash).hash == tok.hash
    # a tokenizer file one byte different is another tokenizer: another root
    path.write_bytes(path.read_bytes() + b" ")
    with pytest.raises(DatasetError, match=f"not the published 0x{tok.hash.hex()}"):
        load_tokenizer(path, tok.hash)
    other = prepare(
        files, load_tokenizer(path), tmp_path / "ds2", chunk_tokens=64, val_fraction=0.25
    )
    assert (
        other.manifest.header.chunks_root == h.chunks_root
        and other.manifest.root() != r.manifest.root()
    )


def test_batch_windows_pure_and_in_range():
    a = batch_windows(5, 17, 32, 16, 7, 100)
    b = batch_windows(5, 17, 32, 16, 7, 100)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    c = batch_windows(5, 18, 32, 16, 7, 100)
    assert not np.array_equal(a[0] * 1000 + a[1], c[0] * 1000 + c[1])
    ids, offs = batch_windows(1, 0, 4000, 16, 7, 100)
    assert ids.min() == 0 and ids.max() == 6 and offs.min() == 0 and offs.max() == 100 - 16 - 1
    with pytest.raises(DatasetError, match="chunk_tokens > block_size"):
        batch_windows(0, 0, 4, 16, 7, 16)
    with pytest.raises(DatasetError):
        batch_windows(0, -1, 4, 16, 7, 100)


def test_chunks_for_steps_is_union_of_batches():
    need = chunks_for_steps(3, 10, 14, 2, 8, 50, 64)
    union = set()
    for t in range(10, 14):
        union.update(int(i) for i in batch_windows(3, t, 2, 8, 50, 64)[0])
    assert need == sorted(union) and 1 <= len(need) <= 8
    assert chunks_for_steps(3, 10, 10, 2, 8, 50, 64) == []


def test_gather_and_val_windows(tmp_path):
    m = prepare(
        _corpus(tmp_path), load_tokenizer("byte"), tmp_path / "ds", chunk_tokens=128
    ).manifest
    h = m.header
    chunks = {
        i: chunk_tokens_of(h, (tmp_path / "ds/chunks" / chunk_name(i)).read_bytes())
        for i in range(h.num_chunks)
    }
    ids, offs = val_windows(h, 16)
    assert len(ids) == min(EVAL_WINDOWS, h.val_chunks * (127 // 16))
    assert ids.min() == h.train_chunks and offs[0] == 0 and offs[1] == 16
    x, y = gather_windows(chunks, ids, offs, 16)
    assert x.shape == y.shape == (len(ids), 16)
    assert np.array_equal(x[0], chunks[h.train_chunks][:16])
    assert np.array_equal(y[0], chunks[h.train_chunks][1:17])


def test_header_rejects_wrong_dtype():
    with pytest.raises(ValueError, match="stored as"):
        DatasetHeader(
            tokenizer="bpe",
            tokenizer_hash="0x" + "00" * 32,
            vocab_size=70000,
            dtype="uint16",
            chunk_tokens=64,
            train_chunks=1,
            val_chunks=1,
            chunks_root="0x" + "00" * 32,
        )
