"""``drakit lint``: mistakes that the API server accepts but that cost GPUs or block pods.

Works on raw documents (not the typed model) so that half-finished manifests can be linted,
and keeps file and line for every finding.  Selector checks read CEL *text* with patterns for
the two access forms and the two guard forms; that is deliberate: the question is "which keys
does this expression read, and is each read guarded", which needs no evaluation.  A guard
anywhere in the expression counts (we do not prove it dominates the read).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from drakit.drivers import DRIVERS, DriverSchema, get_schema, learn_schema
from drakit.drivers.registry import STANDARD_DOMAIN
from drakit.errors import DrakitError
from drakit.gostr import quote
from drakit.profiles.apply import LEGACY_GPU_RESOURCES
from drakit.profiles.eligibility import Evaluator, cel_evaluator, inventory_devices
from drakit.profiles.source import Document, Loc, Path, dotted
from drakit.quantity import Quantity, QuantityError

Severity = Literal["error", "warning"]

_READ = re.compile(
    r"device\.(?P<space>attributes|capacity)\[\s*(?P<q>['\"])(?P<domain>[^'\"]+)(?P=q)\s*\]"
    r"(?:\.(?P<id>[A-Za-z_]\w*)|\[\s*(?P<q2>['\"])(?P<id2>[A-Za-z_]\w*)(?P=q2)\s*\])"
)
_IN_GUARD = re.compile(
    r"(?P<q>['\"])(?P<id>[A-Za-z_]\w*)(?P=q)\s+in\s+device\.(?P<space>attributes|capacity)"
    r"\[\s*(?P<q2>['\"])(?P<domain>[^'\"]+)(?P=q2)\s*\]"
)
_HAS_GUARD = re.compile(
    r"has\(\s*device\.(?P<space>attributes|capacity)\[\s*(?P<q>['\"])(?P<domain>[^'\"]+)(?P=q)\s*\]\.(?P<id>[A-Za-z_]\w*)\s*\)"
)
# ``device.attributes['D'].type == 'gpu'`` (either order, either access form) or ``... in ['gpu', 'mig']``.
_ATTR = (r"device\.attributes\[\s*(?P<q>['\"])(?P<domain>[^'\"]+)(?P=q)\s*\]"
         r"(?:\.(?P<id>[A-Za-z_]\w*)|\[\s*(?P<q2>['\"])(?P<id2>[A-Za-z_]\w*)(?P=q2)\s*\])")
_TYPE_TESTS = (
    re.compile(_ATTR + r"\s*==\s*(?P<q3>['\"])(?P<value>[^'\"]+)(?P=q3)"),
    re.compile(r"(?P<q3>['\"])(?P<value>[^'\"]+)(?P=q3)\s*==\s*" + _ATTR),
    re.compile(_ATTR + r"\s+in\s+\[(?P<values>[^\]]*)\]"),
)
_DRIVER_EQ = re.compile(r"device\.driver\s*==\s*(?P<q>['\"])(?P<driver>[^'\"]+)(?P=q)")
_QUANTITY = re.compile(r"quantity\(\s*(?P<q>['\"])(?P<value>[^'\"]+)(?P=q)\s*\)")


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    loc: Loc
    object: str  # Kind/name
    path: str
    message: str
    hint: str = ""

    def line(self) -> str:
        hint = f" (fix: {self.hint})" if self.hint else ""
        return f"{self.loc}: {self.severity}: {self.object}: {self.path}: {self.message} [{self.code}]{hint}"

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "file": self.loc.file, "line": self.loc.line,
                "object": self.object, "field": self.path, "message": self.message, "hint": self.hint}


@dataclass(frozen=True)
class _Selector:
    doc: Document
    path: Path
    expression: str
    driver: str | None
    obj: str
    # Device types (of the driver's schema) this selector and the ones evaluated before it
    # restrict the device to; empty: any device of the driver.
    types: frozenset[str] = frozenset()


def _type_restriction(expression: str, driver: str | None) -> frozenset[str] | None:
    """The device types an expression requires, or None when it tests no device type."""
    schema = get_schema(driver) if driver in DRIVERS else None
    if schema is None or schema.device_type is None:
        return None
    key = schema.device_type[0]
    found: frozenset[str] | None = None
    for pattern in _TYPE_TESTS:
        for m in pattern.finditer(expression):
            if m.group("domain") != driver or (m.group("id") or m.group("id2")) != key:
                continue
            if "values" in pattern.groupindex:
                values = frozenset(v.strip().strip("'\"") for v in m.group("values").split(",") if v.strip())
            else:
                values = frozenset({m.group("value")})
            found = values if found is None else found & values
    return found


def _restricted(types: frozenset[str] | None, expression: str, driver: str | None) -> frozenset[str] | None:
    more = _type_restriction(expression, driver)
    if more is None:
        return types
    return more if types is None else types & more


def _class_types(name: Any, classes: Mapping[Any, Document], driver: str | None) -> frozenset[str] | None:
    """Device types a class admits: from its selectors when the class is in the input, else
    from the classes the driver installs (``mig.nvidia.com`` selects ``type == 'mig'``)."""
    cls = classes.get(name)
    if cls is None:
        schemas = DRIVERS.get(driver or "", ())
        value = schemas[-1].class_types.get(str(name)) if schemas else None
        return frozenset({value}) if value else None
    types: frozenset[str] | None = None
    for sel in (cls.value.get("spec") or {}).get("selectors") or []:
        types = _restricted(types, str(((sel or {}).get("cel") or {}).get("expression", "")), driver)
    return types


def _name(doc: Document) -> str:
    v = doc.value
    return f"{v.get('kind')}/{(v.get('metadata') or {}).get('name', '?')}"


def _class_driver(cls: Mapping[str, Any]) -> str | None:
    for sel in ((cls.get("spec") or {}).get("selectors") or []):
        m = _DRIVER_EQ.search(str(((sel or {}).get("cel") or {}).get("expression", "")))
        if m:
            return m.group("driver")
    return None


def _installed_class_driver(name: Any) -> str | None:
    """The driver of a class a driver installs (``gpu.nvidia.com``, ``mig.nvidia.com``, ...)."""
    for driver, schemas in DRIVERS.items():
        if name == driver or name in schemas[-1].class_types:
            return driver
    return None


def _requests(doc: Document) -> list[tuple[Path, Mapping[str, Any], str | None]]:
    """(path, request-or-subrequest, parent name if a subrequest) of a claim or template."""
    v = doc.value
    base: Path = ("spec", "spec", "devices") if v.get("kind") == "ResourceClaimTemplate" else ("spec", "devices")
    devices: Any = v
    for k in base:
        devices = (devices or {}).get(k) if isinstance(devices, Mapping) else None
    out: list[tuple[Path, Mapping[str, Any], str | None]] = []
    for i, req in enumerate((devices or {}).get("requests") or []):
        if not isinstance(req, Mapping):
            continue
        if isinstance(req.get("exactly"), Mapping):
            out.append(((*base, "requests", i, "exactly"), {"name": req.get("name"), **req["exactly"]}, None))
        for j, sub in enumerate(req.get("firstAvailable") or []):
            if isinstance(sub, Mapping):
                out.append(((*base, "requests", i, "firstAvailable", j), sub, str(req.get("name"))))
    return out


def _schema_for(domain: str, learned: Mapping[str, DriverSchema]) -> DriverSchema | None:
    if domain in learned:
        return learned[domain]
    return get_schema(domain) if domain in DRIVERS else None


def _check_reads(sel: _Selector, learned: Mapping[str, DriverSchema]) -> list[Finding]:
    out = []
    expr = sel.expression
    guards = {(m.group("space"), m.group("domain"), m.group("id")) for m in _IN_GUARD.finditer(expr)}
    guards |= {(m.group("space"), m.group("domain"), m.group("id")) for m in _HAS_GUARD.finditer(expr)}
    loc = sel.doc.loc(sel.path)
    seen: set[tuple[str, str, str]] = set()
    for m in _READ.finditer(expr):
        space, domain, key = m.group("space"), m.group("domain"), m.group("id") or m.group("id2")
        if (space, domain, key) in seen:
            continue
        seen.add((space, domain, key))
        if domain == STANDARD_DOMAIN:
            schema = _schema_for(sel.driver, learned) if sel.driver else None
            lookup = f"{domain}/{key}"
        else:
            schema = _schema_for(domain, learned)
            lookup = key
        if schema is None:
            continue
        spec = schema.attribute(lookup) if space == "attributes" else schema.capacity(lookup)
        ref = m.group(0)
        if spec is None:
            removed = schema.removed_key(lookup)
            history = [s for s in DRIVERS.get(schema.driver, ()) if s.removed_key(lookup)]
            if removed or history:
                change = removed or history[-1].removed_key(lookup)
                assert change is not None
                hint = (f"read {change.replacement} instead" if change.replacement
                        else (change.note or "drop this condition"))
                out.append(Finding("DK002", "error", loc, sel.obj, dotted(sel.path),
                                   f"{ref}: {schema.driver} stopped publishing {quote(lookup)} in {change.since}", hint))
            else:
                known = ", ".join(sorted(schema.attributes if space == "attributes" else schema.capacities))
                out.append(Finding("DK002", "error", loc, sel.obj, dotted(sel.path),
                                   f"{ref}: {schema.ref} does not publish {space[:-1] if space == 'attributes' else space} "
                                   f"{quote(lookup)}; every device would fail with 'no such key'",
                                   f"use one of: {known}"))
            continue
        if not schema.always_published(space, lookup, sel.types) and (space, domain, key) not in guards:
            guard = f"'{key}' in device.{space}['{domain}'] && ..."
            if spec.on:
                devices = "/".join(sorted(set(sel.types or schema.device_types) - spec.on)) or "some"
                where = (f"{ref} is not published on {devices} devices of {schema.ref} (only on "
                         f"{'/'.join(sorted(spec.on))}); a selector not restricted to those")
                guard = f"select {schema.device_type[0] if schema.device_type else 'the device type'} first, or {guard}"
            else:
                where = f"{ref} is optional in {schema.ref}; a device without it"
            out.append(Finding("DK003", "error", loc, sel.obj, dotted(sel.path),
                               f"{where} makes the selector fail at runtime, which blocks scheduling instead of "
                               "skipping the device", f"guard it: {guard}"))
    return out


def _near_misses(sel: _Selector, learned: Mapping[str, DriverSchema], inventory_memory: Mapping[str, set[str]]) -> list[Finding]:
    if ".memory" not in sel.expression and "['memory']" not in sel.expression:
        return []
    drivers = {m.group("domain") for m in _READ.finditer(sel.expression) if m.group("space") == "capacity"}
    out = []
    for m in _QUANTITY.finditer(sel.expression):
        text = m.group("value")
        try:
            threshold = Quantity.parse(text)
        except QuantityError:
            continue
        decimal = None
        if text.endswith("i"):
            try:
                decimal = Quantity.parse(text[:-1])
            except QuantityError:
                decimal = None
        for driver in sorted(drivers):
            schema = _schema_for(driver, learned)
            by_mem: dict[str, list[str]] = {}
            for product, mem_text in (schema.products if schema else {}).items():
                by_mem.setdefault(mem_text, []).append(product)
            for mem_text in sorted(inventory_memory.get(driver, set())):
                if not any(Quantity.parse(mem_text) == Quantity.parse(k) for k in by_mem):
                    by_mem[mem_text] = [f"a {driver} device in the inventory"]
            for mem_text, products in by_mem.items():
                mem = Quantity.parse(mem_text)
                if not mem < threshold or mem.is_zero():
                    continue
                if decimal is not None and mem >= decimal:
                    hint = f"write quantity('{text[:-1]}') (decimal) to include it"
                elif decimal is None and mem.exact() * 100 >= threshold.exact() * 97:
                    hint = f"lower the threshold below {mem_text} if it is meant to qualify"
                else:
                    continue
                out.append(Finding("DK004", "warning", sel.doc.loc(sel.path), sel.obj, dotted(sel.path),
                                   f"threshold {text} excludes {', '.join(products)} ({mem_text}) by a hair", hint))
    return out


def lint_documents(docs: Sequence[Document], *, profile_classes: Iterable[str] = (),
                   evaluate: Evaluator | None = None, use_cel: bool = True) -> list[Finding]:
    """All findings for the given documents; ``profile_classes`` are class names profiles compile to."""
    findings: list[Finding] = []
    values = [d.value for d in docs if isinstance(d.value, Mapping)]
    devices = inventory_devices(values)
    learned: dict[str, DriverSchema] = {}
    inventory_memory: dict[str, set[str]] = {}
    for driver in sorted({d.driver for d in devices}):
        devs = [d.device for d in devices if d.driver == driver]
        base = get_schema(driver) if driver in DRIVERS else None
        if base is None:
            learned[driver] = learn_schema(driver, devs)
        for dev in devs:
            mem = ((dev.get("capacity") or {}).get("memory") or {}).get("value")
            if mem is not None:
                inventory_memory.setdefault(driver, set()).add(str(mem))

    classes = {(d.value.get("metadata") or {}).get("name"): d for d in docs
               if isinstance(d.value, Mapping) and d.value.get("kind") == "DeviceClass"}
    used: set[str] = set(profile_classes)
    selectors: list[_Selector] = []
    for doc in classes.values():
        class_driver = _class_driver(doc.value)
        types: frozenset[str] | None = None
        for i, sel in enumerate((doc.value.get("spec") or {}).get("selectors") or []):
            expr = ((sel or {}).get("cel") or {}).get("expression")
            if isinstance(expr, str):
                types = _restricted(types, expr, class_driver)
                selectors.append(_Selector(doc, ("spec", "selectors", i, "cel", "expression"), expr, class_driver,
                                           _name(doc), types or frozenset()))

    requests: list[tuple[Document, Path, Mapping[str, Any], str | None]] = []
    for doc in docs:
        v = doc.value
        if not isinstance(v, Mapping):
            continue
        kind = v.get("kind")
        if kind in ("ResourceClaim", "ResourceClaimTemplate"):
            for path, req, parent in _requests(doc):
                requests.append((doc, path, req, parent))
                cls_name = req.get("deviceClassName")
                used.add(str(cls_name))
                cls = classes.get(cls_name)
                req_driver = _class_driver(cls.value) if cls else _installed_class_driver(cls_name)
                types = _class_types(cls_name, classes, req_driver)
                for j, sel in enumerate(req.get("selectors") or []):
                    expr = ((sel or {}).get("cel") or {}).get("expression")
                    if isinstance(expr, str):
                        types = _restricted(types, expr, req_driver)
                        selectors.append(_Selector(doc, (*path, "selectors", j, "cel", "expression"), expr, req_driver,
                                                   _name(doc), types or frozenset()))
        findings += _double_allocation(doc)

    for sel in selectors:
        findings += _check_reads(sel, learned)
        findings += _near_misses(sel, learned, inventory_memory)

    for name, doc in classes.items():
        if name not in used and not any(name == s[-1].default_class or name in s[-1].class_types for s in DRIVERS.values()):
            findings.append(Finding("DK005", "warning", doc.loc(("metadata", "name")), _name(doc), "metadata.name",
                                    "no claim, template or profile uses this class",
                                    "delete it, or reference it from a profile"))

    if devices:
        if evaluate is None and use_cel:
            evaluate = cel_evaluator()
        if evaluate is not None:  # use_cel=False: the structural checks only
            findings += _unsatisfiable(requests, classes, devices, evaluate)
    return findings


def _double_allocation(doc: Document) -> list[Finding]:
    v = doc.value
    spec_paths: dict[str, Path] = {"Pod": ("spec",), "Job": ("spec", "template", "spec"),
                                   "Deployment": ("spec", "template", "spec"), "StatefulSet": ("spec", "template", "spec"),
                                   "ReplicaSet": ("spec", "template", "spec"), "DaemonSet": ("spec", "template", "spec"),
                                   "PodTemplate": ("template", "spec")}
    path = spec_paths.get(str(v.get("kind")))
    if path is None:
        return []
    spec: Any = v
    for k in path:
        spec = spec.get(k) if isinstance(spec, Mapping) else None
    out = []
    for group in ("initContainers", "containers"):
        for i, c in enumerate((spec or {}).get(group) or [] if isinstance(spec, Mapping) else []):
            res = (c or {}).get("resources") or {}
            legacy = sorted({r for part in ("limits", "requests") for r in (res.get(part) or {}) if r in LEGACY_GPU_RESOURCES})
            if legacy and res.get("claims"):
                cpath: Path = (*path, group, i, "resources")
                out.append(Finding("DK001", "error", doc.loc(cpath), _name(doc), dotted(cpath),
                                   f"container {quote(str(c.get('name')))} requests {', '.join(legacy)} and a resource claim: "
                                   "the device plugin and the DRA driver would each allocate GPUs to it",
                                   f"remove {', '.join(legacy)} from resources.limits/requests"))
    return out


def _unsatisfiable(requests: list[tuple[Document, Path, Mapping[str, Any], str | None]], classes: Mapping[Any, Document],
                   devices: list[Any], evaluate: Evaluator) -> list[Finding]:
    out: list[Finding] = []
    by_parent: dict[tuple[int, str], list[tuple[Path, bool]]] = {}
    for doc, path, req, parent in requests:
        cls = classes.get(req.get("deviceClassName"))
        if cls is None:
            continue  # the class may live in the cluster; nothing to decide here
        exprs = [str(((s or {}).get("cel") or {}).get("expression", ""))
                 for s in ((cls.value.get("spec") or {}).get("selectors") or [])]
        exprs += [str(((s or {}).get("cel") or {}).get("expression", "")) for s in req.get("selectors") or []]
        count = int(req.get("count") or 1) if req.get("allocationMode", "ExactCount") == "ExactCount" else 1
        per_node: dict[str, int] = {}
        runtime_error = ""
        for inv in devices:
            try:
                if all(evaluate(e, inv.driver, inv.device) for e in exprs):
                    per_node[inv.node] = per_node.get(inv.node, 0) + 1
            except DrakitError as e:
                runtime_error = f"{inv.node}/{inv.device.get('name')}: {e}"
                break
        if runtime_error:
            out.append(Finding("DK006", "error", doc.loc(path), _name(doc), dotted(path),
                               f"a selector fails at runtime on {runtime_error}; scheduling would stop",
                               "guard optional attributes"))
            continue
        best = max(per_node.values(), default=0)
        ok = best >= count
        if parent is None:
            if not ok:
                out.append(Finding("DK006", "error", doc.loc(path), _name(doc), dotted(path),
                                   f"request {quote(str(req.get('name')))} needs {count} matching device(s) on one node; the "
                                   f"inventory has at most {best}", "relax the selectors or the count"))
        else:
            by_parent.setdefault((id(doc), parent), []).append((path, ok))
    for doc, path, _req, parent in requests:
        if parent is None:
            continue
        entries = by_parent.pop((id(doc), parent), None)
        if entries is not None and not any(ok for _, ok in entries):
            ppath = path[:-2]
            out.append(Finding("DK006", "error", doc.loc(ppath), _name(doc), dotted(ppath),
                               f"no alternative of request {quote(parent)} can be satisfied by the inventory",
                               "add an alternative the inventory has"))
    return out
