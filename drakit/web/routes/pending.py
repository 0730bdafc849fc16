"""Pods and claims with their explanation (``drakit explain … -o json``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response

from drakit.web import views
from drakit.web.deps import Json, cached, ok, problems, reader

router = APIRouter(prefix="/api/v1", tags=["pods"])

_NAME = Path(min_length=1, max_length=253)


@router.get("/pending", response_class=Json, responses={**ok(), **problems(400, 401, 404)})
async def pending(
    request: Request,
    namespace: Annotated[str | None, Query(max_length=63)] = None,
    selector: Annotated[str | None, Query(max_length=4096, description="Pod labels, kubectl's -l syntax.")] = None,
) -> Response:
    """Every waiting pod that requests devices, grouped by verdict and cause (``explain pods --all-pending``)."""
    who = reader(request)
    return await cached(request, ("pending", namespace, selector, views.visibility(who)),
                        lambda rev: views.pending(rev, who, namespace, selector))


@router.get("/namespaces/{namespace}/pods/{name}/explanation", response_class=Json,
            responses={**ok(), **problems(401, 404)})
async def explain_pod(request: Request, namespace: Annotated[str, _NAME], name: Annotated[str, _NAME]) -> Response:
    """Why the pod waits: verdict, evidence, owner and a suggested fix (``explain pod/NAME -n NS``)."""
    return await _explain(request, "pod", namespace, name)


@router.get("/namespaces/{namespace}/claims/{name}/explanation", response_class=Json,
            responses={**ok(), **problems(401, 404)})
async def explain_claim(request: Request, namespace: Annotated[str, _NAME], name: Annotated[str, _NAME]) -> Response:
    """Why the claim is not allocated (``explain claim/NAME -n NS``)."""
    return await _explain(request, "claim", namespace, name)


async def _explain(request: Request, kind: str, namespace: str, name: str) -> Response:
    who = reader(request)
    return await cached(request, ("explain", kind, namespace, name, views.visibility(who)),
                        lambda rev: views.explain(rev, who, kind, namespace, name))
