"""Alembic environment of the index: run programmatically by `indexer.store.upgrade`, which
passes an open connection in ``config.attributes["connection"]`` (no alembic.ini)."""

from __future__ import annotations

from alembic import context

from indexer.models import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run the index migrations through indexer.store.upgrade(engine)")
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
