"""Merge a profile's pod fragment into existing manifests by editing the text, not re-dumping it.

Re-serialising YAML would reorder keys, drop comments and re-quote values all over a file the
user owns.  Instead we compose the node graph (which keeps character offsets), decide every
insertion against the original text, and splice: untouched bytes stay byte-identical.  Block
style gets new lines at the right indentation; a flow-style node (``resources: {}``) that must
change is rewritten as one JSON flow node, which touches only that node.

Workloads: Pod, Job, Deployment, StatefulSet, ReplicaSet, DaemonSet, CronJob
(``jobTemplate``), JobSet (every ``replicatedJobs[]`` template), Kubeflow training jobs
(PyTorchJob, TFJob, XGBoostJob, PaddleJob: every replica type; MPIJob: the workers, the
launcher only runs ``mpirun``), KubeRay's RayJob and RayCluster (every worker group; the head
schedules work and gets no GPUs), and Polyaxon ``operation``/``component`` documents, which
cannot carry claims: they get a mode's pod settings (drakit.profiles.polyaxon), per replica for
distributed runs.  Kubeflow's TrainJob takes its pod
templates from a training runtime, not from the document, so it is not edited.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from drakit.errors import InvalidInput
from drakit.gostr import quote
from drakit.model.codec import KubeDumper
from drakit.profiles.compile import PodFragment
from drakit.profiles.polyaxon import PodSettings

# Where each kind keeps its pod specs.  "[]" is every item of a list, "{}" every value of a map
# (replica types by role); roles in SKIPPED_ROLES get no claim.
_TEMPLATE = ("spec", "template", "spec")
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "Job": _TEMPLATE,
    "Deployment": _TEMPLATE,
    "StatefulSet": _TEMPLATE,
    "ReplicaSet": _TEMPLATE,
    "DaemonSet": _TEMPLATE,
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "JobSet": ("spec", "replicatedJobs", "[]", "template", "spec", "template", "spec"),
    "PyTorchJob": ("spec", "pytorchReplicaSpecs", "{}", "template", "spec"),
    "TFJob": ("spec", "tfReplicaSpecs", "{}", "template", "spec"),
    "MPIJob": ("spec", "mpiReplicaSpecs", "{}", "template", "spec"),
    "XGBoostJob": ("spec", "xgbReplicaSpecs", "{}", "template", "spec"),
    "PaddleJob": ("spec", "paddleReplicaSpecs", "{}", "template", "spec"),
    "RayJob": ("spec", "rayClusterSpec", "workerGroupSpecs", "[]", "template", "spec"),
    "RayCluster": ("spec", "workerGroupSpecs", "[]", "template", "spec"),
}
SKIPPED_ROLES = frozenset({"Launcher"})
# Where Kueue reads the queue label, when not on the workload object itself.
_QUEUE_LABEL_OWNER: dict[str, tuple[str, ...]] = {"CronJob": ("spec", "jobTemplate")}
LEGACY_GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe")


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int  # == start for an insertion
    text: str
    depth: int  # column; deeper insertions at the same offset must come first in the text
    seq: int = 0  # planning order, kept for insertions at the same offset and depth


@dataclass
class ApplyResult:
    text: str
    changed: list[str] = field(default_factory=list)  # "Kind/name" of edited documents
    notes: list[str] = field(default_factory=list)
    # metadata.namespace of each edited workload ("" where unset), in document order: a claim
    # template must live in the namespace of the pods that use it.
    namespaces: list[str] = field(default_factory=list)


class _Doc:
    """One composed document and helpers to plan edits against the original text."""

    def __init__(self, text: str, root: yaml.Node, label: str) -> None:
        self.text = text
        self.root = root
        self.label = label
        self.edits: list[_Edit] = []

    # -- reading ------------------------------------------------------------------------------

    @staticmethod
    def get(node: yaml.Node | None, key: str) -> yaml.Node | None:
        if not isinstance(node, yaml.MappingNode):
            return None
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
        return None

    def path(self, keys: Sequence[str]) -> yaml.Node | None:
        node: yaml.Node | None = self.root
        for k in keys:
            node = self.get(node, k)
        return node

    @staticmethod
    def value(node: yaml.Node) -> Any:
        loader = yaml.SafeLoader("")
        try:
            return loader.construct_object(node, deep=True)
        finally:
            loader.dispose()

    # -- positions ----------------------------------------------------------------------------

    def _line_end_after(self, node: yaml.Node) -> int:
        """Offset just after the last line of ``node`` (where a following sibling would start)."""
        leaf = node
        while isinstance(leaf, yaml.MappingNode | yaml.SequenceNode) and not leaf.flow_style and leaf.value:
            last = leaf.value[-1]
            leaf = last[1] if isinstance(leaf, yaml.MappingNode) else last
        pos = leaf.end_mark.index
        if isinstance(leaf, yaml.ScalarNode) and leaf.style in ("|", ">"):
            return self.text.rfind("\n", 0, pos) + 1 if pos < len(self.text) else pos
        nl = self.text.find("\n", pos)
        return len(self.text) if nl < 0 else nl + 1

    def _block(self, data: Any, column: int) -> str:
        dumped = yaml.dump(data, Dumper=KubeDumper, sort_keys=False, default_flow_style=False, width=10_000,
                           allow_unicode=True)
        body = "".join(" " * column + line + "\n" for line in dumped.splitlines())
        return body

    def _prefix_newline(self, pos: int) -> str:
        return "\n" if pos == len(self.text) and self.text and not self.text.endswith("\n") else ""

    # -- planning -----------------------------------------------------------------------------

    def replace_flow(self, node: yaml.Node, new_value: Any) -> None:
        self.edits.append(_Edit(node.start_mark.index, node.end_mark.index, json.dumps(new_value), node.start_mark.column))

    def insert_key(self, mapping: yaml.MappingNode, key: str, value: Any) -> None:
        if mapping.flow_style:
            current = self.value(mapping) or {}
            current[key] = value
            self.replace_flow(mapping, current)
            return
        pos = self._line_end_after(mapping)
        col = mapping.start_mark.column
        self.edits.append(_Edit(pos, pos, self._prefix_newline(pos) + self._block({key: value}, col), col))

    def append_items(self, seq: yaml.SequenceNode, items: list[Any]) -> None:
        if seq.flow_style or not seq.value:
            current = self.value(seq) or []
            self.replace_flow(seq, [*current, *items])
            return
        pos = self._line_end_after(seq)
        col = seq.start_mark.column
        self.edits.append(_Edit(pos, pos, self._prefix_newline(pos) + self._block(items, col), col))

    def key_of(self, mapping: yaml.Node, child: yaml.Node) -> yaml.Node:
        return next(k for k, v in mapping.value if v is child)

    @staticmethod
    def is_null(node: yaml.Node) -> bool:
        return isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null")

    def fill_null(self, null: yaml.Node, key_node: yaml.Node, value: Any) -> None:
        """``resources:`` with nothing (or ``null``) after it: write the block right there."""
        col = key_node.start_mark.column + 2
        body = self._block(value, col).rstrip("\n")
        self.edits.append(_Edit(null.start_mark.index, null.end_mark.index, "\n" + body, col))

    def ensure(self, mapping: yaml.Node, keys: Sequence[str], leaf: Any) -> None:
        """Create the missing part of ``keys`` below ``mapping`` ending in ``leaf``; when the whole
        path exists and ends in a list, append the items of ``leaf`` (a list) to it."""
        node = mapping
        for i, k in enumerate(keys):
            child = self.get(node, k)
            nested: Any = leaf
            for r in reversed(keys[i + 1 :]):
                nested = {r: nested}
            if child is None:
                if not isinstance(node, yaml.MappingNode):
                    raise InvalidInput(f"{self.label}: cannot add {'.'.join(keys)}: the parent is not a mapping")
                self.insert_key(node, k, nested)
                return
            if self.is_null(child):
                self.fill_null(child, self.key_of(node, child), nested)
                return
            node = child
        if isinstance(node, yaml.SequenceNode) and isinstance(leaf, list):
            self.append_items(node, leaf)
        else:
            raise InvalidInput(f"{self.label}: {'.'.join(keys)} already set")


def _splice(text: str, edits: list[_Edit]) -> str:
    # Back to front so offsets stay valid; at one offset the shallower edit is applied first, so
    # the deeper one ends up before it (still inside its own block); planning order otherwise.
    edits = [_Edit(e.start, e.end, e.text, e.depth, i) for i, e in enumerate(edits)]
    for e in sorted(edits, key=lambda e: (-e.start, e.depth, -e.seq)):
        text = text[: e.start] + e.text + text[e.end :]
    return text


def _doc_spans(text: str, source: str) -> list[tuple[int, int, yaml.Node]]:
    """Every document's node; a YAML error (an alias to another document's anchor, a syntax
    error) becomes one line naming file, line and column."""
    loader = yaml.SafeLoader(text)
    out = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                out.append((node.start_mark.index, node.end_mark.index, node))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        problem = " ".join(str(e.problem or e.context or "invalid YAML").split())
        if "undefined alias" in problem:
            problem += " (anchors do not reach across '---': each document must define its own)"
        raise InvalidInput(f"{where}: {problem}") from None
    except yaml.YAMLError as e:
        raise InvalidInput(f"{source}: {' '.join(str(e).split())}") from None
    finally:
        loader.dispose()
    return out


def _pod_specs(doc: _Doc, node: yaml.Node, path: Sequence[str]) -> list[yaml.Node]:
    """The pod spec nodes at ``path`` (see POD_SPEC_PATHS); InvalidInput when a step is missing."""
    found: list[yaml.Node | None] = [node]
    walked: list[str] = []
    for step in path:
        nxt: list[yaml.Node | None] = []
        for n in found:
            if step == "[]":
                nxt += list(n.value) if isinstance(n, yaml.SequenceNode) else [None]
            elif step == "{}":
                if isinstance(n, yaml.MappingNode):
                    nxt += [v for k, v in n.value if not (isinstance(k, yaml.ScalarNode) and k.value in SKIPPED_ROLES)]
                else:
                    nxt.append(None)
            else:
                nxt.append(doc.get(n, step))
        walked.append(step)
        if not nxt or any(n is None for n in nxt):
            raise InvalidInput(f"{doc.label}: no pod spec at {'.'.join(path)} ({'.'.join(walked)} is missing or empty)")
        found = nxt
    if not all(isinstance(n, yaml.MappingNode) for n in found):
        raise InvalidInput(f"{doc.label}: no pod spec at {'.'.join(path)}")
    return [n for n in found if n is not None]


def _merge_pod_level(doc: _Doc, env: yaml.Node, fragment: PodFragment) -> None:
    """The claim entry, priority class and tolerations; a conflicting existing value is an error."""
    entry = fragment.resource_claim()
    claims = doc.get(env, "resourceClaims")
    existing = (doc.value(claims) or []) if claims is not None else []
    same = [c for c in existing if isinstance(c, dict) and c.get("name") == entry["name"]]
    if same and same[0] != entry:
        raise InvalidInput(f"{doc.label}: resourceClaims already has {quote(entry['name'])} with another source: {same[0]}")
    if not same:
        doc.ensure(env, ["resourceClaims"], [entry])
    if fragment.priority_class_name:
        pc = doc.get(env, "priorityClassName")
        if pc is None or doc.is_null(pc):
            doc.ensure(env, ["priorityClassName"], fragment.priority_class_name)
        elif doc.value(pc) != fragment.priority_class_name:
            raise InvalidInput(f"{doc.label}: priorityClassName is {doc.value(pc)!r}, the profile wants "
                               f"{fragment.priority_class_name!r}")
    if fragment.tolerations:
        tol = doc.get(env, "tolerations")
        have = (doc.value(tol) or []) if tol is not None else []
        new = [dict(t) for t in fragment.tolerations if dict(t) not in have]
        if new:
            doc.ensure(env, ["tolerations"], new)


def _merge_container(doc: _Doc, container: yaml.Node, fragment: PodFragment) -> list[str]:
    notes = []
    claim = fragment.container_claim()
    res = doc.get(container, "resources")
    current = doc.value(res) if res is not None else None
    if isinstance(current, dict):
        legacy = sorted({r for part in ("limits", "requests") for r in (current.get(part) or {}) if r in LEGACY_GPU_RESOURCES})
        if legacy:
            notes.append(f"{doc.label}: the container also requests {', '.join(legacy)}, a second allocation "
                         "of the same GPUs; remove it")
        if any(isinstance(x, dict) and x.get("name") == claim["name"] for x in current.get("claims") or []):
            return notes
    doc.ensure(container, ["resources", "claims"], [claim])
    return notes


def _merge_pod_spec(doc: _Doc, spec: yaml.Node, fragment: PodFragment, containers: Sequence[str]) -> list[str]:
    _merge_pod_level(doc, spec, fragment)
    cont_seq = doc.get(spec, "containers")
    items = list(cont_seq.value) if isinstance(cont_seq, yaml.SequenceNode) else []
    if not items:
        raise InvalidInput(f"{doc.label}: the pod spec has no containers")
    if containers:
        by_name = {str(doc.value(n)) if (n := doc.get(c, "name")) is not None else "": c for c in items}
        missing = [n for n in containers if n not in by_name]
        if missing:
            raise InvalidInput(f"{doc.label}: no container named {', '.join(missing)} (have {', '.join(by_name)})")
        targets = [by_name[n] for n in containers]
    else:
        targets = items[:1]  # the first container is the workload; sidecars get no GPUs by default
    notes: list[str] = []
    for c in targets:
        notes += _merge_container(doc, c, fragment)
    return notes


def _set_label(doc: _Doc, meta_owner: yaml.Node, key: str, value: str) -> None:
    meta = doc.get(meta_owner, "metadata")
    labels = doc.get(meta, "labels") if meta is not None else None
    if labels is not None and isinstance(labels, yaml.MappingNode):
        current = doc.get(labels, key)
        if current is not None:
            if doc.value(current) != value:
                raise InvalidInput(f"{doc.label}: label {key} is {doc.value(current)!r}, the profile wants {value!r}")
            return
        doc.insert_key(labels, key, value)
        return
    doc.ensure(meta_owner, ["metadata", "labels"], {key: value})


@dataclass(frozen=True)
class PolyaxonPatch:
    """What a Polyaxon operation or component gets, from :func:`drakit.profiles.polyaxon.pod_settings`."""

    settings: PodSettings | None  # None: the mode cannot express the profile, for the reason below
    agent_queue: str | None = None
    refusal: str = ""


def _merge_tree(doc: _Doc, node: yaml.Node, value: dict[str, Any], at: str) -> None:
    """Deep-merge ``value`` below ``node``: missing keys are added, lists get the missing items, and a
    different scalar already there is an error naming the path."""
    for k, v in value.items():
        child = doc.get(node, k)
        here = f"{at}.{k}" if at else k
        if child is None or doc.is_null(child):
            doc.ensure(node, [k], v)
        elif isinstance(v, dict) and isinstance(child, yaml.MappingNode):
            _merge_tree(doc, child, v, here)
        elif isinstance(v, list) and isinstance(child, yaml.SequenceNode):
            have = doc.value(child) or []
            new = [x for x in v if x not in have]
            if new:
                doc.append_items(child, new)
        elif doc.value(child) != v:
            raise InvalidInput(f"{doc.label}: {here} is {doc.value(child)!r}, the profile wants {v!r}")


def _merge_polyaxon(doc: _Doc, node: yaml.Node, kind: str, patch: PolyaxonPatch) -> list[str]:
    """The pod settings at the top of a job's run, or in each replica of a distributed run; notes
    for what the document already has that Polyaxon rejects or drops (``drakit lint`` says more)."""
    from drakit.profiles.polyaxon import REPLICAS, check_agent_queue, check_kind

    if kind == "operation":
        owner, key = node, "runPatch"
        component_run = doc.path(["component", "run"])
    else:
        owner, key = node, "run"
        component_run = None
    run = doc.get(owner, key)
    run_kind_node = doc.get(run, "kind") if run is not None else None
    if run_kind_node is None and component_run is not None:
        run_kind_node = doc.get(component_run, "kind")
    run_kind = str(doc.value(run_kind_node)) if run_kind_node is not None else "job"
    check_kind(run_kind)  # a dag (or an unknown kind) is refused with the reason
    if patch.settings is None:
        raise InvalidInput(f"{doc.label}: {patch.refusal}")
    section: dict[str, Any] = {"environment": patch.settings.environment}
    if patch.settings.container:
        section["container"] = patch.settings.container
    if run_kind in REPLICAS:
        known, default = REPLICAS[run_kind]
        defined = [r for r in known if any(doc.get(n, r) is not None for n in (run, component_run) if n is not None)]
        value: dict[str, Any] = {r: section for r in (defined and [r for r in defined if r in default]) or default}
    else:
        value = section
    if run is None or doc.is_null(run):
        doc.ensure(owner, [key], value)
    elif isinstance(run, yaml.MappingNode):
        _merge_tree(doc, run, value, key)
    else:
        raise InvalidInput(f"{doc.label}: {key} is not a mapping")
    if patch.agent_queue:
        check_agent_queue(patch.agent_queue)
        _merge_tree(doc, node, {"queue": patch.agent_queue}, "")
    notes = []
    text = json.dumps(doc.value(node))
    if '"resourceClaims"' in text or '"claims"' in text:
        notes.append(f"{doc.label}: Polyaxon rejects environment.resourceClaims and drops container resources.claims; "
                     "remove them (drakit lint -f shows where)")
    kueue = (patch.settings.environment.get("labels") or {}).get("kueue.x-k8s.io/queue-name")
    queue = doc.get(node, "queue")
    if kueue and queue is not None and doc.value(queue) == kueue:
        notes.append(f"{doc.label}: queue {kueue!r} is the Kueue queue (now a label); Polyaxon's queue names an agent queue")
    return notes


def claims_for_workloads(claim: dict[str, Any], namespaces: Sequence[str], option: str | None,
                         source: str = "<manifest>") -> list[dict[str, Any]]:
    """The compiled claim (template) once per namespace the edited workloads live in.

    Pods find a ResourceClaimTemplate only in their own namespace, so ``--include-objects``
    must emit it there; a workload without a namespace uses the requested one (or none).  A
    workload whose namespace contradicts the requested one is an error, not a silent split.
    """
    wanted: list[str] = []
    for ns in namespaces:
        if ns and option and ns != option:
            raise InvalidInput(f"{source}: a workload is in namespace {quote(ns)} but the requested namespace is {quote(option)}")
        target = ns or option or ""
        if target not in wanted:
            wanted.append(target)
    out = []
    for ns in wanted or [option or ""]:
        copy = json.loads(json.dumps(claim))
        copy["metadata"].pop("namespace", None)
        if ns:
            copy["metadata"] = {"name": copy["metadata"]["name"], "namespace": ns,
                                **{k: v for k, v in copy["metadata"].items() if k != "name"}}
        out.append(copy)
    return out


def apply_fragment(text: str, fragment: PodFragment, *, containers: Sequence[str] = (), source: str = "<manifest>",
                   extra_documents: str = "", polyaxon: PolyaxonPatch | None = None) -> ApplyResult:
    """``text`` with the fragment merged into every workload document; other bytes unchanged.

    Polyaxon documents get ``polyaxon`` instead (they cannot carry claims: drakit.profiles.polyaxon)."""
    result = ApplyResult(text)
    edits: list[_Edit] = []
    for i, (_, _, node) in enumerate(_doc_spans(text, source)):
        if not isinstance(node, yaml.MappingNode):
            continue
        probe = _Doc(text, node, "")
        kind_node = probe.get(node, "kind")
        kind = probe.value(kind_node) if kind_node is not None else None
        name_node = probe.path(["metadata", "name"]) or probe.get(node, "name")
        name = probe.value(name_node) if name_node is not None else f"#{i}"
        doc = _Doc(text, node, f"{source}[{i}] {kind}/{name}")
        if kind in POD_SPEC_PATHS:
            for spec in _pod_specs(doc, node, POD_SPEC_PATHS[kind]):
                result.notes += _merge_pod_spec(doc, spec, fragment, containers)
            owner = doc.path(_QUEUE_LABEL_OWNER[kind]) if kind in _QUEUE_LABEL_OWNER else node
            for key, value in fragment.labels:
                # Kueue reads the queue label from the workload object (a CronJob's job template).
                _set_label(doc, owner or node, key, value)
        elif kind in ("operation", "component"):
            if polyaxon is None:
                raise InvalidInput(f"{doc.label}: a Polyaxon {kind} needs a Polyaxon mode (label or extended-resource)")
            result.notes += _merge_polyaxon(doc, node, str(kind), polyaxon)
        else:
            continue
        if doc.edits:
            result.changed.append(f"{kind}/{name}")
            ns = probe.path(["metadata", "namespace"])
            result.namespaces.append(str(probe.value(ns) or "") if ns is not None else "")
            edits += doc.edits
    out = _splice(text, edits)
    if extra_documents:
        if out and not out.endswith("\n"):
            out += "\n"
        out += "---\n" + extra_documents
    result.text = out
    return result
