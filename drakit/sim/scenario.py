"""Scenario files -> a frozen :class:`Scenario`, with every problem reported at its line.

A scenario is one YAML stream: exactly one ``kind: Scenario`` document (cluster shape and
workloads, see ``docs/scenario.schema.json``) plus any number of plain Kubernetes manifests
(DeviceClass, ResourceClaimTemplate, ResourceClaim, Node, ResourceSlice, Pod) mixed in.

Hand-written rather than a JSON-schema validator: errors must carry the YAML line of the
offending field (``scenario.yaml:14: spec.workloads[2].duration: Invalid value: ...``), and
the checks are few and specific.  Manifests are checked by the typed model
(:func:`drakit.model.parse_object`), so they get the same wording as ``drakit validate``.
This module only parses; files are read by ``drakit.sources.load_scenario``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from drakit.corev1 import cpu_millis, memory_bytes
from drakit.errors import ErrorType, FieldError, InvalidArgument, InvalidInput, ObjectErrors, ObjectRef
from drakit.features import NEWEST_VERSION, SUPPORTED_VERSIONS, Features
from drakit.gostr import quote
from drakit.inventory import templates
from drakit.inventory.snapshot import name_of, namespace_of
from drakit.model.codec import Document as SourceDocument
from drakit.model.codec import dotted, parse_text

SCENARIO_API_VERSION = "drakit.dev/v1alpha1"
SCENARIO_KIND = "Scenario"

DEFAULT_MEMORY_LIMIT_MIB = 2048
"""The default ceiling for a run's estimated resident memory.  2 GiB is the issue's
budget for the 5,000-node x 8-GPU fill; raise it with ``spec.memoryLimitMiB``."""

# Rough per-object resident costs measured on CPython 3.11 (wire dicts, allocator indexes and
# simulator bookkeeping).  Deliberately pessimistic: the estimate only has to stop runs that
# would certainly not fit, before they start.
_BYTES_PER_NODE = 16 * 1024
_BYTES_PER_DEVICE = 6 * 1024
_BYTES_PER_POD = 6 * 1024
_BASE_BYTES = 120 * 1024 * 1024

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\Z")
ADD_NODES_PATTERN = re.compile(r"^(\d+)x([a-z0-9-]+)(?:@root(\d+)-numa(\d+))?\Z")

# Lines per path: "" is the document itself, "spec.nodes[0].count" a field.
LineMap = dict[str, int]


@dataclass(frozen=True)
class NodeGroup:
    """``count`` nodes expanded from one node template."""

    count: int
    template: str
    name_prefix: str
    labels: tuple[tuple[str, str], ...] = ()
    topology: templates.Topology | None = None  # None: the template's default layout


@dataclass(frozen=True)
class PodClaim:
    """One ``pod.spec.resourceClaims`` entry."""

    name: str
    template: str | None = None
    claim: str | None = None


@dataclass(frozen=True)
class Workload:
    """Pods (``kind: Pod``: ``count`` pods) or a Job (``completions`` pods, ``parallelism`` at a time)."""

    name: str
    namespace: str
    kind: str
    start: float
    count: int
    interval: float
    duration: float | None  # None: runs until the end of the simulation
    parallelism: int
    claims: tuple[PodClaim, ...]
    cpu_milli: int = 0
    memory_bytes: int = 0
    recipe: str = ""
    profile: str = ""
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Scenario:
    """Everything a run needs, already checked.  ``objects`` are plain manifests (wire dicts)."""

    name: str
    seed: int
    features: Features
    nodes: tuple[NodeGroup, ...]
    objects: tuple[dict[str, Any], ...]
    workloads: tuple[Workload, ...]
    until: float | None = None
    memory_limit_mib: int = DEFAULT_MEMORY_LIMIT_MIB
    source: str = ""
    standard_classes: tuple[str, ...] = field(default=())
    kubernetes_version: str = NEWEST_VERSION
    """Which release's control-plane behaviour to reproduce (``drakit.sim.versions``)."""

    def with_nodes(self, extra: Sequence[NodeGroup]) -> Scenario:
        """A copy with more node groups (``--add-nodes 4xh200-8x``)."""
        from dataclasses import replace

        return replace(self, nodes=(*self.nodes, *extra))

    def with_objects(self, extra: Sequence[dict[str, Any]]) -> Scenario:
        """A copy with more mixed-in manifests (``--add-nodes FILE``: Nodes and ResourceSlices)."""
        from dataclasses import replace

        return replace(self, objects=(*self.objects, *extra))

    def node_names(self) -> set[str]:
        """Every node name a run of this scenario will have."""
        names = {f"{g.name_prefix}{i}" for g in self.nodes for i in range(g.count)}
        return names | {name_of(o) for o in self.objects if o.get("kind") == "Node"}

    def pools(self) -> set[tuple[str, str]]:
        """(driver, pool) of every ResourceSlice: node templates publish one pool per node."""
        out = {(templates.driver_of(g.template), f"{g.name_prefix}{i}") for g in self.nodes for i in range(g.count)}
        for o in self.objects:
            if o.get("kind") == "ResourceSlice":
                spec = o.get("spec") or {}
                out.add((str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", ""))))
        return out

    def node_count(self) -> int:
        return sum(g.count for g in self.nodes) + sum(1 for o in self.objects if o.get("kind") == "Node")

    def device_count(self) -> int:
        total = 0
        for g in self.nodes:
            total += g.count * templates.parse_template(g.template)[1]
        for o in self.objects:
            if o.get("kind") == "ResourceSlice":
                total += len((o.get("spec") or {}).get("devices") or [])
        return total

    def pod_count(self) -> int:
        return sum(w.count for w in self.workloads) + sum(1 for o in self.objects if o.get("kind") == "Pod")

    def estimated_bytes(self) -> int:
        """Pessimistic resident-memory estimate of a run (see ``_BYTES_PER_*``)."""
        return (
            _BASE_BYTES
            + self.node_count() * _BYTES_PER_NODE
            + self.device_count() * _BYTES_PER_DEVICE
            + self.pod_count() * _BYTES_PER_POD
        )

    def check_memory(self) -> None:
        """Stop before starting when the estimate exceeds the limit."""
        need = self.estimated_bytes()
        limit = self.memory_limit_mib * 1024 * 1024
        if need > limit:
            where = f"{self.source}: " if self.source else ""  # the one-line error names the file
            raise InvalidInput(
                f"{where}scenario {quote(self.name)} needs an estimated {need // (1024 * 1024)} MiB "
                f"({self.node_count()} nodes, {self.device_count()} devices, {self.pod_count()} pods), "
                f"above the limit of {self.memory_limit_mib} MiB: shrink the scenario or raise spec.memoryLimitMiB"
            )


# --- YAML with line numbers -------------------------------------------------------------------


@dataclass(frozen=True)
class _Doc:
    index: int
    line: int
    data: Any
    source: SourceDocument | None = field(default=None, compare=False, repr=False)  # None: built in memory

    @cached_property
    def lines(self) -> LineMap:
        """Dotted path -> line, composed from the document's text on first use (only on errors)."""
        return {dotted(p): line for p, line in self.source.lines.items()} if self.source is not None else {}


def _parse_stream(text: str, source: str) -> list[_Doc]:
    docs, problems = parse_text(source, text, nonfinite_ok=True)
    if problems:
        raise InvalidInput("\n".join(
            f"{source}:{p.line}: invalid YAML: {p}" if p.line else f"{source}: invalid YAML: {p}" for p in problems))
    return [_Doc(d.index, d.line or 1, d.data, d) for d in docs]


# --- checks -----------------------------------------------------------------------------------


class _Checker:
    """Collects field errors with their lines for one document."""

    def __init__(self, source: str, doc: _Doc) -> None:
        self.source = source
        self.doc = doc
        self.errors: list[tuple[int, FieldError]] = []

    def line(self, path: str) -> int:
        while path:
            if path in self.doc.lines:
                return self.doc.lines[path]
            path = path.rsplit(".", 1)[0] if "." in path else path.rsplit("[", 1)[0] if "[" in path else ""
        return self.doc.line

    def add(self, path: str, type: ErrorType, value: Any = None, detail: str = "") -> None:
        from drakit.errors import OMIT

        self.errors.append((self.line(path), FieldError(path, type, OMIT if value is None else value, detail)))

    def problems(self) -> list[ObjectErrors]:
        return [_LinedErrors(ObjectRef(SCENARIO_KIND, "", source=self.source), (e,), line) for line, e in self.errors]

    # typed getters: record an error and return a default when the value has the wrong type

    def mapping(self, data: Mapping[str, Any], key: str, path: str, *, required: bool = False) -> dict[str, Any]:
        value = data.get(key)
        if value is None:
            if required:
                self.add(path, ErrorType.REQUIRED)
            return {}
        if not isinstance(value, dict):
            self.add(path, ErrorType.TYPE_INVALID, value, "expected an object")
            return {}
        return value

    def sequence(self, data: Mapping[str, Any], key: str, path: str) -> list[Any]:
        value = data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.add(path, ErrorType.TYPE_INVALID, value, "expected a list")
            return []
        return value

    def string(self, data: Mapping[str, Any], key: str, path: str, *, required: bool = False, default: str = "") -> str:
        value = data.get(key)
        if value is None:
            if required:
                self.add(path, ErrorType.REQUIRED)
            return default
        if not isinstance(value, str):
            self.add(path, ErrorType.TYPE_INVALID, value, "expected a string")
            return default
        return value

    def number(
        self, data: Mapping[str, Any], key: str, path: str, *, default: float | None = None, minimum: float = 0.0
    ) -> float | None:
        value = data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.add(path, ErrorType.TYPE_INVALID, value, "expected a number of seconds")
            return default
        if not math.isfinite(value):
            # YAML's .nan and .inf are floats: they would poison every time and percentile.
            self.add(path, ErrorType.INVALID, str(value), "must be a finite number of seconds")
            return default
        if value < minimum:
            self.add(path, ErrorType.INVALID, value, f"must be greater than or equal to {minimum:g}")
            return default
        return float(value)

    def integer(self, data: Mapping[str, Any], key: str, path: str, *, default: int, minimum: int = 0) -> int:
        value = data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(path, ErrorType.TYPE_INVALID, value, "expected an integer")
            return default
        if value < minimum:
            self.add(path, ErrorType.INVALID, value, f"must be greater than or equal to {minimum}")
            return default
        return value

    def unknown(self, data: Mapping[str, Any], allowed: Sequence[str], path: str) -> None:
        for key in data:
            if key not in allowed:
                sub = f"{path}.{key}" if path else key
                self.errors.append((self.line(sub), _UnknownField(sub, ErrorType.NOT_SUPPORTED)))


@dataclass(frozen=True)
class _UnknownField(FieldError):
    def __str__(self) -> str:
        return f'unknown field "{self.path}"'


@dataclass(frozen=True)
class _LinedErrors(ObjectErrors):
    """Field errors rendered as ``<file>:<line>: <path>: <Type>: <detail>``."""

    line: int = 0

    def lines(self) -> list[str]:
        where = f"{self.ref.source}:{self.line}" if self.line else self.ref.source
        return [f"{where}: {e}" for e in self.errors]


_SCENARIO_FIELDS = ("apiVersion", "kind", "metadata", "spec")
_SPEC_FIELDS = (
    "seed",
    "kubernetesVersion",
    "featureGates",
    "nodes",
    "deviceClasses",
    "workloads",
    "until",
    "memoryLimitMiB",
)
_NODE_FIELDS = ("count", "template", "namePrefix", "labels", "topology")
_TOPOLOGY_FIELDS = ("gpusPerPcieRoot", "numaNodes")
_WORKLOAD_FIELDS = (
    "name",
    "namespace",
    "kind",
    "start",
    "count",
    "interval",
    "duration",
    "parallelism",
    "completions",
    "resourceClaims",
    "resources",
    "recipe",
    "profile",
    "labels",
)
_STANDARD_CLASSES = ("gpu.nvidia.com", "gpu.example.com")
_MANIFEST_KINDS = ("DeviceClass", "ResourceClaimTemplate", "ResourceClaim", "Node", "ResourceSlice", "Pod")


def _quantity(c: _Checker, data: Mapping[str, Any], key: str, path: str, parse: Callable[[Any], int]) -> int:
    """A cpu or memory request: a quantity, finite and not negative (the API server's rule)."""
    if key not in data:
        return 0
    value = data[key]
    try:
        amount = parse(value)
    except (TypeError, ValueError, OverflowError):
        c.add(path, ErrorType.INVALID, value, f"not a {key} quantity")
        return 0
    if amount < 0:
        c.add(path, ErrorType.INVALID, value, "must be greater than or equal to 0")
        return 0
    return amount


def _labels(c: _Checker, data: Mapping[str, Any], path: str) -> tuple[tuple[str, str], ...]:
    raw = c.mapping(data, "labels", path)
    out = []
    for k, v in raw.items():
        if not isinstance(v, str):
            c.add(f"{path}.{k}", ErrorType.TYPE_INVALID, v, "label values are strings (quote them)")
            continue
        out.append((k, v))
    return tuple(out)


def _node_group(c: _Checker, raw: Any, path: str) -> NodeGroup | None:
    if not isinstance(raw, dict):
        c.add(path, ErrorType.TYPE_INVALID, raw, "expected an object")
        return None
    c.unknown(raw, _NODE_FIELDS, path)
    count = c.integer(raw, "count", f"{path}.count", default=1, minimum=1)
    template = c.string(raw, "template", f"{path}.template", required=True)
    if template:
        try:
            templates.parse_template(template)
        except ValueError as e:
            c.add(f"{path}.template", ErrorType.NOT_SUPPORTED, template, str(e).split(": ", 1)[-1])
            template = ""
    prefix = c.string(raw, "namePrefix", f"{path}.namePrefix", default=f"{template}-")
    if prefix and not _DNS_SUBDOMAIN.match(prefix.rstrip("-") or "x"):
        c.add(f"{path}.namePrefix", ErrorType.INVALID, prefix, "must be a DNS subdomain prefix")
    topology = None
    if raw.get("topology") is not None:
        spec = c.mapping(raw, "topology", f"{path}.topology")
        c.unknown(spec, _TOPOLOGY_FIELDS, f"{path}.topology")
        default = templates.Topology()
        topology = templates.Topology(
            c.integer(spec, "gpusPerPcieRoot", f"{path}.topology.gpusPerPcieRoot", default=default.gpus_per_pcie_root, minimum=1),
            c.integer(spec, "numaNodes", f"{path}.topology.numaNodes", default=default.numa_nodes, minimum=1),
        )
        problem = templates.check_topology(template, topology) if template else ""
        if problem:
            c.add(f"{path}.topology", ErrorType.INVALID, None, f"{template}: {problem}")
    if not template:
        return None
    return NodeGroup(count, template, prefix, _labels(c, raw, f"{path}.labels"), topology)


def _pod_claims(c: _Checker, raw: Any, path: str) -> tuple[PodClaim, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        c.add(path, ErrorType.TYPE_INVALID, raw, "expected a list")
        return ()
    out: list[PodClaim] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        p = f"{path}[{i}]"
        if not isinstance(item, dict):
            c.add(p, ErrorType.TYPE_INVALID, item, "expected an object")
            continue
        c.unknown(item, ("name", "resourceClaimTemplateName", "resourceClaimName"), p)
        name = c.string(item, "name", f"{p}.name", required=True)
        if name and not _DNS_LABEL.match(name):
            c.add(f"{p}.name", ErrorType.INVALID, name, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'")
        if name in seen:
            c.add(f"{p}.name", ErrorType.DUPLICATE, name)
        seen.add(name)
        tmpl = c.string(item, "resourceClaimTemplateName", f"{p}.resourceClaimTemplateName") or None
        claim = c.string(item, "resourceClaimName", f"{p}.resourceClaimName") or None
        if tmpl and claim:
            c.add(p, ErrorType.INVALID, None, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        out.append(PodClaim(name, tmpl, claim))
    return tuple(out)


def _workload(c: _Checker, raw: Any, path: str, names: set[str]) -> Workload | None:
    if not isinstance(raw, dict):
        c.add(path, ErrorType.TYPE_INVALID, raw, "expected an object")
        return None
    c.unknown(raw, _WORKLOAD_FIELDS, path)
    name = c.string(raw, "name", f"{path}.name", required=True)
    if name and not _DNS_LABEL.match(name):
        c.add(f"{path}.name", ErrorType.INVALID, name, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'")
    if name in names:
        c.add(f"{path}.name", ErrorType.DUPLICATE, name)
    names.add(name)
    kind = c.string(raw, "kind", f"{path}.kind", default="Pod")
    if kind not in ("Pod", "Job"):
        c.add(f"{path}.kind", ErrorType.NOT_SUPPORTED, kind, 'supported values: "Job", "Pod"')
    namespace = c.string(raw, "namespace", f"{path}.namespace", default="default")
    start = c.number(raw, "start", f"{path}.start", default=0.0) or 0.0
    interval = c.number(raw, "interval", f"{path}.interval", default=0.0) or 0.0
    duration = c.number(raw, "duration", f"{path}.duration", default=None)
    if kind == "Job":
        if "count" in raw:
            c.add(f"{path}.count", ErrorType.FORBIDDEN, None, "a Job sets completions and parallelism instead")
        count = c.integer(raw, "completions", f"{path}.completions", default=1, minimum=1)
        parallelism = c.integer(raw, "parallelism", f"{path}.parallelism", default=1, minimum=1)
        if duration is None:
            c.add(f"{path}.duration", ErrorType.REQUIRED, None, "a Job's pods must finish for the Job to progress")
    else:
        for key in ("completions", "parallelism"):
            if key in raw:
                c.add(f"{path}.{key}", ErrorType.FORBIDDEN, None, "only for kind: Job")
        count = c.integer(raw, "count", f"{path}.count", default=1, minimum=1)
        parallelism = count
    claims = _pod_claims(c, raw.get("resourceClaims"), f"{path}.resourceClaims")
    resources = c.mapping(raw, "resources", f"{path}.resources")
    c.unknown(resources, ("cpu", "memory"), f"{path}.resources")
    cpu = _quantity(c, resources, "cpu", f"{path}.resources.cpu", cpu_millis)
    mem = _quantity(c, resources, "memory", f"{path}.resources.memory", memory_bytes)
    recipe = c.string(raw, "recipe", f"{path}.recipe")
    profile = c.string(raw, "profile", f"{path}.profile")
    if not name:
        return None
    return Workload(
        name=name,
        namespace=namespace,
        kind=kind,
        start=start,
        count=count,
        interval=interval,
        duration=duration,
        parallelism=parallelism,
        claims=claims,
        cpu_milli=cpu,
        memory_bytes=mem,
        recipe=recipe,
        profile=profile,
        labels=_labels(c, raw, f"{path}.labels"),
    )


def _check_manifest(source: str, doc: _Doc) -> tuple[list[ObjectErrors], Any]:
    """Typed-model check of a mixed-in manifest; field errors get their YAML lines.

    Returns the problems and, when there are none, a :class:`drakit.model.load.Entry` for
    API validation once the scenario's feature gates are known.
    """
    from pydantic import ValidationError

    from drakit.model import KindError, parse_object
    from drakit.model.load import Document, Entry

    data = doc.data
    c = _Checker(source, doc)
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind not in _MANIFEST_KINDS:
        c.add("kind", ErrorType.NOT_SUPPORTED, kind, "a scenario may mix in " + ", ".join(_MANIFEST_KINDS) + " (and one Scenario)")
        return c.problems(), None
    obj = None
    try:
        obj = parse_object(data)
    except KindError as e:
        c.add("apiVersion", ErrorType.INVALID, data.get("apiVersion"), str(e))
    except ValidationError as e:
        for err in e.errors():
            loc = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in err["loc"]).replace(".[", "[")
            c.add(loc, ErrorType.INVALID, None, err["msg"])
    if not ((data.get("metadata") or {}).get("name")):
        c.add("metadata.name", ErrorType.REQUIRED)
    if kind == "Pod":
        _check_pod_times(c, data)
    elif kind == "Node" and not c.errors:  # the typed model already named malformed quantities
        allocatable = (data.get("status") or {}).get("allocatable") or {}
        _quantity(c, allocatable, "cpu", "status.allocatable.cpu", cpu_millis)
        _quantity(c, allocatable, "memory", "status.allocatable.memory", memory_bytes)
    if c.errors or obj is None:
        return c.problems(), None
    return [], Entry(obj, Document(source, doc.index, doc.line or None, data), str(kind), name_of(data), "")


_TIME_ANNOTATIONS = ("drakit.dev/arrival", "drakit.dev/duration")


def _check_pod_times(c: _Checker, pod: Mapping[str, Any]) -> None:
    """A mixed-in pod's arrival and duration (finite seconds, not negative) and its requests."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    for key in _TIME_ANNOTATIONS:
        if key not in annotations:
            continue
        path = f"metadata.annotations.{key}"
        try:
            value = float(annotations[key])
        except (TypeError, ValueError):
            c.add(path, ErrorType.INVALID, annotations[key], "expected a number of seconds")
            continue
        if not math.isfinite(value) or value < 0:
            c.add(path, ErrorType.INVALID, annotations[key], "must be a finite number of seconds, at least 0")
    for i, container in enumerate((pod.get("spec") or {}).get("containers") or []):
        requests = ((container or {}).get("resources") or {}).get("requests") or {}
        path = f"spec.containers[{i}].resources.requests"
        _quantity(c, requests, "cpu", f"{path}.cpu", cpu_millis)
        _quantity(c, requests, "memory", f"{path}.memory", memory_bytes)


def parse_scenario(text: str, source: str = "scenario.yaml") -> Scenario:
    """Parse and check a scenario stream; raises :class:`InvalidInput` listing every problem."""
    return _scenario(_parse_stream(text, source), source)


def scenario_from_objects(header: Mapping[str, Any], objects: Sequence[Mapping[str, Any]], source: str = "") -> Scenario:
    """A scenario from its ``kind: Scenario`` document and manifests already in memory.

    Checked exactly as :func:`parse_scenario` checks a file (without line numbers): a verb that
    holds a snapshot builds its run from the snapshot's objects instead of writing them out.
    """
    docs = [_Doc(i, 0, dict(o)) for i, o in enumerate([header, *objects])]
    return _scenario(docs, source or name_of(header) or "scenario")


def _scenario(docs: list[_Doc], source: str) -> Scenario:
    problems: list[ObjectErrors] = []
    scenario_docs = [d for d in docs if isinstance(d.data, dict) and d.data.get("kind") == SCENARIO_KIND]
    if len(scenario_docs) != 1:
        where = f"{source}:{scenario_docs[1].line}" if len(scenario_docs) > 1 else source
        raise InvalidInput(f"{where}: a scenario file holds exactly one 'kind: Scenario' document, found {len(scenario_docs)}")
    objects: list[dict[str, Any]] = []
    entries: list[Any] = []  # typed manifests, API-validated below with the scenario's gates
    for d in docs:
        if d is scenario_docs[0]:
            continue
        if not isinstance(d.data, dict):
            problems.append(_LinedErrors(ObjectRef("", "", source=source), (FieldError("", ErrorType.TYPE_INVALID, d.data, "expected an object"),), d.line))
            continue
        found, entry = _check_manifest(source, d)
        problems.extend(found)
        if entry is not None:
            entries.append(entry)
        objects.append(d.data)

    doc = scenario_docs[0]
    c = _Checker(source, doc)
    data = doc.data
    c.unknown(data, _SCENARIO_FIELDS, "")
    if data.get("apiVersion") != SCENARIO_API_VERSION:
        c.add("apiVersion", ErrorType.NOT_SUPPORTED, data.get("apiVersion"), f'supported values: "{SCENARIO_API_VERSION}"')
    meta = c.mapping(data, "metadata", "metadata")
    name = c.string(meta, "name", "metadata.name", default=Path(source).stem or "scenario")
    spec = c.mapping(data, "spec", "spec", required=True)
    c.unknown(spec, _SPEC_FIELDS, "spec")
    seed = c.integer(spec, "seed", "spec.seed", default=0)
    # The newest supported release by default, like every other drakit entry point.
    version = c.string(spec, "kubernetesVersion", "spec.kubernetesVersion", default=NEWEST_VERSION)
    features = Features()
    if version not in SUPPORTED_VERSIONS:
        c.add("spec.kubernetesVersion", ErrorType.NOT_SUPPORTED, version, "supported values: " + ", ".join(f'"{v}"' for v in SUPPORTED_VERSIONS))
        version = NEWEST_VERSION
    else:
        features = Features.for_version(version)
    gates = c.string(spec, "featureGates", "spec.featureGates")
    if gates:
        try:
            features = features.with_gates(gates)
        except InvalidArgument as e:
            c.add("spec.featureGates", ErrorType.INVALID, gates, str(e))
    nodes = [g for i, raw in enumerate(c.sequence(spec, "nodes", "spec.nodes")) if (g := _node_group(c, raw, f"spec.nodes[{i}]"))]
    standard: list[str] = []
    for i, cls in enumerate(c.sequence(spec, "deviceClasses", "spec.deviceClasses")):
        if cls not in _STANDARD_CLASSES:
            c.add(f"spec.deviceClasses[{i}]", ErrorType.NOT_SUPPORTED, cls, "standard classes: " + ", ".join(f'"{s}"' for s in _STANDARD_CLASSES) + " (or mix in a DeviceClass manifest)")
        else:
            standard.append(cls)
    names: set[str] = set()
    workloads = [w for i, raw in enumerate(c.sequence(spec, "workloads", "spec.workloads")) if (w := _workload(c, raw, f"spec.workloads[{i}]", names))]
    until = c.number(spec, "until", "spec.until", default=None)
    limit = c.integer(spec, "memoryLimitMiB", "spec.memoryLimitMiB", default=DEFAULT_MEMORY_LIMIT_MIB, minimum=64)

    # Cross-references: templates and claims named by workloads must exist (or be created later,
    # which a scenario cannot express), so a typo is an error here rather than a Pending pod.
    known_templates = {(namespace_of(o), name_of(o)) for o in objects if o.get("kind") == "ResourceClaimTemplate"}
    known_claims = {(namespace_of(o), name_of(o)) for o in objects if o.get("kind") == "ResourceClaim"}
    spec_workloads = c.sequence(spec, "workloads", "spec.workloads")
    for i, w in enumerate(workloads):
        for j, pc in enumerate(w.claims):
            p = f"spec.workloads[{i}].resourceClaims[{j}]"
            if pc.template is None and pc.claim is None:
                c.add(p, ErrorType.REQUIRED, None, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
            if pc.template and (w.namespace, pc.template) not in known_templates and i < len(spec_workloads):
                c.add(f"{p}.resourceClaimTemplateName", ErrorType.NOT_FOUND, pc.template, f"no ResourceClaimTemplate {w.namespace}/{pc.template} in this scenario")
            if pc.claim and (w.namespace, pc.claim) not in known_claims:
                c.add(f"{p}.resourceClaimName", ErrorType.NOT_FOUND, pc.claim, f"no ResourceClaim {w.namespace}/{pc.claim} in this scenario")
    problems.extend(c.problems())
    # Validation at the door: the mixed-in manifests get `drakit validate`'s verdict and lines.
    from drakit.model import validate_report

    problems.extend(validate_report(entries, features).errors)
    if problems:
        raise InvalidInput(problems)
    return Scenario(
        name=name,
        seed=seed,
        features=features,
        nodes=tuple(nodes),
        objects=tuple(objects),
        workloads=tuple(workloads),
        until=until,
        memory_limit_mib=limit,
        source=source,
        standard_classes=tuple(standard),
        kubernetes_version=version,
    )




_NODE_KINDS = ("Node", "ResourceSlice")


def parse_node_manifests(text: str, source: str, scenario: Scenario) -> tuple[dict[str, Any], ...]:
    """``--add-nodes FILE``: the user's own Nodes and ResourceSlices, checked against ``scenario``.

    Every document is validated as the API server would (typed model, then the same rules as
    ``drakit validate``); a Node or pool that the scenario already has, or a slice for a node
    that exists nowhere, is an error at its line rather than a silently different cluster.
    """
    from drakit.model import validate_report

    docs = _parse_stream(text, source)
    problems: list[ObjectErrors] = []
    objects: list[dict[str, Any]] = []
    entries: list[Any] = []
    names, pools = scenario.node_names(), scenario.pools()
    for d in docs:
        c = _Checker(source, d)
        data = d.data
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind not in _NODE_KINDS:
            c.add("kind", ErrorType.NOT_SUPPORTED, kind, "--add-nodes takes Node and ResourceSlice manifests")
            problems.extend(c.problems())
            continue
        checked, entry = _check_manifest(source, d)
        problems.extend(checked)
        if entry is not None:
            entries.append(entry)
        if kind == "Node":
            name = name_of(data)
            if name in names:
                c.add("metadata.name", ErrorType.DUPLICATE, name, "a node of this name exists already (in the scenario or earlier in this file)")
            names.add(name)
        objects.append(data)
        problems.extend(c.problems())
    for d, data in ((d, d.data) for d in docs if isinstance(d.data, dict) and d.data.get("kind") == "ResourceSlice"):
        c = _Checker(source, d)
        spec = data.get("spec") or {}
        pool = (str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", "")))
        if pool in pools:
            c.add("spec.pool.name", ErrorType.DUPLICATE, pool[1], f"the scenario already publishes pool {quote(pool[1])} of driver {quote(pool[0])}")
        node_name = spec.get("nodeName")
        if node_name and node_name not in names:
            c.add("spec.nodeName", ErrorType.NOT_FOUND, node_name, "no Node of this name in the scenario or this file")
        problems.extend(c.problems())
    problems.extend(validate_report(entries, scenario.features).errors)
    if not objects and not problems:
        raise InvalidInput(f"{source}: extra nodes: no Node or ResourceSlice in this file")
    if problems:
        raise InvalidInput(problems)
    return tuple(objects)


def parse_add_nodes(spec: str) -> NodeGroup:
    """``4xh200-8x`` -> four h200-8x nodes named ``whatif-h200-8x-<i>``.

    ``2xh100-8x@root4-numa2`` also sets the topology (four GPUs per PCIe root, two NUMA
    nodes), as a node group's ``topology`` does in a scenario.
    """
    m = ADD_NODES_PATTERN.match(spec.strip())
    if not m:
        raise InvalidArgument(f"node group {quote(spec)}: want <count>x<template>[@root<R>-numa<M>], e.g. 4xh200-8x")
    count, template = int(m.group(1)), m.group(2)
    if count < 1:
        raise InvalidArgument(f"node group {quote(spec)}: count must be at least 1")
    try:
        templates.parse_template(template)
    except ValueError as e:
        raise InvalidArgument(f"node group {quote(spec)}: {e}") from None
    topology = None
    if m.group(3) is not None:
        topology = templates.Topology(int(m.group(3)), int(m.group(4)))
        problem = templates.check_topology(template, topology)
        if problem:
            raise InvalidArgument(f"node group {quote(spec)}: {problem}")
    return NodeGroup(count, template, f"whatif-{template}-", topology=topology)
