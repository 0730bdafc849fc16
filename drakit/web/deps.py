"""What every route shares: the state, the caller, the JSON response, the documented problems."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from typing import Any

from fastapi import Request, Response
from starlette.concurrency import run_in_threadpool

from drakit.web.auth import Principal
from drakit.web.problems import PROBLEM, Forbidden, Unauthorized, finite
from drakit.web.state import Revision, WebState

__all__ = ["Json", "admin", "cached", "caller", "dumps", "ok", "problems", "reader", "state", "writer"]


def dumps(content: Any) -> bytes:
    """Compact UTF-8 JSON; a NaN (a report may hold one) becomes a string, as JSON has none."""
    try:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    except ValueError:
        return json.dumps(finite(content), ensure_ascii=False, separators=(",", ":")).encode()


class Json(Response):
    """JSON written without FastAPI's per-field encoder (the documents are plain already)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)


_PROBLEM_SCHEMA = {
    "type": "object",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
        "detail": {"type": "string"}, "field": {"type": "string"}, "hint": {"type": "string"},
        "errors": {"type": "array", "items": {"type": "object"}}, "lines": {"type": "array", "items": {"type": "string"}},
    },
}
_TITLES = {400: "Bad request", 401: "No token, or a token that is not live", 403: "The caller may not do this",
           404: "Not found (or in a namespace the caller may not see)", 410: "The continue token is of an older revision",
           413: "The body is too large", 422: "Invalid argument or input, with the field path",
           503: "Busy (the simulation queue is full) or the store is unreachable: retry later"}


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for these problem statuses (422 always: query validation)."""
    wanted = sorted({*statuses, 422})
    return {s: {"description": _TITLES[s], "content": {PROBLEM: {"schema": _PROBLEM_SCHEMA}}} for s in wanted}


def ok(schema: dict[str, Any] | None = None, status: int = 200) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for the success status, ``application/json`` (any object unless ``schema``)."""
    return {status: {"description": "OK", "content": {"application/json": {"schema": schema or {"type": "object"}}}}}


async def cached(request: Request, key: Hashable, compute: Callable[[Revision], Any]) -> Response:
    """The JSON of ``compute(revision)``, serialized once per revision and ``key``.

    ``key`` must hold everything the answer depends on besides the revision (the query and the
    caller's visibility).  A hit is answered on the event loop; a miss computes in the thread
    pool (single-flight: concurrent misses of one key wait for the first).
    """
    rev = state(request).revision
    body = rev.bodies.peek(key)
    if body is None:
        body = await run_in_threadpool(rev.bodies.get_or, key, lambda: dumps(compute(rev)))
    return Response(body, media_type=Json.media_type)


def state(request: Request) -> WebState:
    return request.app.state.web


def caller(request: Request) -> Principal:
    return state(request).auth.principal(request.headers.get("authorization"))


def reader(request: Request) -> Principal:
    """A caller who may read namespaced data: a token, or the open demo."""
    who = caller(request)
    if who.anonymous and not who.read_all:
        raise Unauthorized("namespaced data needs a token once tokens exist (or the server opens reads to all)")
    return who


def writer(request: Request) -> Principal:
    who = caller(request)
    if not who.can_write:
        raise Unauthorized("changing state needs a token")
    return who


def admin(request: Request) -> Principal:
    who = writer(request)
    if not who.admin:
        raise Forbidden(f"team {who.team} may not do this: it is a platform admin's action")
    return who
