"""``describe``: one view of a pod, claim or device class — the objects, the events and the verdict.

"When a workload waits, inspect the class, claim, Pod and events together": kubectl makes a user
run four commands and join allocation results to ResourceSlices by hand.  A :class:`Description`
does the join on a :class:`ClusterSnapshot` (so it reads the same from files and from a live
cluster): the pod's claims with their requests, allocation, ``reservedFor`` and each allocated
device with the attributes and capacities its slice publishes; the classes those requests name
and how many devices each selects; the events of the pod and its claims from the scheduler, the
resourceclaim controller and the kubelet, oldest first; and ``diagnose``'s verdict beside the
scheduler's own words.  Data first (``to_json`` is the stable ``-o json`` shape); the text layout
is :func:`render_description`.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drakit.errors import InvalidArgument, NotFound, SelectorError
from drakit.explain.diagnose import claim_from_template, diagnose
from drakit.explain.diagnosis import Diagnosis
from drakit.explain.events import component_of, event_time, in_time_order
from drakit.explain.render import render_text
from drakit.features import Features
from drakit.gostr import quote
from drakit.inventory.devices import inventory_devices
from drakit.inventory.fleet import DeviceRow, fleet
from drakit.inventory.snapshot import ClusterSnapshot, Obj, ObjectKey, name_of, namespace_of
from drakit.selectors import compile_selector, device_view

__all__ = ["ClaimView", "ClassView", "Description", "DeviceView", "EventLine", "RequestLine", "describe",
           "render_description"]

KINDS = {"pod": "Pod", "claim": "ResourceClaim", "deviceclass": "DeviceClass"}


@dataclass(frozen=True)
class EventLine:
    time: str  # RFC 3339 as the event carries it, "" when it has none
    type: str
    reason: str
    source: str  # reportingComponent or source.component: default-scheduler, resource_claim, kubelet
    object: str  # Kind/name of the involved object
    message: str
    count: int

    def to_json(self) -> dict[str, Any]:
        return {"time": self.time, "type": self.type, "reason": self.reason, "from": self.source,
                "object": self.object, "message": self.message, "count": self.count}


@dataclass(frozen=True)
class RequestLine:
    name: str  # "req" or "req/sub" for a firstAvailable alternative
    device_class: str
    mode: str  # ExactCount or All
    count: int
    selectors: tuple[str, ...]
    admin_access: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "deviceClass": self.device_class, "allocationMode": self.mode,
                "count": self.count, "selectors": list(self.selectors), "adminAccess": self.admin_access}


@dataclass(frozen=True)
class DeviceView:
    """One allocation result joined to the device its slice publishes (``published`` False: gone)."""

    request: str
    driver: str
    pool: str
    device: str
    node: str
    product: str
    memory: str
    taints: tuple[str, ...]
    attributes: Mapping[str, str]
    capacity: Mapping[str, str]
    admin_access: bool
    published: bool

    @property
    def ident(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"

    def to_json(self) -> dict[str, Any]:
        return {"request": self.request, "driver": self.driver, "pool": self.pool, "device": self.device,
                "node": self.node, "product": self.product, "memory": self.memory, "taints": list(self.taints),
                "attributes": dict(self.attributes), "capacity": dict(self.capacity),
                "adminAccess": self.admin_access, "published": self.published}


@dataclass(frozen=True)
class ClaimView:
    key: str  # namespace/name; for a claim not created yet, the name the controller would give it
    pod_claim: str  # its name in the pod's spec.resourceClaims ("" when the claim is described)
    source: str  # "resourceClaimName" or "template NAME"
    state: str  # allocated | pending | not created | missing | deleting
    requests: tuple[RequestLine, ...]
    node: str  # where the allocation is usable: a node name, "(any node)", "(node selector)", or ""
    reserved_for: tuple[str, ...]
    devices: tuple[DeviceView, ...]

    def to_json(self) -> dict[str, Any]:
        return {"claim": self.key, "podClaim": self.pod_claim, "source": self.source, "state": self.state,
                "requests": [r.to_json() for r in self.requests], "node": self.node,
                "reservedFor": list(self.reserved_for), "devices": [d.to_json() for d in self.devices]}


@dataclass(frozen=True)
class ClassView:
    name: str
    found: bool
    selectors: tuple[str, ...]
    config_drivers: tuple[str, ...]
    extended_resource: str
    matching: int  # devices (newest pool generations) every selector of the class accepts
    nodes: int  # nodes those devices are on
    products: Mapping[str, int]
    errors: tuple[str, ...]  # compile errors, or the first runtime error per selector

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "found": self.found, "selectors": list(self.selectors),
                "configDrivers": list(self.config_drivers), "extendedResourceName": self.extended_resource,
                "matchingDevices": self.matching, "nodes": self.nodes, "products": dict(self.products),
                "errors": list(self.errors)}


@dataclass(frozen=True)
class Description:
    kind: str  # Pod, ResourceClaim, DeviceClass
    name: str
    namespace: str  # "" for a DeviceClass
    fields: tuple[tuple[str, str], ...]  # the header, in order
    claims: tuple[ClaimView, ...]
    classes: tuple[ClassView, ...]
    events: tuple[EventLine, ...]
    users: tuple[str, ...] = ()  # a class: the claims whose requests name it
    diagnosis: Diagnosis | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind, "name": self.name, "namespace": self.namespace,
            "fields": {k: v for k, v in self.fields},
            "claims": [c.to_json() for c in self.claims], "classes": [c.to_json() for c in self.classes],
            "events": [e.to_json() for e in self.events],
        }
        if self.kind == "DeviceClass":
            out["claimsUsingClass"] = list(self.users)
        if self.diagnosis is not None:
            out["explain"] = self.diagnosis.to_json()
        return out


# --- building -----------------------------------------------------------------------------------


def describe(snapshot: ClusterSnapshot, kind: str, name: str, namespace: str = "default", *,
             features: Features | None = None) -> Description:
    """The description of ``pod``/``claim``/``deviceclass`` ``name``; :class:`NotFound` if absent."""
    features = features or Features.for_version()
    kind = kind.lower()
    if kind not in KINDS:
        raise InvalidArgument(f"cannot describe a {quote(kind)}: pods, resource claims and device classes are described")
    rows = {r.ident: r for r in fleet(snapshot)}
    if kind == "deviceclass":
        return _describe_class(snapshot, name, features, rows)
    obj = snapshot.find(KINDS[kind], name, namespace)
    if obj is None:
        what = "pod" if kind == "pod" else "resourceclaim"
        raise NotFound(f"{what} {quote(namespace + '/' + name)} not found in the input")
    if kind == "pod":
        claims = _pod_claims(snapshot, obj, rows)
        fields = _pod_fields(snapshot, obj)
    else:
        claims = (_claim_view(obj, "", "resourceClaimName", rows),)
        fields = _claim_fields(obj)
    # A claim's story is also told on its pods: the kubelet reports preparation on the pod.
    pods = [obj] if kind == "pod" else list(snapshot.pods_by_claim.get(ObjectKey("ResourceClaim", namespace_of(obj), name), ()))
    involved = [("Pod", p) for p in pods] + [("ResourceClaim", c) for c in _claim_objects(snapshot, claims)]
    class_names = sorted({r.device_class for c in claims for r in c.requests if r.device_class})
    return Description(
        kind=KINDS[kind], name=name, namespace=namespace_of(obj), fields=fields, claims=claims,
        classes=tuple(_class_view(snapshot, n, features, rows) for n in class_names),
        events=_events(snapshot, involved),
        diagnosis=diagnose(snapshot, kind, name, namespace, features=features),
    )


def _claim_objects(snapshot: ClusterSnapshot, claims: Sequence[ClaimView]) -> list[Obj]:
    out = []
    for c in claims:
        ns, _, cname = c.key.partition("/")
        obj = snapshot.find_claim(cname, ns) if c.state not in ("not created", "missing") else None
        if obj is not None:
            out.append(obj)
    return out


def _pod_fields(snapshot: ClusterSnapshot, pod: Obj) -> tuple[tuple[str, str], ...]:
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    fields = [("Name", name_of(pod)), ("Namespace", namespace_of(pod)),
              ("Node", str(spec.get("nodeName") or "<none>")), ("Phase", str(status.get("phase") or "Pending"))]
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled":
            why = f" ({c['reason']})" if c.get("reason") else ""
            fields.append(("Scheduled", f"{c.get('status', '')}{why}"))
    if meta.get("creationTimestamp"):
        fields.append(("Created", str(meta["creationTimestamp"])))
    origin = snapshot.origins.get(f"{namespace_of(pod)}/{name_of(pod)}")
    if origin:
        fields.append(("Template of", origin))
    return tuple(fields)


def _claim_fields(claim: Obj) -> tuple[tuple[str, str], ...]:
    meta = claim.get("metadata") or {}
    fields = [("Name", name_of(claim)), ("Namespace", namespace_of(claim))]
    owners = [f"{o.get('kind')}/{o.get('name')}" for o in meta.get("ownerReferences") or [] if o.get("controller")]
    if owners:
        fields.append(("Controlled by", ", ".join(owners)))
    pod_claim = (meta.get("annotations") or {}).get("resource.kubernetes.io/pod-claim-name")
    if pod_claim:
        fields.append(("Pod claim", str(pod_claim)))
    if meta.get("creationTimestamp"):
        fields.append(("Created", str(meta["creationTimestamp"])))
    return tuple(fields)


def _pod_claims(snapshot: ClusterSnapshot, pod: Obj, rows: Mapping[str, DeviceRow]) -> tuple[ClaimView, ...]:
    ns = namespace_of(pod)
    generated = {s.get("name"): s.get("resourceClaimName")
                 for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    out = []
    for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
        pc_name = str(pc.get("name") or "")
        template = pc.get("resourceClaimTemplateName")
        cname = pc.get("resourceClaimName") or generated.get(pc_name)
        source = f"template {template}" if template else "resourceClaimName"
        claim = snapshot.find_claim(str(cname), ns) if cname else None
        if claim is not None:
            out.append(_claim_view(claim, pc_name, source, rows))
            continue
        spec: Mapping[str, Any] = {}
        key = f"{ns}/{cname}" if cname else ""
        if template and not cname:
            tmpl = snapshot.find_template(str(template), ns)
            if tmpl is not None:
                synthesized = claim_from_template(pod, pc_name, tmpl)
                spec, key = synthesized.get("spec") or {}, f"{ns}/{name_of(synthesized)}"
        out.append(ClaimView(key, pc_name, source, "not created" if template and not cname else "missing",
                             _requests(spec), "", (), ()))
    return tuple(out)


def _requests(spec: Mapping[str, Any]) -> tuple[RequestLine, ...]:
    out = []
    for r in ((spec.get("devices") or {}).get("requests")) or []:
        name = str(r.get("name") or "")
        if r.get("exactly"):
            out.append(_request_line(name, r["exactly"]))
        for sub in r.get("firstAvailable") or []:
            out.append(_request_line(f"{name}/{sub.get('name', '')}", sub))
    return tuple(out)


def _request_line(name: str, r: Mapping[str, Any]) -> RequestLine:
    mode = str(r.get("allocationMode") or "ExactCount")
    count = int(r.get("count") or 1) if mode == "ExactCount" else 0
    selectors = tuple(str((s.get("cel") or {}).get("expression") or "") for s in r.get("selectors") or [])
    return RequestLine(name, str(r.get("deviceClassName") or ""), mode, count, selectors, bool(r.get("adminAccess")))


def allocation_node(allocation: Mapping[str, Any]) -> str:
    """The node an allocation is usable on, read from the node selector the scheduler writes
    (``matchFields metadata.name In [node]``); ``(any node)`` without a selector."""
    selector = allocation.get("nodeSelector")
    if not selector:
        return "(any node)"
    terms = selector.get("nodeSelectorTerms") or []
    if len(terms) == 1:
        reqs = [*(terms[0].get("matchFields") or []), *(terms[0].get("matchExpressions") or [])]
        if len(reqs) == 1 and reqs[0].get("operator") == "In" and len(reqs[0].get("values") or []) == 1 and \
                reqs[0].get("key") in ("metadata.name", "kubernetes.io/hostname"):
            return str(reqs[0]["values"][0])
    return "(node selector)"


def _claim_view(claim: Obj, pod_claim: str, source: str, rows: Mapping[str, DeviceRow]) -> ClaimView:
    status = claim.get("status") or {}
    allocation = status.get("allocation")
    ns = namespace_of(claim)
    reserved = tuple(f"{r.get('resource', 'pods')}/{ns}/{r.get('name')}" if r.get("resource", "pods") != "pods"
                     else f"{ns}/{r.get('name')}" for r in status.get("reservedFor") or [])
    devices = []
    for r in ((allocation or {}).get("devices") or {}).get("results") or []:
        ident = f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}"
        row = rows.get(ident)
        devices.append(DeviceView(
            str(r.get("request") or ""), str(r.get("driver") or ""), str(r.get("pool") or ""),
            str(r.get("device") or ""), row.node if row else "", row.product if row else "",
            row.memory if row else "", row.taints if row else (), row.attributes if row else {},
            row.capacity if row else {}, bool(r.get("adminAccess")), row is not None,
        ))
    if (claim.get("metadata") or {}).get("deletionTimestamp"):
        state = "deleting"
    else:
        state = "allocated" if allocation is not None else "pending"
    return ClaimView(f"{ns}/{name_of(claim)}", pod_claim, source, state, _requests(claim.get("spec") or {}),
                     allocation_node(allocation) if allocation is not None else "", reserved, tuple(devices))


def _class_view(snapshot: ClusterSnapshot, name: str, features: Features, rows: Mapping[str, DeviceRow]) -> ClassView:
    obj = snapshot.find_class(name)
    if obj is None:
        return ClassView(name, False, (), (), "", 0, 0, {}, ())
    spec = obj.get("spec") or {}
    exprs = tuple(str((s.get("cel") or {}).get("expression") or "") for s in spec.get("selectors") or [])
    errors: list[str] = []
    compiled = []
    for i, expr in enumerate(exprs):
        sel = compile_selector(expr, environment="stored", features=features)
        if sel.error is not None:
            errors.append(f"selector #{i}: CEL compile error: {sel.error.message}")
        else:
            compiled.append((i, sel))
    matched: list[DeviceRow] = []
    if not errors:
        failed: set[int] = set()
        for dev in inventory_devices(snapshot.slices):
            view = device_view(dev.driver, dev.device)
            ok = True
            for i, sel in compiled:
                try:
                    ok = bool(sel.evaluate(view))
                except SelectorError as e:
                    ok = False
                    if i not in failed:
                        failed.add(i)
                        errors.append(f"selector #{i} on device {dev.ident}: CEL runtime error: {e}")
                if not ok:
                    break
            if ok:
                matched.append(rows[dev.ident])
    products = Counter(r.product for r in matched)
    drivers = tuple(str((c.get("opaque") or {}).get("driver") or "") for c in spec.get("config") or [])
    return ClassView(name, True, exprs, drivers, str(spec.get("extendedResourceName") or ""), len(matched),
                     len({r.node for r in matched}), dict(sorted(products.items())), tuple(errors))


def _describe_class(snapshot: ClusterSnapshot, name: str, features: Features, rows: Mapping[str, DeviceRow]) -> Description:
    view = _class_view(snapshot, name, features, rows)
    if not view.found:
        raise NotFound(f"deviceclass {quote(name)} not found in the input")
    users = []
    for claim in snapshot.claims:
        if any(r.device_class == name for r in _requests(claim.get("spec") or {})):
            users.append(f"{namespace_of(claim)}/{name_of(claim)}")
    obj = snapshot.find_class(name) or {}
    fields = [("Name", name)]
    created = (obj.get("metadata") or {}).get("creationTimestamp")
    if created:
        fields.append(("Created", str(created)))
    return Description("DeviceClass", name, "", tuple(fields), (), (view,), _events(snapshot, [("DeviceClass", obj)]),
                       users=tuple(users))


def _events(snapshot: ClusterSnapshot, involved: Sequence[tuple[str, Obj]]) -> tuple[EventLine, ...]:
    found: list[tuple[str, Mapping[str, Any]]] = []
    for kind, obj in involved:
        ns = namespace_of(obj) if kind != "DeviceClass" else ""
        for e in snapshot.events_by_object.get(ObjectKey(kind, ns, name_of(obj)), ()):
            found.append((f"{kind}/{name_of(obj)}", e))
    order = {id(e): i for i, e in enumerate(in_time_order([e for _, e in found]))}
    lines = []
    for what, e in sorted(found, key=lambda p: order[id(p[1])]):
        when = event_time(e)
        source = component_of(e)
        lines.append(EventLine(when.strftime("%Y-%m-%dT%H:%M:%SZ") if when else "", str(e.get("type") or ""),
                               str(e.get("reason") or ""), str(source), what,
                               str(e.get("message") or ""), int(e.get("count") or (e.get("series") or {}).get("count") or 1)))
    return tuple(lines)


# --- text ----------------------------------------------------------------------------------------

WIDTH = 100


def columns(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> list[str]:
    """kubectl's tabwriter layout: columns padded to their widest cell, three spaces apart."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    out = []
    for r in (headers, *rows):
        out.append(indent + "   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return out


def _wrapped(label: str, text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=f"{indent}{label}", subsequent_indent=indent + " " * len(label),
                         break_long_words=False, break_on_hyphens=False) or [f"{indent}{label}".rstrip()]


def _fields(fields: Sequence[tuple[str, str]], indent: str = "") -> list[str]:
    width = max(len(k) for k, _ in fields) + 2
    return [f"{indent}{(k + ':').ljust(width)}{v}" for k, v in fields]


def _claim_text(c: ClaimView) -> list[str]:
    lines = [f"  {c.pod_claim}:" if c.pod_claim else f"  {c.key}:"]
    fields = [("Claim", c.key or "<none>"), ("Source", c.source)]
    state = c.state
    if c.state == "allocated":
        state += f" on {c.node}" if c.node and not c.node.startswith("(") else f", usable on {c.node}"
    fields.append(("State", state))
    if c.state in ("allocated", "pending", "deleting"):
        fields.append(("Reserved for", ", ".join(c.reserved_for) or "<none>"))
    lines += _fields(fields, "    ")
    if c.requests:
        lines.append("    Requests:")
        lines += columns(("NAME", "CLASS", "MODE", "COUNT", "SELECTORS"),
                        [(r.name, r.device_class, r.mode + (" admin" if r.admin_access else ""),
                          str(r.count) if r.mode == "ExactCount" else "all", str(len(r.selectors)))
                         for r in c.requests], "      ")
        for r in c.requests:
            for i, s in enumerate(r.selectors):
                lines += _wrapped(f"{r.name} #{i}: ", s, "      ")
    if c.devices:
        lines.append("    Devices:")
        lines += columns(("REQUEST", "DEVICE", "NODE", "PRODUCT", "MEMORY", "TAINTS"),
                        [(d.request, d.ident + (" (admin)" if d.admin_access else ""),
                          d.node or "?", d.product or "(not published)", d.memory or "-", ",".join(d.taints) or "-")
                         for d in c.devices], "      ")
        for d in c.devices:
            if not d.published:
                lines.append(f"      {d.ident}: not published by any ResourceSlice now")
                continue
            lines += _wrapped(f"{d.device} attributes: ", ", ".join(f"{k}={v}" for k, v in d.attributes.items()), "      ")
            if d.capacity:
                lines += _wrapped(f"{d.device} capacity:   ", ", ".join(f"{k}={v}" for k, v in d.capacity.items()), "      ")
    return lines


def _class_text(c: ClassView) -> list[str]:
    if not c.found:
        return [f"  {c.name}: does not exist"]
    products = ", ".join(f"{p}: {n}" for p, n in c.products.items())
    lines = [f"  {c.name}: {c.matching} device(s) match on {c.nodes} node(s)" + (f" ({products})" if products else "")]
    for i, s in enumerate(c.selectors):
        lines += _wrapped(f"selector #{i}: ", s, "    ")
    if c.config_drivers:
        lines.append(f"    config for: {', '.join(c.config_drivers)}")
    if c.extended_resource:
        lines.append(f"    extended resource: {c.extended_resource}")
    lines += [f"    error: {e}" for e in c.errors]
    return lines


def render_description(d: Description) -> str:
    lines = _fields(d.fields)
    if d.kind != "DeviceClass":
        lines.append("Resource Claims:" if d.claims else "Resource Claims:  <none>")
        for c in d.claims:
            lines += _claim_text(c)
    lines.append("Device Classes:" if d.classes else "Device Classes:  <none>")
    for cv in d.classes:
        lines += _class_text(cv)
    if d.kind == "DeviceClass":
        lines.append("Used by claims:  " + (", ".join(d.users) or "<none>"))
    if d.events:
        lines.append("Events:")
        lines += columns(("TIME", "TYPE", "REASON", "FROM", "OBJECT", "MESSAGE"),
                        [(e.time or "<unknown>", e.type, e.reason, e.source, e.object,
                          e.message + (f" (x{e.count})" if e.count > 1 else "")) for e in d.events], "  ")
    else:
        lines.append("Events:  <none>")
    if d.diagnosis is not None:
        lines.append("Explain:")
        lines += ["  " + line if line else "" for line in render_text(d.diagnosis).splitlines()]
    return "\n".join(lines)
