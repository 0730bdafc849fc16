"""An in-process app over the two-team world (:mod:`tests.unit.web.world`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from drakit.web.app import create_app
from drakit.web.simulations import Simulations
from drakit.web.state import StaticSource
from tests.unit.web import world as w


@pytest.fixture(scope="module")
def world() -> w.World:
    return w.world()


@pytest.fixture(scope="module")
def client(world: w.World) -> Iterator[TestClient]:
    sims = Simulations(processes=False, workers=1, max_queued=4)
    app = create_app(StaticSource(w.snapshot(), "two-teams"), world.store, world.auth, catalog=world.catalog,
                     ledger=world.ledger, simulations=sims)
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c
    sims.close()


def bearer(world: w.World, who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.tokens[who]}"} if who != "anonymous" else {}
