"""Catalog and profile checks the loader cannot make alone: they need the profiles and the namespaces.

Warnings, not errors (the catalog still compiles), each one line naming file:line and field path:
a quota for a device resource no profile uses, a routing rule that can match nothing, a queue for
a namespace that does not exist; and, for a Kueue-backed queue, profiles Kueue v0.19.2 cannot
admit (``firstAvailable``, ``allocationMode: All``, admin access, a plain shared claim, CEL that
needs Kubernetes 1.37 while Kueue evaluates with the 1.36 DRA library).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drakit.errors import DrakitError
from drakit.gostr import quote
from drakit.profiles.lint import Finding
from drakit.profiles.loader import ResolvedProfile
from drakit.profiles.source import Document
from drakit.queues.catalog import Located
from drakit.queues.compile import resource_classes
from drakit.queues.routing import rule_matches

__all__ = ["CatalogWarning", "catalog_warnings", "kueue_findings", "kueue_profile_problems"]

# CEL a 1.36 library rejects: list-typed attributes and includes() arrived in 1.37.
_CEL_137 = ("includes(",)


@dataclass(frozen=True)
class CatalogWarning:
    code: str
    line: str  # file:line: QueueCatalog "name": path: message

    def __str__(self) -> str:
        return self.line


def catalog_warnings(lc: Located, profiles: Mapping[str, Sequence[str]] | None = None,
                     namespaces: Sequence[str] | None = None) -> list[CatalogWarning]:
    """``profiles``: profile -> DeviceClasses (None: not checked); ``namespaces``: those that exist (None: not checked)."""
    c = lc.catalog
    s = c.spec
    out: list[CatalogWarning] = []

    def warn(code: str, path: tuple[str | int, ...], message: str) -> None:
        out.append(CatalogWarning(code, lc.error_line(path, message)))

    if profiles is not None:
        used = {dc for classes in profiles.values() for dc in classes}
        classes = resource_classes(c, profiles)
        for i, q in enumerate(s.queues):
            for j, quota in enumerate(q.quotas):
                dcs = classes.get(quota.resource)
                if dcs is not None and not set(dcs) & used:
                    warn("UnusedQuota", ("spec", "queues", i, "quotas", j, "resource"),
                         f"quota for {quote(quota.resource)} whose DeviceClasses ({', '.join(dcs) or 'none'}) no profile uses")
    for i, rule in enumerate(s.routing.rules):
        at = ("spec", "routing", "rules", i)
        m = rule.match
        allowed = c.namespaces_of(c.queue(rule.queue)) if rule.queue in {q.name for q in s.queues} else None
        if profiles is not None and m.profile is not None and m.profile not in profiles:
            warn("RuleMatchesNothing", (*at, "match", "profile"), f"matches nothing: no profile {quote(m.profile)}")
        elif m.namespace is not None and allowed is not None and m.namespace not in allowed:
            warn("RuleMatchesNothing", (*at, "match", "namespace"),
                 f"matches nothing: queue {quote(rule.queue)} does not admit namespace {quote(m.namespace)}")
        elif namespaces is not None and m.namespace is not None and m.namespace not in namespaces:
            warn("RuleMatchesNothing", (*at, "match", "namespace"), f"matches nothing: namespace {quote(m.namespace)} does not exist")
        elif any(rule_matches(earlier, m.profile, m.namespace or "", m.labels or {}) and _covers(earlier.match, m)
                 for earlier in s.routing.rules[:i]):
            warn("RuleShadowed", at, "never used: an earlier rule matches everything this one does")
    if namespaces is not None:
        for i, q in enumerate(s.queues):
            for j, ns in enumerate(q.namespaces or []):
                if ns not in namespaces:
                    warn("NamespaceMissing", ("spec", "queues", i, "namespaces", j), f"namespace {quote(ns)} does not exist")
        for i, t in enumerate(s.teams):
            for j, ns in enumerate(t.namespaces):
                if ns not in namespaces:
                    warn("NamespaceMissing", ("spec", "teams", i, "namespaces", j), f"namespace {quote(ns)} does not exist")
    return out


def _covers(earlier: Any, later: Any) -> bool:
    """Every job the later rule matches, the earlier one matches too (its fields are a subset)."""
    if earlier.profile is not None and earlier.profile != later.profile:
        return False
    if earlier.namespace is not None and earlier.namespace != later.namespace:
        return False
    return all((later.labels or {}).get(k) == v for k, v in (earlier.labels or {}).items())


def kueue_profile_problems(manifests: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """``(object, field path, problem)`` for compiled manifests Kueue v0.19.2 would refuse to admit.

    Reads claim templates and claims as the profile compiler emits them (and as users write them).
    """
    out: list[tuple[str, str, str]] = []
    for m in manifests:
        kind = m.get("kind")
        name = f"{kind}/{(m.get('metadata') or {}).get('name', '')}"
        if kind == "ResourceClaim":
            out.append((name, "", "a plain ResourceClaim: Kueue admits only ResourceClaimTemplates (\"DRA resource claims not supported\")"))
        if kind not in ("ResourceClaimTemplate", "ResourceClaim"):
            if kind == "DeviceClass":
                for i, sel in enumerate((m.get("spec") or {}).get("selectors") or []):
                    expr = (sel.get("cel") or {}).get("expression", "")
                    if any(t in expr for t in _CEL_137):
                        out.append((name, f"spec.selectors[{i}].cel.expression",
                                    "needs Kubernetes 1.37 CEL (includes()); Kueue evaluates with the 1.36 DRA library"))
            continue
        spec = (m.get("spec") or {}).get("spec") if kind == "ResourceClaimTemplate" else m.get("spec")
        base = "spec.spec.devices.requests" if kind == "ResourceClaimTemplate" else "spec.devices.requests"
        for i, req in enumerate(((spec or {}).get("devices") or {}).get("requests") or []):
            at = f"{base}[{i}]"
            if req.get("firstAvailable"):
                out.append((name, f"{at}.firstAvailable", "Kueue refuses firstAvailable (\"FirstAvailable device selection is not supported\")"))
            exactly = req.get("exactly") or {}
            if exactly.get("allocationMode") == "All":
                out.append((name, f"{at}.exactly.allocationMode", "Kueue admits ExactCount only"))
            if exactly.get("adminAccess"):
                out.append((name, f"{at}.exactly.adminAccess", "Kueue refuses admin access"))
            for j, sel in enumerate(exactly.get("selectors") or []):
                expr = (sel.get("cel") or {}).get("expression", "")
                if any(t in expr for t in _CEL_137):
                    out.append((name, f"{at}.exactly.selectors[{j}].cel.expression",
                                "needs Kubernetes 1.37 CEL (includes()); Kueue evaluates with the 1.36 DRA library"))
    return out


KUEUE_HINT = ("Kueue v0.19.2 admits ExactCount requests from ResourceClaimTemplates only: give each tier its own "
              "DeviceClass and one deviceClassMappings entry per tier instead of alternatives")


def kueue_findings(docs: Sequence[Document], profiles: Sequence[ResolvedProfile]) -> list[Finding]:
    """``drakit lint`` findings when a QueueCatalog puts the input behind Kueue: what it would refuse to admit.

    Profiles are compiled for their drivers and their output checked; claims and templates in
    the input are checked as written.  One finding per problem, at the profile's or object's line.
    """
    from drakit.profiles.compile import compile_profile, drivers_for

    out: list[Finding] = []
    for rp in profiles:
        try:
            manifests = [m for s in drivers_for(rp) for m in compile_profile(rp, s).manifests()]
        except DrakitError:
            continue  # a profile that cannot compile is reported by `profile compile`
        for obj, path, problem in kueue_profile_problems(manifests):
            out.append(Finding("KueueCannotAdmit", "error", rp.source, f"Profile/{rp.name}", f"{obj}: {path}".rstrip(": "),
                               problem, KUEUE_HINT))
    for d in docs:
        if not isinstance(d.value, Mapping) or d.value.get("kind") not in ("ResourceClaim", "ResourceClaimTemplate"):
            continue
        for obj, path, problem in kueue_profile_problems([d.value]):
            out.append(Finding("KueueCannotAdmit", "error", d.loc(()), obj, path, problem, KUEUE_HINT))
    return out
