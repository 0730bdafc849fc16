"""What a snapshot leaves out before it is attached to a bug report.

Explain, allocate and simulate never read container environment values, arguments or
annotations, and a cluster's Secrets are not theirs to read; those are exactly where
credentials live.  So a snapshot replaces each env ``value``, each argument and each
annotation value with :data:`REDACTED` (keeping names, keys and counts, so the objects stay
valid and a reader still sees their shape), drops Secret objects whole, and says how many
values it replaced.  ``valueFrom`` references stay: they name a Secret, they do not hold it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]
REDACTED = "REDACTED"
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


@dataclass(frozen=True)
class Redaction:
    """How many values of each sort were replaced, and how many Secrets were dropped."""

    env: int = 0
    args: int = 0
    annotations: int = 0
    secrets: int = 0

    def summary(self) -> str:
        return (f"redacted {self.env} env value(s), {self.args} argument(s), {self.annotations} annotation(s)"
                f", dropped {self.secrets} Secret(s) (--no-redact keeps them)")


def redact(objects: Iterable[Mapping[str, Any]]) -> tuple[list[Obj], Redaction]:
    """Copies of ``objects`` with secrets taken out; the inputs are left untouched."""
    counts = {"env": 0, "args": 0, "annotations": 0, "secrets": 0}
    out: list[Obj] = []
    for obj in objects:
        if obj.get("kind") == "Secret":
            counts["secrets"] += 1
            continue
        obj = dict(obj)
        meta = obj.get("metadata")
        if isinstance(meta, dict) and meta.get("annotations"):
            counts["annotations"] += len(meta["annotations"])
            obj["metadata"] = {**meta, "annotations": dict.fromkeys(meta["annotations"], REDACTED)}
        for path, spec in _pod_specs(obj):
            obj = _replace(obj, path, _redact_spec(spec, counts))
        out.append(obj)
    return out, Redaction(**counts)


def _pod_specs(obj: Obj) -> Iterator[tuple[tuple[str, ...], Obj]]:
    """Pod specs inside ``obj``: a Pod's, a PodTemplate's or a workload's pod template."""
    for path in (("spec",), ("template", "spec"), ("spec", "template", "spec"),
                 ("spec", "jobTemplate", "spec", "template", "spec")):
        node: Any = obj
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and any(k in node for k in _CONTAINER_LISTS):
            yield path, node
            return


def _redact_spec(spec: Obj, counts: dict[str, int]) -> Obj:
    spec = dict(spec)
    for key in _CONTAINER_LISTS:
        containers = spec.get(key)
        if not isinstance(containers, list):
            continue
        new = []
        for c in containers:
            if not isinstance(c, dict):
                new.append(c)
                continue
            c = dict(c)
            if isinstance(c.get("env"), list):
                env = []
                for e in c["env"]:
                    if isinstance(e, dict) and "value" in e:
                        counts["env"] += 1
                        e = {**e, "value": REDACTED}
                    env.append(e)
                c["env"] = env
            if isinstance(c.get("args"), list):
                counts["args"] += len(c["args"])
                c["args"] = [REDACTED] * len(c["args"])
            new.append(c)
        spec[key] = new
    return spec


def _replace(obj: Obj, path: tuple[str, ...], value: Any) -> Obj:
    if len(path) == 1:
        return {**obj, path[0]: value}
    return {**obj, path[0]: _replace(obj[path[0]], path[1:], value)}
