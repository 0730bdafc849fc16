"""Runs with their state timestamps, the claim that served them, and the devices it was allocated.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_TEXT = 1024


def _text(name: str) -> sa.Column[str]:
    return sa.Column(name, sa.String(_TEXT), nullable=False)


def _when(name: str, nullable: bool = True) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _run_fk() -> sa.Column[str]:
    return sa.Column("run_id", sa.String(_TEXT), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(_TEXT), primary_key=True),
        *(_text(n) for n in ("recipe", "profile", "queue", "namespace", "executor")),
        sa.Column("command", sa.JSON(), nullable=False),
        _text("image"),
        sa.Column("state", sa.String(32), nullable=False),
        _text("reason_code"),
        sa.Column("verdict", sa.String(16), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        _when("submitted_at", nullable=False),
        *(_when(n) for n in ("admitted_at", "claim_allocated_at", "container_started_at", "ended_at")),
    )
    op.create_index("ix_runs_profile", "runs", ["profile"])
    op.create_index("ix_runs_state", "runs", ["state"])
    op.create_table(
        "run_claims",
        _run_fk(),
        *(_text(n) for n in ("namespace", "name", "uid", "template", "pod_name", "pod_uid", "node")),
    )
    op.create_table(
        "run_devices",
        _run_fk(),
        sa.Column("position", sa.Integer(), primary_key=True),
        *(_text(n) for n in ("request", "driver", "pool", "device", "product", "uuid")),
        sa.Column("memory_bytes", sa.BigInteger(), nullable=True),
        *(_text(n) for n in ("driver_version", "cuda_driver_version", "compute_capability", "pcie_root")),
        sa.Column("numa_node", sa.Integer(), nullable=True),
        _text("slice_name"),
        sa.Column("pool_generation", sa.BigInteger(), nullable=True),
        _text("share_id"),
        *(sa.Column(n, sa.JSON(), nullable=False) for n in ("consumed_capacity", "attributes", "capacity")),
        sa.Column("joined", sa.Boolean(), nullable=False),
    )
    op.create_index("ix_run_devices_product", "run_devices", ["product"])


def downgrade() -> None:
    op.drop_table("run_devices")
    op.drop_table("run_claims")
    op.drop_table("runs")
