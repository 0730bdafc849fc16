"""schemathesis against ``/openapi.json``: generated requests (valid and not) never get a 5xx,
an undocumented status or content type, or a body that breaks its documented schema.

One built-in check is left out: "a schema-valid request is accepted".  A ``continue`` token, a
label selector and a scenario are strings whose validity no JSON Schema can express (a token is
only valid if this server issued it), so refusing a random one with a documented 422 is right.

Derandomized and bounded (examples per operation), run in-process over the two-team world with
an admin's token, so every route answers from real data rather than refusing at the door.
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from drakit.web.app import create_app
from drakit.web.simulations import Simulations
from drakit.web.state import StaticSource
from tests.unit.web import world as w

_WORLD = w.world()
_SIMS = Simulations(processes=False, workers=1, max_queued=2)
APP = create_app(StaticSource(w.snapshot(), "two-teams"), _WORLD.store, _WORLD.auth, catalog=_WORLD.catalog,
                 ledger=_WORLD.ledger, simulations=_SIMS)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)
EXAMPLES = 30


@schema.parametrize()
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
def test_api_conforms_to_its_openapi(case: schemathesis.Case) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {_WORLD.tokens['admin']}"},
                           excluded_checks=[positive_data_acceptance])
