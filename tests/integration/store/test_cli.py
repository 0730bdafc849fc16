"""``drakit store upgrade`` and ``status`` through the real entry point."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from drakit.cli.testing import run
from drakit.store.engine import head_revision
from tests.integration.store.conftest import DIALECTS


@pytest.mark.parametrize("dialect", DIALECTS[1:])
def test_upgrade_then_status(dialect: str, empty_url: Callable[[str], str]) -> None:
    url = empty_url(dialect)
    first = run("store", "upgrade", "--store", url)
    assert first.exit_code == 0, first.stderr
    assert first.stdout.strip().endswith(f"schema (empty) -> {head_revision()}")
    again = run("store", "upgrade", "--store", url)
    assert again.stdout.strip().endswith(f"schema {head_revision()} -> {head_revision()}")
    status = run("store", "status", "--store", url)
    assert f"schema {head_revision()}, newest {head_revision()}" in status.stdout


def test_unreachable_store_is_one_line_without_the_password() -> None:
    result = run("store", "status", "--store", "postgresql://u:secret@127.0.0.1:1/db")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "secret" not in result.stderr
    assert result.stderr.startswith("error: store postgresql+psycopg://u:***@127.0.0.1:1/db: ")
