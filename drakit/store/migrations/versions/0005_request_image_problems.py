"""The rest of a run's request (pinned product, extra environment), whether its image was used, and
the metric reports a result could not use.

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

_TEXT = 1024


def upgrade() -> None:
    # Server defaults give the runs recorded before this revision the values they had implicitly:
    # no pin, no extra environment, an image recorded but never run (no executor ran one), no problems kept.
    op.add_column("runs", sa.Column("pinned_product", sa.String(_TEXT), nullable=False, server_default=""))
    op.add_column("runs", sa.Column("env", sa.JSON(), nullable=False, server_default=sa.text("'{}'")))
    op.add_column("runs", sa.Column("image_used", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("run_results", sa.Column("problem_count", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("run_results", sa.Column("problems", sa.JSON(), nullable=False, server_default=sa.text("'[]'")))


def downgrade() -> None:
    with op.batch_alter_table("run_results") as table:  # batch: SQLite rebuilds the table to drop a column
        table.drop_column("problems")
        table.drop_column("problem_count")
    with op.batch_alter_table("runs") as table:
        table.drop_column("image_used")
        table.drop_column("env")
        table.drop_column("pinned_product")
