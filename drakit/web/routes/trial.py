"""The platform trial: the profile table with its exclusion and retention checks, and executed runs."""

from __future__ import annotations

from fastapi import APIRouter, Request

from drakit.web.deps import Json, ok, problems, reader, state
from drakit.web.trial import trial

router = APIRouter(prefix="/api/v1", tags=["trial"])


@router.get("/trial", response_class=Json, responses={**ok(), **problems(401)})
def trial_report(request: Request) -> Json:
    """``drakit trial -o json``'s table and checks on the served snapshot, and the trial runs the store holds."""
    who = reader(request)
    web = state(request)
    return Json(trial(web, web.revision, who))
