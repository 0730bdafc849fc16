"""An explain scenario bundle replayed on the real control plane, and read back as a bundle.

The scenario bundles (``tests/scenarios/explain/<name>.yaml``) are snapshots: claims already
carry ``status.allocation``, pods already carry a ``uid`` and sometimes a ``nodeName``.  A real
control plane writes those fields itself, so the replay *makes them happen* instead of copying
them:

* every in-use claim (allocated, reserved for pods other than the target) becomes a *holder*:
  the claim is created without status and a holder pod that uses it is pinned by node selector to
  the node of the bundle's allocation; the real scheduler then allocates it.  When the bundle's
  devices have a ``uuid`` attribute, a selector on those uuids makes the scheduler pick exactly
  the bundle's devices (first-fit would pick others);
* claims the bundle shows as generated from a template (owned by a pod) are left to the real
  resourceclaim controller, which gives them its own names;
* a claim being deleted is created with a test finalizer and then deleted, so it stays;
* bundle Events are not replayed: the control plane writes its own.

``snapshot`` reads everything back the way ``kubectl get -o yaml`` prints it (no managedFields),
so that ``drakit explain`` sees the objects exactly as the cluster holds them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from drakit.model.codec import KubeDumper
from tests.integration.kube import Cluster

V1 = "resource.k8s.io/v1"
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios" / "explain"
HOLD_FINALIZER = "test.drakit.io/hold"
ADMIN_LABEL = "resource.kubernetes.io/admin-access"
POD_IMAGE = "registry.example/drakit-explain:1"
Obj = dict[str, Any]


def load(name: str) -> list[Obj]:
    """The scenario's objects, as committed."""
    docs = yaml.safe_load_all((SCENARIOS / f"{name}.yaml").read_text(encoding="utf-8"))
    return [d for d in docs if d]


@dataclass(frozen=True)
class Holder:
    """An in-use claim of the bundle and the pods that hold it on the real cluster."""

    claim: Obj
    pods: tuple[Obj, ...]
    node: str
    devices: frozenset[tuple[str, str, str]]  # (driver, pool, device) the bundle says it holds


@dataclass(frozen=True)
class Plan:
    """What to create, in order."""

    nodes: tuple[Obj, ...]
    classes: tuple[Obj, ...]
    slices: tuple[Obj, ...]
    holders: tuple[Holder, ...]
    templates: tuple[Obj, ...]
    claims: tuple[Obj, ...]
    deleting: tuple[str, ...]  # claim names to delete (held by HOLD_FINALIZER) before the pods
    pods: tuple[Obj, ...]
    admin_access: bool  # the namespace needs the admin-access label
    notes: tuple[str, ...] = field(default=())


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _owned_by_pod(obj: Mapping[str, Any]) -> bool:
    return any(o.get("kind") == "Pod" for o in _meta(obj).get("ownerReferences") or [])


def _uses_admin_access(spec: Mapping[str, Any]) -> bool:
    for r in (spec.get("devices") or {}).get("requests") or []:
        subs = [r.get("exactly") or {}, *(r.get("firstAvailable") or [])]
        if any(s.get("adminAccess") for s in subs):
            return True
    return False


def _fresh(obj: Mapping[str, Any]) -> Obj:
    """A copy fit for create: no status, no server-owned metadata, no namespace."""
    out = copy.deepcopy(dict(obj))
    out.pop("status", None)
    meta = out.setdefault("metadata", {})
    for key in ("uid", "namespace", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                "ownerReferences", "finalizers"):
        meta.pop(key, None)
    return out


def _pod_for_cluster(pod: Mapping[str, Any], node: str | None = None) -> Obj:
    out = _fresh(pod)
    spec = out.setdefault("spec", {})
    spec.pop("nodeName", None)
    spec["terminationGracePeriodSeconds"] = 0
    for c in spec.get("containers") or []:
        c["image"] = POD_IMAGE
    if node:
        spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), "kubernetes.io/hostname": node}
    return out


def _holder_pod(name: str, claim: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "main", "image": POD_IMAGE, "resources": {"claims": [{"name": "held"}]}}],
            "resourceClaims": [{"name": "held", "resourceClaimName": claim}],
        },
    }


def _device_index(slices: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], tuple[str, Obj]]:
    """(driver, pool, device) -> (node name, device dict)."""
    out: dict[tuple[str, str, str], tuple[str, Obj]] = {}
    for s in slices:
        spec = s.get("spec") or {}
        for d in spec.get("devices") or []:
            out[(spec["driver"], spec["pool"]["name"], d["name"])] = (str(spec.get("nodeName") or ""), d)
    return out


def _pod_claim_names(pod: Mapping[str, Any]) -> set[str]:
    return {str(c["resourceClaimName"]) for c in (pod.get("spec") or {}).get("resourceClaims") or []
            if c.get("resourceClaimName")}


def plan(objects: Sequence[Mapping[str, Any]], target_pods: Iterable[str]) -> Plan:
    """How to make the cluster hold what the bundle shows; ``target_pods`` are the pods explained."""
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for o in objects:
        by_kind.setdefault(str(o.get("kind")), []).append(o)
    targets = set(target_pods)
    slices = by_kind.get("ResourceSlice", [])
    devices = _device_index(slices)
    bundle_pods = {str(_meta(p)["name"]): p for p in by_kind.get("Pod", [])}
    target_claims = {n for name, p in bundle_pods.items() if name in targets for n in _pod_claim_names(p)}

    holders: list[Holder] = []
    claims: list[Obj] = []
    deleting: list[str] = []
    held_pods: set[str] = set()
    admin = False
    for c in by_kind.get("ResourceClaim", []):
        admin = admin or _uses_admin_access(c.get("spec") or {})
        if _owned_by_pod(c):
            continue  # generated: the real controller creates (and names) it
        name = str(_meta(c)["name"])
        status = c.get("status") or {}
        users = [str(r.get("name")) for r in status.get("reservedFor") or []]
        if status.get("allocation") and not targets & set(users):
            results = ((status["allocation"].get("devices") or {}).get("results")) or []
            held = frozenset((r["driver"], r["pool"], r["device"]) for r in results)
            nodes = {devices[k][0] for k in held if k in devices}
            if len(nodes) != 1:
                raise ValueError(f"claim {name}: devices {sorted(held)} are not on exactly one node")
            node = nodes.pop()
            claim = _fresh(c)
            uuids = [
                str(devices[k][1].get("attributes", {}).get("uuid", {}).get("string", ""))
                for k in sorted(held)
            ]
            if name not in target_claims and all(uuids):
                driver = next(iter(held))[0]
                req = claim["spec"]["devices"]["requests"][0]
                listed = ", ".join(f"'{u}'" for u in uuids)
                req["exactly"].setdefault("selectors", []).append(
                    {"cel": {"expression": f"device.attributes['{driver}'].uuid in [{listed}]"}}
                )
            pods = []
            for user in users:
                held_pods.add(user)
                bundle_pod = bundle_pods.get(user)
                pod = _holder_pod(user, name) if bundle_pod is None else bundle_pod
                pods.append(_pod_for_cluster(pod, node))
            holders.append(Holder(claim, tuple(pods), node, held))
            continue
        if status.get("allocation"):
            raise ValueError(f"claim {name} is allocated for a target pod: needs a kubelet, not replayable")
        claim = _fresh(c)
        if _meta(c).get("deletionTimestamp"):
            claim["metadata"]["finalizers"] = [HOLD_FINALIZER]
            deleting.append(name)
        claims.append(claim)
    templates = [_fresh(t) for t in by_kind.get("ResourceClaimTemplate", [])]
    admin = admin or any(_uses_admin_access((t.get("spec") or {}).get("spec") or {}) for t in templates)
    pods = []
    for name, p in bundle_pods.items():
        if name in held_pods:
            continue
        if (p.get("spec") or {}).get("nodeName"):
            raise ValueError(f"pod {name} is bound in the bundle: needs a kubelet, not replayable")
        pods.append(_pod_for_cluster(p))
    return Plan(
        nodes=tuple(copy.deepcopy(dict(n)) for n in by_kind.get("Node", [])),
        classes=tuple(_fresh(c) for c in by_kind.get("DeviceClass", [])),
        slices=tuple(_fresh(s) for s in slices),
        holders=tuple(holders),
        templates=tuple(templates),
        claims=tuple(claims),
        deleting=tuple(deleting),
        pods=tuple(pods),
        admin_access=admin,
    )


# --------------------------------------------------------------------------------- on the cluster


def create_inventory(cluster: Cluster, p: Plan) -> None:
    """Nodes (with the bundle's labels, allocatable and taints), classes and slices."""
    for n in p.nodes:
        meta = n["metadata"]
        alloc = (n.get("status") or {}).get("allocatable") or {}
        cluster.add_node(
            meta["name"],
            meta.get("labels") or {},
            **{k: str(alloc[k]) for k in ("cpu", "memory", "pods") if k in alloc},
        )
        taints = (n.get("spec") or {}).get("taints")
        if taints:
            cluster.core.patch_node(meta["name"], {"spec": {"taints": taints}})
    for obj in (*p.classes, *p.slices):
        cluster.create(obj)


def delete_inventory(cluster: Cluster, p: Plan) -> None:
    for obj in (*p.slices, *p.classes):
        cluster.delete(obj)
    for n in p.nodes:
        cluster.delete({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n["metadata"]["name"]}})


def allocated_devices(claim: Mapping[str, Any]) -> frozenset[tuple[str, str, str]]:
    results = ((((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")) or []
    return frozenset((r["driver"], r["pool"], r["device"]) for r in results)


def create_holders(cluster: Cluster, p: Plan, ns: str) -> None:
    """Each holder claim and its pods, one at a time, waiting for the real allocation."""
    for h in p.holders:
        name = h.claim["metadata"]["name"]
        cluster.create(h.claim, ns)
        for pod in h.pods:
            cluster.create(pod, ns)

        def allocated(name: str = name, h: Holder = h) -> Obj | None:
            c = cluster.get(V1, "ResourceClaim", name, ns) or {}
            status = c.get("status") or {}
            if status.get("allocation") and len(status.get("reservedFor") or []) == len(h.pods):
                return c
            return None

        claim = cluster.wait_for(f"holder claim {ns}/{name} allocated", allocated, timeout=90)
        got = allocated_devices(claim)
        assert got == h.devices, f"holder {name}: the scheduler allocated {sorted(got)}, bundle has {sorted(h.devices)}"
        for pod in h.pods:
            pname = str(pod["metadata"]["name"])

            def bound(pname: str = pname) -> str | None:
                return (cluster.get("v1", "Pod", pname, ns) or {}).get("spec", {}).get("nodeName")

            cluster.wait_for(f"holder pod {ns}/{pname} bound", bound, timeout=60)


def set_admin_label(cluster: Cluster, ns: str, on: bool) -> None:
    cluster.core.patch_namespace(ns, {"metadata": {"labels": {ADMIN_LABEL: "true" if on else None}}})


def create_workload(cluster: Cluster, p: Plan, ns: str, *, drop_admin_label_before_pods: bool = False) -> None:
    for obj in (*p.templates, *p.claims):
        cluster.create(obj, ns)
    for name in p.deleting:
        cluster.delete({"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name}}, ns)

        def marked(name: str = name) -> str | None:
            return (cluster.get(V1, "ResourceClaim", name, ns) or {}).get("metadata", {}).get("deletionTimestamp")

        cluster.wait_for(f"claim {ns}/{name} marked for deletion", marked, timeout=30)
    if drop_admin_label_before_pods:
        set_admin_label(cluster, ns, False)
    for pod in p.pods:
        cluster.create(pod, ns)


def release_finalizers(cluster: Cluster, p: Plan, ns: str) -> None:
    """Let claims held by the test finalizer go, so the namespace can be deleted."""
    resource = cluster.dynamic.resources.get(api_version=V1, kind="ResourceClaim")
    for name in p.deleting:
        obj = cluster.get(V1, "ResourceClaim", name, ns)
        if obj is None:
            continue
        kept = [f for f in obj["metadata"].get("finalizers") or [] if f != HOLD_FINALIZER]
        resource.patch(
            name=name,
            namespace=ns,
            body={"metadata": {"finalizers": kept, "resourceVersion": obj["metadata"]["resourceVersion"]}},
            content_type="application/merge-patch+json",
        )


# --------------------------------------------------------------------------------- read back

CLUSTER_KINDS = (("v1", "Node"), (V1, "ResourceSlice"), (V1, "DeviceClass"), (V1, "DeviceTaintRule"))
NAMESPACED_KINDS = (("v1", "Pod"), (V1, "ResourceClaim"), (V1, "ResourceClaimTemplate"), ("v1", "Event"))


def _as_kubectl_prints(obj: Mapping[str, Any], api_version: str, kind: str) -> Obj:
    out = copy.deepcopy(dict(obj))
    out.setdefault("apiVersion", api_version)
    out.setdefault("kind", kind)
    (out.get("metadata") or {}).pop("managedFields", None)
    return out


def snapshot(cluster: Cluster, ns: str) -> list[Obj]:
    """Everything explain may read, as the API server holds it now (``kubectl get -o yaml`` form)."""
    out: list[Obj] = []
    for api_version, kind in CLUSTER_KINDS:
        out += [_as_kubectl_prints(o, api_version, kind) for o in cluster.list_objects(api_version, kind)]
    for api_version, kind in NAMESPACED_KINDS:
        out += [_as_kubectl_prints(o, api_version, kind) for o in cluster.list_objects(api_version, kind, ns)]
    return out


def write_bundle(objects: Sequence[Mapping[str, Any]], path: Path) -> Path:
    path.write_text(yaml.dump_all(Dumper=KubeDumper, documents=[dict(o) for o in objects], sort_keys=False), encoding="utf-8")
    return path

