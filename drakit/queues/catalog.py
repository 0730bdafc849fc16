"""The QueueCatalog document (``apiVersion: drakit.dev/v1alpha1``, ``kind: QueueCatalog``).

A platform team's compute environments on top of capability profiles: device quota resources
(what Kueue calls ``deviceClassMappings``), queues with quotas, a pods quota, a true concurrency
limit, a default priority, cohorts with borrowing and lending limits, a queueing strategy and
the namespaces or teams allowed in; routing rules (profile, namespace, labels → queue; first match
wins; then the default).  Polyaxon's queue vocabulary maps onto it: a Polyaxon queue
``agent/queue`` is a catalog queue with ``agent`` set, its ``priority`` the queue's default
priority class and its ``concurrency`` the concurrency limit.

pydantic with ``extra="forbid"`` and strict types, as the Profile document: a typo is an error
with its field path and line, never a setting silently ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from drakit.errors import InvalidInput
from drakit.gostr import quote
from drakit.profiles.source import Document, Loc, ParseError, dotted, parse_documents
from drakit.quantity import Quantity, QuantityError

__all__ = ["API_VERSION", "KIND", "Catalog", "CatalogQueue", "QuoteSpec", "amount", "catalog_json_schema",
           "load_catalog_text"]

API_VERSION = "drakit.dev/v1alpha1"
KIND = "QueueCatalog"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\Z")
_RESOURCE = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\Z")
# Kueue's ClusterQueue limit (a CEL rule in its CRD): at most 64 resources per group.
MAX_COVERED = 64


def _check(pattern: re.Pattern[str], what: str, limit: int) -> Any:
    def check(value: Any) -> Any:
        if isinstance(value, str) and (len(value) > limit or not pattern.match(value)):
            raise ValueError(f"must be {what}")
        return value
    return BeforeValidator(check)


DnsLabel = Annotated[str, _check(_DNS_LABEL, "a DNS label: lower case letters, digits and '-', at most 63 characters", 63)]
Subdomain = Annotated[str, _check(_SUBDOMAIN, "a DNS subdomain: lower case letters, digits, '-' and '.', at most 253 characters", 253)]
ResourceName = Annotated[str, _check(_RESOURCE, "a resource name such as gpu-48g, cpu or example.com/foo", 253)]
Amount = Annotated[int | str, Field(description="an integer, or a quantity such as 64, 500m or 256Gi")]


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True, alias_generator=to_camel, frozen=True)


class Counter(_Base):
    """Charge counter units (e.g. MIG memory) instead of devices: Kueue's ``sources[].counter``."""

    name: str
    driver: Subdomain
    device_selector: str | None = None


class DeviceResource(_Base):
    """A logical quota resource: the devices of these DeviceClasses, or of these profiles' classes."""

    name: ResourceName
    device_classes: list[Subdomain] | None = None
    profiles: list[DnsLabel] | None = None
    counter: Counter | None = None


class Priority(_Base):
    name: Subdomain
    value: int = Field(ge=-(2**31), le=2**31 - 1)
    description: str | None = None


class CohortSpec(_Base):
    name: DnsLabel
    parent: DnsLabel | None = None


class Team(_Base):
    name: DnsLabel
    namespaces: list[DnsLabel] = Field(min_length=1)


class QuoteSpec(_Base):
    """Quota of one resource in the queue (devices, counter units, cpu, memory)."""

    resource: ResourceName
    nominal: Amount
    borrowing_limit: Amount | None = None
    lending_limit: Amount | None = None


class Preemption(_Base):
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "Never"
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Never"


class CatalogQueue(_Base):
    name: DnsLabel
    description: str | None = None
    agent: str | None = None  # Polyaxon's agent of ``agent/queue``
    namespaces: list[DnsLabel] | None = None
    teams: list[DnsLabel] | None = None
    cohort: DnsLabel | None = None
    strategy: Literal["StrictFIFO", "BestEffortFIFO"] = "BestEffortFIFO"
    quotas: list[QuoteSpec] = Field(default_factory=list, max_length=MAX_COVERED - 1)
    pods: int | None = Field(None, ge=0)
    concurrency: int | None = Field(None, ge=1)
    priority: Subdomain | None = None
    preemption: Preemption | None = None


class Match(_Base):
    profile: DnsLabel | None = None
    namespace: DnsLabel | None = None
    labels: dict[str, str] | None = None


class Rule(_Base):
    match: Match
    queue: DnsLabel


class Routing(_Base):
    rules: list[Rule] = Field(default_factory=list)
    default: DnsLabel | None = None


class CatalogSpec(_Base):
    flavor: DnsLabel = "default"
    resources: list[DeviceResource] = Field(default_factory=list)
    priorities: list[Priority] = Field(default_factory=list)
    cohorts: list[CohortSpec] = Field(default_factory=list)
    teams: list[Team] = Field(default_factory=list)
    queues: list[CatalogQueue] = Field(min_length=1)
    routing: Routing = Field(default_factory=Routing)


class CatalogMeta(_Base):
    name: DnsLabel
    description: str | None = None


class Catalog(_Base):
    api_version: Literal["drakit.dev/v1alpha1"]
    kind: Literal["QueueCatalog"]
    metadata: CatalogMeta
    spec: CatalogSpec

    @property
    def name(self) -> str:
        return self.metadata.name

    def queue(self, name: str) -> CatalogQueue:
        for q in self.spec.queues:
            if q.name == name:
                return q
        raise KeyError(name)

    def namespaces_of(self, q: CatalogQueue) -> list[str] | None:
        """The namespaces a queue admits (its own and its teams'), None for every namespace."""
        if q.namespaces is None and q.teams is None:
            return None
        teams = {t.name: t.namespaces for t in self.spec.teams}
        out = list(q.namespaces or [])
        for t in q.teams or []:
            out += [ns for ns in teams.get(t, []) if ns not in out]
        return out


@dataclass(frozen=True)
class Located:
    """A loaded catalog and where each of its fields was written."""

    catalog: Catalog
    document: Document

    def loc(self, path: Sequence[str | int]) -> Loc:
        return self.document.loc(tuple(path))

    def error_line(self, path: Sequence[str | int], message: str) -> str:
        return f"{self.loc(path)}: QueueCatalog {quote(self.catalog.name)}: {dotted(tuple(path))}: {message}"


def amount(resource: str, value: int | str) -> int:
    """A quota in the engine's unit: millicores for cpu, else the integer value (bytes for memory)."""
    if isinstance(value, bool):
        raise ValueError("must be a number or a quantity")
    q = Quantity.parse(value) if isinstance(value, str) else Quantity.from_int(value)
    if q.sign() < 0:
        raise ValueError("must not be negative")
    if resource == "cpu":
        return q.milli_value()
    if not q.is_integer():
        raise ValueError(f"{resource} must be a whole number")
    return q.value()


def load_catalog_text(text: str, file: str) -> Located:
    """The one QueueCatalog in ``text``; raises InvalidInput with one line per problem (file:line, path)."""
    try:
        docs = [d for d in parse_documents(text, file) if isinstance(d.value, dict) and d.value.get("kind") == KIND]
    except ParseError as e:
        raise InvalidInput(str(e)) from None
    if len(docs) != 1:
        raise InvalidInput(f"{file}: expected one {KIND} document, found {len(docs)}")
    doc = docs[0]
    name = str((doc.value.get("metadata") or {}).get("name", "")) if isinstance(doc.value.get("metadata"), dict) else ""
    try:
        catalog = Catalog.model_validate(doc.value, by_alias=True)
    except ValidationError as e:
        lines = []
        for err in e.errors():
            path = tuple(p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p in ("function-after", "int", "str"))))
            msg = "unknown field" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
            lines.append(f"{doc.loc(path)}: QueueCatalog {quote(name)}: {dotted(path)}: {msg}")
        raise InvalidInput("\n".join(dict.fromkeys(lines))) from None
    located = Located(catalog, doc)
    problems = _semantic(located)
    if problems:
        raise InvalidInput("\n".join(problems))
    return located


def _dupes(names: Iterable[str]) -> list[int]:
    seen: set[str] = set()
    out = []
    for i, n in enumerate(names):
        if n in seen:
            out.append(i)
        seen.add(n)
    return out


def _semantic(lc: Located) -> list[str]:
    """Cross-field errors: duplicates, unknown references, cohort cycles, bad amounts."""
    c = lc.catalog
    s = c.spec
    out: list[str] = []

    def bad(path: tuple[str | int, ...], message: str) -> None:
        out.append(lc.error_line(path, message))

    for field, items in (("resources", s.resources), ("priorities", s.priorities), ("cohorts", s.cohorts),
                         ("teams", s.teams), ("queues", s.queues)):
        for i in _dupes(x.name for x in items):
            bad(("spec", field, i, "name"), f"Duplicate value: {quote(items[i].name)}")
    resources = {r.name for r in s.resources}
    for i, r in enumerate(s.resources):
        if not r.device_classes and not r.profiles:
            bad(("spec", "resources", i), "Required value: name deviceClasses or profiles")
        if r.name in ("cpu", "memory", "pods"):
            bad(("spec", "resources", i, "name"), f"Invalid value: {quote(r.name)}: a device resource must not be named as a core resource")
    cohorts = {co.name: co.parent for co in s.cohorts}
    for i, co in enumerate(s.cohorts):
        if co.parent is not None and co.parent not in cohorts:
            bad(("spec", "cohorts", i, "parent"), f"Not found: {quote(co.parent)}: no such cohort")
        seen = [co.name]
        parent = co.parent
        while parent is not None and parent in cohorts:
            if parent in seen:
                bad(("spec", "cohorts", i, "parent"), f"Invalid value: {quote(co.parent or '')}: cohorts form a cycle: "
                    + " -> ".join([*seen, parent]))
                break
            seen.append(parent)
            parent = cohorts[parent]
    priorities = {p.name for p in s.priorities}
    teams = {t.name for t in s.teams}
    queues = {q.name for q in s.queues}
    for i, q in enumerate(s.queues):
        at: tuple[str | int, ...] = ("spec", "queues", i)
        for j, t in enumerate(q.teams or []):
            if t not in teams:
                bad((*at, "teams", j), f"Not found: {quote(t)}: no such team in spec.teams")
        if q.priority is not None and q.priority not in priorities:
            bad((*at, "priority"), f"Not found: {quote(q.priority)}: no such priority in spec.priorities")
        for j in _dupes(x.resource for x in q.quotas):
            bad((*at, "quotas", j, "resource"), f"Duplicate value: {quote(q.quotas[j].resource)}")
        for j, quota in enumerate(q.quotas):
            qa = (*at, "quotas", j)
            if quota.resource not in resources and quota.resource not in ("cpu", "memory") and "/" not in quota.resource:
                bad((*qa, "resource"), f"Not found: {quote(quota.resource)}: not in spec.resources (nor cpu, memory "
                    "or an extended resource)")
            if quota.resource == "pods":
                bad((*qa, "resource"), "Invalid value: \"pods\": set the queue's pods field instead")
            for key in ("nominal", "borrowing_limit", "lending_limit"):
                value = getattr(quota, key)
                if value is None:
                    continue
                try:
                    amount(quota.resource, value)
                except (ValueError, QuantityError) as e:
                    bad((*qa, to_camel(key)), f"Invalid value: {quote(str(value))}: {e}")
            if quota.borrowing_limit is not None and q.cohort is None:
                bad((*qa, "borrowingLimit"), "Forbidden: borrowingLimit needs a cohort (Kueue refuses it without one)")
            if quota.lending_limit is not None and q.cohort is None:
                bad((*qa, "lendingLimit"), "Forbidden: lendingLimit needs a cohort (Kueue refuses it without one)")
    for i, rule in enumerate(s.routing.rules):
        if rule.queue not in queues:
            bad(("spec", "routing", "rules", i, "queue"), f"Not found: {quote(rule.queue)}: no such queue")
        if rule.match.profile is None and rule.match.namespace is None and not rule.match.labels:
            bad(("spec", "routing", "rules", i, "match"), "Required value: match on profile, namespace or labels")
    if s.routing.default is not None and s.routing.default not in queues:
        bad(("spec", "routing", "default"), f"Not found: {quote(s.routing.default)}: no such queue")
    return out


def catalog_json_schema() -> dict[str, Any]:
    """The published schema (``docs/queue-catalog.schema.json`` is generated from this)."""
    schema = Catalog.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://drakit.dev/schemas/queue-catalog.v1alpha1.json"
    schema["title"] = "drakit QueueCatalog (drakit.dev/v1alpha1)"
    return schema


def profile_classes(profiles: Mapping[str, Sequence[str]], names: Iterable[str]) -> list[str]:
    """DeviceClass names of the named profiles (``profiles``: profile -> its compiled classes)."""
    out: list[str] = []
    for n in names:
        out += [c for c in profiles.get(n, ()) if c not in out]
    return out
