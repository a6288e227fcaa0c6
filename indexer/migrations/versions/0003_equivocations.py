"""equivocations (docs/SECURITY.md P-40), and the job and cause of a slash

A seat proven to have signed two seals for one submission (``EquivocationProven`` of the
VerificationRound, ``VerifierEquivocated`` of the JobManager, one transaction) gets a row of the
new ``equivocations`` table; its ``StakeSlashed`` row in ``slashes`` gains the job (``job_id``)
and the cause (``cause``, ``"equivocation"``). Both new ``slashes`` columns are nullable: the
rows of other slashes keep NULL. Derived tables only: `indexer.derive.rederive` fills them from
the stored events (an index upgraded from 0002 shows the new fields for events indexed after
the upgrade, or for every event after ``veritrain index --reset``).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "equivocations",
        sa.Column("job_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("verifier", sa.String(length=42), nullable=False),
        sa.Column("block", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("log_index", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.String(length=66), nullable=True),
        sa.Column("prover", sa.String(length=42), nullable=True),
        sa.Column("commitment", sa.String(length=66), nullable=True),
        sa.Column("other_commitment", sa.String(length=66), nullable=True),
        sa.Column("slashed", sa.String(length=80), nullable=False),
        sa.Column("bonds", sa.String(length=80), nullable=False),
        sa.Column("timestamp", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("job_id", "verifier", "block"),
    )
    with op.batch_alter_table("equivocations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_equivocations_verifier"), ["verifier"], unique=False)
    with op.batch_alter_table("slashes", schema=None) as batch_op:
        batch_op.add_column(sa.Column("job_id", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("cause", sa.String(length=24), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("slashes", schema=None) as batch_op:
        batch_op.drop_column("cause")
        batch_op.drop_column("job_id")
    with op.batch_alter_table("equivocations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_equivocations_verifier"))
    op.drop_table("equivocations")
