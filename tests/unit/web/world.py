"""A small two-team world for the web tests: the demo cluster, each team's recipes, held devices, runs, queues.

Team ``vision`` owns namespace ``team-vision`` and team ``nlp`` owns ``team-nlp`` (the lab queue
catalog's teams).  Each namespace has the demo's waiting pods and one running pod whose claim
holds a device, one recorded run, and a queue reservation, so every endpoint has something of
each team to show or to hide.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any

from drakit.demo import cluster_objects, recipe_objects
from drakit.inventory.snapshot import ClusterSnapshot, Provenance
from drakit.queues.catalog import Catalog, load_catalog_text
from drakit.queues.compile import setup_of
from drakit.queues.memory import MemoryLedger
from drakit.records.run import Run, RunDevice, RunResult, RunState
from drakit.store.memory import MemoryRecordStore
from drakit.web.auth import Auth, MemoryTokenStore, issue

H100 = "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
TEAMS = {"vision": "team-vision", "nlp": "team-nlp"}
# The device each team's running pod holds (driver, pool, device).
HELD = {"vision": ("gpu.nvidia.com", "h100-node-1", "gpu-0"), "nlp": ("gpu.nvidia.com", "h100-node-1", "gpu-1")}


def _in(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["namespace"] = namespace
    return out


def _held(team: str, namespace: str) -> list[dict[str, Any]]:
    driver, pool, device = HELD[team]
    claim = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": f"{team}-runner-gpus", "namespace": namespace, "uid": f"uid-{team}"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
        "status": {
            "allocation": {"devices": {"results": [{"request": "gpu", "driver": driver, "pool": pool, "device": device}]},
                           "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                               {"key": "metadata.name", "operator": "In", "values": ["h100-node-1"]}]}]}},
            "reservedFor": [{"resource": "pods", "name": f"{team}-runner", "uid": f"pod-{team}"}],
        },
    }
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"{team}-runner", "namespace": namespace, "uid": f"pod-{team}"},
        "spec": {"nodeName": "h100-node-1", "resourceClaims": [{"name": "gpus", "resourceClaimName": claim["metadata"]["name"]}],
                 "containers": [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpus"}]}}]},
        "status": {"phase": "Running"},
    }
    # A pod that wants all eight H100s: its explanation names the claims holding two of them.
    big_claim = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": f"{team}-big", "namespace": namespace},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 8,
                 "selectors": [{"cel": {"expression": H100}}]}}]}},
    }
    big_pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{team}-big", "namespace": namespace},
        "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimName": f"{team}-big"}],
                 "containers": [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpus"}]}}]},
    }
    return [claim, pod, big_claim, big_pod]


def snapshot() -> ClusterSnapshot:
    objects = cluster_objects()
    for team, ns in TEAMS.items():
        objects += [_in(o, ns) for o in recipe_objects()]
        objects += _held(team, ns)
    return ClusterSnapshot.from_objects(objects, provenance=Provenance("two-teams", 0.0))


def catalog() -> Catalog:
    text = (resources.files("drakit.queues") / "examples" / "lab.yaml").read_text(encoding="utf-8")
    return load_catalog_text(text, "lab.yaml").catalog


def store() -> MemoryRecordStore:
    records = MemoryRecordStore(now=lambda: T0 + timedelta(hours=1))
    for i, (team, ns) in enumerate(TEAMS.items()):
        queue = "training" if team == "vision" else "research"
        run = Run.submit(T0 + timedelta(minutes=i), id=f"run-{team}", recipe="mnist", profile="training-48g",
                         queue=queue, namespace=ns)
        records.create(run)
        records.advance(run.id, RunState.ADMITTED, at=T0 + timedelta(minutes=5))
        device = RunDevice("gpu", "gpu.nvidia.com", "h100-node-1", HELD[team][2], product="NVIDIA H100 80GB HBM3")
        records.advance(run.id, RunState.CLAIM_ALLOCATED, at=T0 + timedelta(minutes=6), devices=(device,))
        records.advance(run.id, RunState.CONTAINER_STARTED, at=T0 + timedelta(minutes=7))
        records.advance(run.id, RunState.FINISHED, at=T0 + timedelta(minutes=20),
                        result=RunResult(0, 3.0 + i, 100.0 + 10 * i))
        waiting = Run.submit(T0 + timedelta(minutes=30 + i), id=f"wait-{team}", recipe="mnist", profile="training-48g",
                             queue=queue, namespace=ns)
        records.create(waiting)
    return records


@dataclass
class World:
    tokens: dict[str, str]  # "vision", "nlp", "admin" -> bearer token
    auth: Auth
    store: MemoryRecordStore
    catalog: Catalog
    ledger: MemoryLedger


def world(*, open_reads: bool = False) -> World:
    tokens = MemoryTokenStore()
    secrets = {team: issue(tokens, team, [ns], now=lambda: T0).secret for team, ns in TEAMS.items()}
    secrets["admin"] = issue(tokens, "platform", admin=True, now=lambda: T0).secret
    cat = catalog()
    ledger = MemoryLedger(setup_of(cat))
    for team in TEAMS:
        queue = "training" if team == "vision" else "research"
        got = ledger.reserve(queue, f"run-{team}", {"gpu-80g": 1}, T0)
        assert got.__class__.__name__ == "Reserved", got
    team_namespaces = {t.name: tuple(t.namespaces) for t in cat.spec.teams}
    return World(secrets, Auth(tokens, team_namespaces=team_namespaces, open_reads=open_reads), store(), cat, ledger)


def scenario_text() -> str:
    """The simulator's bundled example scenario, as a client would post it."""
    return (resources.files("drakit.sim") / "examples" / "mixed.yaml").read_text(encoding="utf-8")


def wait(client: Any, sim_id: str, headers: dict[str, str], timeout: float = 60) -> dict[str, Any]:
    """Poll a simulation until it ends; its last status document."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status: dict[str, Any] = client.get(f"/api/v1/simulations/{sim_id}", headers=headers).json()
        if status["state"] in ("succeeded", "failed"):
            return status
        time.sleep(0.05)
    raise AssertionError(f"simulation {sim_id} did not end")
