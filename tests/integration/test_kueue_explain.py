"""Live queue explain against real Kueue: Workloads put into known states (admitted, waiting for
quota behind another, parked Inadmissible by an unmapped DeviceClass), explained from their
status, and recorded in ``fixtures/kueue_workloads.json`` for the unit tests
(``DRAKIT_RECORD=1`` rewrites it).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from drakit.queues.workload_status import LiveVerdict, explain_workload
from tests.integration.controlplane import ControlPlane
from tests.integration.kube import Cluster
from tests.integration.kueue import KUEUE_API, KueueManager
from tests.integration.kueue_scenario import (
    DEVICE_CLASS_MAPPINGS,
    QUEUE_NAME_LABEL,
    RESOURCE,
    cluster_objects,
)

pytestmark = pytest.mark.cluster

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "kueue_workloads.json"
UNMAPPED = "gpu-unmapped"


def _job(name: str, ns: str, template: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "labels": {QUEUE_NAME_LABEL: "lq"}},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "pause", "resources": {"claims": [{"name": "g"}]}}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": template}],
                }
            }
        },
    }


def _template(name: str, ns: str, device_class: str, count: int) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {"name": "gpu", "exactly": {"deviceClassName": device_class, "count": count}}
                    ]
                }
            }
        },
    }


@pytest.fixture(scope="module")
def live_states(cluster: Cluster, kueue: KueueManager) -> Iterator[dict[str, Any]]:
    """A StrictFIFO ClusterQueue with 2 × gpu-48g: ``holder`` takes both, ``first`` and ``second``
    wait behind it, ``unmapped`` asks for a DeviceClass no mapping names."""
    suffix = uuid.uuid4().hex[:6]
    ns, cq_name = f"kx-{suffix}", f"kx-{suffix}"
    resource = RESOURCE["gpu-48g"]
    cluster_scoped: list[dict[str, Any]] = [
        {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": cq_name}},
        {
            "apiVersion": KUEUE_API,
            "kind": "ClusterQueue",
            "metadata": {"name": cq_name},
            "spec": {
                "queueingStrategy": "StrictFIFO",
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                "resourceGroups": [
                    {
                        "coveredResources": [resource],
                        "flavors": [
                            {"name": cq_name, "resources": [{"name": resource, "nominalQuota": "2"}]}
                        ],
                    }
                ],
            },
        },
    ]
    classes = [o for o in cluster_objects() if o["kind"] == "DeviceClass"]
    classes.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": UNMAPPED},
            "spec": {},
        }
    )
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    made: list[dict[str, Any]] = []
    for obj in [*classes, *cluster_scoped]:
        if cluster.get(obj["apiVersion"], obj["kind"], obj["metadata"]["name"]) is None:
            made.append(cluster.create(obj))
    try:
        cluster.create({"apiVersion": KUEUE_API, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": ns},
                        "spec": {"clusterQueue": cq_name}})  # fmt: skip
        cluster.create(_template("two", ns, "gpu-48g", 2))
        cluster.create(_template("one", ns, "gpu-48g", 1))
        cluster.create(_template("odd", ns, UNMAPPED, 1))
        jobs = {"holder": "two", "first": "one", "second": "one", "unmapped": "odd"}
        def workload_of(job: str) -> dict[str, Any] | None:
            return next((w for w in cluster.list_objects(KUEUE_API, "Workload", ns)
                         if w["metadata"]["ownerReferences"][0]["name"] == job), None)  # fmt: skip

        for name, template in jobs.items():
            cluster.create(_job(name, ns, template))
            if name in ("holder", "first"):
                # StrictFIFO orders by the *Workload's* creation second, which the Job reconciler
                # sets: under load it lags, so wait for each before the next Job is created.
                cluster.wait_for(f"the Workload of {name}", lambda name=name: workload_of(name), timeout=60)
                time.sleep(1.1)

        def settled() -> dict[str, Any] | None:
            wls = {
                o["metadata"]["ownerReferences"][0]["name"]: o
                for o in cluster.list_objects(KUEUE_API, "Workload", ns)
            }
            conds = {
                j: {c["type"]: c for c in (w.get("status") or {}).get("conditions") or []}
                for j, w in wls.items()
            }
            ready = (
                set(wls) == set(jobs)
                and conds["holder"].get("QuotaReserved", {}).get("status") == "True"
                and conds["unmapped"].get("Requeued", {}).get("status") == "False"
                and "QuotaReserved" in conds["first"]
            )
            return wls if ready else None

        workloads = cluster.wait_for("Workloads in their states", settled, timeout=60)
        time.sleep(2)  # let ClusterQueue status catch up with the admission
        state = {
            "workloads": [
                cluster.get(KUEUE_API, "Workload", w["metadata"]["name"], ns) for w in workloads.values()
            ],
            "clusterQueues": [cluster.get(KUEUE_API, "ClusterQueue", cq_name)],
            "localQueues": cluster.list_objects(KUEUE_API, "LocalQueue", ns),
            "deviceClassMappings": list(DEVICE_CLASS_MAPPINGS),
        }
        yield state
    finally:
        with suppress(ApiException):
            cluster.core.delete_namespace(ns)
        for obj in reversed(made):
            with suppress(ApiException):
                cluster.delete(obj)


def _explain(state: dict[str, Any], job: str, mappings: list[dict[str, Any]] | None = None) -> Any:
    wl = next(w for w in state["workloads"] if w["metadata"]["ownerReferences"][0]["name"] == job)
    return explain_workload(
        wl,
        cluster_queues=state["clusterQueues"],
        local_queues=state["localQueues"],
        workloads=state["workloads"],
        device_class_mappings=state["deviceClassMappings"] if mappings is None else mappings,
    )


def test_live_explain_of_real_states(live_states: dict[str, Any]) -> None:
    if os.environ.get("DRAKIT_RECORD") == "1" or not FIXTURE.exists():
        FIXTURE.write_text(json.dumps(_scrub(live_states), indent=1, sort_keys=True) + "\n")
    holder = _explain(live_states, "holder")
    assert holder.verdict is LiveVerdict.ADMITTED and "2 × gpu-48g" in holder.summary, holder.text()
    first = _explain(live_states, "first")
    assert first.verdict is LiveVerdict.WAITING_FOR_QUOTA, first.text()
    assert "quota 2 × gpu-48g, 2 used by jobs holder" in first.summary, first.text()
    assert "insufficient" in first.kueue_message, first.text()
    second = _explain(live_states, "second")
    assert "1 ahead of you (StrictFIFO)" in second.summary, second.text()
    unmapped = _explain(live_states, "unmapped")
    assert unmapped.verdict is LiveVerdict.INADMISSIBLE and UNMAPPED in unmapped.kueue_message, (
        unmapped.text()
    )
    # The same parked Workload once the class is mapped: the 13969 state, with its remedy.
    fixed = [*live_states["deviceClassMappings"], {"name": "example.com/odd", "deviceClassNames": [UNMAPPED]}]
    stuck = _explain(live_states, "unmapped", fixed)
    assert stuck.verdict is LiveVerdict.STUCK_INADMISSIBLE and "13969" in stuck.text(), stuck.text()


def test_queue_explain_verb_reads_the_live_cluster(
    live_states: dict[str, Any], control_plane: ControlPlane, tmp_path: Path
) -> None:
    """``drakit queue explain job/NAME`` without -f, through the real client: the suspended Job
    over quota waits (exit 3) with the ClusterQueue's numbers; the admitted one exits 0."""
    from drakit.cli.testing import run

    kubeconfig = str(control_plane.write_kubeconfig(tmp_path / "admin.kubeconfig"))
    ns = live_states["localQueues"][0]["metadata"]["namespace"]
    first = run("queue", "explain", "job/first", "-n", ns, "--kubeconfig", kubeconfig, "-o", "json")
    assert first.exit_code == 3, first.stdout + first.stderr
    got = json.loads(first.stdout)
    assert got["verdict"] == LiveVerdict.WAITING_FOR_QUOTA.value, got
    assert "quota 2 × example.com/gpu-48g, 2 used by jobs holder" in got["summary"], got
    assert "insufficient unused quota" in got["kueueMessage"], got
    holder = run("queue", "explain", "job/holder", "-n", ns, "--kubeconfig", kubeconfig)
    assert holder.exit_code == 0 and "is admitted" in holder.stdout, holder.stdout + holder.stderr
    unmapped = run("queue", "explain", "job/unmapped", "-n", ns, "--kubeconfig", kubeconfig, "-o", "json")
    assert unmapped.exit_code == 3 and json.loads(unmapped.stdout)["verdict"] == LiveVerdict.INADMISSIBLE.value


def test_queue_explainer_role_is_enough(
    live_states: dict[str, Any], cluster: Cluster, control_plane: ControlPlane, tmp_path: Path
) -> None:
    """A ServiceAccount holding only ``drakit rbac queue-explainer`` runs ``queue explain``: Workloads
    listed cluster-wide (no warning), the manager's ConfigMap read (the mapped class turns the
    parked Workload into StuckInadmissible); one without it is refused (exit 6)."""
    import yaml
    from kubernetes import client as k8s

    from drakit.cli.testing import run
    from drakit.live.kueue import CONFIG_MAP
    from drakit.live.rbac import Subject, manifests

    ns = live_states["localQueues"][0]["metadata"]["namespace"]
    kueue_ns, cm_name, key = CONFIG_MAP
    if cluster.get("v1", "Namespace", kueue_ns) is None:
        cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": kueue_ns}})
    mappings = [*DEVICE_CLASS_MAPPINGS, {"name": "example.com/odd", "deviceClassNames": [UNMAPPED]}]
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": cm_name, "namespace": kueue_ns},
                  "data": {key: yaml.safe_dump({"resources": {"deviceClassMappings": mappings}})}}  # fmt: skip
    objects = manifests("queue-explainer", namespace=ns, subject=Subject("ServiceAccount", "explainer", ns))
    cluster.apply_all([config_map, *objects])
    request = k8s.AuthenticationV1TokenRequest(spec=k8s.V1TokenRequestSpec(audiences=[], expiration_seconds=3600))

    def kubeconfig(sa: str) -> str:
        token = cluster.core.create_namespaced_service_account_token(sa, ns, request).status.token
        return str(control_plane.write_kubeconfig(tmp_path / f"{sa}.kubeconfig", token=str(token)))

    try:
        explainer = kubeconfig("explainer")
        first = run("queue", "explain", "job/first", "-n", ns, "--kubeconfig", explainer, "-o", "json")
        assert first.exit_code == 3 and first.stderr == "", first.stdout + first.stderr
        assert json.loads(first.stdout)["verdict"] == LiveVerdict.WAITING_FOR_QUOTA.value
        stuck = run("queue", "explain", "job/unmapped", "-n", ns, "--kubeconfig", explainer, "-o", "json")
        assert stuck.exit_code == 3, stuck.stdout + stuck.stderr
        assert json.loads(stuck.stdout)["verdict"] == LiveVerdict.STUCK_INADMISSIBLE.value
        cluster.core.create_namespaced_service_account(ns, k8s.V1ServiceAccount(metadata=k8s.V1ObjectMeta(name="nobody")))
        refused = run("queue", "explain", "job/first", "-n", ns, "--kubeconfig", kubeconfig("nobody"))
        assert refused.exit_code == 6 and "forbidden" in refused.stderr, refused.stderr
    finally:
        for obj in [config_map, *objects]:
            cluster.delete(obj, obj["metadata"].get("namespace"))


def _scrub(state: dict[str, Any]) -> dict[str, Any]:
    """The recorded objects without fields that only add churn (managedFields, uids stay)."""

    def clean(obj: dict[str, Any]) -> dict[str, Any]:
        out = json.loads(json.dumps(obj))
        (out.get("metadata") or {}).pop("managedFields", None)
        return out

    return {k: [clean(o) for o in v] if k != "deviceClassMappings" else v for k, v in state.items()}
