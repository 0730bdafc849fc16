"""Profile + driver schema -> DeviceClass, claim (template) and pod fragment, as wire dicts.

Pure: no I/O, no cluster.  Each requirement becomes one *clause* (one CEL selector) so that
eligibility can name the exact requirement a device fails.  Three rules shape the output:

* every key the schema marks optional is guarded (``'k' in device.attributes['d'] && ...``):
  reading a missing key is a CEL runtime error that aborts scheduling, not a non-match;
* the driver check is the first class selector, because selectors stop at the first false and
  the attribute map of another driver's device is empty;
* alternatives become ``firstAvailable`` sub-requests, smallest sufficient device first unless
  the profile says ``as-written``; clauses shared by every alternative go into the class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from drakit.drivers import DriverSchema, get_schema, parse_driver_ref, qualify, split_key
from drakit.drivers.registry import NUMA_NODE, PCIE_ROOT, VENDORS
from drakit.errors import OMIT, ErrorType, FieldError, InvalidArgument, InvalidInput, ObjectErrors, ObjectRef
from drakit.profiles.loader import ResolvedProfile
from drakit.profiles.model import Alternative, MemoryBounds, NameSet, PolyaxonSettings, Requirements
from drakit.profiles.source import Path, dotted
from drakit.profiles.units import memory_quantity, normalize_version, parse_memory
from drakit.quantity import Quantity

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PROFILE_LABEL = "drakit.dev/profile"
DIGEST_ANNOTATION = "drakit.dev/profile-digest"  # CompiledProfile.digest() of the profile a manifest was made from
DEFAULT_CLAIM_NAME = "gpus"
DEFAULT_REQUEST_NAME = "gpu"
_COLOCATE = {"pcieRoot": PCIE_ROOT, "numaNode": NUMA_NODE}

ClauseKind = Literal[
    "driver", "type", "product-allow", "product-exclude", "architecture-allow", "architecture-exclude",
    "memory-min", "memory-max", "compute-capability-min", "driver-version-min", "colocate",
]


@dataclass(frozen=True)
class Clause:
    """One requirement as one CEL selector, with what it reads and its bound (for reasons)."""

    kind: ClauseKind
    expression: str
    key: str = ""  # qualified attribute or capacity name the clause reads ("" for the driver)
    operand: tuple[str, ...] = ()  # the bound as compiled: ("48Gi",), product names, ("8.0.0",)
    written: str = ""  # the bound as the profile wrote it ("48GB")
    emitted: bool = True  # False: implied by a constraint, checked by eligibility only

    def label(self) -> str:
        ops = ", ".join(self.operand)
        return {
            "driver": f"driver {ops}",
            "type": f"type {ops}",
            "product-allow": f"product in [{ops}]",
            "product-exclude": f"product not in [{ops}]",
            "architecture-allow": f"architecture in [{ops}]",
            "architecture-exclude": f"architecture not in [{ops}]",
            "memory-min": f"memory >= {ops}",
            "memory-max": f"memory <= {ops}",
            "compute-capability-min": f"compute capability >= {ops}",
            "driver-version-min": f"driver version >= {ops}",
            "colocate": f"publishes {self.key}",
        }[self.kind]


@dataclass(frozen=True)
class CompiledOption:
    """The exact request (``name`` None) or one firstAvailable sub-request."""

    name: str | None
    count: int
    clauses: tuple[Clause, ...]  # in the request's selectors (class clauses not repeated)
    size_hint: str | None = None  # largest device memory the option admits, when known


# A syntactically valid image that cannot be pulled by accident (.invalid is reserved, RFC 2606).
PLACEHOLDER_IMAGE = "registry.invalid/drakit/replace-with-your-image:latest"


@dataclass(frozen=True)
class PodFragment:
    """What a pod needs to use the profile: a claim entry, container claims, pod-level settings."""

    claim_name: str
    template_name: str | None
    claim_ref: str | None
    priority_class_name: str | None = None
    tolerations: tuple[dict[str, Any], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()

    def resource_claim(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.claim_name}
        if self.template_name:
            entry["resourceClaimTemplateName"] = self.template_name
        else:
            entry["resourceClaimName"] = self.claim_ref
        return entry

    def container_claim(self) -> dict[str, Any]:
        return {"name": self.claim_name}

    def as_pod_template(self, name: str, namespace: str | None) -> dict[str, Any]:
        """The fragment as a PodTemplate (a real, validatable core/v1 object; container is a placeholder)."""
        spec: dict[str, Any] = {
            "resourceClaims": [self.resource_claim()],
            # The image is a placeholder (the API server requires one): `drakit profile apply-to`
            # merges only the claim parts into a real workload.
            "containers": [
                {"name": "main", "image": PLACEHOLDER_IMAGE, "resources": {"claims": [self.container_claim()]}}
            ],
        }
        if self.priority_class_name:
            spec["priorityClassName"] = self.priority_class_name
        if self.tolerations:
            spec["tolerations"] = [dict(t) for t in self.tolerations]
        meta: dict[str, Any] = {"name": name}
        if namespace:
            meta["namespace"] = namespace
        meta["labels"] = {PROFILE_LABEL: name}
        template: dict[str, Any] = {"spec": spec}
        if self.labels:
            template = {"metadata": {"labels": dict(self.labels)}, "spec": spec}
        return {"apiVersion": "v1", "kind": "PodTemplate", "metadata": meta, "template": template}


@dataclass(frozen=True)
class CompiledProfile:
    profile: str
    schema: DriverSchema
    class_name: str
    class_clauses: tuple[Clause, ...]
    options: tuple[CompiledOption, ...]
    first_available: bool
    request_name: str
    colocate: str | None  # qualified attribute of the matchAttribute constraint
    device_class: dict[str, Any]
    claim: dict[str, Any]  # ResourceClaimTemplate (per-pod) or ResourceClaim (shared)
    fragment: PodFragment
    namespace: str | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)
    polyaxon: PolyaxonSettings | None = None  # the profile's choice of Polyaxon mode and agent queue

    def manifests(self) -> list[dict[str, Any]]:
        return [self.device_class, self.claim, self.fragment.as_pod_template(self.profile, self.namespace)]

    def digest(self) -> str:
        """``sha256:`` + 16 hex digits of what the profile compiles to, namespace left out: a preset
        or manifest stamped with it can tell that the cluster now serves another version."""
        import hashlib
        import json

        docs = [self.device_class, self.claim, self.fragment.as_pod_template(self.profile, None)]
        canonical = json.dumps([{**d, "metadata": {k: v for k, v in d["metadata"].items() if k != "namespace"}}
                                for d in docs], sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


# --- CEL text ----------------------------------------------------------------------------------


def cel_string(s: str) -> str:
    """A single-quoted CEL string literal."""
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _list(values: Sequence[str]) -> str:
    return "[" + ", ".join(cel_string(v) for v in values) + "]"


def attr_ref(driver: str, key: str) -> str:
    domain, name = split_key(key, driver)
    return f"device.attributes[{cel_string(domain)}].{name}"


def attr_present(driver: str, key: str) -> str:
    domain, name = split_key(key, driver)
    return f"{cel_string(name)} in device.attributes[{cel_string(domain)}]"


def cap_ref(driver: str, key: str) -> str:
    domain, name = split_key(key, driver)
    return f"device.capacity[{cel_string(domain)}].{name}"


def cap_present(driver: str, key: str) -> str:
    domain, name = split_key(key, driver)
    return f"{cel_string(name)} in device.capacity[{cel_string(domain)}]"


def _selected_types(schema: DriverSchema) -> tuple[str, ...]:
    """The device types a compiled selector admits: its type clause comes first."""
    return (schema.device_type[1],) if schema.device_type else ()


def _attr_clause(schema: DriverSchema, key: str, test: str) -> str:
    if schema.always_published("attributes", key, _selected_types(schema)):
        return test
    return f"{attr_present(schema.driver, key)} && {test}"


def _cap_clause(schema: DriverSchema, key: str, test: str) -> str:
    if schema.always_published("capacity", key, _selected_types(schema)):
        return test
    return f"{cap_present(schema.driver, key)} && {test}"


# --- compile -----------------------------------------------------------------------------------


class _Unsupported(Exception):
    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(detail)
        self.path = path
        self.detail = detail


def _role_key(schema: DriverSchema, role: str, path: Path, what: str) -> str:
    key = schema.roles.get(role)  # type: ignore[call-overload]
    if key is None:
        raise _Unsupported(path, f"{schema.ref} publishes no {what} attribute")
    return str(key)


def _names_clauses(schema: DriverSchema, ns: NameSet | None, role: str, what: str, path: Path) -> list[Clause]:
    if ns is None:
        return []
    key = _role_key(schema, role, path, what)
    ref = attr_ref(schema.driver, key)
    out = []
    if ns.allow:
        test = f"{ref} == {cel_string(ns.allow[0])}" if len(ns.allow) == 1 else f"{ref} in {_list(ns.allow)}"
        out.append(Clause(f"{what}-allow", _attr_clause(schema, key, test), qualify(key, schema.driver), tuple(ns.allow)))  # type: ignore[arg-type]
    if ns.exclude:
        test = f"{ref} != {cel_string(ns.exclude[0])}" if len(ns.exclude) == 1 else f"!({ref} in {_list(ns.exclude)})"
        out.append(Clause(f"{what}-exclude", _attr_clause(schema, key, test), qualify(key, schema.driver), tuple(ns.exclude)))  # type: ignore[arg-type]
    return out


def _version_clause(schema: DriverSchema, text: str | None, role: str, kind: ClauseKind, what: str, path: Path) -> list[Clause]:
    if text is None:
        return []
    key = _role_key(schema, role, path, what)
    ref = attr_ref(schema.driver, key)
    v = normalize_version(text)
    spec = schema.attribute(key)
    if spec is not None and spec.type == "string":
        # Learned schemas may carry versions as strings: parse leniently, non-semver is a non-match.
        test = f"isSemver({ref}, true) && semver({ref}, true).compareTo(semver({cel_string(v)})) >= 0"
    else:
        test = f"{ref}.compareTo(semver({cel_string(v)})) >= 0"
    return [Clause(kind, _attr_clause(schema, key, test), qualify(key, schema.driver), (v,), text)]


def _memory_clauses(schema: DriverSchema, mem: MemoryBounds | None, path: Path) -> list[Clause]:
    if mem is None or (mem.min is None and mem.max is None):
        return []
    key = schema.memory_capacity
    if key is None:
        raise _Unsupported(path, f"{schema.ref} publishes no memory capacity")
    ref = cap_ref(schema.driver, key)
    out = []
    if mem.min is not None:
        q = memory_quantity(mem.min)
        test = f"{ref}.compareTo(quantity({cel_string(q)})) >= 0"
        out.append(Clause("memory-min", _cap_clause(schema, key, test), qualify(key, schema.driver), (q,), mem.min))
    if mem.max is not None:
        q = memory_quantity(mem.max)
        # A published 0 means "could not measure" (Intel without xpumd): never a small device.
        test = f"{ref}.isGreaterThan(quantity('0')) && {ref}.compareTo(quantity({cel_string(q)})) <= 0"
        out.append(Clause("memory-max", _cap_clause(schema, key, test), qualify(key, schema.driver), (q,), mem.max))
    return out


def requirement_clauses(schema: DriverSchema, req: Requirements, path: Path) -> list[Clause]:
    """Clauses for one effective set of requirements, cheapest tests first."""
    return [
        *_names_clauses(schema, req.products, "product", "product", (*path, "products")),
        *_names_clauses(schema, req.architectures, "architecture", "architecture", (*path, "architectures")),
        *_memory_clauses(schema, req.memory, (*path, "memory")),
        *_version_clause(schema, req.min_compute_capability, "computeCapability", "compute-capability-min",
                         "compute capability", (*path, "minComputeCapability")),
        *_version_clause(schema, req.min_driver_version, "driverVersion", "driver-version-min",
                         "driver version", (*path, "minDriverVersion")),
    ]


def base_clauses(schema: DriverSchema) -> list[Clause]:
    out = [Clause("driver", f"device.driver == {cel_string(schema.driver)}", "", (schema.driver,))]
    if schema.device_type:
        key, value = schema.device_type
        test = f"{attr_ref(schema.driver, key)} == {cel_string(value)}"
        out.append(Clause("type", _attr_clause(schema, key, test), qualify(key, schema.driver), (value,)))
    return out


def effective(base: Requirements, alt: Alternative) -> Requirements:
    """An alternative's requirements: its own fields, else the profile's; memory bounds per side."""
    mem = base.memory
    if alt.memory is not None:
        mem = MemoryBounds(min=alt.memory.min if alt.memory.min is not None else (base.memory.min if base.memory else None),
                           max=alt.memory.max if alt.memory.max is not None else (base.memory.max if base.memory else None))
    return Requirements(
        count=alt.count or base.count,
        memory=mem,
        products=alt.products if alt.products is not None else base.products,
        architectures=alt.architectures if alt.architectures is not None else base.architectures,
        min_compute_capability=alt.min_compute_capability or base.min_compute_capability,
        min_driver_version=alt.min_driver_version or base.min_driver_version,
    )


def _size_hint(schema: DriverSchema, req: Requirements) -> Quantity | None:
    """The largest memory a device admitted by ``req`` can have, when knowable without an inventory."""
    hints: list[Quantity] = []
    if req.memory and req.memory.max:
        hints.append(parse_memory(req.memory.max))
    if req.products and req.products.allow and all(p in schema.products for p in req.products.allow):
        hints.append(max(Quantity.parse(schema.products[p]) for p in req.products.allow))
    return min(hints) if hints else None


def _tolerations(items: Sequence[Any] | None) -> list[dict[str, Any]]:
    return [t.model_dump(by_alias=True, exclude_none=True) for t in items or []]


def drivers_for(rp: ResolvedProfile, cli_driver: str | None = None) -> list[DriverSchema]:
    """The schema(s) a profile compiles for: ``cli_driver`` (``name[@version]``), else its driver or vendor."""
    spec = rp.profile.spec
    if cli_driver:
        driver, version = parse_driver_ref(cli_driver)
        schema = get_schema(driver, version)
        own = spec.driver or (VENDORS.get(spec.vendor) if spec.vendor else None)
        if own and own != driver:
            raise InvalidArgument(f"profile {rp.name} is for {own}, not for {driver}")
        return [schema]
    if spec.driver:
        return [get_schema(spec.driver)]
    if spec.vendor:
        return [get_schema(VENDORS[spec.vendor])]
    raise InvalidArgument(f"profile {rp.name} names no driver or vendor: name the driver to compile it for (e.g. gpu.nvidia.com)")


def compile_profile(rp: ResolvedProfile, schema: DriverSchema, *, namespace: str | None = None) -> CompiledProfile:
    """Compile one resolved profile for one driver schema; InvalidInput names the field it cannot express."""
    try:
        compiled = _compile(rp, schema, namespace)
    except _Unsupported as e:
        loc = rp.loc(e.path)
        err = FieldError(dotted(e.path), ErrorType.FORBIDDEN, OMIT, e.detail)
        raise InvalidInput([ObjectErrors(ObjectRef("Profile", rp.name, source=str(loc)), (err,))]) from None
    _check_emitted(rp, compiled)
    return compiled


# Where an emitted field comes from: (prefix of the emitted path, the profile field or option).
_SOURCES: tuple[tuple[str, Path | str], ...] = (
    ("metadata.namespace", "--namespace"),
    ("template.metadata.labels", ("spec", "queue")),
    ("template.spec.priorityClassName", ("spec", "pod", "priorityClassName")),
    ("template.spec.tolerations", ("spec", "pod", "tolerations")),
    ("metadata.name", ("metadata", "name")),
)


def _check_emitted(rp: ResolvedProfile, compiled: CompiledProfile) -> None:
    """Refuse output the API server would reject (model/validate.py), naming the profile field.

    A profile is checked when it is loaded, but some values only meet their API rules in the
    emitted objects: the namespace option, the queue as a label value, the priority class
    name, names built from the profile's name.
    """
    from drakit.features import Features
    from drakit.model.kinds import model_for
    from drakit.model.validate import validate_object

    problems: list[ObjectErrors] = []
    seen: set[tuple[str, str]] = set()  # one report per source and problem (the namespace is on every object)
    for doc in compiled.manifests():
        obj = model_for(doc).model_validate(doc)
        errors, _ = validate_object(obj, Features.all_on())
        for err in errors:
            source = next((src for prefix, src in _SOURCES if err.path.startswith(prefix)), ("spec",))
            if (str(source), err.body()) in seen:
                continue
            seen.add((str(source), err.body()))
            emitted = f"{doc['kind']}/{doc['metadata']['name']}"
            if isinstance(source, str):
                detail = f"{source}: compiles to {emitted} {err.path}: {err.body()}"
                problems.append(ObjectErrors(ObjectRef("Profile", rp.name), (FieldError("", ErrorType.INVALID, OMIT, detail),)))
                continue
            fe = FieldError(dotted(source), err.type, err.value, f"{err.detail} (in {emitted} {err.path})".lstrip())
            problems.append(ObjectErrors(ObjectRef("Profile", rp.name, source=str(rp.loc(source))), (fe,)))
    if problems:
        raise InvalidInput(problems)


def _compile(rp: ResolvedProfile, schema: DriverSchema, namespace: str | None) -> CompiledProfile:
    p = rp.profile
    spec = p.spec
    name = p.name
    request_name = spec.request_name or DEFAULT_REQUEST_NAME
    claim_name = spec.claim_name or DEFAULT_CLAIM_NAME
    class_name = f"{name}.{schema.driver}"
    warnings = list(rp.warnings)

    colocate = None
    if spec.colocate:
        colocate = _COLOCATE[spec.colocate]
        if schema.attribute(colocate) is None:
            raise _Unsupported(("spec", "colocate"), f"{schema.ref} does not publish {colocate}")

    # 1. Effective requirements per option (one unnamed option without alternatives).
    options_src: list[tuple[str | None, Requirements, Path]]
    if spec.alternatives:
        options_src = [
            (alt.name, effective(spec, alt), ("spec", "alternatives", "options", i))
            for i, alt in enumerate(spec.alternatives.options)
        ]
    else:
        options_src = [(None, spec, ("spec",))]
    per_option = [(n, req, requirement_clauses(schema, req, path)) for n, req, path in options_src]

    # 2. Order: smallest sufficient first (stable, unknown sizes last).
    if spec.alternatives and spec.alternatives.order == "smallest-first":
        hints = [_size_hint(schema, req) for _, req, _ in per_option]
        order = sorted(range(len(per_option)), key=lambda i: (hints[i] is None, hints[i] or Quantity.parse("0")))
        per_option = [per_option[i] for i in order]

    # 3. Clauses every option shares go into the class; the rest stay on the sub-requests.
    shared = [c for c in per_option[0][2] if all(c in clauses for _, _, clauses in per_option[1:])]
    class_clauses = tuple(base_clauses(schema) + shared)
    options = tuple(
        CompiledOption(
            n,
            req.count or 1,
            tuple(c for c in clauses if c not in shared),
            str(h) if (h := _size_hint(schema, req)) is not None else None,
        )
        for n, req, clauses in per_option
    )
    if colocate:
        guard = Clause("colocate", attr_present(schema.driver, colocate), colocate, (spec.colocate or "",), emitted=False)
        class_clauses = (*class_clauses, guard)
        if all(o.count == 1 for o in options):
            warnings.append(f"profile {name}: colocate has no effect with one device per request")

    device_class = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": class_name, "labels": {PROFILE_LABEL: name}},
        "spec": {"selectors": [{"cel": {"expression": c.expression}} for c in class_clauses if c.emitted]},
    }

    tolerations = _tolerations(spec.device_tolerations)
    request: dict[str, Any] = {"name": request_name}
    if spec.alternatives:
        subs = []
        for o in options:
            sub: dict[str, Any] = {"name": o.name, "deviceClassName": class_name, "count": o.count}
            if o.clauses:
                sub["selectors"] = [{"cel": {"expression": c.expression}} for c in o.clauses]
            if tolerations:
                sub["tolerations"] = tolerations
            subs.append(sub)
        request["firstAvailable"] = subs
    else:
        exact: dict[str, Any] = {"deviceClassName": class_name, "count": options[0].count}
        if spec.admin_access:
            exact["adminAccess"] = True
        if tolerations:
            exact["tolerations"] = tolerations
        request["exactly"] = exact
    devices: dict[str, Any] = {"requests": [request]}
    if colocate:
        devices["constraints"] = [{"requests": [request_name], "matchAttribute": colocate}]

    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = {PROFILE_LABEL: name}
    shared_claim = spec.claim == "shared"
    if shared_claim:
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta, "spec": {"devices": devices}}
    else:
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": meta,
                 "spec": {"spec": {"devices": devices}}}

    pod = spec.pod
    fragment = PodFragment(
        claim_name=claim_name,
        template_name=None if shared_claim else name,
        claim_ref=name if shared_claim else None,
        priority_class_name=pod.priority_class_name if pod else None,
        tolerations=tuple(_tolerations(pod.tolerations if pod else None)),
        labels=((QUEUE_LABEL, spec.queue),) if spec.queue else (),
    )
    return CompiledProfile(
        profile=name,
        schema=schema,
        class_name=class_name,
        class_clauses=class_clauses,
        options=options,
        first_available=spec.alternatives is not None,
        request_name=request_name,
        colocate=colocate,
        device_class=device_class,
        claim=claim,
        fragment=fragment,
        namespace=namespace,
        warnings=tuple(warnings),
        polyaxon=spec.polyaxon,
    )
