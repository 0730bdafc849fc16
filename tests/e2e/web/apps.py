"""The apps the browser tests serve, each built by ``create_app`` as ``drakit serve`` builds it.

* :func:`world_app`: the two-team world of the API tests (the demo cluster in two team
  namespaces, held devices, recorded runs, the lab queue catalog) and one finished simulation.
* :func:`hostile_app`: the demo with names a driver or a user could publish that are markup:
  a product, a node, a pod and a label value that read ``<script>…``.
* :func:`large_app`: 5,000 nodes (H100 and L4 nodes, two devices allocated on every fifth node), the
  size the heat map must stay usable at.
"""

from __future__ import annotations

import copy
import time
from importlib import resources
from typing import Any

from fastapi import FastAPI

from drakit.demo import cluster_objects, recipe_objects
from drakit.inventory.snapshot import ClusterSnapshot, Provenance
from drakit.inventory.templates import NVIDIA_DRIVER, expand, nvidia_device_class
from drakit.web.app import create_app
from drakit.web.auth import Auth, MemoryTokenStore, Principal
from drakit.web.simulations import SimState, Simulations
from drakit.web.state import StaticSource
from tests.unit.web import world as w

XSS = "<script>window.__pwned=1</script>"


def world_app() -> tuple[FastAPI, w.World]:
    """The two-team world, with a simulation of the bundled ``mixed`` scenario finished by the admin."""
    world = w.world()
    sims = Simulations(processes=False, workers=1, max_queued=4)
    app = create_app(StaticSource(w.snapshot(), "two-teams"), world.store, world.auth, catalog=world.catalog,
                     ledger=world.ledger, simulations=sims)
    text = (resources.files("drakit.sim") / "examples" / "mixed.yaml").read_text(encoding="utf-8")
    admin = world.auth.principal(f"Bearer {world.tokens['admin']}")
    sim = sims.submit(text, admin, source="mixed.yaml", seed=7)
    deadline = time.monotonic() + 120
    while sims.get(sim.id, admin).state not in (SimState.SUCCEEDED, SimState.FAILED):
        if time.monotonic() > deadline:
            raise RuntimeError("the demo simulation did not finish in 120 s")
        time.sleep(0.05)
    assert sims.get(sim.id, admin).state == SimState.SUCCEEDED, sims.get(sim.id, admin).error
    app.state.sim_id = sim.id
    return app, world


def _hostile_objects() -> list[dict[str, Any]]:
    objects = copy.deepcopy(cluster_objects() + recipe_objects())
    for obj in objects:
        if obj["kind"] == "ResourceSlice" and obj["spec"].get("driver") == NVIDIA_DRIVER:
            for device in obj["spec"].get("devices") or []:
                device["attributes"]["productName"] = {"string": f"{XSS} GPU"}
        if obj["kind"] == "Pod" and obj["metadata"]["name"] == "train-0":
            obj["metadata"]["name"] = XSS
            obj["metadata"]["labels"]["x"] = XSS
    return objects


def hostile_app() -> FastAPI:
    """Open reads (no token), like ``drakit serve --demo`` on loopback, over the hostile demo."""
    snapshot = ClusterSnapshot.from_objects(_hostile_objects(), provenance=Provenance(XSS, 0.0))
    return create_app(StaticSource(snapshot, XSS), auth=Auth(MemoryTokenStore(), open_reads=True))


def large_snapshot(nodes: int = 5000) -> ClusterSnapshot:
    objects: list[dict[str, Any]] = [nvidia_device_class()]
    for i in range(nodes):
        h100 = i % 5 != 4
        name = f"{'h100' if h100 else 'l4'}-{i:05d}"
        objects += expand("h100-8x" if h100 else "l4-4x", name)
        if i % 5 == 0:  # one busy claim on every fifth node: 2 devices allocated
            objects.append({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": f"busy-{i}", "namespace": "team-a", "uid": f"uid-{i}"},
                "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": NVIDIA_DRIVER, "count": 2}}]}},
                "status": {"allocation": {"devices": {"results": [
                    {"request": "g", "driver": NVIDIA_DRIVER, "pool": name, "device": f"gpu-{d}"} for d in (0, 1)]}}},
            })
    return ClusterSnapshot.from_objects(objects, provenance=Provenance(f"{nodes} nodes", 0.0))


def large_app(nodes: int = 5000) -> FastAPI:
    return create_app(StaticSource(large_snapshot(nodes), f"{nodes} nodes"), auth=Auth(MemoryTokenStore(), open_reads=True))


def principal(world: w.World, who: str) -> Principal:
    return world.auth.principal(f"Bearer {world.tokens[who]}")
