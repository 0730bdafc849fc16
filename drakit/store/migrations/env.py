"""Alembic environment: always run programmatically by drakit.store.engine with an open connection."""

from __future__ import annotations

from alembic import context

from drakit.store.engine import _VERSION_TABLE as VERSION_TABLE
from drakit.store.tables import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=VERSION_TABLE,
    # SQLite cannot ALTER most things in place; batch mode rebuilds the table instead.
    render_as_batch=True,
)
with context.begin_transaction():
    context.run_migrations()
