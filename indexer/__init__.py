"""The chain's index: the protocol's events, followed into a SQL database (SQLite by default,
PostgreSQL through the same code), and the tables the dashboard and the CLI read.

- `indexer.store`: `Index.open(url, binding, reset=False)` (runs the shipped Alembic
  migrations; refuses an index of another chain or deployment), `Binding`.
- `indexer.follow`: `Indexer(index, client).sync()` / `.follow(stop)` (cursor, retries with
  backoff, reorganisations rolled back), `binding_of(client)`.
- `indexer.models`: the tables; `indexer.derive`: how events become rows (the ownership and
  run handlers in `indexer.derive_ownership`).
- `indexer.errors`: `IndexError_`, `IndexMismatch`, `ReorgTooDeep`.

Stands on `chain` (and the core) only.
"""

from __future__ import annotations

from indexer.errors import IndexError_, IndexMismatch, ReorgTooDeep
from indexer.follow import Indexer, binding_of
from indexer.store import Binding, Index

__all__ = [
    "Binding",
    "Index",
    "IndexError_",
    "IndexMismatch",
    "Indexer",
    "ReorgTooDeep",
    "binding_of",
]
