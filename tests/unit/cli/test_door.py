"""Validation at the door: every verb that answers on objects refuses invalid ones with the exact
lines ``drakit validate`` prints for them (exit 1), instead of answering on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from drakit.cli.testing import run
from tests.unit.allocator.builders import claim, device, device_class, exact, node, slice_

BASE = [node(), slice_("s", [device("gpu-0"), device("gpu-1")]), device_class()]
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}],
        "containers": [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
    },
}

# Each invalid object is one the API server rejects; before the door, allocate said "allocated".
INVALID: list[Any] = [
    pytest.param([claim("c", exact("r", count=-1))], "spec.devices.requests[0].exactly.count", id="count-negative"),
    pytest.param(
        [claim("c", exact("r"), constraints=[{"requests": ["nope"], "matchAttribute": "gpu.example.com/model"}])],
        "spec.devices.constraints[0].requests[0]",
        id="constraint-names-no-request",
    ),
    pytest.param(
        [claim("c", exact("r")), slice_("bad", [device("GPU_0")], pool="pool-2")],
        "spec.devices[0].name",
        id="device-name-not-dns-label",
    ),
]

# Objects the reader converts or derives (a scenario reads neither): decoded, then validated like
# the rest.  Before, lint typed only resource.k8s.io/v1 objects itself and answered on these.
CONVERTED: list[Any] = [
    pytest.param(
        [{"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
          "spec": {"devices": {"requests": [{"name": "Bad_Name", "deviceClassName": "gpu.example.com"}]}}}],
        "spec.devices.requests[0].name",
        id="v1beta1-claim-request-name",
    ),
    pytest.param(
        [claim("c", exact("r")),
         {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "default"},
          "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}],
                                         "resourceClaims": [{"name": "gpu", "resourceClaimName": "a",
                                                             "resourceClaimTemplateName": "b"}]}}}}],
        "spec.resourceClaims[0]",
        id="job-template-pod",
    ),
]

VERBS: list[Any] = [
    pytest.param(["allocate"], id="allocate"),
    pytest.param(["explain", "pod/p"], id="explain"),
    pytest.param(["lint"], id="lint"),
    pytest.param(["trial"], id="trial"),
    pytest.param(["match", "--class", "gpu"], id="match"),
    pytest.param(["profile", "eligible", "evaluation"], id="profile-eligible"),
]


def drakit(*argv: str) -> tuple[int, str, str]:
    r = run(*argv)
    return r.exit_code, r.stdout, r.stderr


def validate_lines(path: Path) -> list[str]:
    """What ``drakit validate -f PATH`` prints for each problem (its summary line left out)."""
    code, out, _ = drakit("validate", "-f", str(path))
    assert code == 1, out
    return out.splitlines()[:-1]


def write(tmp_path: Path, objects: list[dict[str, Any]], name: str = "in.yaml") -> Path:
    f = tmp_path / name
    f.write_text(yaml.safe_dump_all(objects, sort_keys=False), encoding="utf-8")
    return f


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize(("bad", "field"), INVALID + CONVERTED)
def test_verbs_refuse_invalid_objects_with_validates_lines(
    tmp_path: Path, verb: list[str], bad: list[dict[str, Any]], field: str
) -> None:
    f = write(tmp_path, [*BASE, POD, *bad])
    want = validate_lines(f)
    assert any(field in line for line in want), want
    code, out, err = drakit(*verb, "-f", str(f))
    assert (code, out, err.splitlines()) == (1, "", [f"error: {line}" for line in want])


@pytest.mark.parametrize(("bad", "field"), INVALID)
def test_simulate_refuses_invalid_manifests_with_validates_lines(
    tmp_path: Path, bad: list[dict[str, Any]], field: str
) -> None:
    header = {"apiVersion": "drakit.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "s"}, "spec": {}}
    # The Scenario document last, so that the manifests keep their document indices and lines.
    f = write(tmp_path, [*BASE, *bad, header], "scenario.yaml")
    manifests = write(tmp_path, [*BASE, *bad], "manifests.yaml")
    want = [line.replace(str(manifests), str(f)) for line in validate_lines(manifests)]
    assert any(field in line for line in want), want
    code, out, err = drakit("simulate", str(f), "-q")
    assert (code, out, err.splitlines()) == (1, "", [f"error: {line}" for line in want])


def test_valid_input_still_answers(tmp_path: Path) -> None:
    f = write(tmp_path, [*BASE, POD, claim("c", exact("r"))])
    code, out, _ = drakit("allocate", "-f", str(f))
    assert (code, out.splitlines()[0]) == (0, "claim default/c: allocated")
    code, out, _ = drakit("explain", "pod/p", "-f", str(f))
    assert code == 0, out


def test_allocate_as_given_feeds_the_allocator_like_upstreams_tables(tmp_path: Path) -> None:
    """No validation, namespaces as written: upstream's messages name a namespace-less claim bare."""
    no_ns = claim("c", exact("r", cls=""))
    del no_ns["metadata"]["namespace"]
    f = write(tmp_path, [*BASE, no_ns])
    assert drakit("allocate", "-f", str(f))[0] == 1
    code, out, _ = drakit("allocate", "--as-given", "-f", str(f))
    assert (code, out.splitlines()[0]) == (4, "error: claim c, request r: missing device class name (unsupported request type?)")


def test_gate_warnings_reach_stderr_as_validate_prints_them(tmp_path: Path) -> None:
    f = write(tmp_path, [*BASE, claim("c", exact("r", adminAccess=True))])
    gates = ("--feature-gates", "DRAAdminAccess=false")
    _, _, want = drakit("validate", "-f", str(f), *gates)
    assert want.startswith("Warning: ") and "field dropped" in want
    _, _, err = drakit("allocate", "-f", str(f), *gates)
    assert err.startswith(want)


@pytest.mark.parametrize("documents", [pytest.param(200, id="at-the-cap"), pytest.param(5000, id="over-the-cap")])
def test_many_broken_documents_give_the_first_problems_and_a_count(tmp_path: Path, documents: int) -> None:
    bundle = tmp_path / "many.yaml"
    bundle.write_text("---\nkind: Nope\n" * documents)
    result = run("allocate", "-f", str(bundle))
    lines = result.stderr.splitlines()
    assert result.exit_code == 1
    assert lines[0] == f"error: {bundle}[0] (line 2): apiVersion not set"
    if documents <= 200:
        assert len(lines) == documents
    else:
        assert len(lines) == 201
        assert lines[-1] == f"error: ... and {documents - 200:,} more problems in the same input (the first 200 are shown)"


def test_validate_lists_the_first_problems_and_json_all(tmp_path: Path) -> None:
    bundle = tmp_path / "many.yaml"
    bundle.write_text("---\nkind: Nope\n" * 300)
    text = run("validate", "-f", str(bundle))
    assert text.exit_code == 1
    assert "... and 100 more errors (-o json lists them all)" in text.stdout
    assert len(text.stdout.splitlines()) == 202  # 200 errors, the count, the summary
    listed = run("validate", "-f", str(bundle), "-o", "json")
    assert len(yaml.safe_load(listed.stdout)["errors"]) == 300
