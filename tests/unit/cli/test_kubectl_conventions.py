"""kubectl's conventions on every verb: ``-n``/``-A``/``-l``/``-f``, ``-o`` checked once, plain help.

Each row runs the real entry point (``drakit.cli.testing.run``) and checks the exit code and
what the user reads; every verb refuses an ``-o`` it has no meaning for in one line (exit 2).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from drakit.cli.options import kube_name
from drakit.cli.testing import run
from drakit.demo import demo_paths

CLUSTER = demo_paths()[0]
SCENARIO = str(Path(__file__).parents[2] / "scenarios" / "sim" / "agreement-end.yaml")
NVIDIA = "device.driver == 'gpu.nvidia.com'"


def _claim(name: str, namespace: str | None, labels: dict[str, str]) -> dict[str, object]:
    meta: dict[str, object] = {"name": name, "labels": labels}
    if namespace is not None:
        meta["namespace"] = namespace
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}},
    }


@pytest.fixture
def manifests(tmp_path: Path) -> str:
    objs = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
        _claim("train", "ml", {"team": "ml", "tier": "batch"}),
        _claim("serve", "ml", {"team": "ml", "tier": "online"}),
        _claim("other", None, {"team": "web"}),
    ]
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False), encoding="utf-8")
    return str(path)


# --- help -------------------------------------------------------------------------------------

VERBS = [
    ["validate"], ["lint"], ["match"], ["simulate"], ["trial"], ["cel", "eval"], ["cel", "check"],
    ["profile", "compile"], ["profile", "apply-to"], ["profile", "eligible"], ["explain"], ["allocate"], ["version"],
    ["describe"], ["get"],
    ["run"], ["record-env"], ["discover"], ["runs", "ls"], ["runs", "show"], ["runs", "compare"],
]
TYPE_TAG = re.compile(r"\bTEXT\b|\bINTEGER\b|\bPATH\b|<[a-z]|\{[A-Za-z]")


@pytest.mark.parametrize("verb", [pytest.param(v, id=" ".join(v)) for v in VERBS])
def test_help_is_plain(verb: list[str]) -> None:
    r = run(*verb, "--help")
    assert r.exit_code == 0, r.stderr
    assert not TYPE_TAG.search(r.stdout), r.stdout
    if verb != ["profile", "apply-to"]:  # its output is the manifest itself
        assert "-o, --output FORMAT" in r.stdout


# --- -o: checked once, one line -----------------------------------------------------------------

NEEDS = {
    "validate": ["validate", "-f", "x.yaml"],
    "lint": ["lint", "-f", "x.yaml"],
    "match": ["match", "-f", "x.yaml", "-s", "true"],
    "simulate": ["simulate", "x.yaml"],
    "trial": ["trial"],
    "cel eval": ["cel", "eval", "true"],
    "cel check": ["cel", "check", "true"],
    "profile compile": ["profile", "compile", "training-48g"],
    "profile eligible": ["profile", "eligible", "training-48g", "-f", "x.yaml"],
    "explain": ["explain", "-f", "x.yaml", "pod/x"],
    "allocate": ["allocate", "-f", "x.yaml"],
    "version": ["version"],
    "describe": ["describe", "pod/x", "-f", "x.yaml"],
    "get devices": ["get", "devices", "-f", "x.yaml"],
    "record-env": ["record-env"],
    "discover": ["discover"],
    "runs ls": ["runs", "ls"],
    "runs show": ["runs", "show", "x"],
    "runs compare": ["runs", "compare"],
}
REFUSED = {
    "validate": "wide", "lint": "name", "simulate": "wide", "trial": "name", "cel eval": "wide",
    "cel check": "name", "profile compile": "text", "profile eligible": "wide",
    "describe": "wide",
    "discover": "text", "runs ls": "name", "runs show": "text", "runs compare": "wide",
}


@pytest.mark.parametrize(
    ("args", "value"),
    [pytest.param(a, "bogus", id=f"{v}-bogus") for v, a in NEEDS.items()]
    + [pytest.param(NEEDS[v], f, id=f"{v}-{f}") for v, f in REFUSED.items()],
)
def test_output_value_is_a_one_line_usage_error(args: list[str], value: str) -> None:
    r = run(*args, "-o", value)
    assert r.exit_code == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: -o/--output {value!r}: want "), r.stderr


# --- validate: -n, -A, -l, -o name ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param([], ["deviceclass.resource.k8s.io/gpu", "resourceclaim.resource.k8s.io/train",
                          "resourceclaim.resource.k8s.io/serve", "resourceclaim.resource.k8s.io/other"], id="everything"),
        pytest.param(["-n", "ml"], ["resourceclaim.resource.k8s.io/train", "resourceclaim.resource.k8s.io/serve"],
                     id="namespace"),
        pytest.param(["-n", "default"], ["resourceclaim.resource.k8s.io/other"], id="default-namespace"),
        pytest.param(["-A", "-l", "team=ml,tier!=batch"], ["resourceclaim.resource.k8s.io/serve"], id="labels"),
        pytest.param(["-l", "tier"], ["resourceclaim.resource.k8s.io/train", "resourceclaim.resource.k8s.io/serve"],
                     id="label-exists"),
        pytest.param(["-n", "ml", "-l", "team in (web)"], [], id="nothing"),
    ],
)
def test_validate_selects_like_kubectl(manifests: str, args: list[str], want: list[str]) -> None:
    r = run("validate", "-f", manifests, *args, "-o", "name")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == want


def test_validate_name_puts_errors_on_stderr(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(_claim("Bad_Name", "ml", {})), encoding="utf-8")
    r = run("validate", "-f", str(bad), "-o", "name")
    assert r.exit_code == 1
    assert r.stdout == "resourceclaim.resource.k8s.io/Bad_Name\n"
    assert 'ResourceClaim "ml/Bad_Name" is invalid: metadata.name' in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["-n", "ml", "-A"], "-n/--namespace and -A/--all-namespaces exclude each other", id="n-and-A"),
        pytest.param(["-l", "team in ml"], "in needs a list in parentheses", id="bad-selector"),
    ],
)
def test_validate_usage_errors(manifests: str, args: list[str], message: str) -> None:
    r = run("validate", "-f", manifests, *args)
    assert r.exit_code == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_validate_text_counts_the_selection(manifests: str) -> None:
    r = run("validate", "-f", manifests, "-n", "ml")
    assert (r.exit_code, r.stdout) == (0, "2 object(s) valid\n")


# --- match: -s/--cel, the old --selector, -l, -o wide|name -------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "stdout_has", "stderr_has"),
    [
        pytest.param(["-s", NVIDIA], 0, "16 of 24 device(s) match", "", id="short"),
        pytest.param(["--cel", NVIDIA], 0, "16 of 24 device(s) match", "", id="long"),
        pytest.param(["--selector", NVIDIA], 0, "16 of 24 device(s) match", "--selector is -s/--cel now",
                     id="old-name-still-works"),
        pytest.param(["-s", NVIDIA, "-o", "wide"], 0, "gpu-0,gpu-1,gpu-2,gpu-3", "", id="wide"),
        pytest.param(["-s", NVIDIA, "-o", "name"], 0, "gpu.nvidia.com/l4-node-1/gpu-0\n", "", id="name"),
        pytest.param(["-l", "team=ml"], 2, "", "match selects devices by CEL with -s/--cel", id="label-selector"),
        pytest.param([], 2, "", "give -s/--cel EXPR and/or --class NAME", id="nothing"),
    ],
)
def test_match_options(args: list[str], code: int, stdout_has: str, stderr_has: str) -> None:
    r = run("match", "-f", CLUSTER, *args)
    assert r.exit_code == code, r.stderr
    assert stdout_has in r.stdout
    assert stderr_has in r.stderr
    assert "Traceback" not in r.stderr


# --- profile and simulate: -o name, -f ----------------------------------------------------------------


def test_profile_compile_name() -> None:
    r = run("profile", "compile", "training-48g", "--driver", "gpu.nvidia.com", "-n", "ml", "-o", "name")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == [
        "deviceclass.resource.k8s.io/training-48g.gpu.nvidia.com",
        "resourceclaimtemplate.resource.k8s.io/training-48g",
        "podtemplate/training-48g",
    ]


@pytest.mark.parametrize(
    ("how", "code", "message"),
    [
        pytest.param("arg", 0, "", id="argument"),
        pytest.param("-f", 0, "", id="filename"),
        pytest.param("both", 2, "give the manifest once", id="both"),
        pytest.param("none", 2, "missing the manifest", id="neither"),
    ],
)
def test_profile_apply_to_takes_f(tmp_path: Path, how: str, code: int, message: str) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: i\n",
                   encoding="utf-8")
    given = {"arg": [str(pod)], "-f": ["-f", str(pod)], "both": [str(pod), "-f", str(pod)], "none": []}[how]
    r = run("profile", "apply-to", "-p", "training-48g", "--driver", "gpu.nvidia.com", *given)
    assert r.exit_code == code, r.stderr
    assert message in r.stderr
    if code == 0:
        assert "resourceClaims" in r.stdout


@pytest.mark.parametrize(
    ("kind", "api_version", "want"),
    [
        pytest.param("ResourceClaim", "resource.k8s.io/v1", "resourceclaim.resource.k8s.io/x", id="group"),
        pytest.param("Pod", "v1", "pod/x", id="core"),
        pytest.param("Job", "batch/v1", "job.batch/x", id="batch"),
    ],
)
def test_kube_name(kind: str, api_version: str, want: str) -> None:
    assert kube_name(kind, api_version, "x") == want


@pytest.mark.parametrize(
    "verb",
    [pytest.param(["trial"], id="trial"), pytest.param(["validate", "-f", CLUSTER], id="validate"),
     pytest.param(["match", "-f", CLUSTER, "-s", "true"], id="match"),
     pytest.param(["profile", "eligible", "training-48g", "-f", CLUSTER], id="profile-eligible")],
)
def test_feature_gates_are_shared(verb: list[str]) -> None:
    r = run(*verb, "--feature-gates", "Nope=true")
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and 'unknown feature gate "Nope"' in r.stderr


def test_cel_eval_takes_the_device_with_f(tmp_path: Path) -> None:
    dev = tmp_path / "device.yaml"
    dev.write_text("driver: gpu.nvidia.com\nname: gpu-0\nattributes: {productName: {string: H100}}\n", encoding="utf-8")
    r = run("cel", "eval", "-f", str(dev), "device.attributes['gpu.nvidia.com'].productName == 'H100'")
    assert r.exit_code == 0, r.stderr
    assert '"value": true' in r.stdout


MIXED = str(Path(__file__).parents[3] / "drakit" / "sim" / "examples" / "mixed.yaml")


@pytest.mark.parametrize(
    ("extra", "code", "want"),
    [
        pytest.param(["--snapshot-at", "0"], 0, "resourceslice.resource.k8s.io/l4-0-gpu.nvidia.com", id="snapshot"),
        pytest.param([], 2, "-o name lists the objects of --snapshot-at", id="report"),
    ],
)
def test_simulate_name(extra: list[str], code: int, want: str) -> None:
    r = run("simulate", MIXED, *extra, "-o", "name", "-q")
    assert r.exit_code == code, r.stderr
    assert want in (r.stdout if code == 0 else r.stderr)
    if code == 0:
        assert all(re.fullmatch(r"[a-z]+(\.[a-z0-9.]+)?/\S+", line) for line in r.stdout.splitlines())
