"""The tenancy matrix: every endpoint × {owner team, other team, admin, anonymous} × {read, write}.

The world has the same objects in both teams' namespaces (``tests.unit.web.world``); each case asks
for the *owner's* objects.  The owner and the admin must get them (the case can fail), the other
team and anonymous callers must get the documented refusal or an answer in which no name of the
owner's namespace appears, and nobody without a token changes anything.  Run for both teams as
owner, so neither direction leaks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from drakit.web.app import create_app
from drakit.web.simulations import Simulations
from drakit.web.state import StaticSource
from tests.unit.web import world as w
from tests.unit.web.conftest import bearer

CALLERS = ("owner", "other", "admin", "anonymous")


@dataclass(frozen=True)
class Case:
    method: str
    route: str  # the OpenAPI path, for the coverage check
    url: Callable[[str, dict[str, str]], str]  # (owner team, context) -> URL
    status: dict[str, int]  # caller -> expected status
    shows: bool = True  # the owner's names must appear in the owner's and the admin's answer
    body: bool = False  # POST the scenario


def _ns(team: str) -> str:
    return w.TEAMS[team]


READ = [
    Case("GET", "/api/v1/inventory", lambda t, _: "/api/v1/inventory?limit=5000",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 200}),
    Case("GET", "/api/v1/fleet", lambda t, _: "/api/v1/fleet",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 200}, shows=False),
    Case("GET", "/api/v1/pending", lambda t, _: "/api/v1/pending",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 401}),
    Case("GET", "/api/v1/pending", lambda t, _: f"/api/v1/pending?namespace={_ns(t)}",
         {"owner": 200, "other": 404, "admin": 200, "anonymous": 401}),
    Case("GET", "/api/v1/namespaces/{namespace}/pods/{name}/explanation",
         lambda t, _: f"/api/v1/namespaces/{_ns(t)}/pods/train-0/explanation",
         {"owner": 200, "other": 404, "admin": 200, "anonymous": 401}),
    Case("GET", "/api/v1/namespaces/{namespace}/pods/{name}/explanation",
         lambda t, _: f"/api/v1/namespaces/{_ns(t)}/pods/{t}-big/explanation",
         {"owner": 200, "other": 404, "admin": 200, "anonymous": 401}),
    Case("GET", "/api/v1/namespaces/{namespace}/claims/{name}/explanation",
         lambda t, _: f"/api/v1/namespaces/{_ns(t)}/claims/{t}-runner-gpus/explanation",
         {"owner": 200, "other": 404, "admin": 200, "anonymous": 401}),
    Case("GET", "/api/v1/profiles", lambda t, _: "/api/v1/profiles",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 200}, shows=False),
    Case("GET", "/api/v1/profiles/eligibility", lambda t, _: "/api/v1/profiles/eligibility",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 200}, shows=False),
    Case("GET", "/api/v1/queues", lambda t, _: "/api/v1/queues",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 401}),
    Case("GET", "/api/v1/runs", lambda t, _: "/api/v1/runs",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 401}),
    Case("GET", "/api/v1/runs/{run_id}", lambda t, _: f"/api/v1/runs/run-{t}",
         {"owner": 200, "other": 404, "admin": 200, "anonymous": 401}),
    Case("GET", "/api/v1/comparisons", lambda t, _: "/api/v1/comparisons?by=profile",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 401}, shows=False),
    Case("GET", "/api/v1/simulations", lambda t, c: "/api/v1/simulations",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 401}),
    Case("GET", "/api/v1/simulations/{sim_id}", lambda t, c: f"/api/v1/simulations/{c['sim-' + t]}",
         {"owner": 200, "other": 404, "admin": 200, "anonymous": 401}),
    Case("GET", "/api/v1/simulations/{sim_id}/report", lambda t, c: f"/api/v1/simulations/{c['sim-' + t]}/report",
         {"owner": 200, "other": 404, "admin": 200, "anonymous": 401}, shows=False),
    Case("GET", "/api/v1/trial", lambda t, _: "/api/v1/trial",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 401}, shows=False),
    Case("GET", "/api/v1/whoami", lambda t, _: "/api/v1/whoami",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 200}, shows=False),
    Case("GET", "/healthz", lambda t, _: "/healthz",
         {"owner": 200, "other": 200, "admin": 200, "anonymous": 200}, shows=False),
]
WRITE = [
    Case("POST", "/api/v1/simulations", lambda t, _: "/api/v1/simulations",
         {"owner": 202, "other": 202, "admin": 202, "anonymous": 401}, shows=False, body=True),
    Case("POST", "/api/v1/refresh", lambda t, _: "/api/v1/refresh",
         {"owner": 403, "other": 403, "admin": 200, "anonymous": 401}, shows=False),
]


@pytest.fixture(scope="module")
def env() -> Iterator[tuple[TestClient, w.World, dict[str, str]]]:
    world = w.world()
    sims = Simulations(processes=False, workers=1, max_queued=64)
    app = create_app(StaticSource(w.snapshot(), "two-teams"), world.store, world.auth, catalog=world.catalog,
                     ledger=world.ledger, simulations=sims)
    with TestClient(app, raise_server_exceptions=False) as c:
        context = {}
        for team in w.TEAMS:
            got = c.post("/api/v1/simulations", content=w.scenario_text(), headers=bearer(world, team))
            assert got.status_code == 202, got.text
            context["sim-" + team] = got.json()["id"]
        for team in w.TEAMS:  # both finished: their reports exist
            assert w.wait(c, context["sim-" + team], bearer(world, team))["state"] == "succeeded"
        yield c, world, context
    sims.close()


def _marks(team: str, context: dict[str, str]) -> list[str]:
    """Strings only the owner's objects carry."""
    return [w.TEAMS[team], f"{team}-runner", f"run-{team}", f"wait-{team}", context["sim-" + team],
            f'"teams":["{team}"]']


def _caller(owner: str, caller: str) -> str:
    if caller == "owner":
        return owner
    if caller == "other":
        return next(t for t in w.TEAMS if t != owner)
    return caller


@pytest.mark.parametrize("owner", list(w.TEAMS))
@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c.method} {c.url('vision', {'sim-vision': 'ID'})}")
                                  for c in READ + WRITE])
def test_matrix(env: tuple[TestClient, w.World, dict[str, str]], case: Case, caller: str, owner: str) -> None:
    c, world, context = env
    who = _caller(owner, caller)
    kwargs: dict[str, Any] = {"headers": bearer(world, who)}
    if case.body:
        kwargs["content"] = w.scenario_text()
    url = case.url(owner, context)
    got = c.request(case.method, url, **kwargs)
    assert got.status_code == case.status[caller], got.text
    if got.status_code >= 400:
        assert got.headers["content-type"] == "application/problem+json"
    text = got.text
    marks = _marks(owner, context)
    if caller in ("other", "anonymous"):
        leaked = [m for m in marks if m in text and m not in url]  # a refusal may quote the request
        assert leaked == [], f"{caller} sees {leaked} of {owner}"
    elif case.shows and got.status_code == 200:
        assert any(m in text for m in marks), f"{caller} does not see {owner}'s objects: the case tests nothing"
    if caller == "owner":  # nor does the owner see the other team's names inside its own answers
        other = _caller(owner, "other")
        leaked = [m for m in _marks(other, context) if m in text]
        assert leaked == [], f"{owner} sees {leaked} of {other}"


def test_teams_compare_only_their_own_runs(env: tuple[TestClient, w.World, dict[str, str]]) -> None:
    c, world, _ = env
    counts = {who: [g["n"] for g in c.get("/api/v1/comparisons", headers=bearer(world, who)).json()["groups"]]
              for who in ("vision", "nlp", "admin")}
    assert counts == {"vision": [1], "nlp": [1], "admin": [2]}


def test_the_matrix_covers_every_route(env: tuple[TestClient, w.World, dict[str, str]]) -> None:
    c, _, _ = env
    routes = {(m.upper(), path) for path, ops in c.app.openapi()["paths"].items() for m in ops}  # type: ignore[attr-defined]
    assert routes == {(case.method, case.route) for case in READ + WRITE}
