"""What every route shares: the state, the caller, the JSON response, the documented problems."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request, Response

from drakit.web.auth import Principal
from drakit.web.problems import PROBLEM, Forbidden, Unauthorized, _finite
from drakit.web.state import WebState

__all__ = ["Json", "admin", "caller", "problems", "reader", "state", "writer"]


class Json(Response):
    """Compact UTF-8 JSON, written without FastAPI's per-field encoder (the documents are plain already)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        try:
            return json.dumps(content, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        except ValueError:  # a NaN in a report: JSON has none
            return json.dumps(_finite(content), ensure_ascii=False, separators=(",", ":")).encode()


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
           503: "Busy: retry later"}


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for these problem statuses (422 always: query validation)."""
    wanted = sorted({*statuses, 422})
    return {s: {"description": _TITLES[s], "content": {PROBLEM: {"schema": _PROBLEM_SCHEMA}}} for s in wanted}


def ok(schema: dict[str, Any] | None = None, status: int = 200) -> dict[int | str, dict[str, Any]]:
    return {status: {"description": "OK", "content": {"application/json": {"schema": schema or {"type": "object"}}}}}


def state(request: Request) -> WebState:
    return request.app.state.web


def caller(request: Request) -> Principal:
    return state(request).auth.principal(request.headers.get("authorization"))


def reader(request: Request) -> Principal:
    """A caller who may read namespaced data: a token, or the open demo."""
    who = caller(request)
    if who.anonymous and not who.read_all:
        raise Unauthorized("namespaced data needs a token once tokens exist (or the server runs --open-reads)")
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
