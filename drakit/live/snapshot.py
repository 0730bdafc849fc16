"""A live cluster as a :class:`ClusterSnapshot`: the kinds explain, allocate and simulate read.

Cluster-scoped kinds (Nodes, DeviceClasses, ResourceSlices, DeviceTaintRules) are read whole;
Pods, Events and claim templates in one namespace or all; ResourceClaims in all (see :class:`Scope`).  ``-l``
narrows the Pods only: a pod's claims, classes and devices are what it is explained against,
whatever their labels.  Lists are paged (``limit``/``continue``, 500 a page as kubectl pages)
and parsed from raw JSON straight into wire dicts; kinds are read concurrently, because the
server's encoding and the client's decoding then overlap.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from drakit.inventory.snapshot import ClusterSnapshot, Provenance
from drakit.live.client import RESOURCE_V1, RESOURCES, ClusterClient, ClusterError, ErrorCode, Obj, ServerInfo

CLUSTER_KINDS = ("Node", "DeviceClass", "ResourceSlice", "DeviceTaintRule")
NAMESPACED_KINDS = ("ResourceClaimTemplate", "ResourceClaim", "Pod", "Event")
PAGE = 500


@dataclass(frozen=True)
class Scope:
    """``-n NS`` (``namespace``), ``-A`` (``None``), ``-l`` (``pod_selector``), and the kinds a verb needs.

    The namespace narrows Pods, Events and ResourceClaimTemplates.  ResourceClaims are read in
    every namespace whenever the identity may: a claim allocated anywhere holds its devices,
    and a pod's explanation must see them busy.
    """

    namespace: str | None = "default"
    pod_selector: str = ""
    kinds: frozenset[str] | None = None

    def describe(self) -> str:
        where = f"namespace {self.namespace}" if self.namespace else "all namespaces"
        return where + (f", pods -l {self.pod_selector}" if self.pod_selector else "")

    def wants(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds


def minor_release(git_version: str) -> str | None:
    """``1.35`` for ``v1.35.4`` (or a vendor's ``v1.35.4-eks.1``); ``None`` when it names no release."""
    m = re.match(r"v?(\d+)\.(\d+)", git_version)
    return f"{int(m[1])}.{int(m[2])}" if m else None


def require_dra(info: ServerInfo) -> None:
    """Refuse a server without ``resource.k8s.io/v1``, naming the version found."""
    if info.resource_v1:
        return
    found = info.git_version or "an unknown version"
    older = ""
    minor = minor_release(found)
    if minor:
        older = " (older than 1.34)" if tuple(map(int, minor.split("."))) < (1, 34) else " (it is disabled there)"
    raise ClusterError(
        ErrorCode.UNSUPPORTED,
        f"the cluster runs Kubernetes {found}, which does not serve resource.k8s.io/v1{older}",
        hint="drakit needs DRA's v1 API: Kubernetes 1.34 or newer with resource.k8s.io/v1 enabled",
    )


def list_all(client: ClusterClient, kind: str, *, namespace: str | None = None, label_selector: str = "",
             field_selector: str = "", limit: int = PAGE) -> tuple[list[Obj], str]:
    """Every object of ``kind``, page after page; the resourceVersion of the first page."""
    items: list[Obj] = []
    token = ""
    version = ""
    while True:
        page = client.list(kind, namespace=namespace, label_selector=label_selector, field_selector=field_selector,
                           limit=limit, continue_token=token)
        items.extend(page.items)
        version = version or page.resource_version
        token = page.continue_token
        if not token:
            return items, version


def read_snapshot(client: ClusterClient, scope: Scope = Scope(), *, source: str = "cluster", workers: int = 4,
                  info: ServerInfo | None = None, warn: Callable[[str], None] | None = None) -> ClusterSnapshot:
    """The snapshot of what ``scope`` sees, checked for DRA v1 first.

    An identity that may read claims in its namespace only gets a snapshot with those claims
    and a warning through ``warn``: devices that claims elsewhere hold then look free.
    """
    info = info or client.server_info()
    require_dra(info)
    jobs: list[tuple[str, str | None, str]] = [(k, None, "") for k in CLUSTER_KINDS if scope.wants(k) and _served(k, info)]
    jobs += [(k, None if k == "ResourceClaim" else scope.namespace, scope.pod_selector if k == "Pod" else "")
             for k in NAMESPACED_KINDS if scope.wants(k)]
    started = time.time()

    def one(job: tuple[str, str | None, str]) -> tuple[list[Obj], str]:
        kind, ns, selector = job
        try:
            return list_all(client, kind, namespace=ns, label_selector=selector)
        except ClusterError as e:
            if e.code is not ErrorCode.FORBIDDEN or kind != "ResourceClaim" or ns is not None or not scope.namespace:
                raise
        if warn is not None:
            warn(f"may not list resourceclaims in every namespace: reading namespace {scope.namespace} only, "
                 "so devices that claims elsewhere hold look free")
        return list_all(client, kind, namespace=scope.namespace)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(one, jobs))
    versions = [int(v) for _, v in results if v.isdigit()]
    objects: Iterator[Obj] = (o for items, _ in results for o in items)
    provenance = Provenance(f"{source} ({scope.describe()})", started, str(max(versions)) if versions else "")
    return ClusterSnapshot.from_objects(objects, provenance=provenance)


def _served(kind: str, info: ServerInfo) -> bool:
    # DeviceTaintRule reached v1 in 1.37; an older v1 server lacks it and that is fine.
    return RESOURCES[kind].api_version != RESOURCE_V1 or not info.served_kinds or kind in info.served_kinds


__all__ = ["CLUSTER_KINDS", "NAMESPACED_KINDS", "Scope", "list_all", "read_snapshot", "require_dra"]
