"""``drakit lint`` on Polyaxon files and presets: what Polyaxon 2.x rejects or silently drops.

A preset read on its own passes Polyaxon's parser, because ``runPatch`` is an untyped dict; it
fails only when composed with an operation, and its converter drops ``resources.claims`` without
a word.  So these findings are about what happens after composition and conversion.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from drakit.profiles.compile import DIGEST_ANNOTATION, PROFILE_LABEL, QUEUE_LABEL, CompiledProfile
from drakit.profiles.lint import Finding
from drakit.profiles.polyaxon import (
    EXTENDED_RESOURCE_DOMAIN,
    REFUSED_KINDS,
    REPLICAS,
    extended_resource_refusals,
    is_polyaxon_document,
)
from drakit.profiles.source import Document, Path, dotted


def _get(node: Any, *keys: str | int) -> Any:
    for k in keys:
        node = node.get(k) if isinstance(node, Mapping) and isinstance(k, str) else None
    return node


def _runs(value: Mapping[str, Any]) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """The run sections of an operation or component (the root's shortcuts count as one)."""
    yield (), value
    for path in (("runPatch",), ("run",), ("component", "run")):
        run = _get(value, *path)
        if isinstance(run, Mapping):
            yield path, run


def _run_kind(value: Mapping[str, Any]) -> str:
    for path in (("runPatch", "kind"), ("run", "kind"), ("component", "run", "kind")):
        kind = _get(value, *path)
        if isinstance(kind, str):
            return kind
    return "job"


def lint_polyaxon(doc: Document, profiles: Mapping[str, CompiledProfile]) -> list[Finding]:
    """Findings for one Polyaxon document; ``profiles`` are the ones the label may name."""
    v = doc.value
    if not is_polyaxon_document(v):
        return []
    name = f"{v['kind']}/{v.get('name') or doc.index}"
    out: list[Finding] = []

    def add(code: str, severity: str, path: Path, message: str, hint: str) -> None:
        out.append(Finding(code, severity, doc.loc(path), name, dotted(path), message, hint))  # type: ignore[arg-type]

    kind = _run_kind(v)
    pod_sections: list[tuple[Path, Mapping[str, Any]]] = []
    for path, run in _runs(v):
        if kind in REPLICAS and path:
            for key in ("container", "environment"):
                if key in run:
                    add("DK010", "error", (*path, key), f"a {kind} run has no top-level {key}: Polyaxon rejects it",
                        f"put it under each replica ({', '.join(REPLICAS[kind][0])})")
            pod_sections += [((*path, r), run[r]) for r in REPLICAS[kind][0] if isinstance(run.get(r), Mapping)]
        elif kind in REFUSED_KINDS and path:
            for key in ("container", "environment"):
                if key in run:
                    add("DK010", "error", (*path, key), f"a {kind} run has no pod: {key} has nothing to apply to",
                        REFUSED_KINDS[kind])
        else:
            pod_sections.append((path, run))

    labelled: set[str] = set()
    for path, sec in pod_sections:
        env = sec.get("environment")
        if isinstance(env, Mapping) and "resourceClaims" in env:
            add("DK007", "error", (*path, "environment", "resourceClaims"),
                "Polyaxon's environment has no resourceClaims: the preset is rejected once composed with an operation",
                "use drakit profile polyaxon (mode label injects the claims at admission)")
        claims = _get(sec, "container", "resources", "claims")
        if claims is not None:
            add("DK008", "error", (*path, "container", "resources", "claims"),
                "Polyaxon's converter rebuilds resources from limits and requests only: these claims are dropped silently",
                "use mode extended-resource (limits) or mode label (claims injected at admission)")
        labels = _get(sec, "environment", "labels")
        annotations = _get(sec, "environment", "annotations")
        profile = labels.get(PROFILE_LABEL) if isinstance(labels, Mapping) else None
        if isinstance(profile, str):
            labelled.add(profile)
            cp = profiles.get(profile)
            lpath: Path = (*path, "environment", "labels", PROFILE_LABEL)
            if profiles and cp is None:
                add("DK011", "error", lpath, f"no profile {profile} (known: {', '.join(sorted(profiles))})",
                    "fix the label: the injector denies pods naming an unknown profile")
            digest = annotations.get(DIGEST_ANNOTATION) if isinstance(annotations, Mapping) else None
            if cp is not None and isinstance(digest, str) and digest != cp.digest():
                add("DK011", "warning", (*path, "environment", "annotations", DIGEST_ANNOTATION),
                    f"the preset was generated from another version of profile {profile} ({digest}, now {cp.digest()})",
                    "regenerate it with drakit profile polyaxon: the injector denies a stale digest")
            if cp is not None and dict(cp.fragment.labels).get(QUEUE_LABEL):
                add("DK012", "warning", lpath,
                    f"profile {profile} routes to Kueue queue {dict(cp.fragment.labels)[QUEUE_LABEL]}, but claims injected "
                    "into Polyaxon's pods are counted by Kueue only with its pod integration",
                    "enable Kueue's pod integration (and serve with --kueue-pods), or use a profile without a queue")
        for part in ("limits", "requests"):
            res = _get(sec, "container", "resources", part)
            for key in res if isinstance(res, Mapping) else ():
                if not str(key).startswith(EXTENDED_RESOURCE_DOMAIN + "/"):
                    continue
                prof = str(key).split("/", 1)[1]
                rpath: Path = (*path, "container", "resources", part, key)
                cp = profiles.get(prof)
                if profiles and cp is None:
                    add("DK011", "error", rpath, f"no profile {prof} behind extended resource {key}",
                        "no DeviceClass names it: the pod would stay Pending")
                elif cp is not None and (why := extended_resource_refusals(cp)):
                    add("DK011", "error", rpath, f"profile {prof} cannot be one extended resource: {'; '.join(why)}",
                        "use mode label for it")

    queue = v.get("queue")
    if isinstance(queue, str):
        kueue = {lbl.get(QUEUE_LABEL) for _, s in pod_sections if isinstance(lbl := _get(s, "environment", "labels"), Mapping)}
        kueue |= {dict(profiles[p].fragment.labels).get(QUEUE_LABEL) for p in labelled if p in profiles}
        if len(queue.replace(".", "/").split("/")) > 2:
            add("DK009", "error", ("queue",), f"Polyaxon queue {queue!r} has more than two parts",
                "write QUEUE or AGENT/QUEUE")
        elif queue in kueue:
            add("DK009", "error", ("queue",),
                f"queue {queue!r} is the Kueue LocalQueue; Polyaxon's queue names an agent queue, a different thing",
                f"keep Kueue's queue in environment.labels ({QUEUE_LABEL}) and set queue to AGENT/QUEUE or drop it")
    return out
