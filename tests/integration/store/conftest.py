"""One store suite over the in-memory twin, SQLite and a real PostgreSQL.

PostgreSQL comes from ``$DRAKIT_TEST_PG_URL`` (set by ``.ci/run``) or is started here by
``.ci/pg-start``; without one the PostgreSQL cases skip locally and fail under CI.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.gating import in_ci, unavailable

try:
    from sqlalchemy import Engine, make_url, text

    from drakit.store.engine import make_engine
except ImportError:  # [test] pulls in drakit[store], so under CI a missing driver is a failure
    if in_ci():
        raise
    pytest.skip("the store tests need drakit[store]", allow_module_level=True)

_ROOT = Path(__file__).resolve().parents[3]
DIALECTS = ("memory", "sqlite", "postgresql")


def _server_url() -> str:
    url = os.environ.get("DRAKIT_TEST_PG_URL", "")
    if url:
        return url
    started = subprocess.run([str(_ROOT / ".ci" / "pg-start")], capture_output=True, text=True, check=False)
    if started.returncode != 0:
        unavailable(f"no PostgreSQL for the store tests: {started.stderr.strip().splitlines()[-1:]}")
    return started.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A database of its own for this test session on the shared server.

    Tests wipe their schema between cases; a private database keeps two sessions on one server
    (two checkouts, or a benchmark beside the suite) from wiping each other's tables.
    """
    server = make_url(_server_url())
    name = f"drakit_test_{os.getpid()}_{secrets.token_hex(3)}"
    admin = make_engine(server.render_as_string(hide_password=False)).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _reset(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(text("DROP SCHEMA public CASCADE"))
        connection.execute(text("CREATE SCHEMA public"))


@pytest.fixture
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str], str]]:
    """A function dialect → URL of an empty database of that dialect (SQLite file or a wiped PostgreSQL)."""
    engines: list[Engine] = []

    def url_for(dialect: str) -> str:
        if dialect == "sqlite":
            return f"sqlite:///{tmp_path / 'records.db'}"
        url: str = request.getfixturevalue("pg_url")
        engine = make_engine(url)
        _reset(engine)
        engines.append(engine)
        return url

    yield url_for
    for engine in engines:
        engine.dispose()
