"""Queues: usage against quota, borrowing, and the runs waiting with their positions."""

from __future__ import annotations

from fastapi import APIRouter, Request

from drakit.web import views
from drakit.web.deps import Json, ok, problems, reader, state

router = APIRouter(prefix="/api/v1", tags=["queues"])


@router.get("/queues", response_class=Json, responses={**ok(), **problems(401, 503)})
def queues(request: Request) -> Json:
    """The queue catalog's queues the caller may use, with what the ledger holds in each."""
    who = reader(request)
    return Json(views.queues(state(request), who))
