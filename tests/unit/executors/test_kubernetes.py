"""The kubernetes executor on the memory twin, with the control plane's controllers played by a script.

:class:`Plane` answers every watch by first taking the cluster one step on, as the real
components would between two streams: Kueue unsuspends the Job (when told to admit), the Job
controller makes its pod, the resourceclaim controller generates the claim from the template,
the scheduler allocates and binds (or reports the pod unschedulable), the kubelet starts the
container and ends it, and the claim is deleted with its finished pod.  The real plane is
``tests/integration/test_kubernetes_executor.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from drakit.demo import cluster_objects
from drakit.errors import InvalidArgument, InvalidInput
from drakit.executors.base import Executor, RunRequest
from drakit.executors.kubernetes import EVENT_KEY, KubernetesExecutor, plan_run
from drakit.features import Features
from drakit.live import MemoryCluster
from drakit.live.client import ClusterError, ErrorCode, WatchEvent
from drakit.live.jobs import RUN_ID_LABEL, job_manifest
from drakit.live.kueue import QUEUE_NAME_LABEL
from drakit.outcomes import ExplainCode, Verdict
from drakit.profiles.trial import trial_profiles
from drakit.records.run import RunState
from drakit.sources import load_profile_files
from drakit.store.memory import MemoryRecordStore

FEATURES = Features.for_version("1.37")
PROFILES = trial_profiles()
NS = "ml"
T0 = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
DIGEST = "sha256:" + "ab" * 32
NOT_REGISTERED = "Failed to prepare dynamic resources: prepare dynamic resources: DRA driver gpu.nvidia.com is not registered"


def _ts(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Plane(MemoryCluster):
    """The twin with scripted controllers; each watch call is one step of theirs."""

    admit_at: int | None = 0  # the step Kueue admits a suspended Job at (None: never)
    fits: bool = True
    exit_code: int = 0
    prepare_error: str = ""
    hold_running: bool = False  # the container keeps running
    compact_each_step: bool = False
    interrupt_at: int | None = None
    steps: int = 0
    admitted_step: int | None = None
    admitted_at: datetime | None = None
    expired: int = 0  # watches answered 410 Gone
    allocations: list[dict[str, Any]] = field(default_factory=list)

    def watch(self, kind: str, **kwargs: Any) -> Iterator[WatchEvent]:
        self.steps += 1
        if self.interrupt_at is not None and self.steps >= self.interrupt_at:
            raise KeyboardInterrupt
        self.play()
        if self.compact_each_step:
            self.compact()
        since = int(kwargs.get("resource_version") or 0)
        self.expired += bool(since and since < self.compacted)
        return super().watch(kind, **kwargs)

    # -- the components ----------------------------------------------------------------------

    def _of(self, kind: str) -> list[dict[str, Any]]:
        return [copy.deepcopy(o) for (k, _, _), o in sorted(self.objects.items()) if k == kind]

    def _put(self, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        key = self._key(obj["kind"], meta["name"], meta.get("namespace"))
        self._store(key, self._stamp(obj, key), "MODIFIED")

    def play(self) -> None:
        for job in self._of("Job"):
            self._job(job)
        for pod in self._of("Pod"):
            self._pod(pod)

    def _job(self, job: dict[str, Any]) -> None:
        spec = job["spec"]
        if spec.get("suspend"):
            if self.admit_at is not None and self.steps >= self.admit_at:
                spec["suspend"] = False
                self.admitted_step, self.admitted_at = self.steps, datetime.now(UTC)
                self._put(job)
            return
        name, ns = job["metadata"]["name"], job["metadata"]["namespace"]
        if any(p["metadata"]["labels"].get("job-name") == name for p in self._of("Pod")):
            return
        template = spec["template"]
        self.create({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"{name}-x7k2p", "namespace": ns, "creationTimestamp": _ts(T0),
                                  "uid": f"pod-uid-{name}",
                                  "labels": {**template["metadata"]["labels"], "job-name": name},
                                  "ownerReferences": [{"kind": "Job", "name": name, "uid": job["metadata"]["uid"]}]},
                     "spec": copy.deepcopy(template["spec"]), "status": {"phase": "Pending"}})

    def _pod(self, pod: dict[str, Any]) -> None:
        status, spec, name, ns = pod.setdefault("status", {}), pod["spec"], pod["metadata"]["name"], pod["metadata"]["namespace"]
        entry = spec["resourceClaims"][0]
        if not status.get("resourceClaimStatuses"):
            template = self.get("ResourceClaimTemplate", entry["resourceClaimTemplateName"], ns)
            assert template is not None, "the executor applies the template before the Job"
            claim = f"{name}-{entry['name']}-q8zr4"
            self.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": claim, "namespace": ns, "uid": f"claim-uid-{name}",
                                      "annotations": {"resource.kubernetes.io/pod-claim-name": entry["name"]},
                                      "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name,
                                                           "uid": pod["metadata"]["uid"], "controller": True}]},
                         "spec": copy.deepcopy(template["spec"]["spec"])})
            status["resourceClaimStatuses"] = [{"name": entry["name"], "resourceClaimName": claim}]
            self._put(pod)
            return
        claim_name = status["resourceClaimStatuses"][0]["resourceClaimName"]
        if not spec.get("nodeName"):
            if not self.fits:
                status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                         "message": "0/4 nodes are available: 4 cannot allocate all claims."}]
                self._put(pod)
                return
            held = self.get("ResourceClaim", claim_name, ns)
            assert held is not None
            request = held["spec"]["devices"]["requests"][0]
            chosen = request.get("exactly") or request["firstAvailable"][0]
            name_of = request["name"] if "exactly" in request else f"{request['name']}/{chosen['name']}"
            allocation = {"devices": {"results": [
                {"request": name_of, "driver": "gpu.nvidia.com", "pool": "h100-node-1", "device": f"gpu-{i}"}
                for i in range(chosen.get("count", 1))]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["h100-node-1"]}]}]}}
            self.allocations.append(copy.deepcopy(allocation))
            self.patch_status("ResourceClaim", claim_name, ns, {"status": {"allocation": allocation}})
            spec["nodeName"] = "h100-node-1"
            status["conditions"] = [{"type": "PodScheduled", "status": "True"}]
            self._put(pod)
            return
        state = (status.get("containerStatuses") or [{}])[0].get("state") or {}
        if not state:
            if self.prepare_error:
                self.create({"apiVersion": "v1", "kind": "Event",
                             "metadata": {"name": f"{name}.prepare", "namespace": ns},
                             "involvedObject": {"kind": "Pod", "name": name, "uid": pod["metadata"]["uid"]},
                             "reason": "FailedPrepareDynamicResources", "message": self.prepare_error,
                             "source": {"component": "kubelet"}, "lastTimestamp": _ts(T0 + timedelta(seconds=1))})
                return
            status.update(phase="Running", containerStatuses=[{
                "name": "main", "image": spec["containers"][0]["image"], "imageID": f"docker.io/library/python@{DIGEST}",
                "state": {"running": {"startedAt": _ts(T0 + timedelta(seconds=2))}}}])
            self.create({"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{name}.started", "namespace": ns},
                         "involvedObject": {"kind": "Pod", "name": name, "uid": pod["metadata"]["uid"]},
                         "reason": "Started", "message": "Started container main", "source": {"component": "kubelet"},
                         "lastTimestamp": _ts(T0 + timedelta(seconds=2))})
            self._put(pod)
        elif "running" in state and not self.hold_running:
            started = state["running"]["startedAt"]
            status["phase"] = "Succeeded" if self.exit_code == 0 else "Failed"
            status["containerStatuses"][0]["state"] = {"terminated": {
                "exitCode": self.exit_code, "reason": "Completed" if self.exit_code == 0 else "Error",
                "startedAt": started, "finishedAt": _ts(T0 + timedelta(seconds=7))}}
            self._put(pod)
            self.delete("ResourceClaim", claim_name, ns)  # the resourceclaim controller, once the pod is done


def _plane(**kw: Any) -> Plane:
    plane = Plane(**kw)
    for obj in cluster_objects():
        plane.create(obj)
    return plane


def _executor(plane: Plane, store: MemoryRecordStore | None = None, **kw: Any) -> KubernetesExecutor:
    kw.setdefault("wait_s", 5.0)
    return KubernetesExecutor(store or MemoryRecordStore(), plane, features=FEATURES, idle_s=0, **kw)


def _request(run_id: str = "r1", profile: str = "training-48g", **kw: Any) -> RunRequest:
    rp = kw.pop("rp", None) or PROFILES.get(profile)
    return RunRequest(run_id=run_id, profile=rp, command=("python", "-c", "print(1)"), namespace=NS,
                      image=kw.pop("image", "python:3.12"), **kw)


def _states(record: Any) -> list[str]:
    return [t.state.value for t in record.run.transitions]


def test_a_run_walks_every_state_and_records_exactly_the_allocated_devices() -> None:
    plane = _plane()
    record = _executor(plane).execute(_request())
    assert _states(record) == ["submitted", "admitted", "claim-allocated", "container-started", "finished"]
    times = [t.at for t in record.run.transitions]
    assert times == sorted(times)
    results = plane.allocations[0]["devices"]["results"]
    assert [(d.driver, d.pool, d.device, d.request) for d in record.devices] == \
        [(r["driver"], r["pool"], r["device"], r["request"]) for r in results]
    slice_ = next(o for o in cluster_objects() if o["kind"] == "ResourceSlice" and o["spec"]["pool"]["name"] == "h100-node-1")
    published = {d["name"]: d["attributes"] for d in slice_["spec"]["devices"]}
    for d in record.devices:
        assert d.joined and d.uuid == published[d.device]["uuid"]["string"]
        assert d.product == published[d.device]["productName"]["string"] == "NVIDIA H100 80GB HBM3"
        assert d.slice_name == slice_["metadata"]["name"] and d.pool_generation == slice_["spec"]["pool"]["generation"]
    assert record.claim is not None
    assert (record.claim.name, record.claim.uid, record.claim.template, record.claim.pod_name, record.claim.node) == \
        ("r1-x7k2p-gpus-q8zr4", "claim-uid-r1-x7k2p", "training-48g", "r1-x7k2p", "h100-node-1")
    assert plane.get("ResourceClaim", record.claim.name, NS) is None, "the claim is gone; the record kept it"
    assert record.result is not None
    assert (record.result.exit_status, record.result.startup_s, record.result.runtime_s) == (0, 2.0, 5.0)
    assert record.env is not None and record.env.image_digest == DIGEST
    assert [v for k, v in sorted(record.env.frameworks.items()) if k.startswith(EVENT_KEY)] == \
        ["2026-12-01T12:00:02+00:00 kubelet Started: Started container main"]
    assert plane.get("Job", "r1", NS) is not None, "a finished run's Job is left"


def test_it_is_an_executor_of_the_one_seam() -> None:
    executor: Executor = _executor(_plane())  # mypy checks the Protocol
    assert executor.name == "kubernetes" and executor.execute(_request(profile="evaluation")).run.executor == "kubernetes"


def test_the_job_carries_claim_queue_and_run_labels() -> None:
    plan = plan_run(_request(queue="training"))
    job = plan.job
    assert job["metadata"]["labels"] == {RUN_ID_LABEL: "r1", QUEUE_NAME_LABEL: "training"}
    assert job["spec"]["suspend"] is True and job["spec"]["backoffLimit"] == 0
    pod = job["spec"]["template"]
    assert pod["metadata"]["labels"] == {RUN_ID_LABEL: "r1"}
    assert pod["spec"]["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "training-48g"}]
    container = pod["spec"]["containers"][0]
    assert container["resources"]["claims"] == [{"name": "gpus"}] and container["image"] == "python:3.12"
    assert {e["name"] for e in container["env"]} >= {"DRAKIT_RUN_ID", "MLFLOW_RUN_CONTEXT"}
    unqueued = plan_run(_request(profile="evaluation")).job
    assert "suspend" not in unqueued["spec"] and QUEUE_NAME_LABEL not in unqueued["metadata"]["labels"]


def test_a_queued_profile_kueue_never_admits_is_refused_up_front() -> None:
    with pytest.raises(InvalidArgument, match=r"queue q: Kueue would never admit profile evaluation: "
                                              r"ResourceClaimTemplate/evaluation spec\.spec\.devices\.requests\[0\]\.firstAvailable"):
        plan_run(_request(profile="evaluation", queue="q"))
    assert plan_run(_request(profile="evaluation")).queue == ""  # unqueued, firstAvailable is the scheduler's


def test_the_profile_queue_labels_the_job_when_none_is_given_and_a_different_one_is_refused() -> None:
    assert plan_run(_request()).queue == "training"  # training-48g says spec.queue: training
    with pytest.raises(InvalidArgument, match="sends its pods to queue training"):
        plan_run(_request(queue="other"))


def test_admitted_only_when_kueue_unsuspends_the_job() -> None:
    plane = _plane(admit_at=4)
    record = _executor(plane).execute(_request(queue="training"))
    assert record.run.state is RunState.FINISHED and record.run.queue == "training"
    assert plane.admitted_step == 4 and plane.admitted_at is not None
    admitted = record.run.at(RunState.ADMITTED)
    assert admitted is not None and admitted >= plane.admitted_at, "recorded admitted before Kueue admitted"


@pytest.mark.parametrize("keep", [pytest.param(False, id="job-deleted"), pytest.param(True, id="job-kept")])
def test_a_job_never_admitted_fails_waiting_and_its_job_goes_unless_kept(keep: bool) -> None:
    plane = _plane(admit_at=None)
    clock = iter(range(0, 10_000))
    record = _executor(plane, wait_s=20, keep_job=keep, clock=lambda: float(next(clock))).execute(_request(queue="training"))
    assert _states(record) == ["submitted", "failed"]
    assert (record.run.reason_code, record.run.verdict) == (ExplainCode.DEVICES_IN_USE.value, Verdict.WAITING)
    assert "queue training: Job ml/r1 was not admitted within 20s" in record.run.message
    assert (plane.get("Job", "r1", NS) is not None) is keep


def test_a_watch_whose_history_is_compacted_still_sees_every_step() -> None:
    plane = _plane(compact_each_step=True)
    record = _executor(plane).execute(_request())
    assert record.run.state is RunState.FINISHED and len(record.devices) == 2
    assert plane.expired >= 3, "the watch resumed by re-listing, more than once"


def test_the_missing_template_is_applied_before_the_job() -> None:
    plane = _plane()
    assert plane.get("ResourceClaimTemplate", "training-48g", NS) is None
    _executor(plane).execute(_request())
    template = plane.get("ResourceClaimTemplate", "training-48g", NS)
    assert template is not None and plane.owners[("ResourceClaimTemplate", NS, "training-48g")].keys() == {"drakit"}


def _unfit_profile(tmp_path: Path) -> Any:
    path = tmp_path / "huge.yaml"
    path.write_text("apiVersion: drakit.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: huge\nextends: nvidia-base\n"
                    "spec:\n  count: 16\n", encoding="utf-8")
    profiles = load_profile_files([str(path)])
    return profiles.get("huge")


def test_unschedulable_is_diagnosed_and_recorded_as_does_not_fit_not_raised(tmp_path: Path) -> None:
    plane = _plane(fits=False)
    record = _executor(plane, wait_s=3600).execute(_request(rp=_unfit_profile(tmp_path)))
    assert _states(record) == ["submitted", "admitted", "failed"]
    assert record.run.verdict is Verdict.NEVER
    assert record.run.reason_code in {c.value for c in ExplainCode}
    assert "pod ml/r1-x7k2p" in record.run.message
    assert plane.get("Job", "r1", NS) is None


def test_a_failed_preparation_is_the_kubelets_reason_code() -> None:
    plane = _plane(prepare_error=NOT_REGISTERED)
    record = _executor(plane).execute(_request())
    assert _states(record) == ["submitted", "admitted", "claim-allocated", "failed"]
    assert (record.run.reason_code, record.run.verdict) == (ExplainCode.DRIVER_NOT_REGISTERED.value, Verdict.BROKEN)
    assert record.env is not None and any("FailedPrepareDynamicResources" in v for v in record.env.frameworks.values())


def test_a_command_that_exits_non_zero_still_finishes() -> None:
    record = _executor(_plane(exit_code=3)).execute(_request())
    assert record.run.state is RunState.FINISHED and record.result is not None and record.result.exit_status == 3


def test_a_run_past_its_timeout_is_cancelled_and_its_job_deleted() -> None:
    plane = _plane(hold_running=True)
    clock = iter(range(0, 10_000))
    record = _executor(plane, wait_s=1000, timeout_s=10, clock=lambda: float(next(clock))).execute(_request())
    assert _states(record)[-2:] == ["container-started", "cancelled"]
    assert plane.get("Job", "r1", NS) is None


def test_ctrl_c_leaves_a_cancelled_record_and_no_job() -> None:
    plane = _plane(interrupt_at=3)
    store = MemoryRecordStore()
    with pytest.raises(KeyboardInterrupt):
        _executor(plane, store).execute(_request())
    assert store.get("r1").run.state is RunState.CANCELLED
    assert plane.get("Job", "r1", NS) is None


def test_resume_open_finds_the_job_by_label_and_carries_the_run_on() -> None:
    plane = _plane(interrupt_at=3)
    store = MemoryRecordStore()
    dead = _executor(plane, store)
    plan = plan_run(_request())
    dead._prepare(plan)  # the recorder got as far as creating the Job, then died
    from drakit.records.run import Run

    store.create(Run.submit(datetime.now(UTC), id="r1", recipe="training-48g", profile="training-48g", queue="training",
                            namespace=NS, executor="kubernetes", command=("python",), image="python:3.12"))
    plane.create(plan.job)
    store.create(Run.submit(datetime.now(UTC), id="r2", recipe="training-48g", profile="training-48g", namespace=NS,
                            executor="kubernetes", command=("python",), image="python:3.12"))  # died before its Job
    store.create(Run.submit(datetime.now(UTC), id="r3", recipe="training-48g", profile="training-48g", namespace=NS,
                            executor="kubernetes", command=("python",), image="python:3.12"))
    store.advance("r3", RunState.ADMITTED)  # its Job was deleted while nobody watched
    plane.interrupt_at = None
    done = {r.run.id: r for r in _executor(plane, store).resume_open(PROFILES.get)}
    assert _states(done["r1"]) == ["submitted", "admitted", "claim-allocated", "container-started", "finished"]
    assert done["r2"].run.state is RunState.FINISHED and plane.get("Job", "r2", NS) is not None
    assert _states(done["r3"]) == ["submitted", "admitted", "cancelled"]


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        pytest.param(ClusterError(ErrorCode.FORBIDDEN, "forbidden: may not create jobs in namespace ml", status=403),
                     ErrorCode.FORBIDDEN, id="rbac-denied"),
        pytest.param(ClusterError(ErrorCode.NOT_FOUND, 'namespaces "ml" not found', status=404),
                     ErrorCode.NOT_FOUND, id="namespace-missing"),
    ],
)
def test_what_the_cluster_refuses_before_submission_raises_and_records_nothing(failure: ClusterError,
                                                                               code: ErrorCode) -> None:
    plane = _plane()
    plane.failures[("create", "Job")] = failure
    store = MemoryRecordStore()
    with pytest.raises(ClusterError) as raised:
        _executor(plane, store).execute(_request())
    assert raised.value.code is code and store.runs() == ()
    assert plane.get("ResourceClaimTemplate", "training-48g", NS) is None, "nothing applied either"


def test_a_forbidden_template_apply_records_nothing() -> None:
    plane = _plane()
    plane.failures[("patch", "ResourceClaimTemplate")] = ClusterError(ErrorCode.FORBIDDEN, "forbidden", status=403)
    store = MemoryRecordStore()
    with pytest.raises(ClusterError):
        _executor(plane, store).execute(_request())
    assert store.runs() == ()


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        pytest.param({"image": ""}, InvalidArgument, "needs an image", id="no-image"),
        pytest.param({"run_id": "Run_1"}, InvalidArgument, "cannot name a Job", id="bad-run-id"),
    ],
)
def test_requests_no_job_can_be_made_for_are_refused_before_any_call(kw: dict[str, Any], error: type[Exception],
                                                                      match: str) -> None:
    plane = _plane()
    writes = plane.writes
    with pytest.raises(error, match=match):
        _executor(plane).execute(_request(**kw))
    assert plane.writes == writes


def test_a_profile_that_does_not_compile_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: drakit.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: bad\n"
                    "spec:\n  vendor: nvidia\n  colocate: noSuchAttribute\n", encoding="utf-8")
    with pytest.raises((InvalidInput, InvalidArgument)):
        plan_run(_request(rp=load_profile_files([str(path)]).get("bad")))


def test_job_manifest_keeps_the_fragment_merge_of_apply_to() -> None:
    fragment = plan_run(_request(profile="evaluation")).compiled.fragment
    job = job_manifest(name="r9", namespace=NS, run_id="r9", fragment=fragment, image="x", command=["true"])
    spec = job["spec"]["template"]["spec"]
    assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert spec["restartPolicy"] == "Never"


# -- the command line, on the twin --------------------------------------------------------------

LAB = str(Path(__file__).resolve().parents[3] / "drakit" / "queues" / "examples" / "lab.yaml")


@pytest.fixture
def on_twin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Plane, str]]:
    plane = _plane()
    monkeypatch.setattr("drakit.cli.door.live_client", lambda source: plane)
    yield plane, f"sqlite:///{tmp_path / 'runs.db'}"


def _cli(store: str, *args: str) -> Any:
    from drakit.cli.testing import run

    return run("run", "--executor", "kubernetes", "--image", "python:3.12", "--store", store, "-n", NS, *args)


def test_the_cli_records_a_run_and_exits_with_the_commands_status(on_twin: tuple[Plane, str]) -> None:
    import json

    plane, store = on_twin
    plane.exit_code = 4
    r = _cli(store, "-p", "evaluation", "--run-id", "c1", "-o", "json", "--", "python", "-c", "exit(4)")
    assert r.exit_code == 4, r.stderr
    doc = json.loads(r.stdout)
    assert doc["state"] == "finished" and doc["executor"] == "kubernetes" and len(doc["devices"]) == 1


def test_the_cli_routes_through_the_catalog_and_refuses_a_queue_it_does_not_define(on_twin: tuple[Plane, str],
                                                                                  tmp_path: Path) -> None:
    plane, store = on_twin
    one = tmp_path / "one.yaml"  # exactly one device: a request Kueue admits
    one.write_text("apiVersion: drakit.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: one\nextends: nvidia-base\n"
                   "spec:\n  count: 1\n", encoding="utf-8")
    r = _cli(store, "-p", str(one), "--queues", LAB, "--run-id", "c2", "-n", "team-nlp", "--", "true")
    assert r.exit_code == 0, r.stderr
    job = plane.get("Job", "c2", "team-nlp")
    assert job is not None and job["metadata"]["labels"][QUEUE_NAME_LABEL] == "research"  # routing: team-nlp
    bad = _cli(store, "-p", "evaluation", "--queues", LAB, "--queue", "nope", "--", "true")
    assert bad.exit_code == 2 and bad.stderr.strip().splitlines() == [
        f"error: --queue nope: {LAB} defines no such queue (it has training, research, batch)"]


def test_the_cli_refusals_are_one_line_with_the_live_exit_codes(on_twin: tuple[Plane, str]) -> None:
    plane, store = on_twin
    plane.failures[("create", "Job")] = ClusterError(ErrorCode.FORBIDDEN, "forbidden: may not create jobs", status=403)
    r = _cli(store, "-p", "evaluation", "--", "true")
    assert r.exit_code == 6 and r.stderr.strip().splitlines() == ["error: forbidden: may not create jobs"]
    from drakit.store.repo import open_store

    assert open_store(store).runs() == ()


def test_no_cluster_configured_is_one_line_and_records_nothing(tmp_path: Path) -> None:
    from drakit.cli.testing import run
    from drakit.store.repo import open_store

    store = f"sqlite:///{tmp_path / 'runs.db'}"
    r = run("run", "--executor", "kubernetes", "-p", "evaluation", "--image", "x", "--store", store,
            "--kubeconfig", str(tmp_path / "missing"), "--", "true")
    assert r.exit_code == 1 and r.stderr.strip().splitlines() == [f"error: --kubeconfig {tmp_path / 'missing'}: no such file"]
    assert open_store(store).runs() == ()


def test_a_job_of_that_name_already_there_is_a_conflict_before_recording(on_twin: tuple[Plane, str]) -> None:
    from drakit.store.repo import open_store

    plane, store = on_twin
    plane.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "c9", "namespace": NS}, "spec": {}})
    r = _cli(store, "-p", "evaluation", "--run-id", "c9", "--", "true")
    assert r.exit_code == 8 and len(r.stderr.strip().splitlines()) == 1 and "already exists" in r.stderr, r.stderr
    assert open_store(store).runs() == ()


def test_a_queued_run_on_a_cluster_without_kueue_is_refused_before_recording() -> None:
    from drakit.live.client import KUEUE_V1BETA2

    plane = _plane(unserved=frozenset({KUEUE_V1BETA2}))
    store = MemoryRecordStore()
    with pytest.raises(ClusterError, match="does not serve Kueue's API") as raised:
        _executor(plane, store).execute(_request())  # training-48g names queue training
    assert raised.value.code is ErrorCode.UNSUPPORTED and store.runs() == ()
    assert _executor(plane, store).execute(_request(profile="evaluation")).run.state is RunState.FINISHED
