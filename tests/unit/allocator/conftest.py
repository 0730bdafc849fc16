from __future__ import annotations

from collections.abc import Iterator

import pytest

from drakit.allocator import cel
from tests.unit.allocator.cel_standin import StandIn, real_selectors_available


@pytest.fixture(autouse=True)
def _cel_backend() -> Iterator[None]:
    if not real_selectors_available():
        cel.set_backend(StandIn())
    yield
    cel.set_backend(None)
