"""Where upstream's three allocator implementations answer differently, measured on the generator.

kube-scheduler's ``structured.NewAllocator`` runs the first implementation whose supported
features cover the enabled gates: "stable" (AdminAccess, PrioritizedList,
PartitionableDevices, DeviceTaints), then "incubating" (+ DeviceBindingAndStatus,
ConsumableCapacity), then "experimental" (+ ListTypeAttributes, ...).  drakit follows one
engine; this run says, per gate set, how often the implementation the scheduler would pick
answers differently from the one drakit is compared with, and how.

    python -m tests.differential.implementations --cases 5000 --seed 1

Scenarios come from :func:`tests.differential.generator.random_scenario` with their gates
forced into the gate set being measured.  "stable" visits pools in Go map order, so it is
asked ``--repeats`` times: a case counts as "pool order only" when some repeat gives the
other implementation's exact answer, and as a difference of kind K (status pair plus the
error message with names and numbers blanked) when none does.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections import Counter
from dataclasses import replace
from typing import Any

from tests.differential.generator import GATES, Scenario, random_scenario
from tests.differential.harness import _template, disagreements
from tests.oracle.client import DEFAULT_BINARY, Oracle

# Gate set -> (gates forced off, gates forced on, the implementation kube-scheduler runs, the
# implementation drakit is compared with in the differential run).
GATE_SETS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str, str]] = {
    "stable": (
        ("DRAConsumableCapacity", "DRADeviceBindingConditions", "DRAListTypeAttributes"),
        (),
        "stable",
        "incubating",
    ),
    "consumable-capacity": (
        ("DRAListTypeAttributes",),
        ("DRAConsumableCapacity",),
        "incubating",
        "experimental",
    ),
    "binding-conditions": (
        ("DRAListTypeAttributes",),
        ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
        "incubating",
        "experimental",
    ),
}


def _force(scenario: Scenario, off: tuple[str, ...], on: tuple[str, ...]) -> Scenario:
    gates = dict(item.split("=") for item in scenario.gates.split(","))
    gates.update({g: "false" for g in off} | {g: "true" for g in on})
    return replace(scenario, gates=",".join(f"{g}={gates[g]}" for g in GATES))


def _drop_disabled(scenario: Scenario) -> Scenario:
    """The scenario as an API server with DRAConsumableCapacity off stores it.

    The API server drops capacity requests, ``distinctAttribute`` and ``allowMultipleAllocations``
    on write when the gate is off, so only gate skew between it and the scheduler brings
    them to an allocator running without the gate.
    """

    objects = []
    for obj in scenario.objects:
        obj = copy.deepcopy(obj)
        if obj["kind"] == "ResourceClaim" and (obj.get("status") or {}).get("allocation") is None:
            devices = obj["spec"]["devices"]
            for request in devices["requests"]:
                for spec in [request.get("exactly") or {}, *request.get("firstAvailable", [])]:
                    spec.pop("capacity", None)
            kept = [c for c in devices.get("constraints", []) if "distinctAttribute" not in c]
            if kept:
                devices["constraints"] = kept
            else:
                devices.pop("constraints", None)
        if obj["kind"] == "ResourceSlice":
            for device in obj["spec"].get("devices", []):
                device.pop("allowMultipleAllocations", None)
                for cap in device.get("capacity", {}).values():
                    cap.pop("requestPolicy", None)
        objects.append(obj)
    return replace(scenario, objects=tuple(objects))


def _slices_sorted(scenario: Scenario) -> Scenario:
    """Slices in (driver, pool, name) order: "stable" walks them in input order, the others by name."""
    slices = iter(
        sorted(
            (o for o in scenario.objects if o["kind"] == "ResourceSlice"),
            key=lambda o: (o["spec"]["driver"], o["spec"]["pool"]["name"], o["metadata"]["name"]),
        )
    )
    return replace(
        scenario, objects=tuple(next(slices) if o["kind"] == "ResourceSlice" else o for o in scenario.objects)
    )


def _kind(want: dict[str, Any], got: dict[str, Any]) -> str:
    if want["status"] != got["status"]:
        detail = next((_template(a["message"]) for a in (want, got) if a["status"] == "error"), "")
        return f"{want['status']} -> {got['status']} {detail}".rstrip()
    if want["status"] == "error":
        return f"error: {_template(want['message'])} / {_template(got['message'])}"
    return f"{want['status']}: different devices"


def measure(
    oracle: Oracle, name: str, cases: int, seed: int, repeats: int, consistent: bool, sort_slices: bool
) -> tuple[Counter[str], dict[str, int]]:
    """Kinds of difference (and their counts) over ``cases`` scenarios of gate set ``name``."""
    off, on, scheduler, compared = GATE_SETS[name]
    kinds: Counter[str] = Counter()
    first: dict[str, int] = {}
    for i in range(cases):
        scenario = _force(random_scenario(f"{seed}:{i}"), off, on)
        if consistent and "DRAConsumableCapacity" in off:
            scenario = _drop_disabled(scenario)
        if sort_slices:
            scenario = _slices_sorted(scenario)
        objects = list(scenario.objects)
        base = oracle.allocate(objects, gates=scenario.gates, node=scenario.node, allocators=compared)
        problems: list[str] = []
        other: dict[str, Any] = base
        for _ in range(repeats if scheduler == "stable" else 1):
            other = oracle.allocate(objects, gates=scenario.gates, node=scenario.node, allocators=scheduler)
            problems = disagreements(base, other)
            if not problems:
                break
        if problems:
            kind = _kind(base, other)
            names = [o["metadata"]["name"] for o in objects if o["kind"] == "ResourceSlice"]
            if len(set(names)) != len(names):
                kind = "[slices sharing a name] " + kind  # unstorable: one name per slice in a cluster
            kinds[kind] += 1
            first.setdefault(kind, i)
    return kinds, first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--gate-set", choices=sorted(GATE_SETS), action="append")
    parser.add_argument(
        "--sort-slices", action="store_true", help="input slices in name order (see the module doc)"
    )
    parser.add_argument(
        "--consistent",
        action="store_true",
        help="drop what the API server drops with the gates off (no skew)",
    )
    args = parser.parse_args(argv)
    oracle = Oracle(DEFAULT_BINARY)
    try:
        for name in args.gate_set or list(GATE_SETS):
            kinds, first = measure(
                oracle, name, args.cases, args.seed, args.repeats, args.consistent, args.sort_slices
            )
            _, _, scheduler, compared = GATE_SETS[name]
            print(
                f"{name}: scheduler runs {scheduler}, compared with {compared}: "
                f"{sum(kinds.values())} of {args.cases} cases differ beyond pool order",
                flush=True,
            )
            for kind, n in kinds.most_common():
                print(f"  {n:6d}  {kind}  (first: case {first[kind]})")
    finally:
        oracle.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
