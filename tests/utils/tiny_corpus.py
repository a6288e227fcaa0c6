"""A small pinned corpus for tests: a real `.tar.gz` in the King James Version's JSON layout,
registered in `veritrain.corpora.CORPORA` with its sha256, so that `corpus:` URIs resolve
through the real readers, checks and `prepare` in a fraction of a second.

Run: not a script; `from tests.utils.tiny_corpus import register_tiny_corpus`.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from veritrain import corpora

NAME = "tiny"
ARCHIVE = "tiny-0.1.tar.gz"
VERSES = (
    "O LORD, thou hast searched me, and known me.",
    "Thou knowest my downsitting and mine uprising, thou understandest my thought afar off.",
    "Thou compassest my path and my lying down, and art acquainted with all my ways.",
    "For there is not a word in my tongue, but, lo, O LORD, thou knowest it altogether.",
)


def write_archive(path: Path, repeats: int = 12) -> None:
    """A `.tar.gz` holding `tiny-0.1/verses.json` (two books of `repeats` x `VERSES`) and
    `tiny-0.1/books.json`, written with a fixed mtime (the same bytes every time)."""
    verses = {
        f"{book}{chapter:03d}{i + 1:03d}": v
        for book in (1, 2)
        for chapter in range(1, repeats + 1)
        for i, v in enumerate(VERSES)
    }
    books = {"1": ["The First Song", "Song"], "2": ["The Second Song", "Echo"]}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.USTAR_FORMAT) as tar:
        for name, obj in (("verses.json", verses), ("books.json", books)):
            data = json.dumps(obj, sort_keys=True).encode()
            info = tarfile.TarInfo(f"tiny-0.1/{name}")
            info.size, info.mtime = len(data), 0
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())


def register_tiny_corpus(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> corpora.Corpus:
    """Write the archive into `data_dir`, point `VERITRAIN_DATA_DIR` at it and register the
    corpus `"tiny"` (chunks of 128 bytes, a fifth of them validation) for this test."""
    data_dir.mkdir(parents=True, exist_ok=True)
    write_archive(data_dir / ARCHIVE)
    sha = hashlib.sha256((data_dir / ARCHIVE).read_bytes()).hexdigest()
    corpus = corpora.Corpus(
        name=NAME,
        licence="public domain (KJV Psalm 139:1-4)",
        archives=(corpora.Archive(ARCHIVE, "tiny==0.1", sha),),
        sources=(
            corpora.Source(
                "tiny",
                ARCHIVE,
                ("tiny-0.1/verses.json", "tiny-0.1/books.json"),
                corpora._read_kjv,
            ),
        ),
        chunk_tokens=128,
        val_fraction=0.2,
    )
    monkeypatch.setenv("VERITRAIN_DATA_DIR", str(data_dir))
    monkeypatch.setitem(corpora.CORPORA, NAME, corpus)
    return corpus
