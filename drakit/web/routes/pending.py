"""Pods and claims with their explanation (``drakit explain … -o json``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from drakit.web import views
from drakit.web.deps import Json, ok, problems, reader, state

router = APIRouter(prefix="/api/v1", tags=["pods"])

_NAME = Path(min_length=1, max_length=253)


@router.get("/pending", response_class=Json, responses={**ok(), **problems(400, 401, 404)})
def pending(
    request: Request,
    namespace: Annotated[str | None, Query(max_length=63)] = None,
    selector: Annotated[str | None, Query(max_length=4096, description="Pod labels, kubectl's -l syntax.")] = None,
) -> Json:
    """Every waiting pod that requests devices, grouped by verdict and cause (``explain pods --all-pending``)."""
    who = reader(request)
    return Json(views.pending(state(request).revision, who, namespace, selector))


@router.get("/namespaces/{namespace}/pods/{name}/explanation", response_class=Json,
            responses={**ok(), **problems(401, 404)})
def explain_pod(request: Request, namespace: Annotated[str, _NAME], name: Annotated[str, _NAME]) -> Json:
    """Why the pod waits: verdict, evidence, owner and a suggested fix (``explain pod/NAME -n NS``)."""
    who = reader(request)
    return Json(views.explain(state(request).revision, who, "pod", namespace, name))


@router.get("/namespaces/{namespace}/claims/{name}/explanation", response_class=Json,
            responses={**ok(), **problems(401, 404)})
def explain_claim(request: Request, namespace: Annotated[str, _NAME], name: Annotated[str, _NAME]) -> Json:
    """Why the claim is not allocated (``explain claim/NAME -n NS``)."""
    who = reader(request)
    return Json(views.explain(state(request).revision, who, "claim", namespace, name))
