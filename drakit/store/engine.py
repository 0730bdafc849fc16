"""Store URL → SQLAlchemy Engine, and the schema migrations run on it.

SQLite by default, in a file under the user's data directory (``$XDG_DATA_HOME/drakit`` on
Linux); PostgreSQL when ``--store`` or ``DRAKIT_STORE`` names one.  Migrations ship inside the
package and run programmatically, so an installed drakit upgrades its own store when it opens it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from drakit.errors import DrakitError

__all__ = ["ENV_VAR", "StoreError", "current_revision", "default_url", "first_line", "head_revision", "make_engine", "reading",
           "resolve_url", "revisions", "shown", "upgrade"]

ENV_VAR = "DRAKIT_STORE"
_MIGRATIONS = Path(__file__).parent / "migrations"
_VERSION_TABLE = "drakit_schema_version"
# Any fixed 64-bit key: it only has to differ from other applications' advisory locks in the database.
_PG_MIGRATION_LOCK = 0x64726B5F73746F72
# How long a writer waits for another process's write lock before SQLite reports "database is locked".
_SQLITE_BUSY_MS = 30_000
READ_ONLY = "drakit_read_only"


class StoreError(DrakitError):
    """The store cannot be opened or used (bad URL, unreachable server, newer schema)."""


def default_url() -> str:
    import platformdirs

    path = Path(platformdirs.user_data_dir("drakit", appauthor=False)) / "records.db"
    return f"sqlite:///{path}"


def resolve_url(url: str | None = None, env: Mapping[str, str] | None = None) -> URL:
    """The explicit URL, else ``$DRAKIT_STORE``, else the default SQLite file; postgres means psycopg 3."""
    env = os.environ if env is None else env
    raw = url or env.get(ENV_VAR) or default_url()
    try:
        parsed = make_url(raw)
    except ArgumentError:
        raise StoreError(f"store URL {raw!r} is not a database URL (sqlite:///FILE or postgresql://HOST/DB)") from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(f"store {shown(parsed)}: only sqlite and postgresql are supported")
    return parsed


def shown(url: URL) -> str:
    return url.render_as_string(hide_password=True)


def _sqlite_setup(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        # pysqlite's own transaction handling starts transactions late and deferred; turn it off
        # so that SQLAlchemy's BEGIN below is the only one.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        # WAL: `runs ls` and the web page read while an executor writes, without blocking each
        # other.  busy_timeout: a second writer (another submitter process) waits for the lock
        # instead of failing at once.  foreign_keys: SQLite ignores REFERENCES without it.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={_SQLITE_BUSY_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        # IMMEDIATE takes the write lock up front: a read-then-write transition can then never
        # deadlock against another one upgrading its read lock (SQLITE_BUSY without waiting).
        # Readers begin deferred: in WAL mode they read one snapshot and block no writer.
        read = connection.get_execution_options().get(READ_ONLY, False)
        connection.exec_driver_sql("BEGIN" if read else "BEGIN IMMEDIATE")


def reading(engine: Engine) -> Engine:
    """The engine for multi-statement reads that must see one snapshot (a record is several rows).

    PostgreSQL's default READ COMMITTED gives each statement its own snapshot, so a reader could
    see a run's state from before a transition and its devices from after; REPEATABLE READ fixes
    the snapshot at the first statement.  SQLite's read transactions are snapshots already.
    """
    if engine.dialect.name == "postgresql":
        return engine.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
    return engine.execution_options(**{READ_ONLY: True})


def make_engine(url: str | URL | None = None) -> Engine:
    parsed = url if isinstance(url, URL) else resolve_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    try:
        engine = create_engine(parsed, pool_pre_ping=parsed.get_backend_name() == "postgresql")
    except ImportError as e:
        raise StoreError(f"store {shown(parsed)}: driver missing ({e.name}); install drakit[store]") from None
    if parsed.get_backend_name() == "sqlite":
        _sqlite_setup(engine)
    return engine


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    return config


def revisions() -> tuple[str, ...]:
    """Every schema revision this drakit ships, oldest first."""
    return tuple(reversed([s.revision for s in ScriptDirectory.from_config(_config()).walk_revisions()]))


def head_revision() -> str:
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    """The schema revision the store is at, ``None`` for an empty database."""
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection, opts={"version_table": _VERSION_TABLE}).get_current_revision()
    except SQLAlchemyError as e:
        raise StoreError(f"store {shown(engine.url)}: {first_line(e)}") from None


def upgrade(engine: Engine, revision: str = "head") -> str | None:
    """Migrate to ``revision`` in one transaction (so a crash leaves the old schema); returns the new one.

    Concurrent openers are serialised: PostgreSQL by an advisory lock, SQLite by BEGIN IMMEDIATE.
    """
    current = current_revision(engine)
    if current is not None and current not in revisions():
        raise StoreError(
            f"store {shown(engine.url)} is at schema revision {current}, newer than this drakit knows "
            f"(head {head_revision()}); upgrade drakit"
        )
    config = _config()
    try:
        with engine.begin() as connection:
            if engine.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    except SQLAlchemyError as e:
        raise StoreError(f"store {shown(engine.url)}: {first_line(e)}") from None
    return current_revision(engine)


def first_line(error: BaseException) -> str:
    origin = getattr(error, "orig", None) or error
    lines = str(origin).strip().splitlines()
    return lines[0] if lines else type(origin).__name__
