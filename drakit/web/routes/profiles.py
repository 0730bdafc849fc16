"""Capability profiles and their eligibility over the current snapshot (``profile eligible -o json``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from drakit.web import views
from drakit.web.deps import Json, caller, ok, problems, state

router = APIRouter(prefix="/api/v1", tags=["profiles"])


@router.get("/profiles", response_class=Json, responses={**ok(), **problems(401)})
def profiles(request: Request) -> Json:
    """The profiles the server compiles, per driver."""
    caller(request)
    return Json(views.profiles(state(request)))


@router.get("/profiles/eligibility", response_class=Json, responses={**ok(), **problems(401, 404)})
def eligibility(request: Request, profile: Annotated[str | None, Query(max_length=253)] = None) -> Json:
    """Per profile: qualifying devices by product and node, excluded ones with the reason."""
    caller(request)
    st = state(request)
    return Json(views.eligibility(st, st.revision, profile))
