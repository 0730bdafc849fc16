"""Routing: a job's profile, namespace and labels → the catalog queue it goes to.

First matching rule wins (every field a rule sets must match), then ``routing.default``; a
queue that does not admit the job's namespace is never chosen, so routing cannot send a job
where Kueue would refuse it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from drakit.queues.catalog import Catalog, Rule

__all__ = ["Route", "route", "rule_matches"]


@dataclass(frozen=True)
class Route:
    queue: str | None
    rule: int | None  # index into spec.routing.rules; None: the default (or nothing matched)
    why: str


def rule_matches(rule: Rule, profile: str | None, namespace: str, labels: Mapping[str, str]) -> bool:
    m = rule.match
    if m.profile is not None and m.profile != profile:
        return False
    if m.namespace is not None and m.namespace != namespace:
        return False
    return all(labels.get(k) == v for k, v in (m.labels or {}).items())


def route(catalog: Catalog, *, profile: str | None, namespace: str, labels: Mapping[str, str] | None = None) -> Route:
    labels = labels or {}

    def admits(queue: str) -> bool:
        allowed = catalog.namespaces_of(catalog.queue(queue))
        return allowed is None or namespace in allowed

    for i, rule in enumerate(catalog.spec.routing.rules):
        if rule_matches(rule, profile, namespace, labels) and admits(rule.queue):
            return Route(rule.queue, i, f"spec.routing.rules[{i}] matches")
    default = catalog.spec.routing.default
    if default is not None and admits(default):
        return Route(default, None, "spec.routing.default")
    return Route(None, None, f"no rule matches profile {profile or '-'} in namespace {namespace}"
                 + (f" and the default queue {default} does not admit namespace {namespace}" if default else ""))
