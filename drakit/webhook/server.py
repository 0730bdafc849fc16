"""The HTTPS endpoint: a bare ASGI app around :func:`drakit.webhook.mutate.mutate`, served by uvicorn.

The API server waits on this endpoint for every labelled workload it admits, so the request path
is kept to what the answer needs: the body is read as bytes, parsed with ``orjson`` when installed
(:mod:`drakit.webhook.codec`) and the answer written as bytes.  No framework router, request
model or middleware sits in front of it; measured with ``benchmarks/bench_webhook.py``, a FastAPI
route (even without a pydantic model) cost more than the decision itself.  uvicorn picks
``uvloop`` and ``httptools`` when installed (the ``drakit[webhook]`` extra installs both).

Several worker processes share one listening socket (``--workers``); each gets the injector by
pickling, so profiles are compiled once, in the parent.
"""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Protocol

from drakit.webhook import codec
from drakit.webhook.install import HEALTH_PATH, MUTATE_PATH
from drakit.webhook.mutate import Injector, MalformedReview, mutate

# An AdmissionReview carries one object (the API server caps those at 3 MiB) and, on UPDATE, its
# old version; anything much larger is not from an API server.
MAX_BODY = 8 * 1024 * 1024
KEEP_ALIVE_S = 120

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
            decision = mutate(codec.loads(body), self.injector)
        except (ValueError, MalformedReview) as e:  # orjson's and json's decode errors are ValueErrors
            return 400, _error(f"not an AdmissionReview v1: {e}")
        return 200, codec.dumps(decision.response())


@dataclass(frozen=True)
class HealthRoute:
    answer: bytes

    def __call__(self, body: bytes) -> tuple[int, bytes]:
        return 200, self.answer


def _error(message: str) -> bytes:
    return codec.dumps({"error": message})


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
                    _freeze_heap()
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


def _freeze_heap() -> None:
    """Move everything alive at startup (modules, compiled profiles: some 50,000 objects) out of
    the cycle collector's reach.  Requests allocate a few hundred dicts each, so a full collection
    comes every few hundred requests, and walking that heap stopped the server for 20-90 ms: the
    whole p99 tail.  What a request allocates is freed by reference counting anyway."""
    gc.collect()
    gc.freeze()


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
    health = HealthRoute(codec.dumps({"profiles": sorted(injector.rules)}))
    return AdmissionApp({("POST", MUTATE_PATH): MutateRoute(injector), ("GET", HEALTH_PATH): health, **(extra or {})})


def uvicorn_config(app: Any, *, cert: str, key: str, host: str = "0.0.0.0", port: int = 8443, workers: int = 1,
                   loop: str = "auto", http: str = "auto") -> Any:
    """uvicorn's settings for this server: no access log, proxy headers or server header (nothing
    reads them); idle connections kept past the API server's own idle timeout (Go's 90 s), so it is
    the client that closes them and a quiet minute does not cost new TLS handshakes; uvicorn's
    ``auto`` loop and parser (uvloop, httptools when installed).  ``loop`` and ``http`` are for the
    benchmark, which compares them."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, ssl_certfile=cert, ssl_keyfile=key, log_level="warning",
                          access_log=False, proxy_headers=False, server_header=False, timeout_keep_alive=KEEP_ALIVE_S,
                          workers=workers, loop=loop, http=http)


def serve(injector: Injector, *, cert: str, key: str, host: str = "0.0.0.0", port: int = 8443, workers: int = 1,
          app: Any = None, **tuning: Any) -> None:
    """Run until interrupted; the API server only talks HTTPS to webhooks.  ``app`` and ``tuning``
    (see :func:`uvicorn_config`) are for the benchmark, which serves an echo route next to ``/mutate``."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    config = uvicorn_config(app or create_app(injector), cert=cert, key=key, host=host, port=port, workers=workers,
                            **tuning)
    if workers == 1:
        uvicorn.Server(config).run()
        return
    # uvicorn.run refuses an app object with workers (it wants an import string to import in each
    # child); the app pickles, so the supervisor can hand it to its spawned workers as it is.
    Multiprocess(config, sockets=[config.bind_socket()]).run()
