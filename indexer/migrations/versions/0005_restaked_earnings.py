"""earnings restaked at a job's end (``StakesRestaked``), one row per account of the event

A job's end no longer pays the solver's reward and the standing seats' fees (with a catch's
jackpot) to their wallets: the Escrow pays their total to the StakeManager, which adds each
party's part to its stake in one ``StakesRestaked`` event (several accounts for the seats).
The ``earnings`` table gains ``seq`` (the account's position in such an event, 0 for every
other row) in its primary key, so that one event yields one ``restaked`` row per account.
Existing rows keep 0. Batch mode recreates the table on SQLite; PostgreSQL swaps the primary
key in place. Derived tables only: `indexer.derive.rederive` fills the new rows from the
stored events.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def _earnings(key: list[str]) -> sa.Table:
    """The ``earnings`` table with ``seq`` and ``key`` as its primary key (what SQLite's batch
    mode copies the rows into)."""
    return sa.Table(
        "earnings",
        sa.MetaData(),
        sa.Column("block", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("log_index", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("account", sa.String(length=42), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("amount", sa.String(length=80), nullable=False),
        sa.Column("job_id", sa.BigInteger(), nullable=True),
        sa.Column("model_id", sa.String(length=66), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False, server_default="0"),
        sa.PrimaryKeyConstraint(*key),
        sa.Index("ix_earnings_account", "account"),
    )


def _primary_key(key: list[str]) -> None:
    """Make ``key`` the primary key of ``earnings`` (which has ``seq``)."""
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table("earnings", copy_from=_earnings(key), recreate="always"):
            pass
    else:
        op.drop_constraint("earnings_pkey", "earnings", type_="primary")
        op.create_primary_key("earnings_pkey", "earnings", key)


def upgrade() -> None:
    with op.batch_alter_table("earnings", schema=None) as batch_op:
        batch_op.add_column(sa.Column("seq", sa.Integer(), nullable=False, server_default="0"))
    _primary_key(["block", "log_index", "seq"])


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM earnings WHERE seq <> 0"))
    _primary_key(["block", "log_index"])
    with op.batch_alter_table("earnings", schema=None) as batch_op:
        batch_op.drop_column("seq")
