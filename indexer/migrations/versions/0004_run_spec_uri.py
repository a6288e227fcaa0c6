"""a run's spec URI (``RunOpened.specURI``)

A run publishes its spec URI once, when it is opened; its contribution jobs are posted without
one (their ``JobPosted`` has an empty ``specURI``). The ``runs`` table gains ``spec_uri``
(nullable: runs indexed before the upgrade keep NULL), and a contribution's job row gets the
run's URI with the contribution's fragment when its ``ContributionAdded`` is derived. Derived
tables only: `indexer.derive.rederive` fills them from the stored events.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("spec_uri", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("spec_uri")
