"""Simulations: submit a scenario (the body), poll its state, fetch the report; each owned by its team."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from drakit.errors import NotFound
from drakit.web.deps import Json, ok, problems, state, writer
from drakit.web.simulations import Simulations

router = APIRouter(prefix="/api/v1", tags=["simulations"])

_ID = Path(min_length=1, max_length=64)
_BODY = {
    "required": True,
    "content": {
        "application/yaml": {"schema": {"type": "string"}},
        "application/json": {"schema": {"type": "object"}},
    },
}


def _sims(request: Request) -> Simulations:
    sims = state(request).simulations
    if sims is None:
        raise NotFound("simulations are off on this server")
    return sims


@router.post("/simulations", response_class=Json, status_code=202, openapi_extra={"requestBody": _BODY},
             responses={**ok(status=202), **problems(401, 404, 413, 503)})
async def submit(request: Request, seed: Annotated[int | None, Query(ge=0, le=2**63 - 1)] = None) -> Json:
    """Check the scenario (a ``kind: Scenario`` stream, YAML or JSON) and queue it; poll the returned document."""
    who = writer(request)
    sims = _sims(request)
    body = await request.body()  # bounded by the app's body limit
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        from drakit.errors import InvalidInput

        raise InvalidInput(f"scenario: not UTF-8 (byte {e.start})") from None
    from starlette.concurrency import run_in_threadpool

    sim = await run_in_threadpool(sims.submit, text, who, source="scenario", seed=seed)
    return Json(sim.to_json(), status_code=202, headers={"Location": f"/api/v1/simulations/{sim.id}"})


@router.get("/simulations", response_class=Json, responses={**ok(), **problems(401, 404)})
def listing(request: Request) -> Json:
    """The caller's team's simulations, oldest first."""
    who = writer(request)
    return Json({"simulations": [s.to_json() for s in _sims(request).list(who)]})


@router.get("/simulations/{sim_id}", response_class=Json, responses={**ok(), **problems(401, 404)})
def status(request: Request, sim_id: Annotated[str, _ID]) -> Json:
    who = writer(request)
    return Json(_sims(request).get(sim_id, who).to_json())


@router.get("/simulations/{sim_id}/report", response_class=Json, responses={**ok(), **problems(401, 404)})
def report(request: Request, sim_id: Annotated[str, _ID]) -> Json:
    """``drakit simulate -o json``'s report, once the simulation succeeded."""
    who = writer(request)
    return Json(_sims(request).report(sim_id, who))
