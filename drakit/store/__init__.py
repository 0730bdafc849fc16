"""Where run records are kept: SQLAlchemy 2 over SQLite (default) or PostgreSQL, with one Alembic history.

Needs the ``drakit[store]`` extra; :mod:`drakit.store.memory` is the dependency-free twin.
"""

from drakit.store.protocol import RecordStore

__all__ = ["RecordStore"]
