"""The JSON every route returns, as pure functions of (state or revision, caller, query).

The shapes are the CLI's ``-o json`` shapes, built by the same functions (``DeviceRow.to_json``,
``render_json``, ``PendingReport.to_json``, ``Eligibility.to_json``, ``record_json``,
``Group.to_json``), so a page, the API and ``drakit … -o json`` agree.  Pages call these too.

Tenancy is applied here, once: a caller sees the objects of the namespaces it may see; an object
in another namespace is "not found" (never "forbidden", which would confirm it exists), and a
name from another namespace inside a visible document — a claim holding a device, a pod ahead in
a queue — is replaced by :data:`HIDDEN`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from drakit.errors import DrakitError, InvalidArgument, NotFound
from drakit.inventory.snapshot import namespace_of
from drakit.web.auth import Principal

if TYPE_CHECKING:
    from drakit.web.state import Revision, WebState

__all__ = ["HIDDEN", "MAX_LIMIT", "Expired", "InventoryQuery", "compare_runs", "eligibility", "explain", "inventory",
           "pending", "profiles", "queues", "run", "runs", "visibility", "whoami"]

HIDDEN = "<hidden>"
DEFAULT_LIMIT = 500
MAX_LIMIT = 5000
"""A page of the inventory holds at most 5,000 devices (about 5 MB of JSON), as the API server
caps a list's ``limit`` by what one response can carry."""


class Expired(DrakitError):
    """A ``continue`` token of an older snapshot revision (the API server's 410 Gone)."""


# -- paging ------------------------------------------------------------------------------------


def _token(revision: int, offset: int, query: str) -> str:
    raw = json.dumps({"r": revision, "o": offset, "q": query}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _offset(token: str, revision: int, query: str) -> int:
    """The offset a ``continue`` token names; Expired for another revision, InvalidArgument if forged."""
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        r, o, q = data["r"], data["o"], data["q"]
    except (binascii.Error, ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise InvalidArgument("continue: not a token this server issued") from None
    if not isinstance(r, int) or not isinstance(o, int) or not isinstance(q, str) or o < 0:
        raise InvalidArgument("continue: not a token this server issued")
    if q != query:
        raise InvalidArgument("continue: the token belongs to a list with other filters")
    if r != revision:
        raise Expired(f"continue: the inventory changed (revision {r} -> {revision}); list again without continue")
    return o


def _page(items: Sequence[Any], limit: int, cont: str | None, revision: int, query: str) -> tuple[Sequence[Any], dict[str, Any]]:
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit {limit}: want 1 to {MAX_LIMIT}")
    start = _offset(cont, revision, query) if cont else 0
    end = min(start + limit, len(items))
    meta: dict[str, Any] = {"revision": revision}
    if end < len(items):
        meta["continue"] = _token(revision, end, query)
        meta["remainingItemCount"] = len(items) - end
    return items[start:end], meta


# -- redaction ---------------------------------------------------------------------------------

_KEY = re.compile(r"\b([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)/([a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?)\b")


def _hider(who: Principal, namespaces: Iterable[str]) -> Any:
    """A function hiding ``ns/name`` of namespaces ``who`` may not see in any string of a document."""
    hidden = {ns for ns in namespaces if not who.sees(ns)}
    if not hidden:
        return None

    def text(s: str) -> str:
        if "/" not in s:
            return s
        return _KEY.sub(lambda m: HIDDEN if m[1] in hidden else m[0], s)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return text(value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return walk


def _namespaces(rev: Revision) -> frozenset[str]:
    return rev.answers.get_or("namespaces", lambda: frozenset(
        namespace_of(o) for o in (*rev.snapshot.claims, *rev.snapshot.pods, *rev.snapshot.templates)))


def visibility(who: Principal) -> Any:
    """The part of a caller that decides what it sees: a cache key shared by callers who see alike."""
    return "all" if who.admin or who.read_all else who.namespaces


# -- inventory ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class InventoryQuery:
    """``drakit get devices`` filters, plus ``product`` (exact) and paging."""

    selector: str | None = None
    free: bool = False
    node: str | None = None
    driver: str | None = None
    product: str | None = None
    limit: int = DEFAULT_LIMIT
    cont: str | None = None

    def key(self) -> str:
        text = json.dumps([self.selector, self.free, self.node, self.driver, self.product])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _selected(rev: Revision, q: InventoryQuery) -> tuple[int, ...]:
    """Positions of the rows ``q`` keeps, computed once per revision and filter."""
    def compute() -> tuple[int, ...]:
        from drakit.cli.get import select

        rows = rev.rows
        if q.selector is None and not q.free and q.node is None and q.driver is None and q.product is None:
            return tuple(range(len(rows)))
        keep = {id(r) for r in select(rows, selector=q.selector, free=q.free, node=q.node, driver=q.driver)
                if q.product is None or r.product == q.product}
        return tuple(i for i, r in enumerate(rows) if id(r) in keep)

    return rev.answers.get_or(("inventory", q.key()), compute)


def _device_json(row: dict[str, Any], who: Principal) -> dict[str, Any]:
    holders = row["holders"]
    if not holders or all(who.sees(h["claim"].split("/", 1)[0]) for h in holders):
        return row
    shown = [h if who.sees(h["claim"].split("/", 1)[0])
             else {"claim": HIDDEN, "request": HIDDEN, "pods": [], "adminAccess": h["adminAccess"]} for h in holders]
    return {**row, "holders": shown}


def inventory(rev: Revision, who: Principal, q: InventoryQuery) -> dict[str, Any]:
    """``get devices -o json`` (``DeviceList``), paged: ``metadata.continue`` while more remain."""
    positions, meta = _page(_selected(rev, q), q.limit, q.cont, rev.number, q.key())
    rows = rev.rows_json
    return {"kind": "DeviceList", "metadata": meta, "items": [_device_json(rows[i], who) for i in positions]}


def fleet_summary(rev: Revision) -> dict[str, Any]:
    """Devices per node and product, free and allocated, with the memory each publishes: what a heat
    map draws (no names of holders, so every caller may see it)."""
    def compute() -> dict[str, Any]:
        by: dict[tuple[str, str], tuple[list[int], set[str]]] = {}
        for r in rev.rows:
            counts, memory = by.setdefault((r.node, r.product), ([0, 0], set()))
            counts[0 if r.free else 1] += 1
            if r.memory:
                memory.add(r.memory)
        cells = [{"node": n, "product": p, "free": c[0], "allocated": c[1], "memory": sorted(m)}
                 for (n, p), (c, m) in sorted(by.items())]
        return {"revision": rev.number, "devices": len(rev.rows), "cells": cells}

    return rev.answers.get_or("fleet", compute)


# -- pods and claims ---------------------------------------------------------------------------


def explain(rev: Revision, who: Principal, kind: str, namespace: str, name: str) -> dict[str, Any]:
    """``explain pod/NAME -o json`` (or ``claim/NAME``); NotFound also for a namespace ``who`` may not see."""
    from drakit.explain.render import render_json

    if kind not in ("pod", "claim"):
        raise InvalidArgument(f"kind {kind!r}: want pod or claim")
    if not who.sees(namespace):
        raise NotFound(f"{kind} {namespace}/{name} not found in the input")

    def compute() -> dict[str, Any]:
        from drakit.explain.diagnose import diagnose

        with rev.explain_lock:
            d = diagnose(rev.snapshot, kind, name, namespace, features=rev.features, shared=rev.shared)
        return render_json(d)

    doc = rev.answers.get_or(("explain", kind, namespace, name), compute)
    hide = _hider(who, _namespaces(rev))
    return hide(doc) if hide else doc


def pending(rev: Revision, who: Principal, namespace: str | None = None, selector: str | None = None) -> dict[str, Any]:
    """``explain pods --all-pending -o json`` over the pods ``who`` sees (in ``namespace``, or all)."""
    from drakit.cli.options import labels_match, parse_label_selector

    if namespace is not None and not who.sees(namespace):
        raise NotFound(f"namespace {namespace} not found in the input")
    requirements = parse_label_selector(selector) if selector else ()

    def compute() -> dict[str, Any]:
        from drakit.explain.pending import explain_pending, waiting_pods

        pods = [p for p in waiting_pods(rev.snapshot, namespace, lambda labels: labels_match(requirements, labels))
                if who.sees(namespace_of(p))]
        return explain_pending(rev.snapshot, pods, features=rev.features).to_json()

    doc = rev.answers.get_or(("pending", namespace, selector or "", visibility(who)), compute)
    hide = _hider(who, _namespaces(rev))
    return hide(doc) if hide else doc


# -- profiles ----------------------------------------------------------------------------------


def profiles(state: WebState) -> dict[str, Any]:
    """The profiles the server knows, by name and driver, with the DeviceClass each compiles to."""
    return {"profiles": [{"profile": cp.profile, "driver": cp.schema.driver, "deviceClass": cp.class_name,
                          "digest": cp.digest()} for cp in state.profiles]}


def eligibility(state: WebState, rev: Revision, profile: str | None = None) -> dict[str, Any]:
    """``profile eligible -o json``: per profile, qualifying devices by product and node, and why others are not."""
    from drakit.profiles.eligibility import eligibility as of

    chosen = [cp for cp in state.profiles if profile is None or cp.profile == profile]
    if profile is not None and not chosen:
        raise NotFound(f"profile {profile} not found (known: {', '.join(sorted({c.profile for c in state.profiles}))})")

    def compute() -> dict[str, Any]:
        return {"profiles": [of(cp, rev.snapshot.slices).to_json() for cp in chosen]}

    return rev.answers.get_or(("eligibility", profile), compute)


# -- queues ------------------------------------------------------------------------------------


def queues(state: WebState, who: Principal) -> dict[str, Any]:
    """Per queue the caller may use: quota (nominal, borrowing and lending limits), what reservations
    hold, how much of that is borrowed from the cohort, and the runs waiting, with positions."""
    from drakit.queues.admission import format_amount
    from drakit.queues.catalog import amount
    from drakit.records.run import RunState

    if state.catalog is None:
        return {"catalog": None, "queues": []}
    catalog = state.catalog
    held = state.ledger.held() if state.ledger is not None else ()
    # The ledger keeps no backlog: the runs still submitted are the ones waiting, oldest first.
    waiting = list(state.store.runs(state=RunState.SUBMITTED)) if state.store is not None else []
    namespace_of_run = {r.id: r.namespace for r in waiting}
    if state.store is not None:
        for h in held:
            if h.run_id not in namespace_of_run:
                try:
                    namespace_of_run[h.run_id] = state.store.get(h.run_id).run.namespace
                except NotFound:
                    namespace_of_run[h.run_id] = ""
    out = []
    for q in catalog.spec.queues:
        spaces = catalog.namespaces_of(q)
        if not (who.admin or who.read_all or spaces is None or who.namespaces & set(spaces)):
            continue
        mine = [h for h in held if h.queue == q.name]
        quotas = []
        for quota in q.quotas:
            r = quota.resource
            used = sum(h.demand.get(r, 0) for h in mine)
            nominal = amount(r, quota.nominal)

            def shown(value: int | str | None, r: str = r) -> str | None:
                return None if value is None else format_amount(r, amount(r, value))

            quotas.append({"resource": r, "nominal": format_amount(r, nominal),
                           "borrowingLimit": shown(quota.borrowing_limit), "lendingLimit": shown(quota.lending_limit),
                           "used": format_amount(r, used), "borrowed": format_amount(r, max(0, used - nominal))})

        def run_ref(run_id: str) -> str:
            return run_id if who.sees(namespace_of_run.get(run_id, "")) else HIDDEN

        queued = [r for r in waiting if r.queue == q.name]
        everything = who.admin or who.read_all
        out.append({
            "name": q.name, "cohort": q.cohort, "strategy": q.strategy,
            "namespaces": spaces if everything or spaces is None else [ns for ns in spaces if who.sees(ns)],
            "teams": q.teams if everything or q.teams is None else [t for t in q.teams if t == who.team],
            "quotas": quotas,
            "reservations": [{**h.to_json(), "runId": run_ref(h.run_id)} for h in mine],
            "pending": [{"run": run_ref(r.id), "position": i + 1} for i, r in enumerate(queued)],
        })
    return {"catalog": catalog.name, "queues": out}


# -- runs --------------------------------------------------------------------------------------


def _store(state: WebState) -> Any:
    if state.store is None:
        raise NotFound("no run store is configured (start the server with a store)")
    return state.store


def runs(state: WebState, who: Principal, run_state: str | None = None, limit: int | None = None) -> dict[str, Any]:
    """``runs ls -o json`` over the runs of namespaces ``who`` sees, oldest first."""
    from drakit.records.render import runs_json
    from drakit.records.run import RunState

    try:
        wanted = RunState(run_state) if run_state else None
    except ValueError:
        raise InvalidArgument(f"state {run_state!r}: choose one of {', '.join(s.value for s in RunState)}") from None
    if limit is not None and limit < 1:
        raise InvalidArgument(f"limit {limit}: want at least 1")
    store = _store(state)
    found = [r for r in store.runs(state=wanted) if who.sees(r.namespace)][:limit]
    return runs_json(store.get(r.id) for r in found)


def run(state: WebState, who: Principal, run_id: str) -> dict[str, Any]:
    """``runs show -o json``; NotFound also for a run in a namespace ``who`` may not see."""
    from drakit.records.render import record_json

    record = _store(state).get(run_id)
    if not who.sees(record.run.namespace):
        raise NotFound(f"run {run_id} not found in the store")
    return record_json(record)


def compare_runs(state: WebState, who: Principal, by: str = "product", metric: str = "runtime") -> dict[str, Any]:
    """``runs compare -o json`` over the runs ``who`` sees: n, median and spread per group."""
    from drakit.records.compare import compare, parse_by
    from drakit.records.render import comparison_json

    by_value = parse_by(by).value
    store = _store(state)
    if who.admin or who.read_all:
        groups = store.compare(by_value, metric)
    else:
        groups = compare((store.get(r.id) for r in store.runs() if who.sees(r.namespace)), by_value, metric)
    return comparison_json(by_value, metric, groups)


def whoami(state: WebState, who: Principal) -> dict[str, Any]:
    """The caller as the server sees it, and where the data comes from."""
    rev = state.revision
    return {"principal": who.to_json(), "source": state.source.description, "revision": rev.number,
            "readAt": rev.snapshot.provenance.read_at, "lastError": state.last_error or None}

