"""uint32 fields as 64-bit integers, seat and sample bit masks as decimal strings

PostgreSQL's INTEGER is signed 32-bit: an event's uint32 field past 2**31 - 1 (total steps,
checkpoint interval, rounds, seats, game intervals) was refused, which stopped the indexer on
PostgreSQL (SQLite's INTEGER is 64-bit). The seat masks of a run (up to 256 seats,
RunRegistry.MAX_SEATS) and a verifier's sample and abstain masks (uint64 and uint256 on chain)
fit no signed 64-bit integer on either database: they become `indexer.models.Wei` columns
(decimal strings). Batch mode recreates the tables on SQLite and alters them in place on
PostgreSQL.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

WIDENED: dict[str, tuple[str, ...]] = {
    "jobs": ("total_steps", "checkpoint_interval"),
    "forced_errors": ("sample_index",),
    "disputes": ("round", "sample_index", "segment", "lo", "hi"),
    "runs": ("seats", "rounds", "inner_steps", "round"),
    "run_rounds": ("round",),
    "contributions": ("round", "seat"),
    "run_metrics": ("round",),
}
"""Table -> its INTEGER columns that hold uint32 event fields (to BIGINT)."""

MASKS: dict[str, tuple[str, ...]] = {
    "run_rounds": ("registered", "accepted"),
    "assignments": ("sample_mask", "abstain_mask"),
}
"""Table -> its BIGINT bit-mask columns (to VARCHAR(80), decimal)."""


def upgrade() -> None:
    for table in sorted(set(WIDENED) | set(MASKS)):
        with op.batch_alter_table(table) as batch_op:
            for column in WIDENED.get(table, ()):
                batch_op.alter_column(column, existing_type=sa.Integer(), type_=sa.BigInteger())
            for column in MASKS.get(table, ()):
                batch_op.alter_column(
                    column,
                    existing_type=sa.BigInteger(),
                    type_=sa.String(length=80),
                    existing_nullable=False,
                    postgresql_using=f"{column}::text",
                )


def downgrade() -> None:
    for table in sorted(set(WIDENED) | set(MASKS)):
        with op.batch_alter_table(table) as batch_op:
            for column in MASKS.get(table, ()):
                batch_op.alter_column(
                    column,
                    existing_type=sa.String(length=80),
                    type_=sa.BigInteger(),
                    existing_nullable=False,
                    postgresql_using=f"{column}::bigint",
                )
            for column in WIDENED.get(table, ()):
                batch_op.alter_column(column, existing_type=sa.BigInteger(), type_=sa.Integer())
