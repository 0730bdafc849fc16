"""The record's tables (SQLAlchemy 2, typed).  The migrations in ``migrations/`` create exactly these.

Text columns have the sizes :mod:`drakit.records.run` checks, so PostgreSQL and SQLite keep the
same values; JSON columns hold the raw slice attributes and capacities as captured.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from drakit.records.run import MAX_TEXT

__all__ = ["Base", "ClaimRow", "DeviceRow", "EnvRow", "MetricRow", "PointRow", "QueueLockRow", "ReservationRow", "ResultRow",
           "RunRow", "TokenRow"]

_Str = String(MAX_TEXT)
_When = DateTime(timezone=True)


class Base(DeclarativeBase):
    pass


class RunRow(Base):
    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(_Str, primary_key=True)
    recipe: Mapped[str] = mapped_column(_Str)
    profile: Mapped[str] = mapped_column(_Str, index=True)
    queue: Mapped[str] = mapped_column(_Str)
    namespace: Mapped[str] = mapped_column(_Str)
    executor: Mapped[str] = mapped_column(_Str)
    command: Mapped[list[str]] = mapped_column(JSON)
    image: Mapped[str] = mapped_column(_Str)
    state: Mapped[str] = mapped_column(String(32), index=True)
    reason_code: Mapped[str] = mapped_column(_Str)
    verdict: Mapped[str | None] = mapped_column(String(16))
    message: Mapped[str] = mapped_column(Text)
    submitted_at: Mapped[datetime] = mapped_column(_When)
    admitted_at: Mapped[datetime | None] = mapped_column(_When)
    claim_allocated_at: Mapped[datetime | None] = mapped_column(_When)
    container_started_at: Mapped[datetime | None] = mapped_column(_When)
    ended_at: Mapped[datetime | None] = mapped_column(_When)
    pinned_product: Mapped[str] = mapped_column(_Str, server_default="")
    env: Mapped[dict[str, str]] = mapped_column(JSON, server_default=text("'{}'"))
    image_used: Mapped[bool] = mapped_column(server_default=false())


class ClaimRow(Base):
    __tablename__ = "run_claims"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    namespace: Mapped[str] = mapped_column(_Str)
    name: Mapped[str] = mapped_column(_Str)
    uid: Mapped[str] = mapped_column(_Str)
    template: Mapped[str] = mapped_column(_Str)
    pod_name: Mapped[str] = mapped_column(_Str)
    pod_uid: Mapped[str] = mapped_column(_Str)
    node: Mapped[str] = mapped_column(_Str)


class DeviceRow(Base):
    __tablename__ = "run_devices"
    __table_args__ = (Index("ix_run_devices_product", "product"),)

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    request: Mapped[str] = mapped_column(_Str)
    driver: Mapped[str] = mapped_column(_Str)
    pool: Mapped[str] = mapped_column(_Str)
    device: Mapped[str] = mapped_column(_Str)
    product: Mapped[str] = mapped_column(_Str)
    uuid: Mapped[str] = mapped_column(_Str)
    memory_bytes: Mapped[int | None] = mapped_column(BigInteger)
    driver_version: Mapped[str] = mapped_column(_Str)
    cuda_driver_version: Mapped[str] = mapped_column(_Str)
    compute_capability: Mapped[str] = mapped_column(_Str)
    pcie_root: Mapped[str] = mapped_column(_Str)
    numa_node: Mapped[int | None] = mapped_column(Integer)
    slice_name: Mapped[str] = mapped_column(_Str)
    pool_generation: Mapped[int | None] = mapped_column(BigInteger)
    share_id: Mapped[str] = mapped_column(_Str)
    consumed_capacity: Mapped[dict[str, str]] = mapped_column(JSON)
    attributes: Mapped[dict[str, Any]] = mapped_column(JSON)
    capacity: Mapped[dict[str, str]] = mapped_column(JSON)
    joined: Mapped[bool]


class EnvRow(Base):
    __tablename__ = "run_envs"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    image_digest: Mapped[str] = mapped_column(_Str)
    python: Mapped[str] = mapped_column(_Str)
    frameworks: Mapped[dict[str, str]] = mapped_column(JSON)
    nvml: Mapped[list[dict[str, str]]] = mapped_column(JSON)


class ResultRow(Base):
    __tablename__ = "run_results"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    exit_status: Mapped[int | None] = mapped_column(Integer)
    startup_s: Mapped[float | None] = mapped_column(Float)
    runtime_s: Mapped[float | None] = mapped_column(Float)
    problem_count: Mapped[int] = mapped_column(Integer, server_default="0")
    problems: Mapped[list[dict[str, Any]]] = mapped_column(JSON, server_default=text("'[]'"))  # {line, reason, raw}


class MetricRow(Base):
    """A correctness metric: one number per run and name (accuracy, max error...)."""

    __tablename__ = "run_metrics"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    name: Mapped[str] = mapped_column(_Str, primary_key=True)
    value: Mapped[float] = mapped_column(Float)


class PointRow(Base):
    """One point of a user metric series (loss at step N)."""

    __tablename__ = "run_metric_points"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    name: Mapped[str] = mapped_column(_Str, primary_key=True)
    step: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    value: Mapped[float] = mapped_column(Float)


class ReservationRow(Base):
    """A queue reservation held by a run (the local executor's admission, see drakit.queues.ledger)."""

    __tablename__ = "queue_reservations"

    run_id: Mapped[str] = mapped_column(_Str, primary_key=True)
    queue: Mapped[str] = mapped_column(_Str, index=True)
    demand: Mapped[dict[str, int]] = mapped_column(JSON)
    reserved_at: Mapped[datetime] = mapped_column(_When)


class QueueLockRow(Base):
    """One row per cohort tree (or lone queue): PostgreSQL's SELECT ... FOR UPDATE target."""

    __tablename__ = "queue_locks"

    name: Mapped[str] = mapped_column(_Str, primary_key=True)


class TokenRow(Base):
    """A bearer token of ``drakit serve``: its SHA-256 digest only (see drakit.web.auth), never the token."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    team: Mapped[str] = mapped_column(_Str)
    namespaces: Mapped[list[str]] = mapped_column(JSON)
    admin: Mapped[bool]
    description: Mapped[str] = mapped_column(_Str)
    created_at: Mapped[datetime] = mapped_column(_When)
    revoked_at: Mapped[datetime | None] = mapped_column(_When)
