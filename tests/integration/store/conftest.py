"""One store suite over the in-memory twin, SQLite and a real PostgreSQL.

PostgreSQL comes from ``$DRAKIT_TEST_PG_URL`` (set by ``.ci/run``) or is started here by
``.ci/pg-start``; without one the PostgreSQL cases skip locally and fail under CI.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.gating import in_ci

try:
    from sqlalchemy import Engine, text

    from drakit.store.engine import make_engine
    from tests.integration.pgdb import private_database
except ImportError:  # [test] pulls in drakit[store], so under CI a missing driver is a failure
    if in_ci():
        raise
    pytest.skip("the store tests need drakit[store]", allow_module_level=True)

DIALECTS = ("memory", "sqlite", "postgresql")


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A database of its own for this test session on the shared server (see tests/integration/pgdb.py)."""
    with private_database("the store tests", "drakit_test") as url:
        yield url


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
