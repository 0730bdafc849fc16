"""Every upstream allocator conformance case through the Python API, and a sample through the CLI.

Cases are read from ``../shared/conformance/allocator`` (or ``$DRAKIT_CONFORMANCE_DIR``) and
converted/compared by the lead-owned ``convert`` module under the README's rules.  Each case also
checks that the inputs are left untouched and that every device not chosen got a reason.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from drakit.allocator import allocate
from drakit.allocator.trace import Trace
from drakit.features import Features
from drakit.model.codec import KubeDumper
from tests.conformance import convert

CASES = list(convert.iter_cases())
pytestmark = pytest.mark.skipif(not CASES, reason="conformance vectors not found (../shared/conformance)")


def _split(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "node": objects[0],
        "slices": [o for o in objects if o.get("kind") == "ResourceSlice"],
        "classes": [o for o in objects if o.get("kind") == "DeviceClass"],
        "claims": [o for o in objects if o.get("kind") == "ResourceClaim"],
    }


@pytest.mark.parametrize(("name", "case"), [pytest.param(n, c, id=n) for n, c in CASES])
def test_case_through_api(name: str, case: dict[str, Any]) -> None:
    objects = convert.case_to_bundle(case)
    inputs = _split(objects)
    before = copy.deepcopy(inputs)
    trace = Trace()
    outcome = allocate(**inputs, features=Features().with_gates(convert.case_gates(case)), trace=trace)
    assert convert.compare(case, outcome.to_json()) == []
    assert inputs == before, "allocate() modified its inputs"
    if outcome.status != "error":
        chosen = {
            f"{r['driver']}/{r['pool']}/{r['device']}"
            for c in outcome.claims
            for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")
            or []
        }
        for s in inputs["slices"]:
            for d in s["spec"].get("devices") or []:
                ident = f"{s['spec']['driver']}/{s['spec']['pool']['name']}/{d['name']}"
                if ident in chosen:
                    continue
                assert trace.has_reason(ident), f"no reason recorded for {ident}"


@pytest.mark.parametrize("name", [name for name, _ in CASES])
def test_case_through_cli(name: str, tmp_path: Path) -> None:
    """Every case through ``drakit allocate --as-given -o json``, as the held-back upstream cases will be run.

    ``--as-given``: upstream's table feeds its allocator objects the API server would refuse
    (a request without a class, attributes without a value) to reach the allocator's own error
    paths, and claims without a namespace; without the flag, ``allocate`` refuses such input at
    the door with ``validate``'s lines.
    """
    from drakit.cli.main import app

    case = dict(CASES)[name]
    bundle = tmp_path / "bundle.yaml"
    bundle.write_text(yaml.dump_all(Dumper=KubeDumper, documents=convert.case_to_bundle(case), sort_keys=False), encoding="utf-8")
    result = CliRunner().invoke(
        app,
        ["allocate", "--as-given", "-f", str(bundle), "--feature-gates", convert.case_gates(case), "-o", "json"],
    )
    expected_exit = {"allocated": 0, "unsatisfiable": 3, "error": 4}[case["expect"]["status"]]
    assert result.exit_code == expected_exit, result.output
    assert convert.compare(case, json.loads(result.stdout)) == []
