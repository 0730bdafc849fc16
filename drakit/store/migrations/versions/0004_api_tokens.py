"""Bearer tokens of ``drakit serve``: only their SHA-256 digests, each mapped to a team and its namespaces.

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

_TEXT = 1024


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("team", sa.String(_TEXT), nullable=False),
        sa.Column("namespaces", sa.JSON(), nullable=False),
        sa.Column("admin", sa.Boolean(), nullable=False),
        sa.Column("description", sa.String(_TEXT), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("api_tokens")
