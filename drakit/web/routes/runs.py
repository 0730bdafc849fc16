"""Recorded runs and their comparison by device (``runs ls|show|compare -o json``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from drakit.web import views
from drakit.web.deps import Json, ok, problems, reader, state

router = APIRouter(prefix="/api/v1", tags=["runs"])


@router.get("/runs", response_class=Json, responses={**ok(), **problems(401, 404, 503)})
def runs(
    request: Request,
    run_state: Annotated[str | None, Query(alias="state", max_length=32)] = None,
    limit: Annotated[int | None, Query(ge=1, le=10_000)] = None,
) -> Json:
    """Runs of the caller's namespaces, oldest first."""
    who = reader(request)
    return Json(views.runs(state(request), who, run_state, limit))


@router.get("/runs/{run_id}", response_class=Json, responses={**ok(), **problems(401, 404, 503)})
def run(request: Request, run_id: Annotated[str, Path(min_length=1, max_length=1024)]) -> Json:
    """Everything recorded about one run."""
    who = reader(request)
    return Json(views.run(state(request), who, run_id))


@router.get("/comparisons", response_class=Json, responses={**ok(), **problems(401, 404, 503)})
def compare(
    request: Request,
    by: Annotated[str, Query(max_length=32, description="product, profile or driverVersion.")] = "product",
    metric: Annotated[str, Query(max_length=1024, description="runtime, startup or a correctness metric.")] = "runtime",
) -> Json:
    """n, median and spread of a metric per group of the caller's runs."""
    who = reader(request)
    return Json(views.compare_runs(state(request), who, by, metric))
