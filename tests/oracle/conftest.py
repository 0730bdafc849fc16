from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.oracle.client import Oracle, oracle_binary


@pytest.fixture(scope="session")
def oracle() -> Iterator[Oracle]:
    client = Oracle(oracle_binary())
    yield client
    client.close()
