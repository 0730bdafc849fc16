"""The dashboard's server-rendered pages: fleet heat map, pending work and its explanations, queues,
runs comparison, simulations and the trial.

Every page renders the JSON of a function in :mod:`drakit.web.views` (or
:mod:`drakit.web.trial`), the same document its API route returns, so a page can never
disagree with the API; each links to that document.  Filters live in the URL query, so a view
can be shared.  Templates are Jinja2 with autoescape on and no inline script or style: the
pages' Content-Security-Policy allows only this server's own files, so a device or pod named
``<script>`` is text twice over.

Who is asking: a bearer token in the ``Authorization`` header (as for the API) or, for a
browser, in the HttpOnly ``drakit_token`` cookie the sign-in form sets.  The cookie is read by
pages only — the API ignores it — and no page changes state, so a forged cross-site request has
nothing to change (``SameSite=Strict`` keeps the cookie off such requests anyway).
"""

from __future__ import annotations

import hashlib
import json
import math
import mimetypes
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, PackageLoader, StrictUndefined

from drakit.errors import DrakitError, NotFound
from drakit.records.compare import By
from drakit.web import views
from drakit.web.auth import BadToken, Principal
from drakit.web.problems import Unauthorized, problem_of
from drakit.web.state import Revision, WebState
from drakit.web.trial import trial

__all__ = ["COOKIE", "CSP", "PER_PAGE", "heat_map", "router"]

COOKIE = "drakit_token"
COOKIE_MAX_AGE_S = 12 * 3600
PER_PAGE = 100
"""Nodes per heat-map page: 100 rows stay readable, and a 5,000-node fleet is 50 pages."""
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
NAV = (("page_fleet", "Fleet"), ("page_pending", "Pending"), ("page_queues", "Queues"), ("page_runs", "Runs"),
       ("page_simulations", "Simulations"), ("page_trial", "Trial"))

router = APIRouter(include_in_schema=False)
_env = Environment(loader=PackageLoader("drakit.web", "templates"), autoescape=True, undefined=StrictUndefined,
                   trim_blocks=True, lstrip_blocks=True)
_templates = Jinja2Templates(env=_env)


def _href(path: str, **query: Any) -> str:
    """``path`` with the non-empty query parameters, in the order given (stable, shareable URLs)."""
    kept = {k: v for k, v in query.items() if v not in (None, "", False)}
    return path + ("?" + urlencode(kept) if kept else "")


def _pager(total: int, page: str) -> tuple[int, int, slice]:
    """(page shown, pages, slice of the items) for a 1-based ``page`` query; junk is page 1, past the end the last."""
    pages = max(1, math.ceil(total / PER_PAGE))
    at = min(max(int(page) if page.isdigit() and len(page) < 8 else 1, 1), pages)
    return at, pages, slice((at - 1) * PER_PAGE, at * PER_PAGE)


def explain_href(key: str, kind: str = "pods") -> str:
    """The explanation page of ``namespace/name``; a name hidden from the caller links nowhere."""
    namespace, _, name = key.partition("/")
    if not name or key == views.HIDDEN:
        return "#"
    return f"/{kind}/{quote(namespace, safe='')}/{quote(name, safe='')}"


_env.globals["explain_href"] = explain_href
_env.globals["hidden"] = views.HIDDEN


# -- who is asking -----------------------------------------------------------------------------


def _state(request: Request) -> WebState:
    state: WebState = request.app.state.web
    return state


def _who(request: Request) -> Principal:
    """The caller: the Authorization header, else the sign-in cookie (BadToken if either is not live)."""
    header = request.headers.get("authorization")
    cookie = request.cookies.get(COOKIE)
    return _state(request).auth.principal(header or (f"Bearer {cookie}" if cookie else None))


def _reader(who: Principal) -> Principal:
    """``deps.reader`` for a caller who may have come by cookie: namespaced data needs a token or the open demo."""
    if who.anonymous and not who.read_all:
        raise Unauthorized("this page shows namespaced data: sign in with a token")
    return who


# -- rendering ---------------------------------------------------------------------------------


def _secure(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["Cache-Control"] = "no-store"
    return response


def _render(request: Request, template: str, title: str, here: str, who: Principal, *, json_href: str = "",
            status: int = 200, **context: Any) -> Response:
    page = _templates.TemplateResponse(request, template, {
        "title": title, "here": here, "nav": NAV, "principal": who.to_json(), "json_href": json_href, **context,
    }, status_code=status)
    return _secure(page)


def _error(request: Request, e: BaseException, who: Principal | None, here: str = "") -> Response:
    """A failure as a page with the API's status and one-line detail (never a traceback)."""
    status, body = problem_of(e)
    parsed = json.loads(body)
    detail, hint = str(parsed.get("detail", "")), str(parsed.get("hint", "") or "")
    if status == 401:
        hint = "sign in with a token (drakit token create prints one)"
    response = _render(request, "error.html", "Sign in needed" if status == 401 else "Not available", here,
                       who or Principal(), detail=detail, hint=hint, status=status)
    if isinstance(e, BadToken) and request.cookies.get(COOKIE):
        response.delete_cookie(COOKIE, path="/")  # a revoked token is not kept for the next page
    return response


def _page(request: Request, here: str, build: Callable[[Principal], Response]) -> Response:
    query = request.query_params.multi_items()
    if any(v == "" for _, v in query):  # a filter form sends its empty fields: share the short URL instead
        kept = [(k, v) for k, v in query if v != ""]
        return RedirectResponse(request.url.path + ("?" + urlencode(kept) if kept else ""), status_code=303)
    who: Principal | None = None
    try:
        who = _who(request)
        return build(who)
    except DrakitError as e:
        return _error(request, e, who, here)


# -- static files ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Static:
    body: bytes
    media_type: str
    etag: str


def _load_static() -> dict[str, _Static]:
    """Every file under ``static/``, read once: a fixed table, so no request path reaches the disk."""
    out: dict[str, _Static] = {}

    def walk(node: Any, prefix: str) -> None:
        for child in node.iterdir():
            name = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, name + "/")
            elif not name.endswith(".md"):
                body = child.read_bytes()
                media = mimetypes.guess_type(child.name)[0] or "application/octet-stream"
                out[name] = _Static(body, media, '"' + hashlib.sha256(body).hexdigest()[:20] + '"')

    walk(resources.files("drakit.web") / "static", "")
    return out


_STATIC = _load_static()


@router.get("/static/{path:path}", name="static")
def static(request: Request, path: str) -> Response:
    found = _STATIC.get(path)
    if found is None:
        return Response("not found\n", status_code=404, media_type="text/plain")
    headers = {"ETag": found.etag, "Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"}
    if request.headers.get("if-none-match") == found.etag:
        return Response(status_code=304, headers=headers)
    return Response(found.body, media_type=found.media_type, headers=headers)


# -- sign in -----------------------------------------------------------------------------------


def _local(target: str) -> str:
    """Only a path on this server (no scheme, no ``//host``) is a place to go back to after sign-in."""
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"


@router.get("/login", name="page_login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/") -> Response:
    try:
        who = _who(request)
    except BadToken:
        who = Principal()
    return _render(request, "login.html", "Sign in", "", who, next=_local(next), error="")


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request) -> Response:
    try:
        form = parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=4)
    except ValueError:  # more fields than the form has: not this form
        form = {}
    token = (form.get("token") or [""])[0].strip()
    target = _local((form.get("next") or ["/"])[0])
    try:
        who = _state(request).auth.principal(f"Bearer {token}" if token else "")
        if who.anonymous:
            raise BadToken("paste a token")
    except BadToken as e:
        return _render(request, "login.html", "Sign in", "", Principal(), next=target, error=str(e), status=401)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(COOKIE, token, max_age=COOKIE_MAX_AGE_S, path="/", httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")
    return response


@router.post("/logout", name="page_logout")
def logout() -> Response:
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


# -- fleet -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    allocated: int
    total: int
    memory: str  # the distinct published memory sizes of the cell's devices

    @property
    def shade(self) -> int:
        """0 (all free) .. 10 (all allocated): the heat map's colour class."""
        return int(10 * self.allocated / self.total + 0.5) if self.total else 0  # half up, not to even


@dataclass(frozen=True)
class HeatMap:
    columns: tuple[str, ...]  # products
    nodes: tuple[str, ...]  # every node with a matching device, sorted
    cells: Mapping[tuple[str, str], Cell]  # (node, product) -> cell
    products: tuple[dict[str, Any], ...]  # per product: driver, nodes, total, free, memory


def heat_map(devices: Iterable[Mapping[str, Any]]) -> HeatMap:
    """Devices (``DeviceList`` items) counted per node and product, and per product in all (one pass)."""
    counts: dict[tuple[str, str], list[int]] = {}
    memory: dict[tuple[str, str], set[str]] = {}
    drivers: dict[str, set[str]] = {}
    for d in devices:
        key = (d["node"], d["product"])
        cell = counts.get(key)
        if cell is None:
            cell = counts[key] = [0, 0]
            memory[key] = set()
        drivers.setdefault(key[1], set()).add(d["driver"])
        cell[0] += not d["free"]
        cell[1] += 1
        if d["memory"]:
            memory[key].add(d["memory"])
    cells = {k: Cell(a, t, ", ".join(sorted(memory[k]))) for k, (a, t) in counts.items()}
    per: dict[str, list[Any]] = {p: [0, 0, 0, set()] for p in drivers}  # nodes, total, allocated, memory
    for key, c in cells.items():
        acc = per[key[1]]
        acc[0] += 1
        acc[1] += c.total
        acc[2] += c.allocated
        acc[3].update(memory[key])
    columns = tuple(sorted(drivers))
    products = tuple({"product": p, "driver": ", ".join(sorted(drivers[p])), "nodes": per[p][0], "total": per[p][1],
                      "free": per[p][1] - per[p][2], "memory": ", ".join(sorted(per[p][3]))} for p in columns)
    return HeatMap(columns, tuple(sorted({n for n, _ in cells})), cells, products)


SORTS = {"busiest": "most devices allocated first", "freest": "most devices free first"}
"""Orders of the heat map's nodes besides by name: where the load is, and where room is left."""


def _sorted_nodes(heat: HeatMap, order: str) -> tuple[str, ...]:
    if not order:
        return heat.nodes
    allocated: dict[str, int] = {}
    free: dict[str, int] = {}
    for (node, _), c in heat.cells.items():
        allocated[node] = allocated.get(node, 0) + c.allocated
        free[node] = free.get(node, 0) + c.total - c.allocated
    key = allocated if order == "busiest" else free
    return tuple(sorted(heat.nodes, key=lambda n: (-key[n], n)))


def _devices(rev: Revision, who: Principal, q: views.InventoryQuery) -> list[dict[str, Any]]:
    """Every device ``q`` selects, through the API's own paged inventory view."""
    out: list[dict[str, Any]] = []
    cont: str | None = None
    while True:
        page = views.inventory(rev, who, replace(q, limit=views.MAX_LIMIT, cont=cont))
        out += page["items"]
        cont = page["metadata"].get("continue")
        if not cont:
            return out


@router.get("/", name="page_home")
def home() -> Response:
    return RedirectResponse("/fleet", status_code=307)


@router.get("/fleet", name="page_fleet", response_class=HTMLResponse)
def fleet_page(request: Request, product: str = "", node: str = "", pool: str = "", driver: str = "",
               sort: str = "", page: str = "1") -> Response:
    def build(who: Principal) -> Response:
        rev = _state(request).revision
        q = views.InventoryQuery(node=node or None, driver=driver or None, product=product or None)
        # Counts do not depend on who asks (holders are not counted, only whether a device is free).
        heat = rev.answers.get_or(("page-fleet", q.key(), pool), lambda: heat_map(
            d for d in _devices(rev, who, q) if not pool or d["pool"] == pool))
        every = rev.answers.get_or(("page-fleet", "all"), lambda: heat_map(rev.rows_json))
        order = sort if sort in SORTS else ""
        nodes = rev.answers.get_or(("page-fleet", q.key(), pool, order), lambda: _sorted_nodes(heat, order))
        at, pages, shown = _pager(len(nodes), page)
        filters = {"product": product, "driver": driver, "pool": pool, "node": node, "sort": order}

        def here(**change: Any) -> str:
            return _href("/fleet", **{**filters, "page": at if at > 1 else None, **change})

        rows = [{"node": n, "href": here(node=n, page=None),
                 "cells": [None if (c := heat.cells.get((n, p))) is None else
                           {"allocated": c.allocated, "total": c.total, "shade": c.shade, "memory": c.memory,
                            "href": here(node=n, product=p, page=None)} for p in heat.columns]}
                for n in nodes[shown]]
        devices = None
        if node and len(heat.nodes) == 1:  # one node: its devices and who holds them (as the caller may see)
            devices = [d for d in _devices(rev, who, q) if not pool or d["pool"] == pool]
        selects = [("product", "Product", every.columns),
                   ("driver", "Driver", sorted({d for p in every.products for d in p["driver"].split(", ")})),
                   ("sort", "Nodes by", tuple(SORTS))]
        return _render(request, "fleet.html", "Fleet", "page_fleet", who,
                       json_href=_href("/api/v1/inventory", product=product, node=node, driver=driver),
                       filters=filters, selects=selects, columns=heat.columns, rows=rows,
                       products=[{**p, "href": here(product=p["product"], page=None)} for p in heat.products],
                       nodes_total=len(heat.nodes), page=at, pages=pages,
                       prev_href=here(page=at - 1) if at > 1 else "", next_href=here(page=at + 1) if at < pages else "",
                       devices=devices)

    return _page(request, "page_fleet", build)


# -- pending work and explanations -------------------------------------------------------------


@router.get("/pending", name="page_pending", response_class=HTMLResponse)
def pending_page(request: Request, namespace: str = "", selector: str = "", page: str = "1") -> Response:
    def build(who: Principal) -> Response:
        report = views.pending(_state(request).revision, _reader(who), namespace or None, selector or None)
        at, pages, shown = _pager(len(report["pods"]), page)

        def here(n: int) -> str:
            return _href("/pending", namespace=namespace, selector=selector, page=n)

        return _render(request, "pending.html", "Pending work", "page_pending", who,
                       json_href=_href("/api/v1/pending", namespace=namespace, selector=selector),
                       report=report, pods=report["pods"][shown], filters={"namespace": namespace, "selector": selector},
                       page=at, pages=pages, prev_href=here(at - 1) if at > 1 else "",
                       next_href=here(at + 1) if at < pages else "")

    return _page(request, "page_pending", build)


def _explain_page(request: Request, kind: str, namespace: str, name: str) -> Response:
    def build(who: Principal) -> Response:
        d = views.explain(_state(request).revision, _reader(who), kind, namespace, name)
        plural = f"{kind}s"
        return _render(request, "explain.html", f"Why {kind} {namespace}/{name}", "page_pending", who,
                       json_href=f"/api/v1/namespaces/{quote(namespace, safe='')}/{plural}/{quote(name, safe='')}/explanation",
                       d=d)

    return _page(request, "page_pending", build)


@router.get("/pods/{namespace}/{name:path}", name="page_explain_pod", response_class=HTMLResponse)
def explain_pod_page(request: Request, namespace: str, name: str) -> Response:
    return _explain_page(request, "pod", namespace, name)


@router.get("/claims/{namespace}/{name:path}", name="page_explain_claim", response_class=HTMLResponse)
def explain_claim_page(request: Request, namespace: str, name: str) -> Response:
    return _explain_page(request, "claim", namespace, name)


# -- queues ------------------------------------------------------------------------------------


def _amount(text: str | None) -> float:
    """A queue amount as :func:`drakit.queues.admission.format_amount` writes it ("4", "500m")."""
    if not text:
        return 0.0
    try:
        return float(text[:-1]) / 1000 if text.endswith("m") else float(text)
    except ValueError:
        return 0.0


def _usage_width(used: str, nominal: str) -> int:
    """Used as tenths of nominal for the bar's width class (w0..w10; over nominal shows full, in red)."""
    total = _amount(nominal)
    return 10 if total <= 0 and _amount(used) > 0 else min(10, round(10 * _amount(used) / total)) if total > 0 else 0


_env.globals["usage_width"] = _usage_width
_env.globals["amount"] = _amount


@router.get("/queues", name="page_queues", response_class=HTMLResponse)
def queues_page(request: Request) -> Response:
    def build(who: Principal) -> Response:
        doc = views.queues(_state(request), _reader(who))
        return _render(request, "queues.html", "Queues", "page_queues", who, json_href="/api/v1/queues", doc=doc)

    return _page(request, "page_queues", build)


# -- runs --------------------------------------------------------------------------------------


@router.get("/runs", name="page_runs", response_class=HTMLResponse)
def runs_page(request: Request, by: str = "product", metric: str = "runtime") -> Response:
    def build(who: Principal) -> Response:
        doc = views.compare_runs(_state(request), _reader(who), by or "product", metric or "runtime")
        return _render(request, "runs.html", "Runs compared", "page_runs", who,
                       json_href=_href("/api/v1/comparisons", by=doc["by"], metric=doc["metric"]),
                       groups=doc["groups"], filters={"by": doc["by"], "metric": doc["metric"]},
                       by_options=[b.value for b in By])

    return _page(request, "page_runs", build)


# -- simulations and the trial -----------------------------------------------------------------


@router.get("/simulations", name="page_simulations", response_class=HTMLResponse)
def simulations_page(request: Request) -> Response:
    def build(who: Principal) -> Response:
        sims = _state(request).simulations
        # A simulation belongs to the team that submitted it: without a token there is none to show.
        listed = [] if sims is None else [{**s.to_json(), "href": f"/simulations/{quote(s.id, safe='')}"}
                                          for s in sims.list(who)]
        return _render(request, "simulations.html", "Simulations", "page_simulations", who,
                       json_href="" if who.anonymous or sims is None else "/api/v1/simulations", sims=listed,
                       enabled=sims is not None)

    return _page(request, "page_simulations", build)


@router.get("/simulations/{sim_id}", name="page_simulation", response_class=HTMLResponse)
def simulation_page(request: Request, sim_id: str) -> Response:
    def build(who: Principal) -> Response:
        sims = _state(request).simulations
        if sims is None:
            raise NotFound("simulations are off on this server (no simulation workers)")
        if who.anonymous:
            raise Unauthorized("a simulation belongs to the team that submitted it: sign in with a token")
        report = sims.report(sim_id, who)
        return _render(request, "simulation.html", f"Simulation {sim_id}", "page_simulations", who,
                       json_href=f"/api/v1/simulations/{quote(sim_id, safe='')}/report", r=report)

    return _page(request, "page_simulations", build)


@router.get("/trial", name="page_trial", response_class=HTMLResponse)
def trial_page(request: Request) -> Response:
    def build(who: Principal) -> Response:
        state = _state(request)
        report = trial(state, state.revision, _reader(who))
        return _render(request, "trial.html", "Platform trial", "page_trial", who, json_href="/api/v1/trial",
                       t=report)

    return _page(request, "page_trial", build)
