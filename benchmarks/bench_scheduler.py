"""kube-scheduler vs drakit.sim on upstream's DRA benchmark shape, side by side, same run.

Shape (scheduler_perf ``SchedulingWithResourceClaimTemplate``, issue 6): 500 nodes x 10 devices
of one class (``gpu.example.com``), one ResourceClaimTemplate, 2,500 pods fill the cluster, then
2,500 more are measured; each pod gets its own claim from the template.

Real side: the integration tests' control plane (etcd, kube-apiserver, kube-controller-manager
with the resourceclaim controller, kube-scheduler; v1.37.2 from ``make cluster``) is started
here; Nodes, ResourceSlices and the DeviceClass are the simulator's own expansion of the same
scenario (``tests/integration/simbridge.py``), created with parallel clients.  Throughput is
measured from a pod watch: the time each pod is first seen with ``spec.nodeName``.  ``pods/s``
= measured pods / (last binding - start of the measure phase's creation), as scheduler_perf's
SchedulingThroughput averages over the phase; the steady rate between 10% and 90% of the
bindings is printed too, since the Python creators may lag behind the scheduler at the start.

drakit side: ``drakit.sim`` on the identical scenario (same nodes, slices, class, template, pod
names), measure phase timed the way ``bench_sim.py`` does.

Prints both and the ratio drakit / real (target: >= 3x).  Nothing here asserts a time; the
``cluster``-marked smoke test runs ``--quick`` (50 nodes, 250 + 250 pods).

    .venv/bin/python benchmarks/bench_scheduler.py [--quick] [--nodes 500] [--fill 2500] [--measure 2500]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as a plain script
    sys.path.insert(0, str(REPO_ROOT))

from kubernetes import client as k8s  # noqa: E402
from kubernetes import watch  # noqa: E402

from drakit.sim import parse_scenario  # noqa: E402
from drakit.sim.runner import Run  # noqa: E402
from tests.integration import simbridge  # noqa: E402
from tests.integration.controlplane import ControlPlane, bin_dir, missing_binaries, start_control_plane  # noqa: E402

TEMPLATE = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one, namespace: default}
spec:
  spec:
    devices:
      requests:
        - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
"""
NAMESPACE = "bench"
# scheduler_perf gives every client 5000 QPS / 5000 burst and the claim controller 50 workers
# (its default); the components' own client defaults (50 and 20 QPS) would measure the rate
# limiter instead of the scheduler.
CLIENT_FLAGS = ("--kube-api-qps=5000", "--kube-api-burst=5000")
EXTRA_ARGS = {
    "kube-scheduler": CLIENT_FLAGS,
    "kube-controller-manager": (*CLIENT_FLAGS, "--concurrent-resourceclaim-syncs=50"),
}


def scenario_text(nodes: int, devices: int, fill: int, measure: int) -> str:
    """The shape as a drakit scenario: fill at t=0, measure at t=1."""
    claims = "resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]"
    workloads = f"    - {{name: fill, count: {fill}, {claims}}}\n"
    if measure:
        workloads += f"    - {{name: measure, start: 1, count: {measure}, {claims}}}\n"
    return (
        "apiVersion: drakit.dev/v1alpha1\nkind: Scenario\nmetadata: {name: scheduler-bench}\nspec:\n"
        '  kubernetesVersion: "1.37"\n  deviceClasses: [gpu.example.com]\n'
        f"  nodes:\n    - {{count: {nodes}, template: example-{devices}x, namePrefix: node-}}\n"
        f"  workloads:\n{workloads}" + TEMPLATE
    )


@dataclass(frozen=True)
class Phase:
    pods: int
    seconds: float  # first creation -> last binding
    steady: float  # pods/s between 10% and 90% of the bindings
    created_in: float  # seconds the creators needed

    @property
    def rate(self) -> float:
        return self.pods / self.seconds if self.seconds > 0 else float("inf")


# --------------------------------------------------------------------------------- real side


class BindingWatch:
    """Records when each pod of the namespace is first seen bound (a watch in a thread)."""

    def __init__(self, core: k8s.CoreV1Api, namespace: str) -> None:
        self.core = core
        self.namespace = namespace
        self.bound: dict[str, float] = {}
        self.lock = threading.Lock()
        self._stop = threading.Event()
        listing: Any = core.list_namespaced_pod(namespace)
        self._rv: str = listing.metadata.resource_version
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            w = watch.Watch()
            try:
                for ev in w.stream(
                    self.core.list_namespaced_pod,
                    self.namespace,
                    resource_version=self._rv,
                    timeout_seconds=30,
                    _request_timeout=60,
                ):
                    pod: Any = ev["object"]
                    self._rv = pod.metadata.resource_version
                    if pod.spec.node_name:
                        with self.lock:
                            self.bound.setdefault(pod.metadata.name, time.monotonic())
                    if self._stop.is_set():
                        break
            except Exception:  # an expired resourceVersion: relist and go on
                if self._stop.is_set():
                    return
                listing: Any = self.core.list_namespaced_pod(self.namespace)
                now = time.monotonic()
                with self.lock:
                    for pod in listing.items:
                        if pod.spec.node_name:
                            self.bound.setdefault(pod.metadata.name, now)
                self._rv = listing.metadata.resource_version

    def wait(self, names: Sequence[str], timeout: float) -> dict[str, float]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if all(n in self.bound for n in names):
                    return {n: self.bound[n] for n in names}
            time.sleep(0.1)
        with self.lock:
            missing = [n for n in names if n not in self.bound]
        raise TimeoutError(
            f"{len(missing)} of {len(names)} pods not bound after {timeout:.0f}s, e.g. {missing[:3]}"
        )

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=60)


def _parallel(workers: int, fn: Callable[[Any], Any], items: Iterable[Any]) -> None:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(fn, items):
            pass


def _api(plane: ControlPlane, workers: int) -> k8s.ApiClient:
    config = k8s.Configuration()
    config.host = plane.server
    config.ssl_ca_cert = str(plane.ca_file)
    config.api_key = {"authorization": plane.admin_token}
    config.api_key_prefix = {"authorization": "Bearer"}
    config.connection_pool_maxsize = workers
    return k8s.ApiClient(config)


def run_real(plane: ControlPlane, text: str, fill: int, workers: int, timeout: float) -> tuple[Phase, Phase]:
    scenario = parse_scenario(text, "scheduler-bench.yaml")
    inv = simbridge.inventory(scenario)
    api = _api(plane, workers)
    core = k8s.CoreV1Api(api)
    custom = k8s.CustomObjectsApi(api)
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=NAMESPACE)))
    for _ in range(600):  # the ServiceAccount admission plugin wants the default account
        if core.list_namespaced_service_account(NAMESPACE, field_selector="metadata.name=default").items:
            break
        time.sleep(0.1)

    def add_node(node: dict[str, Any]) -> None:
        name = node["metadata"]["name"]
        meta = node["metadata"]
        core.create_node(k8s.V1Node(metadata=k8s.V1ObjectMeta(name=meta["name"], labels=meta.get("labels"))))
        core.patch_node(name, {"spec": {"taints": None}})
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        res = simbridge.node_resources(node)
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
        core.patch_node_status(name, {"status": {"capacity": res, "allocatable": res, "conditions": [ready]}})

    def add_cluster_object(obj: dict[str, Any]) -> None:
        plural = {"ResourceSlice": "resourceslices", "DeviceClass": "deviceclasses"}[obj["kind"]]
        custom.create_cluster_custom_object("resource.k8s.io", "v1", plural, obj)

    t0 = time.monotonic()
    _parallel(workers, add_cluster_object, inv.classes)
    _parallel(workers, add_node, inv.nodes)
    _parallel(workers, add_cluster_object, inv.slices)
    for tmpl in simbridge.namespaced_objects(scenario, "ResourceClaimTemplate", NAMESPACE):
        custom.create_namespaced_custom_object(
            "resource.k8s.io", "v1", NAMESPACE, "resourceclaimtemplates", tmpl
        )
    print(
        f"  real: {len(inv.nodes)} nodes, {len(inv.slices)} slices created in {time.monotonic() - t0:.1f}s",
        flush=True,
    )

    pods = simbridge.planned_pods(scenario)
    watcher = BindingWatch(core, NAMESPACE)
    phases = []
    try:
        for label, members in (("fill", pods[:fill]), ("measure", pods[fill:])):
            manifests = [simbridge.pod_manifest(p, NAMESPACE) for p in members]
            start = time.monotonic()
            _parallel(workers, lambda m: core.create_namespaced_pod(NAMESPACE, m), manifests)
            created = time.monotonic() - start
            bound = sorted(watcher.wait([p.name for p in members], timeout).values())
            lo, hi = bound[len(bound) // 10], bound[(len(bound) * 9) // 10]
            steady = (len(bound) * 8 // 10) / (hi - lo) if hi > lo else float("inf")
            phase = Phase(len(members), bound[-1] - start, steady, created)
            print(
                f"  real {label:<7} {phase.pods:>6} pods {phase.seconds:8.2f}s {phase.rate:10.1f} pods/s"
                f" (steady {phase.steady:.1f} pods/s; created in {created:.1f}s)",
                flush=True,
            )
            phases.append(phase)
    finally:
        watcher.stop()
        api.close()
    return phases[0], phases[1]


# --------------------------------------------------------------------------------- drakit side


class _TimedRun(Run):
    """A run that notes the wall clock after each simulated instant (fill at t=0, measure at t=1)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.marks: list[tuple[float, float, int]] = []  # (simulated time, wall clock, pods bound)

    def _sample(self) -> None:
        super()._sample()
        self.marks.append((self.now, time.perf_counter(), self._bound))


def run_sim(text: str) -> tuple[Phase, Phase, int]:
    run = _TimedRun(parse_scenario(text, "scheduler-bench.yaml"), 1)
    start = time.perf_counter()
    result = run.run()
    (_, fill_end, fill_done), (_, measure_end, total_done) = run.marks[0], run.marks[-1]
    fill_phase = Phase(fill_done, fill_end - start, 0.0, 0.0)
    measure_phase = Phase(total_done - fill_done, measure_end - fill_end, 0.0, 0.0)
    for label, phase in (("fill", fill_phase), ("measure", measure_phase)):
        print(
            f"  drakit {label:<7} {phase.pods:>6} pods {phase.seconds:8.2f}s {phase.rate:10.1f} pods/s",
            flush=True,
        )
    return fill_phase, measure_phase, sum(1 for p in result.pods if not p.node)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="smoke variant: 50 nodes, 250 + 250 pods")
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--devices", type=int, default=10)
    ap.add_argument("--fill", type=int, default=2500)
    ap.add_argument("--measure", type=int, default=2500)
    ap.add_argument("--workers", type=int, default=16, help="parallel API clients for object creation")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for one phase's bindings")
    args = ap.parse_args(argv)
    if args.quick:
        args.nodes, args.fill, args.measure = 50, 250, 250
    text = scenario_text(args.nodes, args.devices, args.fill, args.measure)
    print(
        f"shape: {args.nodes} nodes x {args.devices} devices, fill {args.fill}, measure {args.measure}; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )

    _, sim_measure, sim_pending = run_sim(text)
    if sim_pending:
        print(f"  drakit left {sim_pending} pods Pending (the shape has room for every pod)")
        return 1

    directory = bin_dir()
    missing = missing_binaries(directory)
    if missing:
        print(f"control-plane binaries missing in {directory} ({', '.join(missing)}): run `make cluster`")
        return 2
    with tempfile.TemporaryDirectory(prefix="drakit-bench-") as tmp:
        plane = start_control_plane(Path(tmp), binaries=directory, extra_args=EXTRA_ARGS)
        try:
            _, real_measure = run_real(plane, text, args.fill, args.workers, args.timeout)
        finally:
            plane.stop()

    ratio = sim_measure.rate / real_measure.rate
    print(
        f"measure phase: drakit {sim_measure.rate:.1f} pods/s, kube-scheduler {real_measure.rate:.1f} pods/s "
        f"(steady {real_measure.steady:.1f}); ratio drakit/real {ratio:.1f}x (target >= 3x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
