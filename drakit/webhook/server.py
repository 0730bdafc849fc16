"""The HTTPS endpoint: a bare ASGI app around :func:`drakit.webhook.mutate.mutate`, served by uvicorn.

The API server waits on this endpoint for every labelled workload it admits, so the request path
is kept to what the answer needs: the body is read as bytes, parsed with ``orjson`` (the stdlib's
``json`` where it is missing) and the answer written as bytes.  No framework router, request
model or middleware sits in front of it; measured with ``benchmarks/bench_webhook.py``, a FastAPI
route (even without a pydantic model) cost more than the decision itself.  uvicorn picks
``uvloop`` and ``httptools`` when installed (the ``drakit[webhook]`` extra installs both).

Several worker processes share one listening socket (``--workers``); each gets the injector by
pickling, so profiles are compiled once, in the parent.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Protocol

from drakit.webhook.install import HEALTH_PATH, MUTATE_PATH
from drakit.webhook.mutate import Injector, MalformedReview, mutate

try:
    import orjson

    def _loads(body: bytes) -> Any:
        return orjson.loads(body)

    def _dumps(obj: Any) -> bytes:
        return orjson.dumps(obj)
except ImportError:  # pragma: no cover - the extra installs orjson
    def _loads(body: bytes) -> Any:
        return json.loads(body)

    def _dumps(obj: Any) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode()

# An AdmissionReview carries one object (the API server caps those at 3 MiB) and, on UPDATE, its
# old version; anything much larger is not from an API server.
MAX_BODY = 8 * 1024 * 1024

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Route(Protocol):
    """One endpoint: the request body in, the status and the JSON body out (synchronous: the
    decision is a fraction of a millisecond of pure CPU, nothing to await)."""

    def __call__(self, body: bytes) -> tuple[int, bytes]: ...


@dataclass(frozen=True)
class MutateRoute:
    injector: Injector

    def __call__(self, body: bytes) -> tuple[int, bytes]:
        try:
            decision = mutate(_loads(body), self.injector)
        except (ValueError, MalformedReview) as e:  # orjson's and json's decode errors are ValueErrors
            return 400, _error(f"not an AdmissionReview v1: {e}")
        return 200, _dumps(decision.response())


@dataclass(frozen=True)
class HealthRoute:
    answer: bytes

    def __call__(self, body: bytes) -> tuple[int, bytes]:
        return 200, self.answer


def _error(message: str) -> bytes:
    return _dumps({"error": message})


_HEADERS = [(b"content-type", b"application/json")]


@dataclass(frozen=True)
class AdmissionApp:
    """ASGI 3: ``routes`` maps ``(method, path)`` to a :class:`Route`; lifespan events are answered."""

    routes: Mapping[tuple[str, str], Route]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        route = self.routes.get((scope["method"], scope["path"]))
        if route is None:
            known = any(path == scope["path"] for _, path in self.routes)
            status, payload = (405, _error(f"{scope['method']} {scope['path']}: method not allowed")) if known else (
                404, _error(f"{scope['path']}: no such endpoint (POST {MUTATE_PATH}, GET {HEALTH_PATH})"))
        else:
            body = await _body(receive)
            status, payload = (413, _error(f"request body over {MAX_BODY} bytes")) if body is None else route(body)
        await send({"type": "http.response.start", "status": status,
                    "headers": [*_HEADERS, (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})


async def _body(receive: Receive) -> bytes | None:
    """The whole request body, or None past :data:`MAX_BODY`."""
    message = await receive()
    body = message.get("body", b"")
    if not message.get("more_body"):
        return bytes(body)
    parts = [body]
    size = len(body)
    while message.get("more_body"):
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        parts.append(chunk)
    return b"".join(parts)


def create_app(injector: Injector, extra: Mapping[tuple[str, str], Route] | None = None) -> AdmissionApp:
    """``POST /mutate`` (AdmissionReview v1) and ``GET /healthz`` (the served profiles), plus ``extra``."""
    health = HealthRoute(_dumps({"profiles": sorted(injector.rules)}))
    return AdmissionApp({("POST", MUTATE_PATH): MutateRoute(injector), ("GET", HEALTH_PATH): health, **(extra or {})})


def serve(injector: Injector, *, cert: str, key: str, host: str = "0.0.0.0", port: int = 8443, workers: int = 1,
          app: Any = None, loop: str = "auto", http: str = "auto") -> None:
    """Run until interrupted; the API server only talks HTTPS to webhooks.  ``app``, ``loop`` and
    ``http`` are for the benchmark, which serves an echo route next to ``/mutate`` and compares
    uvicorn's event loops and HTTP parsers."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config(app or create_app(injector), host=host, port=port, ssl_certfile=cert, ssl_keyfile=key,
                            log_level="warning", access_log=False, proxy_headers=False, server_header=False,
                            workers=workers, loop=loop, http=http)
    if workers == 1:
        uvicorn.Server(config).run()
        return
    # uvicorn.run refuses an app object with workers (it wants an import string to import in each
    # child); the app pickles, so the supervisor can hand it to its spawned workers as it is.
    Multiprocess(config, sockets=[config.bind_socket()]).run()
