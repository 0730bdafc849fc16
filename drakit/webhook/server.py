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

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Protocol

from uvicorn.protocols.http.h11_impl import H11Protocol

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


class _JoinedWrites:
    """A transport whose writes within one event-loop iteration leave as one.  uvicorn writes an
    answer's status line and headers, then its body: over TLS that is two records, two sends and
    two wake-ups of the API server's reader for a few hundred bytes."""

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending.append(data)

    def _flush(self) -> None:
        if self._pending:
            data, self._pending = b"".join(self._pending), []
            self._transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:  # everything else is the transport's own
        return getattr(self._transport, name)


class _JoinWrites:
    """Mixed into uvicorn's HTTP/1.1 protocols: the transport they see is :class:`_JoinedWrites`."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(_JoinedWrites(transport))  # type: ignore[misc]


# Module-level classes, so that uvicorn's supervisor can pickle the config for its workers.
class _JoinedH11(_JoinWrites, H11Protocol):
    pass


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class _JoinedHttpTools(_JoinWrites, HttpToolsProtocol):
        pass

    _JOINED: dict[str, type[asyncio.Protocol]] = {"auto": _JoinedHttpTools, "httptools": _JoinedHttpTools, "h11": _JoinedH11}
except ImportError:  # pragma: no cover - the extra installs httptools
    _JOINED = {"auto": _JoinedH11, "h11": _JoinedH11}


def uvicorn_config(app: Any, *, cert: str, key: str, host: str = "0.0.0.0", port: int = 8443, workers: int = 1,
                   loop: str = "auto", http: str = "auto", join_writes: bool = True) -> Any:
    """uvicorn's settings for this server: no access log, proxy headers or server header (nothing
    reads them); idle connections kept past the API server's own idle timeout (Go's 90 s), so it is
    the client that closes them and a quiet minute does not cost new TLS handshakes; uvicorn's
    ``auto`` loop and parser (uvloop, httptools) with joined writes.  ``loop``, ``http`` and
    ``join_writes`` are for the benchmark, which compares them."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, ssl_certfile=cert, ssl_keyfile=key, log_level="warning",
                          access_log=False, proxy_headers=False, server_header=False, timeout_keep_alive=KEEP_ALIVE_S,
                          workers=workers, loop=loop, http=_JOINED[http] if join_writes else http)


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
