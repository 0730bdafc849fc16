"""An in-memory twin of the allocator for the simulator's control-plane tests.

It understands just enough to make placement predictable: a class selects the devices of
the driver named in ``device.driver == '<driver>'``, requests take ``count`` devices
(or all of them) first-fit in slice order, and ``firstAvailable`` tries subrequests in
order.  The real allocator is exercised by ``test_with_allocator.py``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from drakit.features import Features
from drakit.sim.allocation import NodeFit

_DRIVER = re.compile(r"device\.driver\s*==\s*['\"]([^'\"]+)['\"]")


class FakeAllocator:
    def __init__(
        self,
        slices: Sequence[Mapping[str, Any]],
        classes: Sequence[Mapping[str, Any]],
        features: Features,
        *,
        clock: object = None,  # DrakitAllocator's injections; the twin needs neither
        ids: object = None,
    ) -> None:
        self.by_node: dict[str, list[tuple[str, str, str]]] = {}
        for s in slices:
            spec = s["spec"]
            for d in spec.get("devices") or []:
                self.by_node.setdefault(spec.get("nodeName", ""), []).append((spec["driver"], spec["pool"]["name"], d["name"]))
        self.class_driver: dict[str, str] = {}
        for c in classes:
            exprs = [sel.get("cel", {}).get("expression", "") for sel in (c.get("spec") or {}).get("selectors") or []]
            m = next((m for e in exprs if (m := _DRIVER.search(e))), None)
            self.class_driver[c["metadata"]["name"]] = m.group(1) if m else ""
        self.in_use: set[tuple[str, str, str]] = set()
        self.calls = 0

    def fit(self, node: Mapping[str, Any], claims: Sequence[Mapping[str, Any]]) -> NodeFit:
        self.calls += 1
        free = [d for d in self.by_node.get(node["metadata"]["name"], []) if d not in self.in_use]
        taken: set[tuple[str, str, str]] = set()
        results = []
        for claim in claims:
            out = []
            for req in claim["spec"]["devices"]["requests"]:
                options = [(req["name"], req["exactly"])] if "exactly" in req else [
                    (f"{req['name']}/{s['name']}", s) for s in req["firstAvailable"]
                ]
                for name, r in options:
                    cls = r["deviceClassName"]
                    if cls not in self.class_driver:
                        return NodeFit("error", (), f"request {name}: could not retrieve device class {cls}")
                    cands = [d for d in free if d not in taken and d[0] == self.class_driver[cls]]
                    want = len(cands) if r.get("allocationMode") == "All" else r.get("count", 1)
                    if want and len(cands) >= want:
                        for d in cands[:want]:
                            taken.add(d)
                            out.append({"request": name, "driver": d[0], "pool": d[1], "device": d[2]})
                        break
                else:
                    return NodeFit("unsatisfiable", (), "cannot allocate all claims")
            results.append(
                {
                    "devices": {"results": out},
                    "nodeSelector": {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node["metadata"]["name"]]}]}
                        ]
                    },
                }
            )
        return NodeFit("allocated", tuple(results), "")

    def _keys(self, claim: Mapping[str, Any]) -> list[tuple[str, str, str]]:
        alloc = claim.get("status", {}).get("allocation") or {}
        return [(r["driver"], r["pool"], r["device"]) for r in alloc.get("devices", {}).get("results", [])]

    def commit(self, claim: Mapping[str, Any]) -> None:
        self.in_use.update(self._keys(claim))

    def release(self, claim: Mapping[str, Any]) -> None:
        self.in_use.difference_update(self._keys(claim))
