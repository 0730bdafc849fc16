"""Running one differential case: drakit in-process, the oracle's answer, the comparison, the record.

Shared by the hypothesis test (``tests/oracle/test_differential.py``) and the bulk run
(``tests/differential/bulk.py``); pure apart from :func:`record`, which writes the regression file.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from drakit.model.codec import KubeDumper
from tests.conformance.convert import compare
from tests.differential.generator import Scenario

REGRESSIONS = Path(__file__).resolve().parent / "regressions"

Answer = dict[str, Any]
Ask = Callable[[Scenario], Answer]


def run_drakit(objects: list[dict[str, Any]], node_name: str, gates: str) -> Answer:
    """drakit's answer in the oracle's output shape; exceptions become status "exception"."""
    from drakit.allocator import allocate
    from drakit.features import Features

    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(copy.deepcopy(obj))
    node = next(n for n in by_kind.get("Node", []) if n["metadata"]["name"] == node_name)
    try:
        outcome = allocate(
            node=node,
            slices=by_kind.get("ResourceSlice", []),
            classes=by_kind.get("DeviceClass", []),
            claims=by_kind.get("ResourceClaim", []),
            features=Features().with_gates(gates),
            timeout=10.0,
        )
    except Exception as exc:  # every escape is a disagreement worth recording
        return {"status": "exception", "claims": [], "message": f"{type(exc).__name__}: {exc}"}
    result: Answer = outcome.to_json()
    return result


def drakit_answer(scenario: Scenario) -> Answer:
    return run_drakit(list(scenario.objects), scenario.node, scenario.gates)


# Both sides give up after the same 10 s deadline.  The allocator's own error (what the oracle
# prints) wraps the context error; drakit reports kube-scheduler's wording for the same event
# (drakit/allocator/README.md, "Deliberate differences").
UPSTREAM_DEADLINE = "filter operation aborted: context deadline exceeded"


def _timed_out(answer: Answer) -> bool:
    from drakit.allocator.search import TIMEOUT_MESSAGE

    return answer["status"] == "error" and answer["message"] in (UPSTREAM_DEADLINE, TIMEOUT_MESSAGE)


# Upstream prints a device whose node selector does not parse as Go's struct dump (with
# pointer addresses for its attributes); drakit names the device.  Documented in
# drakit/allocator/README.md ("Deliberate differences").
_DEVICE_DUMP = re.compile(r"for device (&Device\{.*\}|\S+) in slice ")


def _comparable(message: str) -> str:
    return _DEVICE_DUMP.sub("for device <device> in slice ", message)


def disagreements(want: Answer, got: Answer) -> list[str]:
    """Differences between the oracle's outcome (``want``) and drakit's (``got``)."""
    if _timed_out(want) and _timed_out(got):
        return []
    if want["status"] == "error" and got["status"] == "error":
        if _comparable(want["message"]) == _comparable(got["message"]):
            return []
        return [f"error message: oracle {want['message']!r}, drakit {got['message']!r}"]
    expect = {
        "status": want["status"],
        "results": [(c.get("status") or {}).get("allocation") for c in want["claims"]]
        if want["status"] == "allocated"
        else [],
        "errorContains": want["message"],
        "orderedDeviceResults": False,
    }
    return compare({"expect": expect}, got)


_BLANKS = (
    (re.compile(r"\"[^\"]*\"|'[^']*'"), "#"),
    (re.compile(r"\S*example\.com\S*"), "X"),
    (
        re.compile(r"\b(claim|class|request|subrequest|key:|device|pool|attribute|constraint) [^\s:,]+"),
        r"\1 X",
    ),
    (re.compile(r"[0-9]+"), "#"),
)


def _template(message: str) -> str:
    """A message with names, numbers and quoted text blanked: one template per kind of error."""
    message = _comparable(message)
    for pattern, blank in _BLANKS:
        message = pattern.sub(blank, message)
    return message[:160]


def signature(problems: list[str], want: Answer, got: Answer) -> str:
    """The kind of a disagreement, so that one example per kind gets shrunk and kept."""
    if want["status"] != got["status"]:
        side = got if got["status"] == "exception" or want["status"] != "error" else want
        detail = _template(side.get("message") or "") if side["status"] in ("error", "exception") else ""
        return f"status {want['status']} -> {got['status']} {detail}".rstrip()
    if want["status"] == "error":
        return f"error: {_template(want['message'])} / {_template(got['message'])}"
    first = problems[0].split(":")[0]
    return f"{want['status']}: {first}"


def record(
    scenario: Scenario,
    want: Answer,
    got: Answer,
    problems: list[str],
    directory: Path = REGRESSIONS,
    note: str = "",
) -> Path:
    """Write a regression file holding the scenario and the oracle's answer (replayable without Go).

    ``note`` says what was fixed, for files kept after drakit was changed to agree.
    """
    document: dict[str, Any] = {"note": note} if note else {}
    document |= {
        "problems": problems,
        "scenario": scenario.to_json(),
        "oracle": {"status": want["status"], "message": want["message"], "claims": want["claims"]},
        "drakit": {"status": got["status"], "message": got["message"]},
    }
    digest = hashlib.sha256(json.dumps(scenario.to_json(), sort_keys=True).encode()).hexdigest()[:16]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{digest}.yaml"
    path.write_text(yaml.dump(Dumper=KubeDumper, data=document, sort_keys=False), encoding="utf-8")
    return path


# --- shrinking -------------------------------------------------------------------------------

# Keys whose removal keeps an object storable (everything optional in the v1 API).
_OPTIONAL_KEYS = frozenset(
    {
        "attributes",
        "capacity",
        "taints",
        "bindingConditions",
        "bindingFailureConditions",
        "bindsToNode",
        "consumesCounters",
        "allowMultipleAllocations",
        "selectors",
        "tolerations",
        "adminAccess",
        "constraints",
        "config",
        "requestPolicy",
        "sharedCounters",
        "consumedCapacity",
        "requests",
        "default",
        "step",
        "max",
    }
)
# Map-valued fields whose individual entries may go.
_MAP_FIELDS = frozenset({"attributes", "capacity", "counters", "requests", "consumedCapacity", "labels"})
# Lists whose items may go, with the fewest items each must keep.
_LISTS = {
    "objects": 0,
    "devices": 0,
    "requests": 1,
    "firstAvailable": 1,
    "selectors": 0,
    "constraints": 0,
    "tolerations": 0,
    "taints": 0,
    "results": 1,
    "sharedCounters": 0,
    "consumesCounters": 0,
    "config": 0,
    "validValues": 1,
    "strings": 0,
    "ints": 0,
    "bools": 0,
    "versions": 0,
}

Path_ = tuple[str | int, ...]


def _edits(doc: Any, path: Path_ = ()) -> list[tuple[Path_, str]]:
    """Candidate edits, outermost first: (path, "del") removes a key or item."""
    out: list[tuple[Path_, str]] = []
    if isinstance(doc, dict):
        parent = path[-1] if path else None
        for key in doc:
            if parent == "devices" and key == "requests":
                continue  # a claim's request list is required
            if key in _OPTIONAL_KEYS or (isinstance(parent, str) and parent in _MAP_FIELDS):
                out.append(((*path, key), "del"))
        for key, value in doc.items():
            out.extend(_edits(value, (*path, key)))
        if doc.get("allocationMode") == "ExactCount" and doc.get("count", 1) > 1:
            out.append(((*path, "count"), "one"))
    elif isinstance(doc, list):
        name = path[-1] if path else None
        keep = _LISTS.get(name, -1) if isinstance(name, str) else -1
        if keep >= 0 and len(doc) > keep:
            out.extend(((*path, i), "del") for i in range(len(doc)))
        for i, value in enumerate(doc):
            out.extend(_edits(value, (*path, i)))
    return out


def _apply(doc: dict[str, Any], path: Path_, op: str) -> dict[str, Any]:
    new = copy.deepcopy(doc)
    target: Any = new
    for step in path[:-1]:
        target = target[step]
    if op == "one":
        target[path[-1]] = 1
    else:
        del target[path[-1]]
    return new


def _scenario(doc: dict[str, Any]) -> Scenario:
    return Scenario(objects=tuple(doc["objects"]), node=doc["node"], gates=doc["featureGates"])


def _is_target_node(doc: dict[str, Any], obj: dict[str, Any]) -> bool:
    return bool(obj.get("kind") == "Node" and obj["metadata"]["name"] == doc["node"])


def shrink(scenario: Scenario, keeps: Callable[[Scenario], bool], budget: int = 4000) -> Scenario:
    """Greedy delta debugging: drop objects, devices, requests, fields and gates while ``keeps`` holds.

    ``keeps`` must be false for inputs the oracle rejects, so the result stays storable.
    """
    doc = scenario.to_json()
    tries = 0
    changed = True
    while changed and tries < budget:
        changed = False
        gates = doc["featureGates"].split(",")
        for i, gate in enumerate(gates):
            if gate.endswith("=true"):
                candidate = dict(
                    doc, featureGates=",".join([*gates[:i], gate[:-5] + "=false", *gates[i + 1 :]])
                )
                tries += 1
                if keeps(_scenario(candidate)):
                    doc, changed = candidate, True
                    gates = doc["featureGates"].split(",")
        position = 0
        while tries < budget:
            edits = _edits(doc)
            if position >= len(edits):
                break
            path, op = edits[position]
            if len(path) == 2 and path[0] == "objects" and _is_target_node(doc, doc["objects"][path[1]]):
                position += 1
                continue
            candidate = _apply(doc, path, op)
            tries += 1
            if keeps(_scenario(candidate)):
                doc, changed = candidate, True
            else:
                position += 1
    return _scenario(doc)
