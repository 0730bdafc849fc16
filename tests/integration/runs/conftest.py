"""Stores for the executor checks: a SQLite file, or a private database on the test PostgreSQL.

Each PostgreSQL case gets a database of its own (created and dropped here), so these checks
never touch what the store suite resets.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.gating import in_ci

try:
    from tests.integration.pgdb import private_database
except ImportError:
    if in_ci():
        raise
    pytest.skip("the executor checks need drakit[store]", allow_module_level=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'records.db'}"
        return
    with private_database("the executor checks", "drakit_runs") as url:
        yield url
