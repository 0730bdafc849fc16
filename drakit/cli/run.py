"""``drakit run``, ``record-env``, ``log-metric`` and ``discover``: runs recorded from submission to result.

``run`` places a command's devices by its profile (drakit's allocator over this machine's NVML
slice, or a declared inventory), admits it through its queue, launches it with the devices
exposed by UUID and records every step in the store.  ``record-env`` and ``log-metric`` run
inside the launched command; ``discover`` prints the ResourceSlice the NVIDIA driver would
publish for this machine.
"""

from __future__ import annotations

import json
import math
import os
import socket
import uuid
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, EXIT_UNSATISFIABLE, emit
from drakit.cli.options import (
    Context,
    FeatureGates,
    Format,
    Kubeconfig,
    KubernetesVersion,
    RequestTimeout,
    features,
    output_option,
)
from drakit.cli.store import StoreOption
from drakit.errors import DrakitError, InvalidArgument
from drakit.features import NEWEST_VERSION, Features
from drakit.inventory.snapshot import ClusterSnapshot

EXECUTORS = ("local", "sim", "kubernetes")


def open_records(url: str | None) -> Any:
    """The record store at ``url`` (one line of why when the store extra is missing)."""
    try:
        from drakit.store.repo import open_store
    except ImportError as e:
        raise DrakitError(f"the store needs SQLAlchemy and Alembic ({e.name} is missing); install drakit[store]") from None
    return open_store(url)


def nvml_snapshot(replay: str | None = None) -> Any:
    """NVML's view of this machine, or of a recording (``--replay``: every step but the real read)."""
    from drakit.executors.nvmlread import read_snapshot
    from drakit.executors.nvmlreplay import ReplayNvml

    if not replay:
        return read_snapshot()
    from drakit.sources.read import read_one

    text = read_one(replay)  # bounded, `-` for stdin; its errors are already one line naming the file
    try:
        lib = ReplayNvml(json.loads(text))
        return read_snapshot(lib, lib.readlink)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError) as e:
        what = e.msg if isinstance(e, json.JSONDecodeError) else f"{type(e).__name__}: {e}"
        raise InvalidArgument(f"{replay}: not an NVML recording ({what})") from None


def nvml_slice(node: str, replay: str | None = None) -> dict[str, Any]:
    """This machine's slice from NVML, or from a recording (``--replay``)."""
    from drakit.drivers.nvml import NvmlError, resource_slice

    snapshot = nvml_snapshot(replay)
    try:
        return resource_slice(snapshot, node)
    except NvmlError as e:
        raise DrakitError(f"NVML answered what the NVIDIA driver would refuse: {e}") from None


def local_inventory(files: list[str] | None, demo: bool, feats: Features, node: str) -> ClusterSnapshot:
    """``-f`` manifests, the embedded demo cluster, or this machine's NVML slice (in that order)."""
    if files:
        from drakit.cli.door import open_snapshot

        return open_snapshot(files, feats)
    if demo:
        from drakit.demo import cluster_objects

        return ClusterSnapshot.from_objects(cluster_objects())
    from drakit.executors.nvmlread import NvmlUnavailable
    from drakit.inventory.templates import nvidia_device_class

    try:
        local = nvml_slice(node)
    except NvmlUnavailable as e:
        raise NvmlUnavailable(f"{e}; pass -f INVENTORY or --demo to run on a declared inventory") from None
    objects = [local, nvidia_device_class(), nvidia_device_class("mig.nvidia.com", "mig")]
    return ClusterSnapshot.from_objects(objects)


def _ledger(engine: Any, catalog_path: str) -> Any:
    """The queue engine's durable ledger in the record store: every submitter process shares it."""
    from drakit.queues import load_catalog_text, setup_of
    from drakit.sources.read import read_one
    from drakit.store.ledger import SqlQueueLedger

    return SqlQueueLedger(engine, setup_of(load_catalog_text(read_one(catalog_path), catalog_path).catalog))


def _summary(record: Any) -> None:
    from drakit.records.render import run_line

    run = record.run
    typer.echo(f"run {run.id}: {run.state.value}" + (f" ({run.reason_code}: {run.message})" if run.message else ""))
    for d in record.devices:
        typer.echo(f"  {d.request:<8} {d.pool}/{d.device:<24} {d.product:<26} {d.uuid}")
    typer.echo("  " + run_line(record))


_N = TypeVar("_N", int, float)


def _number(text: str, kind: type[_N]) -> _N | None:
    try:
        return kind(text.strip())
    except ValueError:
        return None


def _report(record: Any, mlflow: str | None, output: str) -> NoReturn:
    """Mirror, print and exit: the command's own status when it ran; 3 when it was not placed or admitted."""
    from drakit.records.render import record_json
    from drakit.records.run import RunState

    if mlflow:
        from drakit.executors.mlflow import mirror

        typer.echo(f"mlflow run {mirror(record, mlflow)}", err=True)
    if output != Format.text:
        emit(record_json(record), output)
    else:
        _summary(record)
    if record.run.state is not RunState.FINISHED:
        raise typer.Exit(EXIT_UNSATISFIABLE)
    status = record.result.exit_status if record.result else None
    # A command killed by signal N is recorded as -N (as Python reports it) and exits 128+N, as a shell does.
    raise typer.Exit(EXIT_OK if status is None else (128 - status if status < 0 else min(status, 255)))


def register(app: typer.Typer) -> None:
    @app.command("run", context_settings={"allow_interspersed_args": False})
    def run(
        command: Annotated[list[str], typer.Argument(metavar="-- COMMAND...", help="What to run.")],
        profile: Annotated[str, typer.Option("--profile", "-p", help="Profile (file or bundled name) the run's devices follow.")],
        queue: Annotated[str, typer.Option("--queue", help="Queue to be admitted through (none: admitted at once).")] = "",
        queues: Annotated[str | None, typer.Option("--queues", metavar="CATALOG", help="QueueCatalog file the queue is defined in.")] = None,
        executor: Annotated[str, typer.Option("--executor", help="local (this machine), sim (placement only) or kubernetes.")] = "local",
        image: Annotated[str, typer.Option("--image", help="Container image the command runs in (kubernetes); local and sim record it as requested, not used.")] = "",
        files: Annotated[list[str] | None, typer.Option("-f", "--filename", metavar="FILE", help="A declared inventory instead of NVML; repeatable.")] = None,
        demo: Annotated[bool, typer.Option("--demo", help="Use the embedded demo cluster as the declared inventory.")] = False,
        product: Annotated[str | None, typer.Option("--product", help="Only devices of this product.")] = None,
        run_id: Annotated[str | None, typer.Option("--run-id", help="ID to record the run under (default: a new one).")] = None,
        namespace: Annotated[str, typer.Option("-n", "--namespace")] = "default",
        store: StoreOption = None,
        mlflow: Annotated[str | None, typer.Option("--mlflow", metavar="URI", help="Also mirror the run to this MLflow tracking URI.")] = None,
        wait: Annotated[float, typer.Option("--wait", metavar="SECONDS", help="kubernetes: how long admission, placement and start may take.")] = 3600.0,
        timeout: Annotated[float | None, typer.Option("--timeout", metavar="SECONDS", help="kubernetes: how long the started command may run.")] = None,
        keep_job: Annotated[bool, typer.Option("--keep-job", help="kubernetes: leave the Job of a run that timed out or was interrupted (default: delete it).")] = False,
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        request_timeout: RequestTimeout = 30.0,
        kubernetes_version: KubernetesVersion = NEWEST_VERSION,
        feature_gates: FeatureGates = None,
        output: Annotated[str, output_option(Format.text, Format.json, Format.yaml)] = Format.text,
    ) -> None:
        """Run COMMAND on devices chosen by a profile and record it: claim, devices, environment, results.

        Exit status: the command's own when it ran; 3 when it could not be placed or admitted;
        with --executor kubernetes, a cluster refusal before the run is recorded exits as the live
        verbs do (5-8, docs/live.md).
        """
        from drakit.executors.base import RunRequest, execute
        from drakit.executors.local import LocalLauncher, SimLauncher
        from drakit.executors.placement import DeviceBook
        from drakit.sources import load_profile_files

        if executor not in EXECUTORS:
            raise InvalidArgument(f"--executor {executor!r}: choose one of {', '.join(EXECUTORS)}")
        if not command:
            raise InvalidArgument("nothing to run: give the command after --")
        feats = features(kubernetes_version, feature_gates)
        profiles = load_profile_files([profile])
        chosen = profiles.get(profiles.given[0]) if profiles.given else profiles.get(profile)
        if executor == "kubernetes":
            from drakit.cli.runkube import run_on_cluster

            request = RunRequest(run_id=run_id or f"run-{uuid.uuid4().hex[:12]}", profile=chosen, command=tuple(command),
                                 queue=queue, namespace=namespace, image=image, product=product)
            _report(run_on_cluster(open_records(store), request, feats, queues=queues, kubeconfig=kubeconfig,
                                   context=context, request_timeout=request_timeout, wait_s=wait, timeout_s=timeout,
                                   keep_job=keep_job), mlflow, output)
        inventory = local_inventory(files, demo or (executor == "sim" and not files), feats, socket.gethostname())
        if queue and not queues:
            raise InvalidArgument(f"--queue {queue}: name the QueueCatalog that defines it with --queues CATALOG")
        records = open_records(store)
        ledger = _ledger(records.engine, queues) if queue and queues else None
        request = RunRequest(run_id=run_id or f"run-{uuid.uuid4().hex[:12]}", profile=chosen, command=tuple(command),
                             queue=queue, namespace=namespace, image=image, product=product)
        # The store reaches the command through the launcher, not the request: the request is
        # recorded, and a URL may hold a password.
        store_env = {**os.environ, "DRAKIT_STORE": records.engine.url.render_as_string(hide_password=False)}
        launcher = SimLauncher() if executor == "sim" else LocalLauncher(base_env=store_env)
        if image and not launcher.runs_image:
            typer.echo(f"warning: --image {image}: the {executor} executor runs the command on this host, not in "
                       "the image; the record keeps it as requested, not used (imageUsed: false)", err=True)
        record = execute(records, DeviceBook(inventory, feats), launcher, request, executor=executor, ledger=ledger)
        _report(record, mlflow, output)

    @app.command("record-env")
    def record_env(
        run_id: Annotated[str | None, typer.Option("--run", envvar="DRAKIT_RUN_ID", help="Run to record into.")] = None,
        store: StoreOption = None,
        replay: Annotated[str | None, typer.Option("--replay", metavar="FILE", help="Read an NVML recording instead of NVML.")] = None,
        output: Annotated[str, output_option(Format.text, Format.json, Format.yaml)] = Format.text,
    ) -> None:
        """Record Python, frameworks and NVML's view inside a run; cross-check its GPUs with the claim's.

        Exit status 1 when the GPUs visible here are not the claim's devices (the record says so too).
        """
        from drakit.executors.environment import collect
        from drakit.executors.nvmlread import NvmlUnavailable

        try:
            snapshot = nvml_snapshot(replay)
        except NvmlUnavailable:
            snapshot = None
        env, check = collect(os.environ, snapshot)
        if run_id:
            open_records(store).record_env(run_id, env)
        doc = {"run": run_id, "python": env.python, "frameworks": dict(env.frameworks),
               "nvml": [dict(g) for g in env.nvml], "crossCheck": {"status": check.status, "message": check.message,
                                                                    "expected": list(check.expected), "seen": list(check.seen)}}
        if output != Format.text:
            emit(doc, output)
        else:
            typer.echo(f"{env.python}; " + ", ".join(f"{k} {v}" for k, v in env.frameworks.items() if not k.startswith(("drakit.", "env."))))
            for g in env.nvml:
                typer.echo(f"  NVML {g.get('uuid')} {g.get('name')}")
            typer.echo(f"cross-check: {check.status}: {check.message}", err=check.status == "mismatch")
        if check.status == "mismatch":
            raise typer.Exit(EXIT_INVALID)

    @app.command("log-metric")
    def log_metric(
        name: Annotated[str, typer.Argument(help="Metric name.")],
        value: Annotated[str, typer.Argument(help="A finite number.")],
        step: Annotated[str | None, typer.Option("--step", help="Step of a series point (0 ≤ step < 2^63).")] = None,
        correctness: Annotated[bool, typer.Option("--correctness", help="A correctness metric (one value per run).")] = False,
        ready: Annotated[bool, typer.Option("--ready", help="Also mark the end of startup.")] = False,
    ) -> None:
        """Append a metric to the run's channel ($DRAKIT_METRICS); a series point unless --correctness.

        A call with a bad name, value or step exits 2 and is kept in the run's record as a problem.
        """
        from drakit.executors import metrics
        from drakit.records.run import MAX_TEXT

        path = os.environ.get(metrics.ENV_VAR)
        if not path:
            raise InvalidArgument(f"${metrics.ENV_VAR} is not set: log-metric runs inside `drakit run`")
        number, steps = _number(value, float), _number(step or "0", int)
        why = None
        if not name or len(name) > MAX_TEXT or "\x00" in name:
            why = f"metric name of {len(name)} characters: give 1 to {MAX_TEXT}, without NUL"
        elif number is None or not math.isfinite(number):
            why = f"{name}: value {value[:40]!r} is not a finite number"
        elif steps is None or not 0 <= steps < 2**63:
            why = f"{name}: --step {(step or '')[:40]!r} is not an integer 0 ≤ step < 2^63"
        try:
            if why is not None:
                metrics.rejected(path, why, ["log-metric", name, value, *([f"--step={step}"] if step is not None else [])])
                raise InvalidArgument(why)
            if ready:
                metrics.ready(path)
            item: dict[str, Any] = {"correctness": name, "value": number} if correctness else \
                {"metric": name, "step": steps, "value": number}
            metrics.append(path, item)
        except (OSError, ValueError) as e:
            raise DrakitError(f"{path}: {getattr(e, 'strerror', None) or e}") from None

    @app.command("discover")
    def discover(
        node: Annotated[str | None, typer.Option("--node", help="Node (and pool) name; default: this host's name.")] = None,
        record: Annotated[str | None, typer.Option("--record", metavar="FILE", help="Also write NVML's answers to FILE (a recording).")] = None,
        replay: Annotated[str | None, typer.Option("--replay", metavar="FILE", help="Read a recording instead of NVML.")] = None,
        output: Annotated[str, output_option(Format.yaml, Format.json)] = Format.yaml,
    ) -> None:
        """Print the ResourceSlice the NVIDIA DRA driver would publish for this machine's GPUs (via NVML)."""
        if record:
            from drakit.executors.nvmlread import load_nvml, sysfs_readlink
            from drakit.executors.nvmlreplay import record as take

            Path(record).write_text(json.dumps(take(load_nvml(), sysfs_readlink), indent=1) + "\n", encoding="utf-8")
            replay = replay or record
        emit(nvml_slice(node or socket.gethostname(), replay), output)

