"""The test PostgreSQL: the server's URL and a private database on it, for every suite that needs one.

The server comes from ``$DRAKIT_TEST_PG_URL`` (set by ``.ci/run``) or is started by
``.ci/pg-start``; without one the caller skips locally and fails under CI. A private database
per caller keeps suites that wipe their schema (the store suite) from wiping each other's tables
when two sessions share one server.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import make_url, text

from drakit.store.engine import make_engine
from tests.integration.gating import unavailable

_ROOT = Path(__file__).resolve().parents[2]


def server_url(purpose: str) -> str:
    url = os.environ.get("DRAKIT_TEST_PG_URL", "")
    if url:
        return url
    started = subprocess.run([str(_ROOT / ".ci" / "pg-start")], capture_output=True, text=True, check=False)
    if started.returncode != 0:
        unavailable(f"no PostgreSQL for {purpose}: {started.stderr.strip().splitlines()[-1:]}")
    return started.stdout.strip().splitlines()[-1]


@contextmanager
def private_database(purpose: str, prefix: str) -> Iterator[str]:
    """The URL of a database created for the caller, dropped (connections forced off) after."""
    server = make_url(server_url(purpose))
    name = f"{prefix}_{os.getpid()}_{secrets.token_hex(4)}"
    admin = make_engine(server.render_as_string(hide_password=False)).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
