"""``drakit trial -f CLUSTER --profile P...``: the trial on a user's cluster, checks derived from the profiles.

The cluster is a mixed NVIDIA fleet in the driver's real schema (A100 40 GB and 80 GB, L40S,
H100, L4); the profiles are the bundled trial pair and recipes a platform engineer writes.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml

from drakit.inventory import templates

FLEET = (("a100-40-0", "a100-40gb-8x"), ("a100-80-0", "a100-80gb-8x"), ("l40s-0", "l40s-4x"), ("h100-0", "h100-8x"), ("l4-0", "l4-4x"))

HEAD = "apiVersion: drakit.dev/v1alpha1\nkind: Profile\nmetadata: {name: %s}\nextends: nvidia-base\nspec:\n"
PROFILES = {
    "train-4-same-root": HEAD % "train-4-same-root" + "  count: 4\n  memory: {min: 70Gi}\n  colocate: pcieRoot\n",
    "train-2-numa": HEAD % "train-2-numa" + "  count: 2\n  memory: {min: 79Gi}\n  colocate: numaNode\n",
    "eval-shadowed": HEAD % "eval-shadowed" + (
        "  alternatives:\n    order: as-written\n    options:\n"
        "    - {name: any-gpu}\n    - {name: l40s, products: {allow: ['NVIDIA L40S']}}\n"
    ),
    "eval-ordered": HEAD % "eval-ordered" + (
        "  alternatives:\n    order: as-written\n    options:\n"
        "    - {name: l40s, products: {allow: ['NVIDIA L40S']}}\n    - {name: a100-40, memory: {min: 40Gi, max: 40Gi}}\n"
        "    - {name: rest}\n"
    ),
}


def trial(tmp_path: Path, *profiles: str, fleet: tuple[tuple[str, str], ...] = FLEET) -> tuple[int, dict[str, Any]]:
    from drakit.cli.console import run_guarded
    from drakit.cli.main import app

    cluster = tmp_path / "cluster.yaml"
    objects = [o for name, template in fleet for o in templates.expand(template, name)] + [templates.nvidia_device_class()]
    cluster.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    args = ["trial", "-f", str(cluster), "-o", "json"]
    for p in profiles:
        if p in PROFILES:
            path = tmp_path / f"{p}.yaml"
            path.write_text(PROFILES[p])
            p = str(path)
        args += ["--profile", p]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), mock.patch.object(sys, "argv", ["drakit", *args]):
        code = run_guarded(app)
    return code, json.loads(out.getvalue())


def checks(report: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    return {c["name"]: (c["passed"], c["detail"]) for c in report["profiles"]["checks"]}


@pytest.mark.parametrize(
    ("profiles", "code", "want"),
    [
        pytest.param(
            ["training-48g"], 0,
            {
                # L4 23034Mi, L40S 46068Mi and A100 40Gi are all below 48Gi: 16 devices.
                "training-48g excludes every device below 48Gi": (True, "16 excluded, 0 admitted"),
                "training-48g fits on a node": (True, "2 of 5 node(s): a100-80-0, h100-0"),
            },
            id="training-48g-on-the-fleet",
        ),
        pytest.param(
            ["evaluation"], 0,
            {
                "evaluation keeps each of its alternatives": (
                    True, "small: 4 device(s) (NVIDIA L4), large: 28 device(s) "
                          "(NVIDIA A100-SXM4-40GB, NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3, NVIDIA L40S)"),
                "evaluation prefers the smaller devices": (True, "small (23034Mi) before large (40Gi..80Gi)"),
            },
            id="evaluation-on-the-fleet",
        ),
        pytest.param(
            ["train-4-same-root"], 1,
            {
                "train-4-same-root excludes every device below 70Gi": (True, "16 excluded, 0 admitted"),
                # Default node templates pair GPUs per PCIe root: four on one root exist nowhere.
                "train-4-same-root fits on a node": (
                    False, "no node of 5 with gpu.nvidia.com devices: needs 4 on one pcieRoot, at most 2 qualify; no qualifying device"),
            },
            id="four-gpus-on-one-root-fit-nowhere",
        ),
        pytest.param(
            ["train-2-numa"], 0,
            {
                # 79Gi = 80896Mi: the A100 80GB (81920Mi) and the H100 (81559Mi) qualify.
                "train-2-numa excludes every device below 79Gi": (True, "16 excluded, 0 admitted"),
                "train-2-numa fits on a node": (True, "2 of 5 node(s): a100-80-0, h100-0"),
            },
            id="numa-colocation",
        ),
        pytest.param(
            ["eval-shadowed"], 1,
            {
                "eval-shadowed keeps each of its alternatives": (
                    False, "any-gpu: 32 device(s) (NVIDIA A100-SXM4-40GB, NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3, "
                           "NVIDIA L4, NVIDIA L40S), l40s: 0 device(s); 'l40s' takes no device here"),
            },
            id="an-alternative-shadowed-by-an-earlier-one",
        ),
        pytest.param(
            ["eval-ordered"], 0,
            {
                "eval-ordered alternative 'a100-40' takes no device below 40Gi or above 40Gi": (True, "24 kept out, 0 taken"),
                "eval-ordered alternative 'l40s' takes only NVIDIA L40S": (True, "4 device(s) taken, all allowed"),
                "eval-ordered keeps each of its alternatives": (
                    True, "l40s: 4 device(s) (NVIDIA L40S), a100-40: 8 device(s) (NVIDIA A100-SXM4-40GB), rest: 20 device(s) "
                          "(NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3, NVIDIA L4)"),
            },
            id="each-alternative-keeps-its-devices",
        ),
    ],
)
def test_checks_come_from_the_profiles(tmp_path: Path, profiles: list[str], code: int, want: dict[str, tuple[bool, str]]) -> None:
    got_code, report = trial(tmp_path, *profiles)
    got = checks(report)
    for name, verdict in want.items():
        assert got.get(name) == verdict, (name, got)
    assert got_code == code and report["passed"] is (code == 0)
    assert [Path(p).stem for p in report["profilesFrom"]] == profiles


def test_profiles_get_a_pod_each_placed_on_the_cluster(tmp_path: Path) -> None:
    code, report = trial(tmp_path, "training-48g", "eval-ordered")
    assert code == 0
    placed = {p["pod"]: p for p in report["placements"]}
    assert set(placed) == {"drakit-trial/training-48g-0", "drakit-trial/eval-ordered-0"}
    # Two GPUs of >= 48Gi on one PCIe root: the A100 80GB and H100 nodes tie; the seeded draw picks one.
    train = placed["drakit-trial/training-48g-0"]
    assert train["node"] in ("a100-80-0", "h100-0") and len(set(train["products"])) == 1 and len(train["devices"]) == 2
    assert placed["drakit-trial/eval-ordered-0"]["products"] == ["NVIDIA L40S"]


def test_a_profile_without_its_devices_fails_the_trial(tmp_path: Path) -> None:
    code, report = trial(tmp_path, "training-48g", fleet=(("l4-0", "l4-4x"), ("l40s-0", "l40s-4x")))
    assert code == 1
    got = checks(report)
    assert got["training-48g excludes every device below 48Gi"] == (True, "8 excluded, 0 admitted")
    assert got["training-48g fits on a node"][0] is False
    pending = next(p for p in report["placements"] if p["pod"] == "drakit-trial/training-48g-0")
    assert pending["node"] is None and "cannot allocate all claims" in pending["pending"]


def test_unknown_profile_is_one_line_exit_1(tmp_path: Path) -> None:
    import subprocess

    cluster = tmp_path / "c.yaml"
    cluster.write_text(yaml.safe_dump_all(templates.expand("l4-4x", "l4-0"), sort_keys=False))
    proc = subprocess.run([sys.executable, "-m", "drakit.cli.main", "trial", "-f", str(cluster), "--profile", "no-such-profile"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error:") and "no-such-profile" in line


def test_product_and_memory_checks_catch_selectors_that_admit_everything() -> None:
    """The derived checks are not restatements of the table: wrong selectors fail them."""
    from drakit.profiles import parse_profiles
    from drakit.profiles.loader import example_texts
    from drakit.profiles.trial import trial_table

    objects = [o for name, template in FLEET for o in templates.expand(template, name)]
    pset = parse_profiles([(PROFILES["eval-ordered"], "eval.yaml"), (PROFILES["train-2-numa"], "train.yaml")], example_texts())
    got = {c.name: c for c in trial_table(objects, pset, evaluate=lambda expression, driver, device: True).checks}
    assert not got["eval-ordered alternative 'l40s' takes only NVIDIA L40S"].passed
    assert got["eval-ordered alternative 'l40s' takes only NVIDIA L40S"].detail.startswith("also takes NVIDIA A100-SXM4-40GB")
    assert got["train-2-numa excludes every device below 79Gi"].detail == "0 excluded, 16 admitted (" + ", ".join(
        f"{node}/gpu-{i}" for node, n in (("a100-40-0", 8), ("l40s-0", 4), ("l4-0", 4)) for i in range(n)) + ")"
    assert not got["eval-ordered keeps each of its alternatives"].passed
