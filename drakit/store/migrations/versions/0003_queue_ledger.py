"""The queue ledger: one row per reservation a local run holds, and one lock row per cohort tree.

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

_TEXT = 1024


def upgrade() -> None:
    op.create_table(
        "queue_reservations",
        sa.Column("run_id", sa.String(_TEXT), primary_key=True),
        sa.Column("queue", sa.String(_TEXT), nullable=False, index=True),
        sa.Column("demand", sa.JSON(), nullable=False),
        sa.Column("reserved_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "queue_locks",
        sa.Column("name", sa.String(_TEXT), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("queue_locks")
    op.drop_table("queue_reservations")
