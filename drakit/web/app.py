"""The web application: ``create_app(source, store, auth, clock)`` → an ASGI app over the CLI's core.

The edges are resolved by the caller (``drakit serve`` or a test) and passed in as values: the
snapshot source, the run store, the token store behind :class:`~drakit.web.auth.Auth`, the clock.
Everything served is a function in :mod:`drakit.web.views`; the routes only parse the query and
pick the caller.  Errors are problem+json (:mod:`drakit.web.problems`); bodies are bounded
before they are read; CORS is off unless origins are given.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from drakit.errors import DrakitError
from drakit.web.auth import Auth, MemoryTokenStore
from drakit.web.problems import PROBLEM, Problem, TooLarge, problem, problem_of
from drakit.web.state import SnapshotSource, WebState

if TYPE_CHECKING:
    from drakit.features import Features
    from drakit.profiles.compile import CompiledProfile
    from drakit.queues.catalog import Catalog
    from drakit.queues.ledger import QueueLedger
    from drakit.store.protocol import RecordStore
    from drakit.web.simulations import Simulations

__all__ = ["MAX_BODY_BYTES", "create_app"]

MAX_BODY_BYTES = 4 * 1024 * 1024
"""A request body (a scenario) above 4 MiB is refused with 413 before it is read: scenarios
describe nodes by template and count, so real ones are a few KiB."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGI = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    """ASGI middleware: 413 for a declared Content-Length over the limit, and for a stream that
    grows past it (chunked uploads declare nothing)."""

    def __init__(self, app: ASGI, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared < 0:
                    await _send_problem(send, *problem(400, "bad-request", "Bad Request",
                                                       "Content-Length is not a byte count"))
                    return
                if declared > self.max_bytes:
                    await _send_problem(send, *problem(413, "too-large", "Content Too Large",
                                                       f"body of {declared} bytes; at most {self.max_bytes} are read"))
                    return
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise TooLarge(f"body exceeds {self.max_bytes} bytes")
            return message

        await self.app(scope, bounded, send)


async def _send_problem(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", PROBLEM.encode()), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _respond(e: BaseException, headers: Mapping[str, str] | None = None) -> Response:
    status, body = problem_of(e)
    extra = {"Retry-After": "5"} if status == 503 else ({"WWW-Authenticate": "Bearer"} if status == 401 else {})
    return Response(body, status_code=status, media_type=PROBLEM, headers={**extra, **(headers or {})})


async def _validation(_: Request, e: Exception) -> Response:
    assert isinstance(e, RequestValidationError)
    errors = [{"field": ".".join(str(p) for p in err.get("loc", ())), "type": str(err.get("type", "")),
               "detail": str(err.get("msg", ""))} for err in e.errors()]
    first = errors[0] if errors else {"field": "", "detail": "invalid request"}
    return _respond(Problem(422, "invalid-request", "Unprocessable Content", f"{first['field']}: {first['detail']}",
                            field=first["field"] or None, errors=errors))


async def _http(request: Request, e: Exception) -> Response:
    assert isinstance(e, StarletteHTTPException)
    titles = {404: "Not Found", 405: "Method Not Allowed"}
    headers = dict(e.headers or {})
    if e.status_code == 405:
        # Starlette names the methods of the first route on the path only; a path served by two
        # handlers (GET and POST /simulations) must list both (RFC 9110's Allow).
        allowed: set[str] = set()
        for route in request.app.routes:
            if route.matches(request.scope)[0] != Match.NONE:
                allowed |= set(getattr(route, "methods", None) or ())
        headers["Allow"] = ", ".join(sorted(allowed))
    return _respond(Problem(e.status_code, "http", titles.get(e.status_code, "Error"), str(e.detail)), headers)


async def _drakit(_: Request, e: Exception) -> Response:
    return _respond(e)


def create_app(
    source: SnapshotSource,
    store: RecordStore | None = None,
    auth: Auth | None = None,
    clock: Callable[[], float] = time.time,
    *,
    catalog: Catalog | None = None,
    ledger: QueueLedger | None = None,
    profiles: Sequence[CompiledProfile] | None = None,
    features: Features | None = None,
    simulations: Simulations | None = None,
    cors_origins: Sequence[str] = (),
    max_body_bytes: int = MAX_BODY_BYTES,
) -> FastAPI:
    """The app over ``source`` (read now, once); ``auth`` defaults to no tokens and closed reads."""
    web = WebState(source, auth=auth or Auth(MemoryTokenStore()), store=store, catalog=catalog, ledger=ledger,
                   profiles=profiles, features=features, simulations=simulations, clock=clock)
    app = FastAPI(title="drakit", summary="DRA inventory, explanations, queues, runs and simulations",
                  version="v1", docs_url=None, redoc_url=None)  # no Swagger UI: it loads scripts from a CDN
    app.state.web = web
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(DrakitError, _drakit)
    app.add_exception_handler(Problem, _drakit)
    app.add_exception_handler(Exception, _drakit)  # last resort: a 500 problem, the traceback only in the log
    from drakit.web import pages
    from drakit.web.routes import inventory, meta, pending, queues, runs, trial
    from drakit.web.routes import profiles as profile_routes
    from drakit.web.routes import simulations as simulation_routes

    for module in (meta, inventory, pending, profile_routes, queues, runs, simulation_routes, trial, pages):
        app.include_router(module.router)
    if cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    return app
