"""Stores for the executor checks: a SQLite file, or a private database on the test PostgreSQL.

Each PostgreSQL case gets a database of its own (created and dropped here), so these checks
never touch what the store suite resets.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.gating import in_ci, unavailable

try:
    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    from drakit.store.engine import make_engine
except ImportError:
    if in_ci():
        raise
    pytest.skip("the executor checks need drakit[store]", allow_module_level=True)

_ROOT = Path(__file__).resolve().parents[3]


def _server() -> str:
    url = os.environ.get("DRAKIT_TEST_PG_URL", "")
    if url:
        return url
    started = subprocess.run([str(_ROOT / ".ci" / "pg-start")], capture_output=True, text=True, check=False)
    if started.returncode != 0:
        unavailable(f"no PostgreSQL for the executor checks: {started.stderr.strip().splitlines()[-1:]}")
    return started.stdout.strip().splitlines()[-1]


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'records.db'}"
        return
    server = make_url(_server())
    name = f"drakit_runs_{uuid.uuid4().hex[:10]}"
    admin = make_engine(server.render_as_string(hide_password=False)).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
