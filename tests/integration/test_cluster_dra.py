"""drakit against a real control plane: the resourceclaim controller, kube-scheduler's
DynamicResources plugin and the API server's validation are the ground truth.

1. A pod with a claim template is scheduled for real; drakit's allocator, given the same
   objects, must pick the same devices on the node the pod landed on.
2. A pod whose selector matches nothing stays Pending; the scheduler's condition and events are
   recorded verbatim in ``fixtures/`` (``DRAKIT_RECORD=1`` rewrites them) for the explain work.
3. A corpus of valid and invalid objects is dry-run created; the API server's verdicts and field
   paths must agree with ``drakit.model.validate``.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from drakit.model.codec import KubeDumper
from tests.integration.controlplane import ControlPlane, k8s_version
from tests.integration.gating import require
from tests.integration.kube import Cluster

pytestmark = pytest.mark.cluster

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
FIXTURES = HERE / "fixtures"
DRIVER = "gpu.example.com"
NODES = ("gpu-node-a", "gpu-node-b")
EXPECT = "test.drakit.io/expect"
V1 = "resource.k8s.io/v1"


# --------------------------------------------------------------------------------- inventory


def _gpu(name: str, model: str, numa: int, memory: str) -> dict[str, Any]:
    return {
        "name": name,
        "attributes": {
            "model": {"string": model},
            "numa": {"int": numa},
            "index": {"int": int(name.rsplit("-", 1)[1])},
            "driverVersion": {"version": "550.54.15"},
        },
        "capacity": {"memory": {"value": memory}},
    }


# Two H100s share a NUMA node on each machine, but never the first H100 in device order:
# the matchAttribute constraint forces the allocator to backtrack.
NODE_GPUS: dict[str, list[dict[str, Any]]] = {
    "gpu-node-a": [
        _gpu("gpu-0", "A100", 0, "40Gi"),
        _gpu("gpu-1", "H100", 0, "80Gi"),
        _gpu("gpu-2", "H100", 1, "80Gi"),
        _gpu("gpu-3", "H100", 1, "80Gi"),
    ],
    "gpu-node-b": [
        _gpu("gpu-0", "H100", 0, "80Gi"),
        _gpu("gpu-1", "A100", 1, "40Gi"),
        _gpu("gpu-2", "H100", 1, "80Gi"),
        _gpu("gpu-3", "H100", 1, "80Gi"),
    ],
}

DEVICE_CLASSES: list[dict[str, Any]] = [
    {
        "apiVersion": V1,
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {
            "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
            "config": [
                {"opaque": {"driver": DRIVER, "parameters": {"kind": "GpuClassConfig", "mode": "exclusive"}}}
            ],
        },
    },
    {
        "apiVersion": V1,
        "kind": "DeviceClass",
        "metadata": {"name": f"large-memory.{DRIVER}"},
        "spec": {
            "selectors": [
                {"cel": {"expression": f'device.driver == "{DRIVER}"'}},
                {
                    "cel": {
                        "expression": f'device.capacity["{DRIVER}"].memory.compareTo(quantity("64Gi")) >= 0'
                    }
                },
            ]
        },
    },
]


def _slice(node: str) -> dict[str, Any]:
    return {
        "apiVersion": V1,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": NODE_GPUS[node],
        },
    }


@pytest.fixture(scope="module")
def gpu_inventory(cluster: Cluster) -> Iterator[dict[str, Any]]:
    """Two kubelet-less GPU nodes, their ResourceSlices and the DeviceClasses (removed afterwards)."""
    objects: list[dict[str, Any]] = [*DEVICE_CLASSES, *(_slice(n) for n in NODES)]
    nodes = [cluster.add_node(n, {"gpu.example.com/present": "true"}) for n in NODES]
    cluster.apply_all(objects)
    try:
        yield {"nodes": nodes, "objects": objects}
    finally:
        for obj in objects:
            cluster.delete(obj)
        for n in NODES:
            cluster.delete({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}})


def cluster_features(plane: ControlPlane) -> Any:
    """drakit Features matching the gates the control plane was started with."""
    features_mod = require("drakit.features", "Features", "GATES")
    on = [g for g in plane.gates if g in features_mod.GATES]
    return features_mod.Features.for_version(".".join(k8s_version().split(".")[:2])).with_gates(
        ",".join(f"{g}=true" for g in on)
    )


# --------------------------------------------------------------------------------- test 1


TEMPLATE: dict[str, Any] = {
    "apiVersion": V1,
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "h100-pair"},
    "spec": {
        "metadata": {"labels": {"app": "trainer"}, "annotations": {"example.com/purpose": "integration"}},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpus",
                        "exactly": {
                            "deviceClassName": DRIVER,
                            "count": 2,
                            "selectors": [
                                {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "H100"'}}
                            ],
                        },
                    },
                    {
                        "name": "helper",
                        "firstAvailable": [
                            {
                                "name": "a100",
                                "deviceClassName": DRIVER,
                                "selectors": [
                                    {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "A100"'}}
                                ],
                            },
                            {"name": "any", "deviceClassName": f"large-memory.{DRIVER}"},
                        ],
                    },
                ],
                "constraints": [{"requests": ["gpus"], "matchAttribute": f"{DRIVER}/numa"}],
                "config": [
                    {
                        "requests": ["gpus"],
                        "opaque": {"driver": DRIVER, "parameters": {"kind": "GpuConfig", "mps": False}},
                    }
                ],
            }
        },
    },
}


def _pod(name: str, claims: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "resourceClaims": claims,
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example/trainer:1",
                    "resources": {"claims": [{"name": c["name"]} for c in claims]},
                }
            ],
        },
    }


def _canonical(items: list[Mapping[str, Any]] | None) -> list[str]:
    return sorted(json.dumps(i, sort_keys=True) for i in items or [])


def test_scheduler_allocation_matches_drakit(cluster: Cluster, gpu_inventory: dict[str, Any]) -> None:
    with cluster.namespace("alloc") as ns:
        template = cluster.apply(TEMPLATE, ns)
        pod = cluster.apply(_pod("trainer", [{"name": "gpus", "resourceClaimTemplateName": "h100-pair"}]), ns)

        # The resourceclaim controller creates the claim and records it in the pod status.
        def claim_status() -> str | None:
            p = cluster.get("v1", "Pod", "trainer", ns) or {}
            for entry in (p.get("status") or {}).get("resourceClaimStatuses") or []:
                if entry.get("name") == "gpus" and entry.get("resourceClaimName"):
                    return str(entry["resourceClaimName"])
            return None

        claim_name = cluster.wait_for("resourceClaimStatuses of pod trainer", claim_status)
        claim = cluster.get(V1, "ResourceClaim", claim_name, ns)
        assert claim is not None
        meta = claim["metadata"]
        assert claim_name.startswith("trainer-gpus-")
        assert len(claim_name) == len("trainer-gpus-") + 5
        assert meta["annotations"] == {
            "example.com/purpose": "integration",
            "resource.kubernetes.io/pod-claim-name": "gpus",
        }
        assert meta.get("labels") == {"app": "trainer"}
        assert meta["ownerReferences"] == [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "trainer",
                "uid": pod["metadata"]["uid"],
                "controller": True,
            }
        ]  # no blockOwnerDeletion: the 1.37 controller does not set it
        assert claim["spec"] == cluster.get(V1, "ResourceClaimTemplate", "h100-pair", ns)["spec"]["spec"]  # type: ignore[index]
        assert template["spec"]["spec"]["devices"]["requests"][0]["name"] == "gpus"

        # The scheduler allocates, reserves and binds.
        def scheduled() -> tuple[dict[str, Any], dict[str, Any]] | None:
            p = cluster.get("v1", "Pod", "trainer", ns) or {}
            c = cluster.get(V1, "ResourceClaim", claim_name, ns) or {}
            status = c.get("status") or {}
            if p.get("spec", {}).get("nodeName") and status.get("allocation") and status.get("reservedFor"):
                return p, c
            return None

        pod, claim = cluster.wait_for("pod trainer bound with an allocated claim", scheduled, timeout=90)
        node_name = pod["spec"]["nodeName"]
        assert node_name in NODES
        status = claim["status"]
        assert status["reservedFor"] == [
            {"resource": "pods", "name": "trainer", "uid": pod["metadata"]["uid"]}
        ]
        assert "resource.kubernetes.io/delete-protection" in claim["metadata"].get("finalizers", [])
        allocation = status["allocation"]
        # What the real allocator must have done on either node: backtrack past the first H100
        # to the two that share a NUMA node, and satisfy "helper" with its first subrequest.
        a100 = next(d["name"] for d in NODE_GPUS[node_name] if d["attributes"]["model"]["string"] == "A100")
        chosen = sorted((r["request"], r["device"]) for r in allocation["devices"]["results"])
        assert chosen == [("gpus", "gpu-2"), ("gpus", "gpu-3"), ("helper/a100", a100)]
        assert allocation["nodeSelector"]["nodeSelectorTerms"] == [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]

        # drakit's prediction for the same objects on the node the pod landed on.
        allocator = require("drakit.allocator", "allocate")
        require("drakit.selectors", "compile_selector")  # the allocator evaluates selectors with it
        features = cluster_features(cluster.plane)
        node = cluster.get("v1", "Node", node_name)
        slices = cluster.list_objects(V1, "ResourceSlice")
        classes = cluster.list_objects(V1, "DeviceClass")
        in_use = [
            c
            for c in cluster.list_objects(V1, "ResourceClaim")
            if (c.get("status") or {}).get("allocation") and c["metadata"]["uid"] != claim["metadata"]["uid"]
        ]
        to_allocate = copy.deepcopy(claim)
        to_allocate.pop("status", None)
        outcome = allocator.allocate(
            node=node, slices=slices, classes=classes, claims=[*in_use, to_allocate], features=features
        )
        assert outcome.status == "allocated", getattr(outcome, "message", "")
        assert len(outcome.results) == 1
        predicted = outcome.results[0]
        assert _canonical(predicted["devices"]["results"]) == _canonical(allocation["devices"]["results"])
        assert predicted["devices"].get("config") == allocation["devices"].get("config")
        assert predicted.get("nodeSelector") == allocation.get("nodeSelector")


# --------------------------------------------------------------------------------- test 2


def _record_or_compare(path: Path, observed: dict[str, Any]) -> None:
    if os.environ.get("DRAKIT_RECORD") == "1":
        path.write_text(json.dumps(observed, indent=2, sort_keys=True) + "\n")
        return
    if not path.exists():
        pytest.fail(f"{path.name} missing: run with DRAKIT_RECORD=1 to record it", pytrace=False)
    assert observed == json.loads(path.read_text())


def test_unsatisfiable_selector_recorded(cluster: Cluster, gpu_inventory: dict[str, Any]) -> None:
    claim = {
        "apiVersion": V1,
        "kind": "ResourceClaim",
        "metadata": {"name": "no-such-gpu"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": DRIVER,
                            "selectors": [
                                {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "B200"'}}
                            ],
                        },
                    }
                ]
            }
        },
    }
    with cluster.namespace("pending") as ns:
        cluster.apply(claim, ns)
        cluster.apply(_pod("waiting", [{"name": "gpu", "resourceClaimName": "no-such-gpu"}]), ns)

        # A scheduling attempt made before the scheduler's informers saw both nodes would say
        # "0/1 nodes" (or "0/0"); only attempts that considered the whole inventory are recorded.
        considered_all = f"0/{len(NODES)} nodes are available"

        def unschedulable() -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
            p = cluster.get("v1", "Pod", "waiting", ns) or {}
            conditions = [
                c for c in (p.get("status") or {}).get("conditions") or [] if c["type"] == "PodScheduled"
            ]
            if not conditions or not str(conditions[0].get("message", "")).startswith(considered_all):
                return None
            events = [
                e
                for e in cluster.events_for(p)
                if e.get("reason") == "FailedScheduling"
                and str(e.get("message", "")).startswith(considered_all)
            ]
            if conditions[0]["status"] == "False" and events:
                return conditions[0], events
            return None

        condition, events = cluster.wait_for("FailedScheduling for pod waiting", unschedulable, timeout=90)
        pod = cluster.get("v1", "Pod", "waiting", ns)
        assert pod is not None and not pod["spec"].get("nodeName")
        claim_now = cluster.get(V1, "ResourceClaim", "no-such-gpu", ns)
        assert claim_now is not None and not (claim_now.get("status") or {}).get("allocation")

        distinct = {
            json.dumps(
                {k: e.get(k) for k in ("type", "reason", "action", "reportingComponent", "message")},
                sort_keys=True,
            )
            for e in events
        }
        observed = {
            "scenario": "one pod, one claim whose only selector matches no device on the two GPU nodes",
            "kubernetes": k8s_version(),
            "nodes": len(NODES),
            "podScheduled": {k: condition.get(k) for k in ("status", "reason", "message")},
            "events": [json.loads(e) for e in sorted(distinct)],
        }
        _record_or_compare(FIXTURES / "unschedulable-no-matching-device.json", observed)


# --------------------------------------------------------------------------------- test 3


def _corpus() -> list[Any]:
    params = []
    for path in sorted(CORPUS.glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if not doc:
                continue
            params.append(pytest.param(path.name, index, doc, id=f"{path.stem}:{doc['metadata']['name']}"))
    return params


CORPUS_PARAMS = _corpus()


def test_corpus_covers_valid_and_invalid() -> None:
    """The agreement test below is only meaningful with both verdicts present for every kind."""
    kinds: dict[str, set[str]] = {}
    for p in CORPUS_PARAMS:
        doc = p.values[2]
        kinds.setdefault(doc["kind"], set()).add(doc["metadata"]["annotations"][EXPECT])
    assert kinds == {
        k: {"valid", "invalid"}
        for k in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
    }


@pytest.fixture(scope="module")
def corpus_namespace(cluster: Cluster) -> Iterator[str]:
    # The admin-access label lets claims with adminAccess be valid (the API server checks it).
    with cluster.namespace("corpus", {"resource.kubernetes.io/admin-access": "true"}) as ns:
        yield ns


def _drakit_verdict(doc: dict[str, Any], features: Any) -> set[str] | None:
    """None when drakit accepts ``doc``; otherwise the field paths it names."""
    model = require("drakit.model", "validate")
    sources = require("drakit.sources", "load_bundle")
    errors_mod = require("drakit.errors", "InvalidInput")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "object.yaml"
        path.write_text(yaml.dump(Dumper=KubeDumper, data=doc, sort_keys=False))
        try:
            bundle = sources.load_bundle([str(path)])
        except errors_mod.InvalidInput as exc:
            paths = {e.path for p in exc.problems for e in p.errors}
            return paths or {"<load error>"}
    objects = list(bundle.objects)
    problems = model.validate(objects, features)
    paths = {e.path for p in problems for e in p.errors}
    return paths or None


@pytest.mark.parametrize(("source", "index", "doc"), CORPUS_PARAMS)
def test_validate_agrees_with_api_server(
    cluster: Cluster, corpus_namespace: str, source: str, index: int, doc: dict[str, Any]
) -> None:
    expected = doc["metadata"]["annotations"][EXPECT]
    rejection = cluster.dry_run_create(doc, corpus_namespace)
    server_verdict = "invalid" if rejection else "valid"
    # First the corpus itself: the API server must see it the way the annotation says.
    assert server_verdict == expected, (
        f"{source}[{index}]: corpus says {expected}, API server says {server_verdict}: {rejection}"
    )
    server_fields = set(rejection.fields) if rejection else None
    drakit_fields = _drakit_verdict(doc, cluster_features(cluster.plane))
    assert (drakit_fields is None) == (server_fields is None), (
        f"{source}[{index}]: API server {server_verdict} ({rejection.message if rejection else ''}), "
        f"drakit {'valid' if drakit_fields is None else sorted(drakit_fields)}"
    )
    if server_fields:
        assert drakit_fields == server_fields, rejection.message if rejection else ""
