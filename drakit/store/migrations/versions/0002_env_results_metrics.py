"""The environment seen inside the container, the result, correctness metrics and user metric series.

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

_TEXT = 1024


def _run_fk() -> sa.Column[str]:
    return sa.Column("run_id", sa.String(_TEXT), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)


def upgrade() -> None:
    op.create_table(
        "run_envs",
        _run_fk(),
        sa.Column("image_digest", sa.String(_TEXT), nullable=False),
        sa.Column("python", sa.String(_TEXT), nullable=False),
        sa.Column("frameworks", sa.JSON(), nullable=False),
        sa.Column("nvml", sa.JSON(), nullable=False),
    )
    op.create_table(
        "run_results",
        _run_fk(),
        sa.Column("exit_status", sa.Integer(), nullable=True),
        sa.Column("startup_s", sa.Float(), nullable=True),
        sa.Column("runtime_s", sa.Float(), nullable=True),
    )
    op.create_table(
        "run_metrics",
        _run_fk(),
        sa.Column("name", sa.String(_TEXT), primary_key=True),
        sa.Column("value", sa.Float(), nullable=False),
    )
    op.create_table(
        "run_metric_points",
        _run_fk(),
        sa.Column("name", sa.String(_TEXT), primary_key=True),
        sa.Column("step", sa.BigInteger(), primary_key=True),
        sa.Column("value", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    for table in ("run_metric_points", "run_metrics", "run_results", "run_envs"):
        op.drop_table(table)
