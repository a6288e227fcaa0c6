"""ChunkStore: chunks fetched by index, each checked against the dataset root before use; a bad
source is skipped for the next, a corrupt cache file is fetched again, and a segment's replay
fetches exactly the chunks it reads.

Run: ``.venv/bin/python -m pytest tests/unit/veritrain/test_chunkstore.py -q``.
"""

from __future__ import annotations

import json
import shutil
import time

import numpy as np
import pytest

from tests.utils.hostile_http import hostile_server
from veritrain.chunkstore import ChunkStore, read_bounded
from veritrain.errors import DatasetError, DatasetRootMismatch
from veritrain.tokens import (
    Manifest,
    chunk_name,
    chunk_tokens_of,
    chunks_for_steps,
    load_tokenizer,
    prepare,
)

TEXT = "From fairest creatures we desire increase, that thereby beauty's rose might never die.\n"


@pytest.fixture()
def ds(tmp_path):
    src = tmp_path / "text.txt"
    src.write_text(TEXT * 40, encoding="utf-8")
    out = tmp_path / "ds"
    manifest = prepare(
        [src], load_tokenizer("byte"), out, chunk_tokens=128, val_fraction=0.2
    ).manifest
    return out, manifest


def _uri(path):
    return path.resolve().as_uri()


def test_fetches_verified_chunks_and_caches_them(ds, tmp_path):
    out, m = ds
    store = ChunkStore(m.header.root_hex(), [_uri(out)], tmp_path / "cache")
    assert store.manifest().root() == m.root()
    ids = store.tokens(4)
    assert np.array_equal(
        ids, chunk_tokens_of(m.header, (out / "chunks" / chunk_name(4)).read_bytes())
    )
    assert store.fetched == 1
    again = ChunkStore(m.root(), [_uri(out)], tmp_path / "cache")
    shutil.rmtree(out)  # the source is gone: the cache alone serves
    assert np.array_equal(again.tokens(4), ids) and again.fetched == 0


def test_bad_source_skipped_for_the_next(ds, tmp_path):
    out, m = ds
    evil = tmp_path / "evil"
    shutil.copytree(out, evil)
    c1 = (evil / "chunks" / chunk_name(1)).read_bytes()
    c2 = (evil / "chunks" / chunk_name(2)).read_bytes()
    tampered = bytearray(c1)
    tampered[0] ^= 0x04
    (evil / "chunks" / chunk_name(1)).write_bytes(bytes(tampered))
    (evil / "chunks" / chunk_name(2)).write_bytes(c1)  # a swapped (misplaced) chunk
    (evil / "chunks" / chunk_name(3)).write_bytes(c2 + c2)  # too large
    store = ChunkStore(m.root(), [_uri(evil), _uri(out)], tmp_path / "cache")
    for i in (1, 2, 3):
        good = (out / "chunks" / chunk_name(i)).read_bytes()
        assert store.chunk_bytes(i) == good
    assert store.fetched == 3 and store.rejected == 2
    only_evil = ChunkStore(m.root(), [_uri(evil)], tmp_path / "cache2")
    with pytest.raises(DatasetError, match="no source gave chunk 1"):
        only_evil.chunk_bytes(1)
    assert only_evil.chunk_bytes(0) == (out / "chunks" / chunk_name(0)).read_bytes()


def test_manifest_for_another_root_refused(ds, tmp_path):
    out, m = ds
    foreign = tmp_path / "foreign"
    shutil.copytree(out, foreign)
    obj = json.loads(m.to_json())
    obj["header"]["tokenizer_hash"] = "0x" + "33" * 32  # the same chunks, another tokenizer
    (foreign / "manifest.json").write_text(json.dumps(obj))
    assert Manifest.parse((foreign / "manifest.json").read_bytes()).root() != m.root()
    with pytest.raises(DatasetRootMismatch):
        ChunkStore(m.root(), [_uri(foreign)], tmp_path / "c1").manifest()
    store = ChunkStore(m.root(), [_uri(foreign), _uri(out)], tmp_path / "c2")
    assert store.manifest().root() == m.root()
    # no source at all
    with pytest.raises(DatasetError, match="no source"):
        ChunkStore(m.root(), [_uri(tmp_path / "nowhere")], tmp_path / "c3").manifest()


def test_corrupt_cache_file_fetched_again(ds, tmp_path):
    out, m = ds
    cache = tmp_path / "cache"
    store = ChunkStore(m.root(), [_uri(out)], cache)
    good = store.chunk_bytes(5)
    cached = cache / (m.leaves[5][2:] + ".bin")
    assert cached.read_bytes() == good
    cached.write_bytes(b"\x00" * len(good))
    fresh = ChunkStore(m.root(), [_uri(out)], cache)
    assert fresh.chunk_bytes(5) == good and fresh.fetched == 1
    assert cached.read_bytes() == good


def test_segment_fetches_exactly_its_chunks(ds, tmp_path):
    out, m = ds
    h = m.header
    store = ChunkStore(m.root(), [_uri(out)], tmp_path / "cache")
    need = chunks_for_steps(9, 20, 22, 2, 16, h.train_chunks, h.chunk_tokens)
    assert 0 < len(need) < h.train_chunks
    got = store.gather(need)
    assert sorted(got) == need and store.fetched == len(need)
    cached = {p.stem for p in (tmp_path / "cache").glob("*.bin")}
    assert cached == {m.leaves[i][2:] for i in need}


def test_memory_holds_at_most_its_budget(ds, tmp_path):
    out, m = ds
    cache = tmp_path / "cache"
    store = ChunkStore(m.root(), [_uri(out)], cache, memory_bytes=2 * m.header.chunk_bytes)
    kept = [store.tokens(i).copy() for i in (0, 1, 2)]
    shutil.rmtree(out)
    shutil.rmtree(cache)  # only memory is left: chunks 1 and 2, not 0
    assert np.array_equal(store.tokens(2), kept[2]) and np.array_equal(store.tokens(1), kept[1])
    with pytest.raises(DatasetError, match="no source gave chunk 0"):
        store.tokens(0)


def test_endless_and_drip_fed_sources_are_cut_off(ds, tmp_path):
    out, m = ds
    with hostile_server() as url:
        with pytest.raises(DatasetError, match="more than 256 bytes"):
            read_bounded(url + "/endless", 256, 5.0)
        start = time.monotonic()
        with pytest.raises(DatasetError, match="still sending"):
            read_bounded(url + "/drip", 256, 0.5)
        assert time.monotonic() - start < 5.0
        store = ChunkStore(m.root(), [url + "/drip", url + "/endless", _uri(out)], tmp_path / "c")
        store.timeout = 0.5
        good = (out / "chunks" / chunk_name(3)).read_bytes()
        assert store.chunk_bytes(3) == good and store.fetched == 1


def test_a_corpus_uri_is_prepared_here_and_every_chunk_still_checked(tmp_path, monkeypatch):
    """`corpus:NAME` builds the pinned corpus under the data directory once, then reads it like
    a file:// source: chunks verified against the root; a changed local build is refused."""
    from tests.utils.tiny_corpus import register_tiny_corpus
    from veritrain.corpora import corpus_root, prepared_corpus

    register_tiny_corpus(monkeypatch, tmp_path / "data")
    root = corpus_root("tiny")
    built = prepared_corpus("tiny")
    assert built.parent == tmp_path / "data" / "corpora"
    store = ChunkStore(root, ["corpus:tiny"], tmp_path / "cache")
    m = store.manifest()
    assert m.header.root_hex() == root and m.header.chunk_tokens == 128
    assert bytes(store.tokens(1)) == (built / "chunks" / chunk_name(1)).read_bytes()
    assert store.fetched == 1

    # a local build whose bytes differ (here: one chunk rewritten) is not trained on
    (built / "chunks" / chunk_name(2)).write_bytes(b"\0" * m.header.chunk_bytes)
    other = ChunkStore(root, ["corpus:tiny"], tmp_path / "cache2")
    with pytest.raises(DatasetError, match=r"/chunks/000002\.bin sent bytes that are not chunk 2"):
        other.chunk_bytes(2)
    assert other.rejected == 1 and other.fetched == 0


def test_a_corpus_uri_that_cannot_be_built_falls_back_to_the_next(tmp_path, monkeypatch):
    """Without the corpus's archives on this machine the next URI (a peer's copy) serves."""
    from tests.utils.tiny_corpus import register_tiny_corpus
    from veritrain.corpora import prepared_corpus

    register_tiny_corpus(monkeypatch, tmp_path / "data")
    built = prepared_corpus("tiny")
    root = Manifest.parse((built / "manifest.json").read_bytes()).header.root_hex()
    copy = tmp_path / "peer"
    shutil.copytree(built, copy)
    monkeypatch.setenv("VERITRAIN_DATA_DIR", str(tmp_path / "empty"))
    only_corpus = ChunkStore(root, ["corpus:tiny"], tmp_path / "c1")
    with pytest.raises(DatasetError, match=r"tiny-0\.1\.tar\.gz not found .*run bash scripts/"):
        only_corpus.manifest()
    store = ChunkStore(root, ["corpus:tiny", _uri(copy)], tmp_path / "c2")
    assert store.manifest().header.root_hex() == root
    assert len(store.chunk_bytes(0)) == store.manifest().header.chunk_bytes
