"""The HTTPS endpoint: a thin ASGI app around :func:`drakit.webhook.mutate.mutate`.

FastAPI for the routing and uvicorn for TLS, both from the ``drakit[webhook]`` extra and
imported only here.  The body is read and written as plain JSON (no pydantic model of the
AdmissionReview): the decision needs a few fields, and validating the whole pod per request would
cost more than the decision itself.
"""

from __future__ import annotations

import json

from fastapi import FastAPI, Request, Response

from drakit.webhook.install import HEALTH_PATH, MUTATE_PATH
from drakit.webhook.mutate import Injector, MalformedReview, mutate


def create_app(injector: Injector) -> FastAPI:
    """The ASGI app: ``POST /mutate`` (AdmissionReview v1) and ``GET /healthz``."""
    app = FastAPI(title="drakit claim injector", docs_url=None, redoc_url=None, openapi_url=None)

    @app.post(MUTATE_PATH)
    async def _mutate(request: Request) -> Response:
        try:
            review = json.loads(await request.body())
            decision = mutate(review, injector)
        except (ValueError, MalformedReview) as e:  # json.JSONDecodeError is a ValueError
            return Response(json.dumps({"error": f"not an AdmissionReview v1: {e}"}), status_code=400,
                            media_type="application/json")
        return Response(json.dumps(decision.response(), separators=(",", ":")), media_type="application/json")

    @app.get(HEALTH_PATH)
    async def _health() -> Response:
        return Response(json.dumps({"profiles": sorted(injector.rules)}), media_type="application/json")

    return app


def serve(injector: Injector, *, cert: str, key: str, host: str = "0.0.0.0", port: int = 8443) -> None:
    """Run until interrupted; the API server only talks HTTPS to webhooks."""
    import uvicorn

    uvicorn.run(create_app(injector), host=host, port=port, ssl_certfile=cert, ssl_keyfile=key,
                log_level="warning", access_log=False)
