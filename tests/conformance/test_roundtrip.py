"""Every allocator conformance input loads as typed objects, round-trips exactly, and validates.

Validation findings are informational (some upstream test objects break API rules on
purpose, e.g. ``subReq-0`` names or duplicate slice names); loading and round-trip must
be exact.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from drakit.features import Features
from drakit.model import AllocationResult, parse_object, to_wire
from drakit.model.validate import validate_report

CONFORMANCE = Path(
    os.environ.get("DRAKIT_CONFORMANCE_DIR")
    or Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"
) / "allocator"
FILES = sorted(CONFORMANCE.glob("*.json"))


def _features(case: dict[str, Any]) -> Features:
    f = case.get("features", {})
    return Features(
        admin_access=f.get("adminAccess", False),
        prioritized_list=f.get("prioritizedList", False),
        device_status=f.get("deviceStatus", False),
        device_taints=f.get("deviceTaints", False),
        partitionable_devices=f.get("partitionableDevices", False),
        consumable_capacity=f.get("consumableCapacity", False),
        binding_conditions=f.get("bindingConditions", False),
        list_type_attributes=f.get("listTypeAttributes", False),
    )


def test_conformance_inputs_are_present() -> None:
    assert len(FILES) == 168, f"expected 168 conformance files in {CONFORMANCE}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_load_dump_load_is_identity(path: Path) -> None:
    case = json.loads(path.read_text())
    for wire in [case["node"], *case["slices"], *case["classes"], *case["claims"]]:
        obj = parse_object(wire)
        assert to_wire(obj) == wire
        assert to_wire(type(obj).model_validate(to_wire(obj))) == wire
    for wire in case["expect"].get("results") or []:
        assert to_wire(AllocationResult.model_validate(wire)) == wire


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_validation_runs_and_reports(path: Path) -> None:
    case = json.loads(path.read_text())
    objs = [parse_object(w) for w in [case["node"], *case["slices"], *case["classes"], *case["claims"]]]
    report = validate_report(objs, _features(case))
    for problem in report.errors:  # informational: printed with -rP / -s
        for line in problem.lines():
            assert " is invalid: " in line
            print(f"{path.stem}: {line}")
