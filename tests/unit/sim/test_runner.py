"""Control-plane semantics of a run, with the in-memory allocator twin (see fakes.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drakit.sim import parse_scenario, run_scenario
from drakit.sim.controller import POD_CLAIM_NAME_ANNOTATION
from drakit.sim.report import chart_html, chart_png, render_compare_text, render_text
from drakit.sim.runner import Run
from tests.unit.sim.fakes import FakeAllocator

TEMPLATE = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one, namespace: default}
spec:
  spec:
    devices:
      requests:
        - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
"""


def scenario(body: str, nodes: str = "    - {count: 2, template: example-2x, namePrefix: n-}\n", extra: str = TEMPLATE, version: str = ""):  # type: ignore[no-untyped-def]
    text = (
        "apiVersion: drakit.dev/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  seed: 3\n"
        + (f'  kubernetesVersion: "{version}"\n' if version else "")
        + "  deviceClasses: [gpu.example.com]\n  nodes:\n" + nodes + "  workloads:\n" + body + extra
    )
    return parse_scenario(text, "t.yaml")


def run(sc, seed=None):  # type: ignore[no-untyped-def]
    return run_scenario(sc, seed, allocator=FakeAllocator)


def test_claim_per_pod_named_annotated_and_deleted_with_the_pod() -> None:
    sc = scenario("    - {name: w, count: 2, duration: 10, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n")
    r = Run(sc, 3, FakeAllocator)
    result = r.run()
    pods = result.pods
    assert [p.phase for p in pods] == ["Succeeded", "Succeeded"]
    for p in pods:
        assert p.claims[0].startswith(f"{p.name}-gpu-") and len(p.claims[0]) == len(p.name) + 5 + 5
    assert not r.cluster.claims  # generated claims are gone with their pods
    assert all(not usage for usage in r.allocator.in_use)  # type: ignore[attr-defined]


def test_generated_claim_objects() -> None:
    sc = scenario("    - {name: w, count: 1, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n")
    r = Run(sc, 3, FakeAllocator)
    r.run()
    (claim,) = r.cluster.claims.values()
    meta = claim.obj["metadata"]
    assert meta["generateName"] == "w-gpu-"
    assert meta["annotations"][POD_CLAIM_NAME_ANNOTATION] == "gpu"
    pod = r.pods[0]
    assert meta["ownerReferences"][0]["uid"] == pod.uid
    assert claim.obj["status"]["reservedFor"] == [{"resource": "pods", "name": "w", "uid": pod.uid}]
    assert "resource.kubernetes.io/delete-protection" in meta["finalizers"]
    assert claim.obj["status"]["allocation"]["devices"]["results"][0]["driver"] == "gpu.example.com"


# DynamicResources PostFilter wording when it deallocates nothing: 1.34-1.36 say so, 1.37 adds
# nothing (kube-scheduler PR #140222); "" is the scenario default, the newest release.
NOOP_WORDING = [
    pytest.param("1.35", "still not schedulable, ", "no new claims to deallocate, ", id="1.35"),
    pytest.param("1.36", "still not schedulable, ", "no new claims to deallocate, ", id="1.36"),
    pytest.param("1.37", "", "", id="1.37"),
    pytest.param("", "", "", id="default-is-newest"),
]


@pytest.mark.parametrize(("version", "still", "no_claims"), NOOP_WORDING)
def test_pending_with_upstream_messages_then_scheduled_when_freed(version: str, still: str, no_claims: str) -> None:
    sc = scenario(
        "    - {name: first, count: 4, duration: 100, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n"
        "    - {name: late, start: 1, count: 1, duration: 5, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n",
        version=version,
    )
    result = run(sc)
    late = next(p for p in result.pods if p.workload == "late")
    assert late.scheduled == 100 and late.wait == 99
    events = [e for e in result.events if e.object == "pod/default/late"]
    assert events[0].reason == "FailedScheduling"
    assert events[0].message == (
        f"0/2 nodes are available: 2 cannot allocate all claims. {still}"
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert events[-1].reason == "Scheduled"


@pytest.mark.parametrize(("version", "still", "no_claims"), NOOP_WORDING)
def test_missing_class_and_missing_template(version: str, still: str, no_claims: str) -> None:
    extra = TEMPLATE + TEMPLATE.replace("name: one", "name: tpu").replace("gpu.example.com", "tpu.example.com")
    sc = scenario("    - {name: t, count: 1, resourceClaims: [{name: tpu, resourceClaimTemplateName: tpu}]}\n", extra=extra, version=version)
    (pod,) = run(sc).pods
    assert pod.phase == "Pending" and pod.reason == "Unschedulable"
    assert pod.message == (
        "0/2 nodes are available: request gpu: device class tpu.example.com does not exist. "
        f"{no_claims}preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


@pytest.mark.parametrize(("version", "still", "no_claims"), NOOP_WORDING)
@pytest.mark.parametrize(
    ("cpu", "preemption"),
    [
        # 100 cores > 96 allocatable: NodeResourcesFit says unresolvable, preemption is no help.
        pytest.param("100", "2 Preemption is not helpful for scheduling", id="above-allocatable"),
        # 90 cores fit an empty node but not next to the 10-core pod: an evictable case in principle.
        pytest.param("90", "2 No preemption victims found for incoming pod", id="above-free"),
    ],
)
def test_pod_without_claims_too_big(version: str, still: str, no_claims: str, cpu: str, preemption: str) -> None:
    sc = scenario(
        "    - {name: small, count: 2, resources: {cpu: '10'}}\n"
        f"    - {{name: big, start: 1, count: 1, resources: {{cpu: '{cpu}'}}}}\n",
        version=version,
    )
    big = next(p for p in run(sc).pods if p.workload == "big")
    assert big.message == f"0/2 nodes are available: 2 Insufficient cpu. {no_claims}preemption: 0/2 nodes are available: {preemption}."


def test_template_missing_gates_the_pod() -> None:
    sc = scenario("    - {name: g, count: 1, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n")
    r = Run(sc, 3, FakeAllocator)
    r.templates.clear()  # the template disappears before the pod arrives
    (pod,) = r.run().pods
    assert (pod.phase, pod.reason, pod.message) == ("Pending", "Gated", 'pod "default/g": ResourceClaim not created yet')
    assert r.events[0].reason == "FailedResourceClaimCreation"
    assert r.events[0].message == (
        'PodResourceClaim gpu: resource claim template "one": resourceclaimtemplate.resource.k8s.io "one" not found'
    )


SHARED = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: default}
spec:
  devices:
    requests:
      - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
"""


def test_shared_claim_reserved_by_all_consumers_then_deallocated() -> None:
    sc = scenario("    - {name: s, count: 3, duration: 10, resourceClaims: [{name: x, resourceClaimName: shared}]}\n", extra=SHARED)
    r = Run(sc, 3, FakeAllocator)
    result = r.run()
    nodes = {p.node for p in result.pods}
    assert len(nodes) == 1  # the allocation's node selector pins every consumer to one node
    assert all(p.devices == result.pods[0].devices for p in result.pods)
    claim = r.cluster.claims["default/shared"]
    assert claim.allocation is None and claim.obj["status"].get("reservedFor") in (None, [])


def test_shared_claim_reserved_for_limit() -> None:
    nodes = "    - {count: 1, template: example-2x, namePrefix: n-}\n"
    sc = scenario("    - {name: s, count: 258, resources: {cpu: 1m}, resourceClaims: [{name: x, resourceClaimName: shared}]}\n", nodes=nodes, extra=SHARED)
    r = Run(sc, 3, FakeAllocator)
    for node in r.cluster.nodes:
        node.max_pods = 1000
    result = r.run()
    pending = [p for p in result.pods if p.phase == "Pending"]
    assert len(pending) == 2
    assert pending[0].reason == "SchedulerError"
    assert "status.reservedFor: Too many: 257: must have at most 256 items" in pending[0].message


def test_round_robin_start_index_spreads_pods() -> None:
    # LeastAllocated prefers emptier nodes once the difference shows in the integer score
    # (100m on a 96-CPU node does not: 99 either way, and the seeded tie-break decides).
    sc = scenario("    - {name: w, count: 4, resources: {cpu: '10'}, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n",
                  nodes="    - {count: 4, template: example-8x, namePrefix: n-}\n")
    nodes = [p.node for p in run(sc).pods]
    assert sorted(nodes) == ["n-0", "n-1", "n-2", "n-3"]


def test_job_runs_completions_with_parallelism() -> None:
    sc = scenario("    - {name: j, kind: Job, completions: 5, parallelism: 2, duration: 10, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n")
    result = run(sc)
    assert len(result.pods) == 5
    assert sorted(p.arrival for p in result.pods) == [0, 0, 10, 10, 20]
    assert result.end_time == 30


def test_same_seed_same_bytes_different_seed_differs() -> None:
    sc = scenario(
        "    - {name: w, count: 6, interval: 5, duration: 12, recipe: r, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n",
        nodes="    - {count: 3, template: example-2x, namePrefix: n-}\n",
    )
    a, b, c = run(sc, 1), run(sc, 1), run(sc, 2)
    dump = lambda r: json.dumps(r.to_json(), sort_keys=True)  # noqa: E731
    assert dump(a) == dump(b)
    assert render_text(a) == render_text(b)
    assert dump(a) != dump(c)
    assert chart_png([("a", a)]) == chart_png([("a", b)])
    assert chart_html([("a", a)]) == chart_html([("a", b)])


def test_compare_shows_both_runs() -> None:
    sc = scenario("    - {name: w, count: 6, duration: 10, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n")
    from drakit.sim import parse_add_nodes

    base, more = run(sc), run(sc.with_nodes([parse_add_nodes("1xexample-2x")]))
    text = render_compare_text(base, more)
    assert "w wait_max" in text and "-10.0s" in text.split("w wait_max", 1)[1].splitlines()[0]


def test_cli_json_and_chart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from drakit.cli.main import app

    monkeypatch.setattr("drakit.sim.runner.DrakitAllocator", FakeAllocator)
    path = tmp_path / "s.yaml"
    path.write_text(Path(__file__).resolve().parents[3].joinpath("drakit/sim/examples/mixed.yaml").read_text())
    chart = tmp_path / "c.html"
    res = CliRunner().invoke(app, ["simulate", str(path), "-o", "json", "--chart", str(chart), "--add-nodes", "2xh200-8x"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert set(doc) == {"labels", "base", "variant", "diff"}
    assert doc["labels"] == {"base": "base", "variant": "+2xh200-8x"}
    assert doc["variant"]["nodes"] == doc["base"]["nodes"] + 2 and doc["diff"]["nodes"] == 2
    assert chart.read_text().startswith("<!DOCTYPE html>")


HELD = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held, namespace: default}
spec:
  devices:
    requests:
      - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: n-0, device: gpu-0}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n-0]}]}]
"""
TWO_AND_THREE = TEMPLATE.replace("name: one", "name: two").replace("gpu.example.com}", "gpu.example.com, count: 2}") + TEMPLATE.replace(
    "name: one", "name: three"
).replace("gpu.example.com}", "gpu.example.com, count: 3}")


@pytest.mark.parametrize(("version", "still", "no_claims"), NOOP_WORDING)
@pytest.mark.parametrize(
    ("own", "histogram", "deallocated"),
    [
        # Allocation fails on both nodes: the allocator answers first, so both count as "cannot
        # allocate all claims", and the held claim is never remembered as unavailable.
        pytest.param("three", "2 cannot allocate all claims", False, id="allocation-fails-everywhere"),
        # n-1 has two free GPUs: there the allocation succeeds and only then is the held claim
        # (pinned to n-0, reserved for nobody) unavailable -- and PostFilter deallocates it.
        pytest.param("two", "1 cannot allocate all claims, 1 resourceclaim not available on the node", True, id="unavailable-after-allocation"),
    ],
)
def test_dra_filter_allocates_before_it_reports_an_unavailable_claim(
    version: str, still: str, no_claims: str, own: str, histogram: str, deallocated: bool
) -> None:
    sc = scenario(
        f"    - {{name: p, count: 1, resourceClaims: [{{name: held, resourceClaimName: held}}, {{name: own, resourceClaimTemplateName: {own}}}]}}\n",
        extra=TEMPLATE + TWO_AND_THREE + HELD,
        version=version,
    )
    r = Run(sc, 3, FakeAllocator)
    result = r.run()
    pod = result.pods[0]
    post = "deallocation of ResourceClaim completed, " if deallocated else still
    first = next(e for e in result.events if e.reason == "FailedScheduling")
    assert first.message == f"0/2 nodes are available: {histogram}. {post}preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    # Three GPUs never fit on a 2-GPU node, so the pod stays Pending either way.
    assert pod.phase == "Pending"
    assert (r.cluster.claims["default/held"].allocation is None) is deallocated


@pytest.mark.parametrize(("version", "block"), [pytest.param("1.34", True, id="1.34"), pytest.param("1.35", False, id="1.35"), pytest.param("", False, id="default")])
def test_generated_claim_owner_reference_follows_the_version(version: str, block: bool) -> None:
    sc = scenario("    - {name: w, count: 1, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n", version=version)
    r = Run(sc, 3, FakeAllocator)
    r.run()
    (claim,) = r.cluster.claims.values()
    (owner,) = claim.obj["metadata"]["ownerReferences"]
    assert owner["controller"] is True
    assert owner.get("blockOwnerDeletion") is (True if block else None)


def _allocated_claim(name: str, results: str, node: str | None, spec: str = "{name: gpu, exactly: {deviceClassName: gpu.example.com}}") -> str:
    selector = (
        f"\n    nodeSelector:\n      nodeSelectorTerms: [{{matchFields: [{{key: metadata.name, operator: In, values: [{node}]}}]}}]"
        if node
        else ""
    )
    return (
        f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: {name}, namespace: default}}\n"
        f"spec:\n  devices:\n    requests:\n      - {spec}\nstatus:\n  allocation:\n    devices:\n      results: {results}{selector}\n"
    )


PICK = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: pick, namespace: default}
spec:
  spec:
    devices:
      requests:
        - name: gpus
          firstAvailable:
            - {name: three, deviceClassName: gpu.example.com, count: 3}
            - {name: one, deviceClassName: gpu.example.com}
"""
# n-0: a 20-core pod (pinned there by its claim), three GPUs free -> the 3-GPU subrequest (raw 8).
# n-1: one GPU free -> the 1-GPU subrequest (raw 7), but 20 cores more room (+20 resource score).
# "net" is allocated with no node selector (usable everywhere) and chose its first subrequest.
SCORE_SCENE = (
    PICK
    + _allocated_claim("pin", "[{request: gpu, driver: gpu.example.com, pool: n-0, device: gpu-0}]", "n-0")
    + _allocated_claim(
        "hold",
        "[{request: gpu, driver: gpu.example.com, pool: n-1, device: gpu-1}, {request: gpu, driver: gpu.example.com, pool: n-1, device: gpu-2}]",
        "n-1",
    )
    + _allocated_claim(
        "net",
        "[{request: gpu/a, driver: gpu.example.com, pool: n-1, device: gpu-0}]",
        None,
        spec="{name: gpu, firstAvailable: [{name: a, deviceClassName: gpu.example.com}, {name: b, deviceClassName: gpu.example.com}]}",
    )
)


@pytest.mark.parametrize(
    ("version", "want"),
    [
        # DynamicResources weight 2, normalised over (raw + 8 from "net"): 2*100 vs 2*(15*100//16)
        # = 200 vs 186 -- less than n-1's 20 extra resource points.  Without the allocated claim's
        # 8 it would be 200 vs 174 and n-0 would win.
        pytest.param("1.37", "n-1", id="1.37"),
        pytest.param("1.36", "n-1", id="1.36"),
        # 1.35 pairs claims with the new allocations by index: Score fails with two feasible nodes.
        pytest.param(
            "1.35",
            'Pending: running Score plugins: plugin "DynamicResources" failed with: number of allocations 1 is smaller than number of claims',
            id="1.35-score-error",
        ),
        # 1.34 has no DynamicResources Score: resources alone decide.
        pytest.param("1.34", "n-1", id="1.34"),
    ],
)
@pytest.mark.parametrize("fast", [pytest.param(False, id="loop"), pytest.param(True, id="fast")])
def test_dynamic_resources_score_follows_the_version(version: str, want: str, fast: bool) -> None:
    from drakit.sim.runner import SimOptions

    sc = scenario(
        "    - {name: hog, count: 1, resources: {cpu: '20'}, resourceClaims: [{name: pin, resourceClaimName: pin}]}\n"
        "    - {name: p, start: 1, count: 1, resources: {cpu: '1'}, resourceClaims: [{name: net, resourceClaimName: net}, {name: own, resourceClaimTemplateName: pick}]}\n",
        nodes="    - {count: 2, template: example-4x, namePrefix: n-}\n",
        extra=SCORE_SCENE,
        version=version,
    )
    result = Run(sc, 3, FakeAllocator, SimOptions(fast=fast)).run()
    assert result.placements()["default/p"] == want


@pytest.mark.parametrize(("version", "still", "no_claims"), NOOP_WORDING)
def test_first_available_with_the_gate_off_fails_prefilter(version: str, still: str, no_claims: str) -> None:
    sc = scenario(
        "    - {name: f, count: 1, resourceClaims: [{name: gpu, resourceClaimTemplateName: pick}]}\n",
        extra=PICK,
        version=version,
    )
    sc = dataclasses.replace(sc, features=sc.features.with_gates("DRAPrioritizedList=false"))
    (pod,) = run(sc).pods
    assert (pod.phase, pod.reason) == ("Pending", "Unschedulable")
    assert pod.message == (
        f"0/2 nodes are available: resource claim default/{pod.claims[0]}, request gpus: has subrequests, but the "
        f"DRAPrioritizedList feature is disabled. {no_claims}preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
