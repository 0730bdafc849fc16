"""Real Kueue v0.19.2 counts the claims drakit injects into a Job's pod template (issue 17).

The point of injecting at the template level is that Kueue's ``batch/job`` integration builds the
Workload's podSets from the Job's stored ``spec.template``, and its DRA quota
(``pkg/dra/claims.go``, ``GetResourceRequestsForResourceClaimTemplates``) walks each podSet
template's ``resourceClaims``, reads the ResourceClaimTemplate each one names, and charges every
``exactly`` request's ``count`` to the logical resource its DeviceClass is mapped to in the
Configuration's ``resources.deviceClassMappings``. Injection on the Job's CREATE happens before
the Job is stored, so the Workload sees the claims; injection into the Pods, after admission,
would bypass the quota.

For each form (the MutatingAdmissionPolicy of ``drakit admission policy`` and the webhook of
``drakit webhook serve``), with the session's Kueue mapping the profile's DeviceClass to
:data:`INJECTION_RESOURCE` and a ClusterQueue holding 3 of it, two Jobs labelled with the profile
(2 devices each) and for the LocalQueue, whose manifests name no claim:

* the stored Job is suspended by Kueue and carries the injected claim in its pod template;
* the first Workload's podSet template carries it, and Kueue's admission charges 2 of the
  mapped resource (``status.admission.podSetAssignments[].resourceUsage``);
* the second stays suspended with Kueue's reason ("insufficient unused quota …, 1 more needed",
  read from the Workload's events so the check does not race the first Job's end), and its Job
  starts only after the first Workload finished;
* the first Job's pod (kwok plays its kubelet) gets 2 devices from kube-scheduler and finishes;
  only then is the second admitted, charged the same, and run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from datetime import datetime
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from tests.integration.kube import Cluster
from tests.integration.kueue import INJECTION_PROFILE, INJECTION_RESOURCE, KUEUE_API, KueueManager
from tests.integration.test_admission_cluster import FORMS, Forms, _job
from tests.integration.test_kubernetes_executor import ClaimObserver, fake_nodes, kwok
from tests.integration.test_profiles_cluster import compiled

pytestmark = pytest.mark.cluster
__all__ = ["fake_nodes", "kwok"]  # the fixtures, imported

PROFILE_YAML = f"""\
apiVersion: drakit.dev/v1alpha1
kind: Profile
metadata:
  name: {INJECTION_PROFILE}
extends: nvidia-base
spec:
  count: 2
  memory:
    max: 32GB
"""
QUOTA = 3  # one Job's 2 devices fit, a second Job's do not
INJECTED = [{"name": "gpus", "resourceClaimTemplateName": INJECTION_PROFILE}]


@pytest.fixture(scope="module")
def profile_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("kq-profile") / f"{INJECTION_PROFILE}.yaml"
    path.write_text(PROFILE_YAML, encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def injector(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory, profile_file: str) -> Iterator[Forms]:
    forms = Forms(cluster, tmp_path_factory.mktemp("kq-admission"), profiles=(profile_file,),
                  probes=(INJECTION_PROFILE, INJECTION_PROFILE))
    try:
        yield forms
    finally:
        forms.stop_server()


def _workload_of(cluster: Cluster, ns: str, job: str) -> dict[str, Any] | None:
    uid = (cluster.get("batch/v1", "Job", job, ns) or {}).get("metadata", {}).get("uid")
    return next((w for w in cluster.list_objects(KUEUE_API, "Workload", ns)
                 if any(o.get("uid") == uid for o in w["metadata"].get("ownerReferences") or [])), None)


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), None)


def _since(obj: dict[str, Any], kind: str) -> datetime | None:
    c = _condition(obj, kind)
    if c is None or c["status"] != "True":
        return None
    return datetime.fromisoformat(c["lastTransitionTime"].replace("Z", "+00:00"))


def _usage(workload: dict[str, Any]) -> list[dict[str, str]]:
    """What Kueue charged, per podSet."""
    return [dict(a.get("resourceUsage") or {}) for a in workload["status"]["admission"]["podSetAssignments"]]


def _events(cluster: Cluster, ns: str, name: str) -> list[dict[str, Any]]:
    return [e for e in cluster.list_objects("v1", "Event", ns)
            if (e.get("involvedObject") or {}).get("name") == name
            and (e.get("involvedObject") or {}).get("kind") == "Workload"]


@pytest.mark.parametrize("form", FORMS)
def test_kueue_counts_the_injected_claims(
    cluster: Cluster, kueue: KueueManager, fake_nodes: list[dict[str, Any]], injector: Forms,
    profile_file: str, form: str,
) -> None:
    cq, flavor = f"kq-{form}", f"kq-{form}"
    queue_objects = [
        {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": flavor}},
        {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": {"name": cq},
         "spec": {"namespaceSelector": {}, "resourceGroups": [{
             "coveredResources": [INJECTION_RESOURCE],
             "flavors": [{"name": flavor, "resources": [{"name": INJECTION_RESOURCE, "nominalQuota": QUOTA}]}]}]}},
    ]  # fmt: skip
    for obj in queue_objects:
        cluster.apply(obj)
    try:
        with cluster.namespace(f"kq-{form}") as ns, ClaimObserver(cluster, ns) as observer:
            objs = [m for m in compiled(ns, profile_file) if m["kind"] != "PodTemplate"]
            cluster.apply_all(objs)
            cluster.apply({"apiVersion": KUEUE_API, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": ns},
                           "spec": {"clusterQueue": cq}})  # fmt: skip
            try:
                with injector.installed(form, ns):
                    _check_counted(cluster, ns, observer)
            finally:
                for m in objs:
                    if m["kind"] == "DeviceClass":
                        cluster.delete(m)
    finally:
        for obj in reversed(queue_objects):
            with suppress(ApiException):
                cluster.delete(obj)


def _check_counted(cluster: Cluster, ns: str, observer: ClaimObserver) -> None:
    first = cluster.create(_job("first", INJECTION_PROFILE, "lq"), ns)
    # Stored as Kueue's webhook and drakit's injector left it: suspended, the claim in the template.
    assert first["spec"]["suspend"] is True
    template = first["spec"]["template"]["spec"]
    assert template["resourceClaims"] == INJECTED
    assert [c.get("resources", {}).get("claims") for c in template["containers"]] == [None, [{"name": "gpus"}]]

    def admitted(job: str) -> dict[str, Any] | None:
        wl = _workload_of(cluster, ns, job)
        return wl if wl is not None and _since(wl, "Admitted") else None

    wl_first = cluster.wait_for("Kueue to admit the first Job", lambda: admitted("first"), timeout=90)
    assert wl_first["spec"]["podSets"][0]["template"]["spec"]["resourceClaims"] == INJECTED
    assert _usage(wl_first) == [{INJECTION_RESOURCE: "2"}], wl_first["status"]

    assert cluster.create(_job("second", INJECTION_PROFILE, "lq"), ns)["spec"]["suspend"] is True
    wl_second = cluster.wait_for("the second Job's Workload", lambda: _workload_of(cluster, ns, "second"), timeout=60)

    def finished_first() -> dict[str, Any] | None:
        wl = _workload_of(cluster, ns, "first")
        return wl if wl is not None and _since(wl, "Finished") else None

    wl_first = cluster.wait_for("the first Job to finish", finished_first, timeout=120)
    wl_second = cluster.wait_for("Kueue to admit the second Job", lambda: admitted("second"), timeout=90)
    assert _usage(wl_second) == [{INJECTION_RESOURCE: "2"}], wl_second["status"]
    first_done, second_admitted = _since(wl_first, "Finished"), _since(wl_second, "Admitted")
    assert first_done is not None and second_admitted is not None and second_admitted >= first_done
    # The Job controller started it (cleared the suspension) only after that.
    second_job = cluster.get("batch/v1", "Job", "second", ns) or {}
    started = datetime.fromisoformat(second_job["status"]["startTime"].replace("Z", "+00:00"))
    assert started >= first_done, second_job["status"]

    # Why the second waited, as Kueue said it while the first held the quota.
    name = wl_second["metadata"]["name"]
    notes = [e.get("message") or "" for e in _events(cluster, ns, name) if e.get("reason") == "Pending"]
    want = f"insufficient unused quota for {INJECTION_RESOURCE} in flavor"
    assert any(want in n and "1 more needed" in n for n in notes), notes

    def finished_second() -> bool:
        wl = _workload_of(cluster, ns, "second")
        return wl is not None and _since(wl, "Finished") is not None

    cluster.wait_for("the second Job to finish", finished_second, timeout=120)
    # kube-scheduler allocated each Job's pod the profile's 2 devices (the claims are gone with the pods).
    allocated = {name: len(c["status"]["allocation"]["devices"]["results"]) for name, c in observer.seen.items()}
    assert sorted(allocated.values()) == [2, 2], allocated
    assert all(n.startswith(("first-", "second-")) for n in allocated), allocated
