"""The caller, health, and the admin's refresh."""

from __future__ import annotations

from fastapi import APIRouter, Request

from drakit.web import views
from drakit.web.deps import Json, admin, caller, ok, problems, state

router = APIRouter(tags=["meta"])


@router.get("/healthz", response_class=Json, responses=ok())
async def healthz() -> Json:
    """Liveness: answers without touching the snapshot (the load benchmark's trivial endpoint)."""
    return Json({"ok": True})


@router.get("/api/v1/whoami", response_class=Json, responses={**ok(), **problems(401)})
def whoami(request: Request) -> Json:
    """The caller as the server sees it, the source and the snapshot revision."""
    return Json(views.whoami(state(request), caller(request)))


@router.post("/api/v1/refresh", response_class=Json, responses={**ok(), **problems(401, 403)})
def refresh(request: Request) -> Json:
    """Read the source again now (platform admins only); the answer names the revision served."""
    admin(request)
    st = state(request)
    rev = st.refresh()
    return Json({"revision": rev.number, "lastError": st.last_error or None})
