"""``drakit serve``: the REST API (and pages) over the demo, manifests or the live cluster; ``drakit token``.

Loopback by default; ``--host`` exposes it.  Without any token, reads on loopback are open
(``--open-reads``, the default there) and nothing can be changed; once a token exists, namespaced
data needs one.  ``drakit token create`` prints a token once and keeps only its SHA-256 digest
in the store.  Exit 0 on a clean stop, 1 for a source that cannot be read, 2 for usage.
"""

from __future__ import annotations

import ipaddress
import sys
from typing import Annotated, Any

import typer

from drakit.cli.console import emit
from drakit.cli.options import (
    Context,
    Demo,
    FeatureGates,
    Files,
    Format,
    Kubeconfig,
    KubernetesVersion,
    RequestTimeout,
    features,
    output_option,
)
from drakit.cli.store import StoreOption
from drakit.errors import DrakitError, UsageError
from drakit.features import NEWEST_VERSION

LOOP = "asyncio"
"""The event loop uvicorn runs.  Not uvloop (uvicorn's "auto" choice when it is installed): with 200
keep-alive clients saturating one process, uvloop served some connections seconds late (p99 4-6 s,
max 8 s for a trivial route) where asyncio's loop kept every one within 0.3 s at the same
throughput (benchmarks/bench_web.py; wrk, 200 connections, loopback)."""

token_app = typer.Typer(help="Bearer tokens of drakit serve: create, list, revoke (kept hashed in the store).",
                        no_args_is_help=True)


def _web() -> None:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        raise DrakitError(f"drakit serve needs FastAPI and uvicorn ({e.name} is missing); install drakit[web]") from None


def _tokens(store: str | None) -> Any:
    try:
        from drakit.store.tokens import open_tokens
    except ImportError as e:
        raise DrakitError(f"tokens are kept in the store, which needs SQLAlchemy and Alembic ({e.name} is missing); "
                          "install drakit[store]") from None
    return open_tokens(store)


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_cmd(
        files: Files = [],  # noqa: B006  (no -f: the cluster)
        demo: Demo = False,
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        request_timeout: RequestTimeout = 30.0,
        host: Annotated[str, typer.Option("--host", help="Address to listen on; anything but loopback exposes the server.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port.")] = 8080,
        store: StoreOption = None,
        queues: Annotated[str | None, typer.Option("--queues", metavar="CATALOG", help="QueueCatalog whose queues and teams to serve.")] = None,
        refresh: Annotated[float | None, typer.Option("--refresh", metavar="SECONDS", min=1.0,
                                                      help="Re-read the source this often (default: 30 for a cluster, never for files).")] = None,
        open_reads: Annotated[bool | None, typer.Option("--open-reads/--no-open-reads",
                                                        help="Let requests without a token read every namespace while no token exists (default: on loopback).")] = None,
        cors_origin: Annotated[list[str] | None, typer.Option("--cors-origin", metavar="ORIGIN", help="Allow this browser origin (repeatable; default none).")] = None,
        sim_workers: Annotated[int, typer.Option("--sim-workers", metavar="N", min=0, max=16, help="Processes running submitted simulations (0: off).")] = 1,
        feature_gates: FeatureGates = None,
        kubernetes_version: KubernetesVersion = NEWEST_VERSION,
    ) -> None:
        """Serve the REST API at /api/v1 (OpenAPI at /openapi.json) over -f, --demo or the cluster."""
        from drakit.cli.door import Source

        _web()
        Source(files, kubeconfig, context, demo, request_timeout).check()
        feats = features(kubernetes_version, feature_gates)
        app = build_app(files=files, demo=demo, kubeconfig=kubeconfig, context=context, timeout=request_timeout,
                        host=host, store=store, queues=queues, refresh=refresh, open_reads=open_reads,
                        cors_origins=cors_origin or [], sim_workers=sim_workers, feats=feats)
        import gc

        import uvicorn

        # The first snapshot lives as long as the server and is acyclic (see cli/door.freeze_loaded):
        # frozen, full collections stop rescanning its millions of containers mid-request.
        gc.freeze()
        where = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
        print(f"drakit serve: {app.state.web.source.description} at {where}/api/v1 (OpenAPI {where}/openapi.json)",
              file=sys.stderr)
        refresher = getattr(app.state, "refresher", None)
        try:
            uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, loop=LOOP)
        finally:
            if refresher is not None:
                refresher.stop()
            if app.state.web.simulations is not None:
                app.state.web.simulations.close()

    app.add_typer(token_app, name="token")


def build_app(*, files: list[str], demo: bool, kubeconfig: str | None, context: str | None, timeout: float, host: str,
              store: str | None, queues: str | None, refresh: float | None, open_reads: bool | None,
              cors_origins: list[str], sim_workers: int, feats: Any) -> Any:
    """The app ``serve`` runs, edges resolved here (a test builds the same without the socket)."""
    from drakit.web.app import create_app
    from drakit.web.auth import Auth
    from drakit.web.state import BundleSource, DemoSource, LiveSource, Refresher, SnapshotSource

    source: SnapshotSource
    if demo:
        source = DemoSource(feats)
    elif files:
        source = BundleSource(files, feats)
    else:
        source = LiveSource(kubeconfig, context, timeout)
        refresh = 30.0 if refresh is None else refresh
    tokens = _tokens(store)
    catalog = ledger = None
    team_namespaces: dict[str, tuple[str, ...]] = {}
    if queues:
        from drakit.queues import load_catalog_text, setup_of
        from drakit.sources.read import read_one
        from drakit.store.ledger import SqlQueueLedger

        catalog = load_catalog_text(read_one(queues), queues).catalog
        ledger = SqlQueueLedger(tokens.engine, setup_of(catalog))
        team_namespaces = {t.name: tuple(t.namespaces) for t in catalog.spec.teams}
    exposed = not loopback(host)
    if exposed and not any(t.revoked_at is None for t in tokens.tokens()):
        print(f"Warning: serving on {host} without any token: namespaced data is closed and nothing can be changed; "
              "create one with drakit token create", file=sys.stderr)
    if open_reads and exposed:
        print(f"Warning: --open-reads on {host}: anyone who reaches it reads every namespace until a token exists",
              file=sys.stderr)
    auth = Auth(tokens, team_namespaces=team_namespaces, open_reads=not exposed if open_reads is None else open_reads)
    from drakit.store.repo import SqlRecordStore

    simulations = None
    if sim_workers:
        from drakit.web.simulations import Simulations

        simulations = Simulations(workers=sim_workers)
    app = create_app(source, SqlRecordStore(tokens.engine), auth, catalog=catalog, ledger=ledger, features=feats,
                     simulations=simulations, cors_origins=cors_origins)
    if refresh:
        refresher = Refresher(app.state.web, refresh)
        refresher.start()
        app.state.refresher = refresher
    return app


@token_app.command("create")
def create_cmd(
    team: Annotated[str, typer.Option("--team", help="The team the token acts for (a queue catalog's team name fits).")],
    namespace: Annotated[list[str] | None, typer.Option("--namespace", "-n", metavar="NS", help="A namespace of the team (repeatable).")] = None,
    admin: Annotated[bool, typer.Option("--admin", help="A platform admin's token: every namespace, every action.")] = False,
    description: Annotated[str, typer.Option("--description", help="What the token is for.")] = "",
    store: StoreOption = None,
) -> None:
    """Create a token; it is printed once (stdout), only its digest is kept."""
    from drakit.web.auth import issue

    issued = issue(_tokens(store), team, namespace or (), admin=admin, description=description)
    print(f"token {issued.token.id} for team {team}"
          + (" (admin)" if admin else f" ({', '.join(issued.token.namespaces)})") + ": shown once, keep it", file=sys.stderr)
    typer.echo(issued.secret)


@token_app.command("ls")
def ls_cmd(
    store: StoreOption = None,
    output: Annotated[str, output_option(Format.text, Format.json, Format.yaml)] = Format.text,
) -> None:
    """Every token's ID, team, namespaces and state (never the token)."""
    found = _tokens(store).tokens()
    if output != Format.text:
        emit({"tokens": [t.to_json() for t in found]}, output)
        return
    typer.echo(f"{'ID':<14} {'TEAM':<20} {'STATE':<8} {'CREATED':<26} NAMESPACES")
    for t in found:
        state = "revoked" if t.revoked_at else "live"
        spaces = "*" if t.admin else ",".join(t.namespaces)
        typer.echo(f"{t.id:<14} {t.team:<20} {state:<8} {t.created_at.isoformat(timespec='seconds'):<26} {spaces}")


@token_app.command("revoke")
def revoke_cmd(
    token_id: Annotated[str, typer.Argument(metavar="ID", help="The token's ID (drakit token ls).")],
    store: StoreOption = None,
) -> None:
    """Revoke a token; requests with it are refused from then on (401)."""
    from datetime import UTC, datetime

    if not token_id.strip():
        raise UsageError("name the token's ID (drakit token ls)")
    t = _tokens(store).revoke(token_id, datetime.now(UTC))
    typer.echo(f"token {t.id} (team {t.team}) revoked")
