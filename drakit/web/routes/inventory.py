"""Devices with attributes and allocation state (``drakit get devices -o json``), paged; the fleet summary."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from drakit.web import views
from drakit.web.deps import Json, cached, caller, ok, problems

router = APIRouter(prefix="/api/v1", tags=["inventory"])

_DEVICE_LIST = {
    "type": "object", "required": ["kind", "metadata", "items"],
    "properties": {"kind": {"const": "DeviceList"}, "metadata": {"type": "object"},
                   "items": {"type": "array", "items": {"type": "object"}}},
}


@router.get("/inventory", response_class=Json, responses={**ok(_DEVICE_LIST), **problems(400, 401, 410)})
async def inventory(
    request: Request,
    selector: Annotated[str | None, Query(max_length=4096, description="Device attributes in label syntax.")] = None,
    free: Annotated[bool, Query(description="Only devices no claim holds.")] = False,
    node: Annotated[str | None, Query(max_length=253)] = None,
    driver: Annotated[str | None, Query(max_length=253)] = None,
    product: Annotated[str | None, Query(max_length=1024)] = None,
    limit: Annotated[int, Query(ge=1, le=views.MAX_LIMIT)] = views.DEFAULT_LIMIT,
    cont: Annotated[str | None, Query(alias="continue", max_length=1024)] = None,
) -> Response:
    """Every device of the current snapshot, filtered; ``metadata.continue`` pages through the rest.

    Holders (claims, pods) in namespaces the caller may not see read ``<hidden>``.
    """
    who = caller(request)
    q = views.InventoryQuery(selector, free, node, driver, product, limit, cont)
    return await cached(request, ("inventory", q, views.visibility(who)), lambda rev: views.inventory(rev, who, q))


@router.get("/fleet", response_class=Json, responses={**ok(), **problems(401)})
async def fleet(request: Request) -> Response:
    """Devices per node and product, free and allocated (the heat map's data; no holder names)."""
    caller(request)
    return await cached(request, ("fleet",), views.fleet_summary)
