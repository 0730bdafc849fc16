"""``drakit trial`` on the embedded demo cluster: the README's main-job command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from drakit.demo import demo_paths
from drakit.model.codec import KubeDumper


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "drakit.cli.main", "trial", *(() if "-f" in args else ("--demo",)), *args],
        capture_output=True, text=True, check=False,
    )


def test_trial_passes_on_demo() -> None:
    proc = run("-o", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["passed"]
    products = {d["product"]: d["count"] for d in report["inventory"]["devices"]}
    assert products == {"NVIDIA L4": 8, "NVIDIA H100 80GB HBM3": 8, "LATEST-GPU-MODEL": 8}
    placed = {p["pod"]: p for p in report["placements"]}
    # Training needs >= 48 GiB per device and one PCIe root: two H100s side by side.
    assert placed["ml/train-0"]["products"] == ["NVIDIA H100 80GB HBM3"] * 2
    assert placed["ml/train-0"]["node"] == "h100-node-1"
    # Evaluation prefers the smaller device, so it stays off the H100s.
    for i in range(3):
        assert placed[f"ml/eval-{i}"]["products"] == ["NVIDIA L4"], placed[f"ml/eval-{i}"]


def test_trial_text_mentions_the_two_checks() -> None:
    proc = run()
    assert proc.returncode == 0, proc.stderr
    assert "[ok] training-48g excludes every device below 48Gi: 8 excluded, 0 admitted" in proc.stdout
    assert "[ok] evaluation prefers the smaller devices: small (23034Mi) before large (81559Mi)" in proc.stdout
    assert "Trial PASSED" in proc.stdout


def test_trial_refuses_invalid_manifests_with_validates_lines(tmp_path: Path) -> None:
    docs = [d for p in demo_paths() for d in yaml.safe_load_all(Path(p).read_text())]
    docs[1]["spec"]["devices"][0]["name"] = "GPU_0"  # not a DNS label
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.dump_all(Dumper=KubeDumper, documents=docs))
    proc = run("-f", str(bad), "-o", "json")
    validate = subprocess.run(
        [sys.executable, "-m", "drakit.cli.main", "validate", "-f", str(bad)], capture_output=True, text=True, check=False
    )
    want = [f"error: {line}" for line in validate.stdout.splitlines()[:-1]]
    assert (proc.returncode, proc.stdout, proc.stderr.splitlines()) == (1, "", want)
    assert any("spec.devices[0].name" in line for line in want)


def test_trial_places_pods_of_a_bundle_with_events(tmp_path: Path) -> None:
    """Events are history, not something to replay: a bundle that carries them still trials."""
    docs = [d for p in demo_paths() for d in yaml.safe_load_all(Path(p).read_text())]
    docs.append({
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "train-0.1", "namespace": "ml"},
        "involvedObject": {"kind": "Pod", "name": "train-0", "namespace": "ml"},
        "reason": "FailedScheduling", "message": "0/4 nodes are available", "type": "Warning",
    })
    bundle = tmp_path / "with-events.yaml"
    bundle.write_text(yaml.safe_dump_all(docs))
    proc = run("-f", str(bundle), "-o", "json")
    assert proc.returncode == 0, proc.stderr
    assert {p["pod"] for p in json.loads(proc.stdout)["placements"]} >= {"ml/train-0"}
