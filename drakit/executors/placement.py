"""Where a run's devices come from outside a cluster: its profile's claim, allocated by drakit's allocator.

The profile compiles to the same DeviceClass and claim a cluster run would get; the allocator
places it on the first node of the inventory (NVML's local slice, or a declared inventory) that
fits, exactly as kube-scheduler's DRA plugin would, next to every claim still held by a running
run.  A :class:`DeviceBook` serialises that between concurrent runs of one process.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drakit.allocator.search import allocate
from drakit.allocator.state import has_allocation
from drakit.clock import IdSource, RandomIds
from drakit.features import Features
from drakit.inventory.snapshot import ClusterSnapshot, name_of
from drakit.outcomes import ExplainCode, Owner, Reason, Stage, Verdict
from drakit.profiles.compile import compile_profile, drivers_for
from drakit.profiles.loader import ResolvedProfile
from drakit.records.capture import capture_devices
from drakit.records.run import RunClaim, RunDevice

__all__ = ["DeviceBook", "Placement", "claim_for", "restrict_to_product"]


@dataclass(frozen=True)
class Placement:
    """A claim allocated on a node, joined to the slices as they were when it was allocated."""

    node: str
    claim: dict[str, Any]  # with status.allocation
    record: RunClaim
    devices: tuple[RunDevice, ...]

    @property
    def uuids(self) -> tuple[str, ...]:
        return tuple(d.uuid for d in self.devices if d.uuid)


def restrict_to_product(claim: dict[str, Any], attribute: str, product: str) -> dict[str, Any]:
    """The claim with every (sub)request also requiring ``attribute == product`` (the trial runs per product)."""
    cel = {"cel": {"expression": f"device.attributes[{json.dumps(attribute.split('/')[0])}]"
                                 f"[{json.dumps(attribute.split('/')[-1])}] == {json.dumps(product)}"}}
    out = copy.deepcopy(claim)
    for request in out["spec"]["devices"]["requests"]:
        for part in (request.get("firstAvailable") or []) + ([request["exactly"]] if "exactly" in request else []):
            part["selectors"] = [*(part.get("selectors") or []), cel]
    return out


def claim_for(rp: ResolvedProfile, *, namespace: str, name: str, uid: str,
              product: str | None = None) -> tuple[dict[str, Any], dict[str, Any], str]:
    """``(ResourceClaim, DeviceClass, template name)`` a pod of profile ``rp`` would get in ``namespace``."""
    schema = drivers_for(rp)[0]
    compiled = compile_profile(rp, schema, namespace=namespace)
    source = compiled.claim
    spec = source["spec"]["spec"] if source.get("kind") == "ResourceClaimTemplate" else source["spec"]
    claim: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": uid}, "spec": copy.deepcopy(spec),
    }
    if product is not None:
        role = schema.roles.get("product", "productName")
        claim = restrict_to_product(claim, f"{schema.driver}/{role}", product)
    return claim, compiled.device_class, name_of(source)


def _unsatisfiable(claim: str, message: str, in_use: int, by_runs: int) -> Reason:
    """Waiting only while other runs hold devices: claims the inventory shows allocated are never
    released by this executor, so waiting on them alone would wait out the whole deadline."""
    code = ExplainCode.DEVICES_IN_USE if in_use else ExplainCode.NOT_ENOUGH_DEVICES
    verdict = Verdict.WAITING if by_runs else Verdict.NEVER
    hint = ("wait for a running run to finish" if by_runs else
            "the inventory's allocated claims hold the devices: free them or ask for fewer" if in_use else
            "ask for fewer or other devices")
    return Reason(code=code, message=f"claim {claim}: {message} on every node ({in_use} claims hold devices)",
                  verdict=verdict, owner=Owner.PLATFORM, stage=Stage.DEVICES, claim=claim, hint=hint)


class DeviceBook:
    """Which claims hold devices now; allocation and release are serialised by one lock."""

    def __init__(self, inventory: ClusterSnapshot, features: Features, ids: IdSource | None = None) -> None:
        self.inventory = inventory
        self.features = features
        self.ids = ids or RandomIds()
        self._held: dict[str, dict[str, Any]] = {}
        # Claims the inventory already shows allocated hold their devices too.
        self._existing = [c for c in inventory.claims if has_allocation(c)]
        self._lock = threading.Lock()

    def nodes(self) -> Sequence[Mapping[str, Any]]:
        nodes = list(self.inventory.nodes)
        local = {str(s["spec"].get("nodeName")) for s in self.inventory.slices if s["spec"].get("nodeName")}
        named = {name_of(n) for n in nodes}
        return nodes + [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}} for n in sorted(local - named)]

    def allocate(self, run_id: str, claim: dict[str, Any], device_class: Mapping[str, Any],
                 template: str = "") -> Placement | Reason:
        """Allocate ``claim`` on the first node that fits; a :class:`Reason` says why none does."""
        classes = list(self.inventory.classes)
        if all(name_of(c) != name_of(device_class) for c in classes):
            classes.append(dict(device_class))
        label = f"{claim['metadata']['namespace']}/{claim['metadata']['name']}"
        with self._lock:
            in_use = [*self._existing, *self._held.values()]
            message = "no node in the inventory"
            for node in self.nodes():
                outcome = allocate(node=node, slices=self.inventory.slices, classes=classes,
                                   claims=[*in_use, claim], features=self.features, ids=self.ids)
                if outcome.status == "allocated":
                    allocated = outcome.claims[0]
                    self._held[run_id] = allocated
                    meta = claim["metadata"]
                    record = RunClaim(namespace=meta["namespace"], name=meta["name"], uid=meta["uid"],
                                      template=template, node=name_of(node))
                    devices = capture_devices(allocated["status"]["allocation"], self.inventory.slices)
                    return Placement(name_of(node), allocated, record, devices)
                message = outcome.message
                if outcome.status == "error":
                    return Reason(code=ExplainCode.ALLOCATION_ERROR, message=f"claim {label}: {message}",
                                  verdict=Verdict.BROKEN, owner=Owner.PLATFORM, claim=label)
            return _unsatisfiable(label, message, len(in_use), len(self._held))

    def held(self, run_id: str, claim: dict[str, Any]) -> None:
        """Mark an already allocated claim (a resumed run's) as holding its devices."""
        with self._lock:
            self._held[run_id] = claim

    def release(self, run_id: str) -> None:
        with self._lock:
            self._held.pop(run_id, None)
