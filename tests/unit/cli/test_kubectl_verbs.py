"""``explain pods --all-pending``, ``allocate pod/NAME``, ``version`` and the shared kubectl options.

Every row runs the real CLI on a mixed NVIDIA cluster (A100 40/80 GB, L40S, H100) and checks
the answer and the documented exit code.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from drakit.cli.console import run_guarded
from drakit.cli.main import app
from drakit.cli.options import labels_match, parse_label_selector
from drakit.errors import UsageError
from tests.unit.explain import mixed as m

LONG = "ml-platform-" + "x" * 50
FOUR_SAME_ROOT = m.spec(m.request("gpus", 4, m.H100), constraints=[m.same_root()])


def _cluster() -> list[m.Obj]:
    objs = m.cluster() + m.busy("h100-quad", range(8), "holder-1")
    for i in range(3):
        objs += m.pending(f"train-{i}", FOUR_SAME_ROOT, labels={"job": "train", "team": LONG})
    for i in range(2):
        objs += m.pending(f"eval-{i}", m.spec(m.request("gpus", 1, m.MEM.format(q="90Gi"))), labels={"job": "eval"})
    objs += m.pending("small", m.spec(m.request("gpus", 1)), via_template=True, labels={"job": "small"})
    objs += m.pending("big", m.spec(m.request("gpus", 4, m.MEM.format(q="48Gi"))), via_template=True)
    other = m.pending("elsewhere", m.spec(m.request("gpus", 1)))
    for o in other:
        o["metadata"]["namespace"] = "research"
    return objs + other


@pytest.fixture
def bundle(tmp_path: Path) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(_cluster(), sort_keys=False), encoding="utf-8")
    return str(path)


def _run(*args: str) -> tuple[int, str]:
    """The installed entry point's behaviour in-process: exit code (errors mapped) and stdout."""
    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["drakit", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_guarded(app)
    finally:
        sys.argv = argv
    return code, out.getvalue()


@pytest.mark.parametrize(
    ("args", "exit_code", "groups"),
    [
        pytest.param(["-n", "ml"], 3, [("never", "NoMatchingDevices", 2), ("waiting", "ConstraintsUnsatisfiable", 3),
                                       ("ok", "Fits", 2)], id="namespace"),
        pytest.param(["-n", "ml", "-l", "job=train"], 3, [("waiting", "ConstraintsUnsatisfiable", 3)], id="label"),
        pytest.param(["-n", "ml", "-l", "job in (small)"], 0, [("ok", "Fits", 1)], id="set-based-label"),
        pytest.param(["-A", "-l", "!job"], 0, [("ok", "Fits", 2)], id="all-namespaces-no-label"),
        pytest.param(["-n", "nowhere"], 0, [], id="no-waiting-pods"),
    ],
)
def test_all_pending(bundle: str, args: list[str], exit_code: int, groups: list[tuple[str, str, int]]) -> None:
    code, out = _run("explain", "pods", "--all-pending", "-f", bundle, "-o", "json", *args)
    assert code == exit_code, out
    doc: dict[str, Any] = json.loads(out)
    assert [(g["verdict"], g["code"], len(g["pods"])) for g in doc["groups"]] == groups


def test_all_pending_shares_work_and_keeps_labels_whole(bundle: str) -> None:
    code, out = _run("explain", "pods", "--all-pending", "-f", bundle, "-n", "ml", "-o", "json")
    doc = json.loads(out)
    assert code == 3
    assert doc["total"] == 7 and doc["diagnosed"] == 4  # 3 replicas of train and 2 of eval share a diagnosis
    train = next(p for p in doc["pods"] if p["pod"] == "ml/train-0")
    assert train["labels"] == {"job": "train", "team": LONG}
    waiting = next(g for g in doc["groups"] if g["verdict"] == "waiting")
    assert waiting["pods"] == ["ml/train-0", "ml/train-1", "ml/train-2"]
    assert "h100-quad" in waiting["headline"]


def test_all_pending_text_one_line_per_pod(bundle: str) -> None:
    code, out = _run("explain", "pods", "--all-pending", "-f", bundle, "-n", "ml", "-o", "wide")
    assert code == 3
    pod_lines = [line for line in out.splitlines() if line.startswith("  - ")]
    assert len(pod_lines) == 7
    assert f"team={LONG}" in out  # wide shows labels, never cut


@pytest.mark.parametrize(
    ("words", "exit_code", "first_line"),
    [
        pytest.param(["pod/small"], 0, "pod/ml/small: OK (Fits)", id="kind-slash-name"),
        pytest.param(["small"], 0, "pod/ml/small: OK (Fits)", id="bare-name"),
        pytest.param(["pod", "small"], 0, "pod/ml/small: OK (Fits)", id="kind-space-name"),
        pytest.param(["pod", "train-0"], 3, "pod/ml/train-0: WAITING (ConstraintsUnsatisfiable)", id="waiting"),
        pytest.param(["pod", "missing"], 2, "", id="not-found"),
        pytest.param(["pods"], 2, "", id="kind-without-name"),
        pytest.param([], 2, "", id="no-target"),
    ],
)
def test_explain_targets(bundle: str, words: list[str], exit_code: int, first_line: str) -> None:
    code, out = _run("explain", *words, "-n", "ml", "-f", bundle)
    assert code == exit_code, out
    if first_line:
        assert out.splitlines()[0] == first_line


def test_explain_names_and_usage_errors(bundle: str) -> None:
    assert _run("explain", "pod", "small", "big", "-n", "ml", "-f", bundle, "-o", "name") == (0, "pod/small\npod/big\n")
    assert _run("explain", "pod/small", "-A", "-f", bundle)[0] == 2
    assert _run("explain", "pod/small", "-l", "a=b", "-f", bundle)[0] == 2
    assert _run("explain", "pod/small", "-n", "ml", "-A", "-f", bundle)[0] == 2


@pytest.mark.parametrize(
    ("args", "exit_code", "want"),
    [
        pytest.param(["pod/small", "--node", "l40s-0"], 0, "claim ml/small-gpus: allocated", id="template"),
        pytest.param(["pod", "big", "--node", "a100-40"], 3,
                     "8 × request gpus: memory 40Gi; the selector asks >= 48Gi = 49152Mi (short by 8Gi)",
                     id="counted-reasons"),
        pytest.param(["pod/train-0", "--node", "h100-quad"], 3, "8 × request gpus: the device is in use", id="in-use"),
        pytest.param(["pod/big", "--node", "a100-41"], 2, "", id="unknown-node"),
        pytest.param(["pod/nobody", "--node", "a100-40"], 2, "", id="unknown-pod"),
        pytest.param(["pod/big"], 2, "", id="node-required"),
        pytest.param(["pod/big", "--node", "a100-40", "--all-nodes"], 2, "", id="node-and-all-nodes"),
    ],
)
def test_allocate_pod(bundle: str, args: list[str], exit_code: int, want: str) -> None:
    code, out = _run("allocate", *args, "-n", "ml", "-f", bundle)
    assert code == exit_code, out
    assert want in out


def test_allocate_all_nodes(bundle: str) -> None:
    code, out = _run("allocate", "pod/big", "-n", "ml", "-f", bundle, "--all-nodes", "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["fits"] == ["a100-80", "h100-pair"]
    by_node = {n["node"]: n for n in doc["nodes"]}
    assert by_node["l40s-0"]["status"] == "unsatisfiable"
    l40s = [r for r in by_node["l40s-0"]["rejections"] if r["code"] == "RequestSelectorFalse"]
    assert [(r["count"], r["message"]) for r in l40s] == [
        (4, "memory 46068Mi; the selector asks >= 48Gi = 49152Mi (short by 3084Mi)")
    ]
    assert by_node["h100-quad"]["rejections"][0]["code"] == "DeviceInUse"


def test_allocate_all_nodes_names_excluded_nodes(tmp_path: Path) -> None:
    objs = m.cluster() + m.pending("pinned", m.spec(m.request("gpus", 1)), nodeSelector={"kubernetes.io/hostname": "l40s-0"})
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all(objs), encoding="utf-8")
    code, out = _run("allocate", "pod/pinned", "-n", "ml", "-f", str(path), "--all-nodes")
    assert code == 0
    assert out.splitlines()[0] == "1/5 node(s) fit: l40s-0"
    assert "node a100-40: excluded: node(s) didn't match Pod's node affinity/selector" in out


def test_version() -> None:
    code, out = _run("version", "-o", "json")
    assert code == 0 and set(json.loads(out)) == {"drakitVersion", "kubernetesVersion", "apiVersion", "python"}
    assert _run("version")[1].startswith("drakit ")


@pytest.mark.parametrize("verb", ["explain", "allocate", "version"])
def test_help_has_no_type_tags(verb: str) -> None:
    code, out = _run(verb, "--help")
    assert code == 0
    assert "<str>" not in out and "<list[str]>" not in out and "<bool>" not in out and "╭" not in out


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        pytest.param("a=b", {"a": "b"}, True, id="equals"),
        pytest.param("a==b,c!=d", {"a": "b", "c": "e"}, True, id="double-equals-and-not"),
        pytest.param("a in (x, y)", {"a": "y"}, True, id="in"),
        pytest.param("a notin (x,y)", {"a": "y"}, False, id="notin"),
        pytest.param("a", {}, False, id="exists"),
        pytest.param("!a", {}, True, id="not-exists"),
        pytest.param("env in (a,b),tier", {"env": "a", "tier": "1"}, True, id="comma-inside-parens"),
    ],
)
def test_label_selector(selector: str, labels: dict[str, str], want: bool) -> None:
    assert labels_match(parse_label_selector(selector), labels) is want


@pytest.mark.parametrize("bad", ["a in x", ",", "=b"])
def test_label_selector_errors(bad: str) -> None:
    with pytest.raises(UsageError):
        parse_label_selector(bad)


def test_cel_expression_starting_with_dash_gets_a_hint() -> None:
    err = io.StringIO()
    argv = sys.argv
    sys.argv = ["drakit", "cel", "eval", "-1 + 2"]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = run_guarded(app)
    finally:
        sys.argv = argv
    assert code == 2
    assert "put '--' before it" in err.getvalue() and "drakit cel eval -- '-1 + 2'" in err.getvalue()
    code, out = _run("cel", "eval", "--", "-1 + 2")
    assert (code, json.loads(out)["value"]) == (0, 1)


DIGITS = "9" * 5000


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        pytest.param(f"semver('1.2.{DIGITS}')", f'strconv.ParseUint: parsing "{DIGITS}": value out of range', id="semver"),
        pytest.param(f"int('{DIGITS}')", "program instantiation failed: type conversion error from 'string' to 'int'",
                     id="int"),
        pytest.param(f"uint('{DIGITS}')", "program instantiation failed: type conversion error from 'string' to 'uint'",
                     id="uint"),
    ],
)
def test_huge_digit_strings_get_gos_messages(expression: str, message: str) -> None:
    code, out = _run("cel", "eval", expression)
    assert code == 1
    assert json.loads(out)["error"]["message"] == message


def test_huge_version_in_a_selector_is_upstreams_runtime_error(tmp_path: Path) -> None:
    selector = f"device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('1.2.{DIGITS}')) >= 0"
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all(m.cluster() + m.pending("train", m.spec(m.request("gpus", 1, selector)))),
                    encoding="utf-8")
    code, out = _run("explain", "pod/train", "-n", "ml", "-f", str(path), "-o", "json")
    doc = json.loads(out)
    assert (code, doc["verdict"], doc["code"]) == (1, "broken", "SelectorRuntimeError")
    assert f'strconv.ParseUint: parsing "{DIGITS}": value out of range' in doc["headline"]
