"""Capability profiles on the real control plane (issue 8).

1. ``drakit profile compile`` output for ``gpu.nvidia.com`` is created for real (not dry-run) by
   kube-apiserver 1.37: DeviceClasses, ResourceClaimTemplates, and the pod fragment (PodTemplate).
2. On the demo inventory (``drakit/demo/cluster.yaml``: two 4x L4 nodes, one 8x H100 node, one
   example-driver node), pods built from the compiled fragments are scheduled by kube-scheduler;
   every device they are allocated must be one ``drakit profile eligible`` lists as qualifying
   for that profile (with the same ``firstAvailable`` option), and the first allocation on an
   empty node must be exactly the devices ``eligible`` predicts for that node.

Both drakit commands run as a user runs them (``python -m drakit.cli.main``), so the test covers
the CLI's YAML/JSON output as well as the library.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from tests.integration import simbridge
from tests.integration.kube import Cluster

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
DEMO_CLUSTER = REPO / "drakit" / "demo" / "cluster.yaml"
PROFILES = ("training-48g", "evaluation", "hopper-or-ampere", "inference-small", "nvidia-base")
DRIVER = "gpu.nvidia.com"
V1 = simbridge.V1


def drakit(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "drakit.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, f"drakit {' '.join(args)} exited {done.returncode}: {done.stderr}"
    return done.stdout


def compiled(namespace: str, *profiles: str) -> list[dict[str, Any]]:
    return [
        d
        for d in yaml.safe_load_all(
            drakit("profile", "compile", *profiles, "--driver", DRIVER, "-n", namespace)
        )
        if d
    ]


def eligible(*profiles: str) -> dict[str, dict[str, Any]]:
    out = json.loads(drakit("profile", "eligible", *profiles, "-f", str(DEMO_CLUSTER), "-o", "json"))
    return {p["profile"]: p for p in out["profiles"]}


@pytest.fixture(scope="module")
def demo_inventory(cluster: Cluster) -> Iterator[list[dict[str, Any]]]:
    objects = [d for d in yaml.safe_load_all(DEMO_CLUSTER.read_text()) if d]
    with simbridge.installed(cluster, objects):
        yield objects


def _create_all(cluster: Cluster, manifests: list[dict[str, Any]]) -> list[str]:
    """Create every manifest; the API server's refusals, one line each."""
    refusals = []
    for m in manifests:
        try:
            cluster.create(m)
        except ApiException as exc:
            refusals.append(f"{m['kind']} {m['metadata']['name']}: {exc.status} {exc.body}")
    return refusals


def _check_created(cluster: Cluster, profile: str, want: set[str]) -> None:
    """Compile ``profile`` into a fresh namespace and really create its manifests of kinds ``want``."""
    with cluster.namespace("prof") as ns:
        manifests = compiled(ns, profile)
        kinds = {m["kind"] for m in manifests}
        assert "DeviceClass" in kinds and "PodTemplate" in kinds, kinds
        assert {"ResourceClaimTemplate", "ResourceClaim"} & kinds, kinds
        chosen = [m for m in manifests if m["kind"] in want]
        # DeviceClasses are cluster-wide: another file on this worker's plane may have applied the
        # same profile's class (webhook, executor checks); this check is about creating it afresh.
        for m in chosen:
            if m["kind"] == "DeviceClass":
                cluster.delete(m)
        try:
            assert _create_all(cluster, chosen) == []
            for m in chosen:
                ns_of = ns if m["kind"] != "DeviceClass" else None
                stored = cluster.get(m["apiVersion"], m["kind"], m["metadata"]["name"], ns_of)
                assert stored is not None
                body = "template" if m["kind"] == "PodTemplate" else "spec"
                assert _subset(m[body], stored[body]), (
                    f"{m['kind']} {m['metadata']['name']} changed on the way"
                )
        finally:
            for m in chosen:
                if m["kind"] == "DeviceClass":
                    cluster.delete(m)


def _subset(sent: Any, stored: Any) -> bool:
    """Everything sent came back unchanged (the API server may add defaults, nothing else)."""
    if isinstance(sent, dict):
        return isinstance(stored, dict) and all(
            k in stored and _subset(v, stored[k]) for k, v in sent.items()
        )
    if isinstance(sent, list):
        return isinstance(stored, list) and len(sent) == len(stored) and all(map(_subset, sent, stored))
    return bool(sent == stored)


@pytest.mark.parametrize("profile", [pytest.param(p, id=p) for p in PROFILES])
def test_compiled_classes_and_claims_are_created(cluster: Cluster, profile: str) -> None:
    _check_created(cluster, profile, {"DeviceClass", "ResourceClaimTemplate", "ResourceClaim"})


@pytest.mark.parametrize("profile", [pytest.param(p, id=p) for p in PROFILES])
def test_compiled_pod_template_is_created(cluster: Cluster, profile: str) -> None:
    _check_created(cluster, profile, {"PodTemplate"})


# --------------------------------------------------------------------------------- scheduling


def _pods_from_fragment(fragment: Mapping[str, Any], prefix: str, count: int) -> list[dict[str, Any]]:
    """Pods the way a platform would stamp them out of the compiled PodTemplate."""
    tmpl = fragment["template"]
    pods = []
    for i in range(count):
        spec = json.loads(json.dumps(tmpl["spec"]))
        spec["terminationGracePeriodSeconds"] = 0
        for c in spec["containers"]:
            c.setdefault("image", "registry.example/job:1")
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{prefix}-{i}",
                    "labels": dict((tmpl.get("metadata") or {}).get("labels") or {}),
                },
                "spec": spec,
            }
        )
    return pods


def _qualifying(report: Mapping[str, Any]) -> dict[tuple[str, str], str | None]:
    """(node, device) -> the firstAvailable option it qualifies under (None: a plain request)."""
    out: dict[tuple[str, str], str | None] = {}
    for row in report["qualifying"]:
        for d in row["devices"]:
            out[(row["node"], d)] = row.get("option")
    return out


def _settle(cluster: Cluster, ns: str, names: list[str], nodes: int) -> dict[str, dict[str, Any]]:
    def probe() -> dict[str, dict[str, Any]] | None:
        pods = {p["metadata"]["name"]: p for p in cluster.list_objects("v1", "Pod", ns)}
        for n in names:
            p = pods.get(n)
            if p is None:
                return None
            if p["spec"].get("nodeName"):
                continue
            cond = simbridge.pod_scheduled_condition(p) or {}
            if cond.get("status") != "False" or not str(cond.get("message", "")).startswith(
                f"0/{nodes} nodes"
            ):
                return None
        return pods

    return cluster.wait_for(f"pods {names[0]}.. to settle", probe, timeout=90)


def _allocation(cluster: Cluster, ns: str, pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for _, claim_name in simbridge.pod_claim_names(pod):
        claim = cluster.get(V1, "ResourceClaim", str(claim_name), ns) or {}
        results.extend(
            (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        )
    return results


def test_pods_get_the_devices_eligible_predicts(
    cluster: Cluster, demo_inventory: list[dict[str, Any]]
) -> None:
    """Training pods first (two >= 48 GiB GPUs on one PCIe root: three of the four H100 pairs),
    then evaluation pods (one GPU, smallest first: the eight L4s, then the last free H100)."""
    nodes = sum(1 for o in demo_inventory if o["kind"] == "Node")
    report = eligible("training-48g", "evaluation")
    priority = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "training"},
        "value": 1000,
    }
    cluster.apply(priority)
    with cluster.namespace("prof-pods") as ns:
        manifests = compiled(ns, "training-48g", "evaluation")
        try:
            assert _create_all(cluster, [m for m in manifests if m["kind"] != "PodTemplate"]) == []
            fragments = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "PodTemplate"}
            seen: dict[str, list[tuple[str, list[dict[str, Any]]]]] = {}
            for profile, count in (("training-48g", 3), ("evaluation", 9)):
                pods = _pods_from_fragment(fragments[profile], profile, count)
                for i, p in enumerate(pods):
                    cluster.create(p, ns)
                    if i == 0:
                        # The first pod of a profile meets an empty node: eligible's per-node
                        # prediction must be exact there.
                        first = _settle(cluster, ns, [p["metadata"]["name"]], nodes)[p["metadata"]["name"]]
                        node = first["spec"].get("nodeName")
                        assert node, f"{profile}: first pod not scheduled"
                        fit = next(n for n in report[profile]["nodes"] if n["node"] == node)
                        assert fit["fits"], (
                            f"{profile}: scheduled on {node}, which eligible says does not fit"
                        )
                        got = sorted(r["device"] for r in _allocation(cluster, ns, first))
                        assert got == sorted(fit["devices"]), (profile, node)
                names = [p["metadata"]["name"] for p in pods]
                settled = _settle(cluster, ns, names, nodes)
                seen[profile] = [
                    (settled[n]["spec"].get("nodeName") or "", _allocation(cluster, ns, settled[n]))
                    for n in names
                ]
        finally:
            for m in manifests:
                if m["kind"] == "DeviceClass":
                    cluster.delete(m)
            cluster.delete(priority)

    for profile, placed in seen.items():
        qualifying = _qualifying(report[profile])
        bound = [(node, results) for node, results in placed if node]
        assert bound, f"{profile}: nothing was scheduled"
        for node, results in bound:
            for r in results:
                assert r["pool"] == node and r["driver"] == DRIVER
                assert (node, r["device"]) in qualifying, f"{profile}: {node}/{r['device']} not predicted"
                _, _, option = r["request"].partition("/")
                assert (option or None) == qualifying[(node, r["device"])], (profile, node, r)
    # The demo's shape: training takes three H100 pairs; evaluation takes all eight L4s by
    # preference and spills one pod onto a remaining H100.
    assert sum(1 for node, _ in seen["training-48g"] if node) == 3
    evaluation = [r for node, rs in seen["evaluation"] if node for r in rs]
    assert sorted(r["request"] for r in evaluation) == ["gpu/large"] + ["gpu/small"] * 8
