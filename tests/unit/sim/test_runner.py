"""Control-plane semantics of a run, with the in-memory allocator twin (see fakes.py)."""

from __future__ import annotations

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


def scenario(body: str, nodes: str = "    - {count: 2, template: example-2x, namePrefix: n-}\n", extra: str = TEMPLATE):  # type: ignore[no-untyped-def]
    text = (
        "apiVersion: drakit.dev/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  seed: 3\n"
        "  deviceClasses: [gpu.example.com]\n  nodes:\n" + nodes + "  workloads:\n" + body + extra
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


def test_pending_with_upstream_messages_then_scheduled_when_freed() -> None:
    sc = scenario(
        "    - {name: first, count: 4, duration: 100, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n"
        "    - {name: late, start: 1, count: 1, duration: 5, resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n"
    )
    result = run(sc)
    late = next(p for p in result.pods if p.workload == "late")
    assert late.scheduled == 100 and late.wait == 99
    events = [e for e in result.events if e.object == "pod/default/late"]
    assert events[0].reason == "FailedScheduling"
    assert events[0].message == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert events[-1].reason == "Scheduled"


def test_missing_class_and_missing_template() -> None:
    extra = TEMPLATE + TEMPLATE.replace("name: one", "name: tpu").replace("gpu.example.com", "tpu.example.com")
    sc = scenario("    - {name: t, count: 1, resourceClaims: [{name: tpu, resourceClaimTemplateName: tpu}]}\n", extra=extra)
    (pod,) = run(sc).pods
    assert pod.phase == "Pending" and pod.reason == "Unschedulable"
    assert pod.message == (
        "0/2 nodes are available: request gpu: device class tpu.example.com does not exist. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


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
    assert set(doc) == {"base", "+2xh200-8x", "diff"}
    assert doc["+2xh200-8x"]["nodes"] == doc["base"]["nodes"] + 2
    assert chart.read_text().startswith("<!DOCTYPE html>")
