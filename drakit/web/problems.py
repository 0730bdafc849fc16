"""Errors as ``application/problem+json`` (RFC 9457): the one place exceptions become responses.

Each body has ``type`` (a stable URN per kind of problem), ``title``, ``status``, ``detail`` (the
core's one-line message, numbers included) and, where the core or the request validation knows
it, ``field`` (the path of the first bad field) and ``errors`` (every field error).  The mapping
mirrors ``cli/console.run_guarded``: NotFound → 404, InvalidArgument and InvalidInput → 422,
a usage error in a query → 400.  Anything unexpected is a 500 whose body names no internals.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from drakit.errors import DrakitError, InvalidArgument, InvalidInput, NotFound, SelectorError, UsageError
from drakit.web.auth import BadToken

__all__ = ["PROBLEM", "Forbidden", "TooLarge", "Unauthorized", "finite", "problem", "problem_body", "problem_of"]

PROBLEM = "application/problem+json"
_log = logging.getLogger("drakit.web")


class Unauthorized(DrakitError):
    """The request needs a token and has none (401)."""


class Forbidden(DrakitError):
    """The caller is known but may not do this (403): a team asking for an admin's action."""


class TooLarge(DrakitError):
    """The request body exceeds the server's limit (413)."""


class Problem(Exception):
    """A ready problem (status, code, detail) raised inside the app: control flow, never public."""

    def __init__(self, status: int, code: str, title: str, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.status, self.code, self.title, self.detail, self.extra = status, code, title, detail, extra


def problem_body(status: int, code: str, title: str, detail: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"type": f"urn:drakit:problem:{code}", "title": title, "status": status, "detail": detail}
    body.update({k: v for k, v in extra.items() if v is not None})
    return body


def finite(value: Any) -> Any:
    """Request validation echoes the bad input; JSON has no NaN or Infinity, so they become strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def problem(status: int, code: str, title: str, detail: str, **extra: Any) -> tuple[int, bytes]:
    body = problem_body(status, code, title, detail, **extra)
    return status, json.dumps(finite(body), ensure_ascii=False, allow_nan=False).encode()


def _field_errors(e: InvalidInput) -> list[dict[str, Any]]:
    out = []
    for p in e.problems:
        for fe in p.errors:
            out.append({"object": str(p.ref), "source": p.ref.location() or None, **fe.to_json()})
    return out


def problem_of(e: BaseException) -> tuple[int, bytes]:
    """Status and body for any exception; never a traceback in the body."""
    from drakit.web.views import Expired

    if isinstance(e, Problem):
        return problem(e.status, e.code, e.title, e.detail, **e.extra)
    message = str(e).splitlines()[0] if str(e) else type(e).__name__
    if isinstance(e, BadToken):
        return problem(401, "bad-token", "Unauthorized", message, hint="create one with drakit token create")
    if isinstance(e, Unauthorized):
        return problem(401, "token-required", "Unauthorized", message,
                       hint="send Authorization: Bearer <token> (drakit token create)")
    if isinstance(e, Forbidden):
        return problem(403, "forbidden", "Forbidden", message)
    if isinstance(e, TooLarge):
        return problem(413, "too-large", "Content Too Large", message)
    if isinstance(e, NotFound):
        return problem(404, "not-found", "Not Found", message)
    if isinstance(e, Expired):
        return problem(410, "expired", "Gone", message, hint="list again without continue")
    if isinstance(e, InvalidInput):
        errors = _field_errors(e)
        detail = str(e).splitlines()
        return problem(422, "invalid-input", "Unprocessable Content", detail[0] if detail else message,
                       field=errors[0]["field"] if errors else None, errors=errors or None,
                       lines=detail if len(detail) > 1 else None)
    if isinstance(e, SelectorError):
        return problem(422, "invalid-selector", "Unprocessable Content", message, field=e.path or None)
    if isinstance(e, InvalidArgument):
        return problem(422, "invalid-argument", "Unprocessable Content", message,
                       field=getattr(e, "path", None) or None)
    if isinstance(e, UsageError):
        return problem(400, "bad-request", "Bad Request", message)
    from drakit.web.simulations import Busy

    if isinstance(e, Busy):
        return problem(503, "busy", "Service Unavailable", message)
    if type(e).__name__ == "StoreError":  # drakit.store.engine, imported only with the store extra
        return problem(503, "store-unavailable", "Service Unavailable", message)
    if isinstance(e, DrakitError):
        return problem(422, "error", "Unprocessable Content", message)
    _log.exception("unexpected error", exc_info=e)
    return problem(500, "internal", "Internal Server Error", "the server failed on this request; it is logged")
