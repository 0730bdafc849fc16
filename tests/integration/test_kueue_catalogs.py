"""Compiled queue catalogs against the real API server with Kueue v0.19.2's CRDs and webhooks.

1. Every example catalog's compiled objects (``drakit queue compile``) are created for real:
   the CRD schemas, their CEL rules and Kueue's validating webhooks all accept them, each
   ClusterQueue becomes Active, and the Configuration patch, merged into a manager
   Configuration, passes Kueue's own loading, validation and DRA mapper set-up.
2. Objects Kueue must refuse are refused, with the field path, so the check above can fail.
3. A queued Job is suspended by Kueue's webhook and gets a Workload whose DRA usage is counted
   through ``deviceClassMappings``.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from tests.integration.gating import require
from tests.integration.kube import Cluster
from tests.integration.kueue import KUEUE_API, KueueManager, configuration_verdict
from tests.integration.kueue_scenario import (
    DEVICE_CLASS_MAPPINGS,
    QUEUE_NAME_LABEL,
    RESOURCE,
    cluster_objects,
    kueue_objects,
)

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]


def _suffix(obj: dict[str, Any], suffix: str) -> dict[str, Any]:
    """The same object under a unique name, so runs and catalogs never collide."""
    out = copy.deepcopy(obj)
    out["metadata"]["name"] = f"{out['metadata']['name']}-{suffix}"
    return out


@pytest.fixture
def created(cluster: Cluster) -> Iterator[list[dict[str, Any]]]:
    """Objects a test created; deleted afterwards (namespaced ones go with their namespace)."""
    objs: list[dict[str, Any]] = []
    yield objs
    for obj in reversed(objs):
        with suppress(ApiException):
            cluster.delete(obj)


def _example_catalogs() -> list[Path]:
    return sorted((REPO / "drakit" / "queues" / "examples").glob("*.yaml"))


def test_scenario_objects_accepted(cluster: Cluster, kueue: KueueManager) -> None:
    """The agreement scenario's own Kueue objects pass server-side validation (dry run)."""
    for obj in [*kueue_objects(held=False), *cluster_objects()]:
        if obj.get("metadata", {}).get("namespace"):
            continue  # namespaced ones need the scenario's namespaces; covered by the agreement run
        rejection = cluster.dry_run_create(_suffix(obj, "dry"))
        assert rejection is None, f"{obj['kind']} {obj['metadata']['name']}: {rejection}"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        pytest.param(
            lambda cq: (
                cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(borrowingLimit="1")
                or cq["spec"].pop("cohortName", None)
            ),
            "spec",
            id="borrowing-limit-without-cohort",
        ),
        pytest.param(
            lambda cq: cq["spec"].update(queueingStrategy="Fifo"), "spec.queueingStrategy", id="bad-strategy"
        ),
        pytest.param(
            lambda cq: cq["spec"]["resourceGroups"][0]["coveredResources"].pop(),
            "spec.resourceGroups[0]",
            id="quota-for-uncovered-resource",
        ),
        pytest.param(lambda cq: cq["spec"].update(colour="red"), "spec.colour", id="unknown-field"),
    ],
)
def test_invalid_cluster_queue_refused(
    cluster: Cluster, kueue: KueueManager, mutate: Any, field: str
) -> None:
    cq = next(
        o for o in kueue_objects(held=False) if o["kind"] == "ClusterQueue" and o["spec"].get("cohortName")
    )
    bad = _suffix(cq, "bad")
    mutate(bad)
    rejection = cluster.dry_run_create(bad)
    assert rejection is not None, "Kueue accepted an invalid ClusterQueue"
    assert any(f.startswith(field) for f in rejection.fields) or field in rejection.message, rejection


@pytest.mark.parametrize("catalog", _example_catalogs(), ids=lambda p: p.stem)
def test_compiled_catalog_created(
    cluster: Cluster, kueue: KueueManager, created: list[dict[str, Any]], catalog: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    queues = require("drakit.queues", "compile_catalog", "load_catalog_text")
    objects = queues.compile_catalog(queues.load_catalog_text(catalog.read_text(), catalog.name).catalog)
    patch, objects = objects[-1], objects[:-1]
    assert patch["kind"] == "Configuration" and set(patch) == {"apiVersion", "kind", "resources"}, patch
    assert set(patch["resources"]) == {"deviceClassMappings"}, patch
    # Kueue's own loader, defaulting and validation (config.Validate checks every mapping, CEL
    # selectors of counter sources compiled) accept the patch merged into a manager
    # Configuration; it then stops at its first API call (no server on that port).
    checker = KueueManager(
        kueue.directory, kueue.plane, tmp_path, tuple(patch["resources"]["deviceClassMappings"])
    )
    verdict = configuration_verdict(checker.check_configuration())
    assert verdict == "accepted", verdict
    namespaces = sorted({o["metadata"]["namespace"] for o in objects if o["metadata"].get("namespace")})
    for ns in namespaces:
        if cluster.get("v1", "Namespace", ns) is None:
            created.append(
                cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            )
    for obj in objects:
        if cluster.get(
            obj["apiVersion"], obj["kind"], obj["metadata"]["name"], obj["metadata"].get("namespace")
        ):
            continue  # another example already created a shared one (a flavor, a priority class)
        try:
            created.append(cluster.create(obj))
        except ApiException as exc:
            pytest.fail(
                f"{catalog.name}: {obj['kind']} {obj['metadata']['name']} refused: {exc.body}", pytrace=False
            )
    # Kueue itself takes them: every ClusterQueue becomes Active.
    for cq in (o for o in objects if o["kind"] == "ClusterQueue"):
        name = cq["metadata"]["name"]

        def active(name: str = name) -> dict[str, Any] | None:
            obj = cluster.get(KUEUE_API, "ClusterQueue", name) or {}
            conds = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}
            return conds.get("Active")

        cond = cluster.wait_for(f"ClusterQueue {name} Active condition", active, timeout=30)
        assert cond["status"] == "True", cond


def test_queued_job_suspended_and_counted(
    cluster: Cluster, kueue: KueueManager, created: list[dict[str, Any]]
) -> None:
    """Kueue's defaulting webhook suspends a labelled Job; its Workload counts the DRA request
    through the mapping: 2 devices × 3 pods against a quota of 4 is refused with the numbers."""
    suffix = uuid.uuid4().hex[:6]
    ns = f"kq-{suffix}"
    created.append(cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
    for obj in cluster_objects():
        if (
            obj["kind"] == "DeviceClass"
            and cluster.get(obj["apiVersion"], "DeviceClass", obj["metadata"]["name"]) is None
        ):
            created.append(cluster.create(obj))
    flavor = {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": f"kq-{suffix}"}}
    resource = RESOURCE["gpu-48g"]
    cq = {
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": {"name": f"kq-{suffix}"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": [resource],
                    "flavors": [
                        {"name": f"kq-{suffix}", "resources": [{"name": resource, "nominalQuota": "4"}]}
                    ],
                }
            ],
        },
    }
    lq = {"apiVersion": KUEUE_API, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": ns},
          "spec": {"clusterQueue": f"kq-{suffix}"}}  # fmt: skip
    for obj in (flavor, cq, lq):
        created.append(cluster.create(obj))
    rct = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "two", "namespace": ns},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu-48g", "count": 2}}]
                }
            }
        },
    }
    cluster.create(rct)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "queued", "namespace": ns, "labels": {QUEUE_NAME_LABEL: "lq"}},
        "spec": {
            "parallelism": 3,
            "completions": 3,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "pause", "resources": {"claims": [{"name": "g"}]}}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "two"}],
                }
            },
        },
    }
    stored = cluster.create(job)
    assert stored["spec"]["suspend"] is True, "Kueue's webhook did not suspend the queued Job"

    def pending_condition() -> dict[str, Any] | None:
        for wl in cluster.list_objects(KUEUE_API, "Workload", ns):
            for c in (wl.get("status") or {}).get("conditions") or []:
                if c["type"] == "QuotaReserved" and c["status"] == "False" and c.get("message"):
                    return dict(c)
        return None

    cond = cluster.wait_for("Workload QuotaReserved=False with a message", pending_condition, timeout=30)
    assert cond["reason"] == "Pending", cond
    assert resource in cond["message"] and "6" in cond["message"] and "4" in cond["message"], cond["message"]
    assert {m["name"] for m in DEVICE_CLASS_MAPPINGS} >= {resource}


@pytest.mark.parametrize(
    "mapping",
    [
        pytest.param({"name": "Bad Name!", "deviceClassNames": ["gpu-48g"]}, id="invalid-resource-name"),
        pytest.param({"name": "example.com/x", "deviceClassNames": []}, id="no-device-classes"),
    ],
)
def test_configuration_check_refuses(kueue: KueueManager, tmp_path: Path, mapping: dict[str, Any]) -> None:
    """The check above can fail: Kueue refuses a broken mapping before its first API call."""
    verdict = configuration_verdict(
        KueueManager(kueue.directory, kueue.plane, tmp_path, (mapping,)).check_configuration()
    )
    assert verdict.startswith("refused: Unable to validate the configuration"), verdict
