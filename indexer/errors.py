"""Errors of the indexer, each with a one-line message for the CLI."""

from __future__ import annotations

__all__ = ["IndexError_", "IndexMismatch", "ReorgTooDeep"]


class IndexError_(Exception):  # noqa: N801 - `IndexError` is a builtin
    """Base class: the index database cannot be used (bad URL, unreachable, not migratable)."""


class IndexMismatch(IndexError_):
    """The index was built for another chain or deployment."""


class ReorgTooDeep(IndexError_):
    """The chain reorganised below every block hash the index keeps: rebuild it (--reset)."""
