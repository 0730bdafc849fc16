"""Issue 12's explain answers on a realistic mixed cluster (A100 40/80 GB, L40S, H100; NVIDIA schema).

Each row builds a bundle, runs ``drakit explain`` through the CLI and checks verdict, code,
holders and exit code, then the diagnosis itself for the details the row is about.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from drakit.cli.main import app
from drakit.explain.diagnose import diagnose
from drakit.explain.diagnosis import Diagnosis
from drakit.inventory.snapshot import ClusterSnapshot
from tests.unit.explain import mixed as m

FOUR_SAME_ROOT = m.spec(m.request("gpus", 4, m.H100), constraints=[m.same_root()])
A100_80 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"
REDOS = "device.attributes['gpu.nvidia.com'].uuid.matches('^GPU-([0-9a-f]+-?)*!$')"


def _bundle(*extra: list[m.Obj]) -> list[m.Obj]:
    out = m.cluster()
    for objs in extra:
        out += objs
    return out


ROWS = [
    pytest.param(
        _bundle(m.busy("h100-quad", range(8), "eval-1"), m.pending("train", FOUR_SAME_ROOT)),
        "waiting", "ConstraintsUnsatisfiable", ["ml/eval-1"], 3,
        id="topology-exists-but-busy",
    ),
    pytest.param(
        _bundle(m.busy("h100-quad", range(4), "eval-1"), m.busy("h100-quad", range(4, 8), "eval-2"),
                m.busy("h100-pair", range(2), "eval-3"), m.pending("train", FOUR_SAME_ROOT)),
        "waiting", "ConstraintsUnsatisfiable", ["ml/eval-1", "ml/eval-2"], 3,
        id="topology-busy-two-holders",
    ),
    pytest.param(
        _bundle(m.pending("train", m.spec(m.request("gpus", 4, A100_80), constraints=[m.same_root()]))),
        "never", "ConstraintsUnsatisfiable", [], 3,
        id="topology-never-a100-pairs",
    ),
    pytest.param(
        _bundle(m.busy("a100-80", range(8), "eval-1"),
                m.pending("train", m.spec(m.request("gpus", 4, A100_80), constraints=[m.same_root()]))),
        "never", "ConstraintsUnsatisfiable", [], 3,
        id="topology-never-even-when-busy",
    ),
    pytest.param(
        _bundle(m.pending("train", m.spec(m.request("gpus", 1, REDOS)))),
        "never", "NoMatchingDevices", [], 3,
        id="matches-redos-pattern",
    ),
    pytest.param(
        _bundle(m.pending("train", FOUR_SAME_ROOT, via_template=True)),
        "ok", "Fits", [], 0,
        id="template-pod-would-fit",
    ),
    pytest.param(
        _bundle(m.busy("h100-quad", range(8), "eval-1"), m.pending("train", FOUR_SAME_ROOT, via_template=True)),
        "waiting", "ConstraintsUnsatisfiable", ["ml/eval-1"], 3,
        id="template-pod-busy-topology",
    ),
]


def _write(tmp_path: Path, objects: list[m.Obj]) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False), encoding="utf-8")
    return str(path)


def _diagnose(objects: list[m.Obj], target: str = "train") -> Diagnosis:
    return diagnose(ClusterSnapshot.from_objects(objects), "pod", target, m.NS)


@pytest.mark.parametrize(("objects", "verdict", "code", "holders", "exit_code"), ROWS)
def test_explain_rows(
    tmp_path: Path, objects: list[m.Obj], verdict: str, code: str, holders: list[str], exit_code: int
) -> None:
    started = time.monotonic()
    result = CliRunner().invoke(app, ["explain", "pod/train", "-n", m.NS, "-o", "json", "-f", _write(tmp_path, objects)])
    assert time.monotonic() - started < 20
    assert result.exit_code == exit_code, result.output
    doc: dict[str, Any] = json.loads(result.output)
    assert (doc["verdict"], doc["code"]) == (verdict, code)
    assert [h["claim"] for h in doc.get("holders") or []] == holders


def test_busy_topology_names_nodes_and_what_if() -> None:
    d = _diagnose(_bundle(m.busy("h100-quad", range(8), "eval-1"), m.pending("train", FOUR_SAME_ROOT)))
    head = d.findings[[f.code.value for f in d.findings].index("ConstraintsUnsatisfiable")]
    assert head.detail["nodes"] == ["h100-quad"]
    assert "only on node(s) h100-quad" in d.headline
    assert "without the constraint it would fit now on node h100-pair" in d.fix
    assert [(h.claim, h.devices, h.pods) for h in d.holders] == [("ml/eval-1", 8, ("ml/eval-1",))]


def test_never_topology_keeps_the_what_if() -> None:
    d = _diagnose(_bundle(m.pending("train", m.spec(m.request("gpus", 4, A100_80), constraints=[m.same_root()]))))
    assert "even with every device free" in d.headline
    assert "FitsWithoutConstraint" in d.codes
    assert "it would fit now on node a100-80" in d.fix


def test_template_pod_headline() -> None:
    d = _diagnose(_bundle(m.pending("train", FOUR_SAME_ROOT, via_template=True)))
    assert d.headline == "would fit on node h100-quad (the claim controller creates the claim)"
    assert d.codes == ("Fits", "ClaimNotCreated")


def test_template_pod_read_from_a_cluster_still_waits_for_the_controller() -> None:
    objects = _bundle(m.pending("train", FOUR_SAME_ROOT, via_template=True))
    objects[-1]["metadata"]["creationTimestamp"] = "2026-12-01T10:00:00Z"
    d = _diagnose(objects)
    assert (d.verdict.value, d.code.value) == ("waiting", "ClaimNotCreated")


# --- alternatives, near misses, fix text, taints, blockers, the claim view ---------------------


def _alternatives(*subs: tuple[str, str]) -> m.Obj:
    return {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": name, "deviceClassName": "gpu.nvidia.com",
         "selectors": [{"cel": {"expression": f"device.attributes['gpu.nvidia.com'].productName == '{product}'"}}]}
        for name, product in subs
    ]}]}}


EVAL = _alternatives(("h100", "NVIDIA H100 80GB HBM3"), ("a100", "NVIDIA A100-SXM4-80GB"), ("l40s", "NVIDIA L40S"))
EVERYTHING_BUSY = [m.busy("h100-quad", range(8), "h1"), m.busy("h100-pair", range(8), "h2"),
                   m.busy("a100-80", range(8), "a1"), m.busy("l40s-0", range(4), "l1")]


@pytest.mark.parametrize(
    ("objects", "verdict", "code", "holders"),
    [
        pytest.param(_bundle(*EVERYTHING_BUSY, m.pending("eval", EVAL)), "waiting", "AlternativesExhausted",
                     ["ml/a1", "ml/h1", "ml/h2", "ml/l1"], id="every-alternative-busy"),
        pytest.param(_bundle(*EVERYTHING_BUSY[:3], m.pending("eval", EVAL)), "ok", "Fits", [], id="last-alternative-free"),
    ],
)
def test_alternatives(objects: list[m.Obj], verdict: str, code: str, holders: list[str]) -> None:
    d = _diagnose(objects, "eval")
    assert (d.verdict.value, d.code.value) == (verdict, code)
    assert sorted(h.claim for h in d.holders) == holders
    if code == "AlternativesExhausted":
        assert all(f"{sub}: " in d.headline for sub in ("h100", "a100", "l40s"))


def test_near_misses_only_within_a_margin() -> None:
    d = _diagnose(_bundle(m.pending("train", m.spec(m.request("gpus", 1, m.MEM.format(q="81Gi"))))))
    f = d.funnel("gpus")
    assert f is not None
    # A100 80GB (80Gi) and H100 (81559Mi) are near an 81Gi bound; L40S and A100 40GB are not.
    assert sorted(nm.product for nm in f.near_misses) == ["NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"]


@pytest.mark.parametrize(
    ("ask", "fix"),
    [
        pytest.param("90Gi", "largest device memory 80Gi (NVIDIA A100-SXM4-80GB): ask for at most 80Gi", id="90Gi"),
        pytest.param("200Gi", "largest device memory 80Gi (NVIDIA A100-SXM4-80GB): ask for at most 80Gi", id="200Gi"),
    ],
)
def test_fix_names_the_largest_device(ask: str, fix: str) -> None:
    d = _diagnose(_bundle(m.pending("train", m.spec(m.request("gpus", 1, m.MEM.format(q=ask))))))
    assert (d.verdict.value, d.code.value) == ("never", "NoMatchingDevices")
    assert d.fix == fix


def test_fix_on_an_h100_only_cluster() -> None:
    objects = [o for o in m.cluster() if "h100" in str((o.get("metadata") or {}).get("name", "")) or o["kind"] == "DeviceClass"]
    d = _diagnose(objects + m.pending("train", m.spec(m.request("gpus", 1, m.MEM.format(q="100Gi")))))
    assert d.fix == "largest device memory 81559Mi (NVIDIA H100 80GB HBM3): ask for at most 79Gi"


def test_node_taint_is_named() -> None:
    objects = m.cluster()
    for o in objects:
        if o["kind"] == "Node":
            o["spec"] = {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}
    d = _diagnose(objects + m.pending("train", m.spec(m.request("gpus", 1))))
    assert (d.verdict.value, d.code.value) == ("waiting", "NodeTaintNotTolerated")
    assert "nvidia.com/gpu=present:NoSchedule on 5 node(s)" in d.headline
    assert d.fix == "add a toleration for nvidia.com/gpu=present:NoSchedule to the pod"


def test_every_independent_blocker_is_listed() -> None:
    claim_spec = m.spec(m.request("big", 1, m.MEM.format(q="200Gi")), m.request("many", 4, m.H100))
    d = _diagnose(_bundle(m.busy("h100-quad", range(8), "h1"), m.busy("h100-pair", range(6), "h2"),
                          m.pending("train", claim_spec)))
    blocking = [(f.code.value, f.request) for f in d.findings if f.blocking]
    assert ("NoMatchingDevices", "big") in blocking
    assert ("DevicesInUse", "many") in blocking
    assert (d.verdict.value, d.code.value) == ("never", "NoMatchingDevices")


def test_claim_view_points_at_the_pod_that_failed_preparation() -> None:
    status = m.busy("h100-pair", [0], "train")[0]["status"]
    claim = m.claim("train-gpus", m.spec(m.request()), status)
    pod = m.pod("train", claim_name="train-gpus", node="h100-pair")
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "train.1", "namespace": m.NS},
             "involvedObject": {"kind": "Pod", "name": "train", "namespace": m.NS},
             "reason": "FailedPrepareDynamicResources", "type": "Warning",
             "message": "Failed to prepare dynamic resources: prepare dynamic resources: DRA driver gpu.nvidia.com is not registered"}
    d = diagnose(ClusterSnapshot.from_objects([*m.cluster(), claim, pod, event]), "claim", "train-gpus", m.NS)
    assert (d.verdict.value, d.code.value) == ("broken", "DriverNotRegistered")
    assert d.headline.startswith("pod ml/train: node h100-pair: kubelet cannot prepare the devices:")
    assert "is not registered" in d.headline


def test_all_pending_answers_as_one_diagnosis_per_pod_would() -> None:
    """Sharing work across pods (one diagnosis per shape, shared index and nodes) changes no answer."""
    from drakit.explain.pending import explain_pending, waiting_pods

    objects = _bundle(m.busy("h100-quad", range(8), "h1"), m.busy("a100-80", range(6), "a1"))
    objects += m.pending("t0", FOUR_SAME_ROOT) + m.pending("t1", FOUR_SAME_ROOT)
    objects += m.pending("e0", EVAL) + m.pending("big", m.spec(m.request("gpus", 4, A100_80)))
    objects += m.pending("pinned", m.spec(m.request("gpus", 1)), nodeSelector={"kubernetes.io/hostname": "l40s-0"})
    objects += m.pending("pinned-away", m.spec(m.request("gpus", 1, m.H100)), nodeSelector={"kubernetes.io/hostname": "l40s-0"})
    objects += m.pending("tmpl", FOUR_SAME_ROOT, via_template=True)
    snapshot = ClusterSnapshot.from_objects(objects)
    report = explain_pending(snapshot, waiting_pods(snapshot, m.NS))
    shared = {p.pod: report.groups[p.group].diagnosis for p in report.pods}
    for key, got in shared.items():
        alone = diagnose(snapshot, "pod", key.split("/", 1)[1], m.NS)
        assert (got.verdict, got.code) == (alone.verdict, alone.code), key
    assert report.diagnosed < len(report.pods)


def _many_shapes() -> list[m.Obj]:
    """Pods of many distinct shapes whose selectors often leave the same candidate sets
    (so the funnel's memoised walks are reused across claims that must still answer apart)."""
    objects = _bundle(m.busy("h100-quad", range(6), "h1"), m.busy("a100-80", range(8), "a1"),
                      m.busy("l40s-0", range(1), "l1"))
    asks = [
        (), (m.H100,), (A100_80,), (m.MEM.format(q="40Gi"),), (m.MEM.format(q="80Gi"),),
        (m.MEM.format(q="100Gi"),), (m.H100, m.MEM.format(q="80Gi")),
        ("device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA A100')",),
    ]
    placements: list[dict[str, Any]] = [{}, {"nodeSelector": {"kubernetes.io/hostname": "h100-quad"}}]
    i = 0
    for selectors in asks:
        for count in (1, 2, 4):
            for constraints in ([], [m.same_root()]):
                for where in placements:
                    i += 1
                    claim_spec = m.spec(m.request("gpus", count, *selectors), constraints=constraints)
                    objects += m.pending(f"p{i:03d}", claim_spec, via_template=i % 7 == 0, **where)
    return objects


def test_all_pending_with_many_shapes_answers_as_explain_per_pod() -> None:
    """Every group's answer is, field for field, what `explain` of that pod alone says, and every
    pod is grouped under the verdict, code and story of its own diagnosis."""
    from drakit.explain.pending import _story, explain_pending, waiting_pods

    snapshot = ClusterSnapshot.from_objects(_many_shapes())
    pods = waiting_pods(snapshot, m.NS)
    report = explain_pending(snapshot, pods)
    assert report.diagnosed == len(pods) == 96
    alone = {f"{m.NS}/{p['metadata']['name']}": diagnose(snapshot, "pod", p["metadata"]["name"], m.NS) for p in pods}
    for g in report.groups:
        assert g.diagnosis.to_json() == alone[g.pods[0]].to_json(), g.pods[0]
    for p in report.pods:
        got, own = report.groups[p.group].diagnosis, alone[p.pod]
        assert (got.verdict, got.code, _story(got)) == (own.verdict, own.code, _story(own)), p.pod
    assert len({d.code for d in alone.values()}) >= 3  # the bundle really mixes answers


def _deleted_holder(event_message: str = "") -> list[m.Obj]:
    """Pod ``train`` deleted after it ran, its claim still allocated and reserved for it."""
    claim, pod = m.busy("h100-pair", [0], "train")
    pod["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z"
    objects = [*m.cluster(), claim, pod]
    if event_message:
        objects.append({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "train.2", "namespace": m.NS},
                        "involvedObject": {"kind": "Pod", "name": "train", "namespace": m.NS},
                        "reason": "FailedUnprepareDynamicResources", "type": "Warning", "message": event_message})
    return objects


UNPREPARE_DEADLINE = ("unprepare dynamic resources: NodeUnprepareResources: rpc error: code = DeadlineExceeded "
                      "desc = context deadline exceeded")


@pytest.mark.parametrize("target", ["pod", "claim"])
@pytest.mark.parametrize(
    ("message", "verdict", "code", "headline"),
    [
        pytest.param("", "waiting", "DevicesNotReleased",
                     "node h100-pair: the pod is being deleted (deletionTimestamp 2026-12-01T10:00:00Z) and still "
                     "holds claim(s) ml/train",
                     id="no-event-as-v1.37.2"),
        pytest.param(UNPREPARE_DEADLINE, "waiting", "UnprepareFailed",
                     "node h100-pair: kubelet cannot release the devices of the deleted pod: " + UNPREPARE_DEADLINE,
                     id="unprepare-text"),
    ],
)  # fmt: skip
def test_a_deleted_pod_that_keeps_its_devices(message: str, verdict: str, code: str, headline: str, target: str) -> None:
    """The device is stuck on the node: the kubelet has not unprepared a deleted pod's claim (before: "running")."""
    d = diagnose(ClusterSnapshot.from_objects(_deleted_holder(message)), target, "train", m.NS)
    assert (d.verdict.value, d.code.value) == (verdict, code), d.headline
    assert headline in d.headline
    assert "h100-pair" in d.fix
