"""``drakit simulate --snapshot-at``: the simulated cluster as a bundle every offline verb reads.

The check of the front-door issue: ``--snapshot-at end`` of the 203-pod agreement scenario, fed
to ``drakit explain`` for each Pending pod, gives the scheduler message the simulator recorded.
``tests/scenarios/sim/agreement-end.yaml`` is that bundle as the command writes it
(``drakit simulate tests/integration/scenarios/agreement.yaml --snapshot-at end -o yaml``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from drakit.cli.explain import EXIT_FOR_VERDICT
from drakit.cli.testing import run
from drakit.explain.diagnose import diagnose
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.model import validate_report
from drakit.outcomes import Verdict
from drakit.sim import SimulationResult
from drakit.sim.snapshot import simulate_snapshot
from drakit.sources import load_bundle, load_scenario

TESTS = Path(__file__).resolve().parents[2]
AGREEMENT = TESTS / "integration" / "scenarios" / "agreement.yaml"
BUNDLE = TESTS / "scenarios" / "sim" / "agreement-end.yaml"


def drakit(*argv: str) -> tuple[int, str, str]:
    r = run(*argv)
    return r.exit_code, r.stdout, r.stderr


@cache
def agreement_at(at: float | None) -> tuple[SimulationResult, ClusterSnapshot]:
    return simulate_snapshot(load_scenario(AGREEMENT), at=at)


def pending_pods(bundle: dict[str, Any]) -> list[dict[str, Any]]:
    return [o for o in bundle["items"] if o["kind"] == "Pod" and o["status"]["phase"] == "Pending"]


def test_explain_gives_the_recorded_message_for_every_pending_pod() -> None:
    result, snap = agreement_at(None)
    pending = [r for r in result.pods if r.node is None]
    assert len(pending) >= 20 and all(r.message for r in pending)
    features = Features.for_version("1.37")
    for r in pending:
        d = diagnose(snap, "pod", r.name, r.namespace, features=features)
        assert d.scheduler == r.message, r.name


@pytest.mark.parametrize("at", [pytest.param(None, id="end"), pytest.param(4.0, id="t=4s")])
def test_snapshot_holds_what_the_api_server_would(at: float | None) -> None:
    result, snap = agreement_at(at)
    live = {(r.namespace, r.name): r for r in result.pods if r.finished is None}
    pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in snap.pods}
    assert pods.keys() == live.keys()
    for key, r in live.items():
        assert pods[key]["spec"].get("nodeName") == r.node
        assert pods[key]["status"]["phase"] == r.phase
    assert all(r.arrival <= (at if at is not None else result.end_time) for r in result.pods)
    for claim in snap.claims:
        status = claim.get("status") or {}
        reserved = {(claim["metadata"]["namespace"], x["name"]) for x in status.get("reservedFor") or []}
        assert reserved <= {k for k, r in live.items() if r.node is not None}
        assert bool(reserved) <= bool(status.get("allocation"))
    assert snap.now == (at if at is not None else result.end_time)
    assert snap.provenance.read_at == snap.now


def test_cli_bundle_carries_the_recorded_messages_and_validates(tmp_path: Path) -> None:
    code, out, err = drakit("simulate", str(AGREEMENT), "--snapshot-at", "end", "-o", "yaml")
    assert code == 0, err
    written = yaml.safe_load(out)
    result, _ = agreement_at(None)
    messages = {p["metadata"]["name"]: p["status"]["conditions"][0]["message"] for p in pending_pods(written)}
    assert messages == {r.name: r.message for r in result.pods if r.node is None}
    f = tmp_path / "snapshot.yaml"
    f.write_text(out, encoding="utf-8")
    report = validate_report(load_bundle([str(f)]).entries, Features.for_version("1.37"))
    assert (report.errors, report.warnings) == ((), ())


def test_explain_on_the_committed_bundle() -> None:
    """``drakit explain pod/NAME -f agreement-end.yaml`` for every Pending pod: the scheduler's message."""
    code, out, _ = drakit("validate", "-f", str(BUNDLE))
    assert (code, out.splitlines()[-1]) == (0, "520 object(s) valid")
    bundle = yaml.safe_load(BUNDLE.read_text(encoding="utf-8"))
    pending = pending_pods(bundle)
    assert len(pending) >= 20
    snap = ClusterSnapshot.from_bundle(load_bundle([str(BUNDLE)]))
    for pod in pending:
        want = pod["status"]["conditions"][0]
        assert (want["type"], want["status"], want["reason"]) == ("PodScheduled", "False", "Unschedulable")
        d = diagnose(snap, "pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
        assert d.scheduler == want["message"]
    # and through the command line, for one pod per distinct message
    seen: set[str] = set()
    for pod in pending:
        message = pod["status"]["conditions"][0]["message"]
        if message in seen:
            continue
        seen.add(message)
        code, out, err = drakit("explain", f"pod/{pod['metadata']['name']}", "-f", str(BUNDLE), "-o", "json")
        doc = json.loads(out)
        assert (code, doc["scheduler"]) == (EXIT_FOR_VERDICT[Verdict(doc["verdict"])], message), err


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        pytest.param("soon", "want a number of seconds >= 0 or 'end'", id="word"),
        pytest.param("-1", "want a number of seconds >= 0 or 'end'", id="negative"),
        pytest.param("nan", "want a number of seconds >= 0 or 'end'", id="nan"),
    ],
)
def test_bad_snapshot_time_is_a_usage_error(value: str, needle: str) -> None:
    code, out, err = drakit("simulate", str(AGREEMENT), "--snapshot-at", value)
    assert (code, out) == (2, "")
    assert needle in err and len(err.splitlines()) == 1


def test_in_memory_snapshot_carries_the_expected_release_to_explain() -> None:
    """The simulator's seam: explain on its snapshot says when the holder's devices come back."""
    from drakit.sim import parse_scenario

    scenario = parse_scenario(
        """
apiVersion: drakit.dev/v1alpha1
kind: Scenario
metadata: {name: release}
spec:
  deviceClasses: [gpu.nvidia.com]
  nodes: [{count: 1, template: a10g-4x, namePrefix: a10g-}]
  workloads:
    - {name: first, start: 0, duration: 600, resourceClaims: [{name: gpus, resourceClaimTemplateName: four}]}
    - {name: second, start: 10, resourceClaims: [{name: gpus, resourceClaimTemplateName: four}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: four, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 4}}]
""",
        "release.yaml",
    )
    _, snap = simulate_snapshot(scenario, at=20.0)
    d = diagnose(snap, "pod", "second", "default")
    (holder,) = d.holders
    assert (holder.expected_release, snap.expected_release[holder.claim]) == (600.0, 600.0)
    assert d.scheduler.startswith("0/1 nodes are available")
    assert "580s" in d.fix, d.fix
