"""``drakit queue compile | check | explain`` and ``drakit lint`` with a catalog, as a shell sees them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from drakit.cli.testing import run
from drakit.queues import compile_catalog, load_catalog_text

ROOT = Path(__file__).parents[3]
LAB = ROOT / "drakit" / "queues" / "examples" / "lab.yaml"
PROFILES = ROOT / "drakit" / "profiles" / "examples"


def _job(name: str, ns: str, queue: str, template: str, priority: str = "low") -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kueue.x-k8s.io/queue-name": queue, "kueue.x-k8s.io/priority-class": priority}},
            "spec": {"suspend": True, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}]}}}}


def _template(name: str, ns: str, count: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": ns},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu-48g.gpu.nvidia.com", "count": count}}]}}}}


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    """The lab catalog compiled to Kueue objects, and jobs: training holds 4 + 2 borrowed, then three wait."""
    objs = [o for o in compile_catalog(load_catalog_text(LAB.read_text(), "lab.yaml").catalog)]
    ns = "team-vision"
    objs += [_template("two", ns, 2), _template("three", ns, 3)]
    objs += [_job("a", ns, "training", "three"), _job("b", ns, "training", "three"), _job("c", ns, "training", "two"),
             _job("d", ns, "training", "two", "high"), _job("e", ns, "training", "two")]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    return path


def test_compile_example_and_names() -> None:
    out = run("queue", "compile", str(LAB), "-o", "name")
    assert out.exit_code == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "configuration.config.kueue.x-k8s.io/configuration"
    assert "clusterqueue.kueue.x-k8s.io/training" in out.stdout


def test_compile_bad_catalog_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(LAB.read_text().replace("strategy: StrictFIFO", "stratgy: StrictFIFO"))
    out = run("queue", "compile", str(bad))
    assert out.exit_code == 1
    assert out.stderr.splitlines() == [f"error: {bad}:28: QueueCatalog \"lab\": spec.queues[0].stratgy: unknown field"]


def test_explain_waiting_job(cluster: Path) -> None:
    out = run("queue", "explain", "job/e", "-n", "team-vision", "-f", str(cluster))
    assert out.exit_code == 3, out.stdout + out.stderr
    # d (high priority) and a are admitted, 5 of 4 + 2 borrowable; b (3 more) heads the StrictFIFO queue.
    assert out.stdout.splitlines() == [
        "team-vision/e: waiting (BehindHead)",
        "  ClusterQueue training: quota 4 × gpu-48g, 5 used by jobs a, d (1 of them borrowed from cohort org); "
        "2 ahead of you (StrictFIFO)",
        "  fix: StrictFIFO admits in order: the workloads ahead of you go first",
    ]
    head = run("queue", "explain", "job/b", "-n", "team-vision", "-f", str(cluster))
    assert "  Kueue: couldn't assign flavors to pod set main: insufficient unused quota for gpu-48g in flavor default, " \
           "2 more needed" in head.stdout.splitlines()


def test_explain_admitted_job_exits_0(cluster: Path) -> None:
    out = run("queue", "explain", "a", "-n", "team-vision", "-f", str(cluster), "-o", "json")
    assert out.exit_code == 0, out.stderr
    assert '"admitted": true' in out.stdout


def test_explain_unknown_job_names_the_input(cluster: Path) -> None:
    out = run("queue", "explain", "job/zzz", "-n", "team-vision", "-f", str(cluster))
    assert out.exit_code == 2 and str(cluster) in out.stderr


def test_check_reports_who_enforces() -> None:
    out = run("queue", "check", str(LAB))
    assert out.exit_code == 0
    assert any("concurrency" in line and "enforced by drakit" in line for line in out.stdout.splitlines())
    assert any("device quota gpu-48g" in line and "enforced by kueue" in line for line in out.stdout.splitlines())


def test_lint_flags_profiles_kueue_cannot_admit(tmp_path: Path) -> None:
    for name in ("hopper-or-ampere.yaml", "nvidia-base.yaml", "training-48g.yaml"):
        (tmp_path / name).write_text((PROFILES / name).read_text())
    (tmp_path / "lab.yaml").write_text(LAB.read_text())
    out = run("lint", "-f", str(tmp_path))
    assert out.exit_code == 1
    flagged = [line for line in out.stdout.splitlines() if "[KueueCannotAdmit]" in line]
    assert len(flagged) == 1 and "Profile/hopper-or-ampere" in flagged[0] and "firstAvailable" in flagged[0]
    (tmp_path / "lab.yaml").unlink()
    assert "[KueueCannotAdmit]" not in run("lint", "-f", str(tmp_path)).stdout


def test_explain_recognises_13969_and_inactive_queue(tmp_path: Path) -> None:
    objs = [o for o in compile_catalog(load_catalog_text(LAB.read_text(), "lab.yaml").catalog)
            if not (o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "batch")]
    held = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "batch"},
            "spec": {"stopPolicy": "Hold", "namespaceSelector": {},
                     "resourceGroups": [{"coveredResources": ["gpu-48g"], "flavors": [{"name": "default", "resources": [
                         {"name": "gpu-48g", "nominalQuota": 2}]}]}]}}
    parked = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
              "metadata": {"name": "job-p-1a2b3", "namespace": "team-vision"},
              "spec": {"queueName": "training", "podSets": [{"name": "main", "count": 1, "template": {"spec": {
                  "containers": [{"name": "c", "image": "busybox"}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "big"}]}}}]},
              "status": {"conditions": [
                  {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "DeviceClass not mapped"},
                  {"type": "Requeued", "status": "False", "reason": "Inadmissible", "message": "DeviceClass not mapped"}]}}
    objs += [held, parked, _template("big", "team-vision", 9), _job("q", "team-nlp", "batch", "two")]
    objs += [_template("two", "team-nlp", 2)]
    path = tmp_path / "kueue.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    stuck = run("queue", "explain", "workload/job-p-1a2b3", "-n", "team-vision", "-f", str(path))
    assert stuck.exit_code == 3
    assert "kueue issue 13969" in stuck.stdout and "fix: delete the Workload" in stuck.stdout
    inactive = run("queue", "explain", "job/q", "-n", "team-nlp", "-f", str(path))
    assert "team-nlp/q: waiting (Inactive)" in inactive.stdout
    assert "ClusterQueue batch is inactive: spec.stopPolicy is Hold" in inactive.stdout
