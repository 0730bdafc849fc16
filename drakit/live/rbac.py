"""The least privilege drakit needs, as RBAC objects: read-only (cluster-wide or one namespace),
``profile apply``, ``queue explain`` and ``run --executor kubernetes`` (``runner``).

Reading is ``get``/``list``/``watch`` on exactly the kinds a snapshot lists.  A namespaced
reader still needs the cluster-scoped inventory (Nodes, DeviceClasses, ResourceSlices,
DeviceTaintRules) through a ClusterRole; its pods, claims and events come from a Role.
Applying profiles is ``get`` (to diff), ``create`` and ``patch`` (server-side apply is a PATCH
that the API server also authorizes as ``create`` when the object is new) on DeviceClasses and
on claim templates and claims in the namespace.  Explaining a Job's place in Kueue
(:mod:`drakit.live.kueue`) is ``get`` on the Job, ``list`` on Workloads (every namespace: who is
ahead in the ClusterQueue), LocalQueues and ClusterQueues, and ``get`` on the one ConfigMap
holding the manager's Configuration (its ``deviceClassMappings``), granted by name in Kueue's
namespace.  ``deploy/rbac/`` holds these with their default subject; ``drakit rbac`` prints
them for another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from drakit.live.client import KUEUE_V1BETA2, RESOURCE_V1
from drakit.live.kueue import CONFIG_MAP

Obj = dict[str, Any]
RBAC = "rbac.authorization.k8s.io/v1"
READ = ["get", "list", "watch"]
GROUP = RESOURCE_V1.split("/")[0]
KUEUE = KUEUE_V1BETA2.split("/")[0]
ROLES = ("reader", "reader-namespaced", "profile-applier", "queue-explainer", "runner")


@dataclass(frozen=True)
class Subject:
    """Who gets the role: a ServiceAccount (``namespace:name``), a user or a group."""

    kind: str = "ServiceAccount"
    name: str = "drakit"
    namespace: str = "default"

    def to_json(self) -> Obj:
        if self.kind == "ServiceAccount":
            return {"kind": "ServiceAccount", "name": self.name, "namespace": self.namespace}
        return {"kind": self.kind, "apiGroup": "rbac.authorization.k8s.io", "name": self.name}


def _rule(group: str, resources: list[str], verbs: list[str], names: list[str] | None = None) -> Obj:
    rule = {"apiGroups": [group], "resources": list(resources), "verbs": list(verbs)}  # no shared lists: no YAML anchors
    return {**rule, "resourceNames": list(names)} if names else rule


_INVENTORY = [_rule("", ["nodes"], READ), _rule(GROUP, ["deviceclasses", "resourceslices", "devicetaintrules"], READ)]
_WORKLOADS = [_rule("", ["pods", "events"], READ), _rule(GROUP, ["resourceclaims", "resourceclaimtemplates"], READ)]

# ``run --executor kubernetes``: its Job (created, followed, deleted when it times out), the pod's
# claim and Events, the claim template applied; Kueue's Workloads say why a Job waits.  The
# inventory (ClusterRole) is read to join devices to their slices and to diagnose an unscheduled pod.
_RUNNER = [
    _rule("batch", ["jobs"], [*READ, "create", "delete"]),
    _rule("", ["pods", "events"], READ),
    _rule(GROUP, ["resourceclaims"], READ),
    _rule(GROUP, ["resourceclaimtemplates"], [*READ, "create", "patch"]),
    _rule(KUEUE, ["workloads"], ["get", "list"]),
]


def _meta(name: str, namespace: str | None) -> Obj:
    return {"name": name, **({"namespace": namespace} if namespace else {}), "labels": {"app.kubernetes.io/name": "drakit"}}


def _role(kind: str, name: str, rules: list[Obj], namespace: str | None = None) -> Obj:
    meta = _meta(name, namespace)
    return {"apiVersion": RBAC, "kind": kind, "metadata": meta, "rules": rules}


def _binding(role: Obj, subject: Subject, namespace: str | None = None) -> Obj:
    kind = "RoleBinding" if role["kind"] == "Role" else "ClusterRoleBinding"
    return {"apiVersion": RBAC, "kind": kind, "metadata": _meta(role["metadata"]["name"], namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role["kind"], "name": role["metadata"]["name"]},
            "subjects": [subject.to_json()]}


def manifests(role: str, *, namespace: str = "default", subject: Subject | None = None) -> list[Obj]:
    """The objects of ``role`` (one of :data:`ROLES`) bound to ``subject`` (a ServiceAccount
    subject's ServiceAccount included)."""
    who = subject or Subject(namespace=namespace)
    if role == "reader":
        cluster = _role("ClusterRole", "drakit-reader", _INVENTORY + _WORKLOADS)
        objects = [cluster, _binding(cluster, who)]
    elif role == "reader-namespaced":
        cluster = _role("ClusterRole", "drakit-inventory-reader", _INVENTORY)
        local = _role("Role", "drakit-reader", _WORKLOADS, namespace)
        objects = [cluster, _binding(cluster, who), local, _binding(local, who, namespace)]
    elif role == "profile-applier":
        write = ["get", "create", "patch"]
        cluster = _role("ClusterRole", "drakit-profile-applier", [_rule(GROUP, ["deviceclasses"], write)])
        local = _role("Role", "drakit-profile-applier", [_rule(GROUP, ["resourceclaimtemplates", "resourceclaims"], write)],
                      namespace)
        objects = [cluster, _binding(cluster, who), local, _binding(local, who, namespace)]
    elif role == "queue-explainer":
        cluster = _role("ClusterRole", "drakit-queue-explainer", [
            _rule("batch", ["jobs"], ["get", "list"]),
            _rule(KUEUE, ["workloads", "localqueues", "clusterqueues"], ["get", "list"]),
        ])  # fmt: skip
        kueue_ns, config_map, _ = CONFIG_MAP
        config = _role("Role", "drakit-queue-explainer", [_rule("", ["configmaps"], ["get"], [config_map])], kueue_ns)
        objects = [cluster, _binding(cluster, who), config, _binding(config, who, kueue_ns)]
    elif role == "runner":
        cluster = _role("ClusterRole", "drakit-runner", [*_INVENTORY, _rule(GROUP, ["deviceclasses"], ["create", "patch"])])
        local = _role("Role", "drakit-runner", _RUNNER, namespace)
        objects = [cluster, _binding(cluster, who), local, _binding(local, who, namespace)]
    else:
        raise ValueError(f"unknown role {role!r}: want one of {', '.join(ROLES)}")
    if who.kind == "ServiceAccount":
        objects.insert(0, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(who.name, who.namespace)})
    return objects
