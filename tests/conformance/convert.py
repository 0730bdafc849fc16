"""Turn an upstream allocator conformance case into a drakit/oracle bundle, and compare outcomes.

The shared conformance files (``../shared/conformance/allocator``) hand the upstream allocator its
prior allocations as bare device sets.  drakit's command line (and the oracle's, which mirrors it)
takes prior allocations as what a cluster really has: ResourceClaims that carry
``status.allocation``.  This module synthesises those in-use claims, so one bundle file serves
drakit, the oracle and any other harness; ``compare`` applies the README's comparison rules.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

FIXED_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
IN_USE_NAMESPACE = "drakit-conformance"

# Case "features" key -> upstream gate name.  Every gate is passed explicitly because a
# gate the case does not list is off in the upstream test.
FEATURE_GATES = {
    "adminAccess": "DRAAdminAccess",
    "prioritizedList": "DRAPrioritizedList",
    "partitionableDevices": "DRAPartitionableDevices",
    "deviceTaints": "DRADeviceTaints",
    "consumableCapacity": "DRAConsumableCapacity",
    "bindingConditions": "DRADeviceBindingConditions",
    "deviceStatus": "DRAResourceClaimDeviceStatus",
    "listTypeAttributes": "DRAListTypeAttributes",
}


def conformance_dir() -> Path:
    override = os.environ.get("DRAKIT_CONFORMANCE_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2].parent / "shared" / "conformance"


def allocator_cases() -> list[Path]:
    return sorted((conformance_dir() / "allocator").glob("*.json"))


def load_case(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def case_gates(case: Mapping[str, Any]) -> str:
    features = case.get("features", {})
    return ",".join(f"{gate}={str(bool(features.get(key, False))).lower()}" for key, gate in FEATURE_GATES.items())


def _in_use_claim(index: int, results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"in-use-{index}", "namespace": IN_USE_NAMESPACE, "uid": f"in-use-{index}"},
        "spec": {"devices": {"requests": [{"name": "req", "exactly": {"deviceClassName": "in-use"}}]}},
        "status": {"allocation": {"devices": {"results": results}}},
    }


def in_use_claims(case: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Synthesise claims whose allocations reproduce the case's prior allocated state.

    - each ``allocatedDevices`` entry becomes an exclusive result;
    - ``allocatedState.sharedDevices`` / ``consumedCapacity`` become shared results (with a share
      ID and the summed consumed capacity), which is how the scheduler derives the same state.
    """
    claims: list[dict[str, Any]] = []
    for dev in case.get("allocatedDevices") or []:
        claims.append(
            _in_use_claim(
                len(claims),
                [{"request": "req", "driver": dev["driver"], "pool": dev["pool"], "device": dev["device"]}],
            )
        )
    state = case.get("allocatedState") or {}
    consumed = {(c["driver"], c["pool"], c["device"]): c.get("capacity") or {} for c in state.get("consumedCapacity") or []}
    used_keys: set[tuple[str, str, str]] = set()
    for share in state.get("sharedDevices") or []:
        key = (share["driver"], share["pool"], share["device"])
        result: dict[str, Any] = {
            "request": "req",
            "driver": key[0],
            "pool": key[1],
            "device": key[2],
            "shareID": share["shareID"],
        }
        if key in consumed and key not in used_keys:
            result["consumedCapacity"] = dict(consumed[key])
            used_keys.add(key)
        claims.append(_in_use_claim(len(claims), [result]))
    for key, capacity in consumed.items():
        if key in used_keys:
            continue
        n = len(claims)
        share_id = f"00000000-0000-4000-8000-{n:012d}"
        claims.append(
            _in_use_claim(
                n,
                [
                    {
                        "request": "req",
                        "driver": key[0],
                        "pool": key[1],
                        "device": key[2],
                        "shareID": share_id,
                        "consumedCapacity": dict(capacity),
                    }
                ],
            )
        )
    return claims


def case_to_bundle(case: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Node, slices, classes, in-use claims, then the claims to allocate (in case order)."""
    objects: list[dict[str, Any]] = [copy.deepcopy(case["node"])]
    objects += copy.deepcopy(case.get("slices") or [])
    objects += copy.deepcopy(case.get("classes") or [])
    objects += in_use_claims(case)
    objects += copy.deepcopy(case.get("claims") or [])
    return objects


# --- comparison ---------------------------------------------------------------------------


def _clean(value: Any) -> Any:
    """Drop null and empty members: the transcription cannot tell Go's nil from empty there."""
    if isinstance(value, dict):
        out = {k: _clean(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _normalise_result(result: dict[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(result)
    if result.get("shareID"):
        result["shareID"] = FIXED_SHARE_ID
    return result


def _normalise_selector(selector: Any) -> Any:
    if not isinstance(selector, dict):
        return selector

    def req_key(req: dict[str, Any]) -> str:
        return json.dumps(req, sort_keys=True)

    terms = []
    for term in selector.get("nodeSelectorTerms") or []:
        norm: dict[str, Any] = {}
        for field in ("matchExpressions", "matchFields"):
            reqs = []
            for req in term.get(field) or []:
                req = dict(req)
                if isinstance(req.get("values"), list):
                    req["values"] = sorted(req["values"])
                reqs.append(req)
            if reqs:
                norm[field] = sorted(reqs, key=req_key)
        terms.append(norm)
    return {"nodeSelectorTerms": sorted(terms, key=lambda t: json.dumps(t, sort_keys=True))}


def _canonical_allocation(allocation: Any, ordered: bool) -> Any:
    allocation = _clean(copy.deepcopy(allocation or {}))
    devices = allocation.get("devices") or {}
    results = [_normalise_result(r) for r in devices.get("results") or []]
    if not ordered:
        results = sorted(results, key=lambda r: json.dumps(r, sort_keys=True))
        if "nodeSelector" in allocation:
            allocation["nodeSelector"] = _normalise_selector(allocation["nodeSelector"])
    if results:
        devices["results"] = results
        allocation["devices"] = devices
    return allocation


def compare(case: Mapping[str, Any], outcome: Mapping[str, Any]) -> list[str]:
    """Differences between an ``allocate -o json`` document and the case's expectation ([] = pass)."""
    expect = case["expect"]
    problems: list[str] = []
    status = outcome.get("status")
    if status != expect["status"]:
        problems.append(f"status: want {expect['status']!r}, got {status!r} (message: {outcome.get('message')!r})")
        return problems
    if status == "error":
        want = expect.get("errorContains") or ""
        if want not in (outcome.get("message") or ""):
            problems.append(f"error message: want substring {want!r}, got {outcome.get('message')!r}")
        return problems
    if status != "allocated":
        return problems
    ordered = bool(expect.get("orderedDeviceResults"))
    want_results = expect.get("results") or []
    claims = outcome.get("claims") or []
    got_results = [((c.get("status") or {}).get("allocation")) for c in claims]
    if len(got_results) != len(want_results):
        problems.append(f"want {len(want_results)} allocation results, got {len(got_results)}")
        return problems
    for i, (want, got) in enumerate(zip(want_results, got_results, strict=True)):
        w = _canonical_allocation(want, ordered)
        g = _canonical_allocation(got, ordered)
        if w != g:
            problems.append(
                f"claim #{i}: allocation differs\n  want: {json.dumps(w, sort_keys=True)}\n  got:  {json.dumps(g, sort_keys=True)}"
            )
    return problems


def iter_cases() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in allocator_cases():
        yield path.stem, load_case(path)
