"""``drakit queue compile | check | explain``: the queue catalog, compiled to Kueue and explained offline."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Annotated, Any

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, EXIT_UNSATISFIABLE, emit
from drakit.cli.options import Context, Files, Format, Kubeconfig, RequestTimeout, kube_name, output_option
from drakit.errors import InvalidArgument, InvalidInput, NotFound, UsageError
from drakit.features import NEWEST_VERSION

queue_app = typer.Typer(help="Queue catalogs: compile to Kueue, check, explain why a workload waits.", no_args_is_help=True)

CatalogArg = Annotated[str, typer.Argument(metavar="CATALOG", help="A QueueCatalog file (or - for stdin).")]
ProfilesOpt = Annotated[list[str] | None, typer.Option("--profile", "-p", metavar="PROFILE",
                                                       help="Profile files or bundled names whose DeviceClasses the catalog names.")]


def _catalog(path: str) -> Any:
    from drakit.queues.catalog import load_catalog_text
    from drakit.sources.read import read_one

    return load_catalog_text(read_one(path), path)


def _profile_classes(profiles: list[str] | None) -> tuple[dict[str, list[str]], list[dict[str, Any]]]:
    """profile -> DeviceClasses, and every compiled manifest (for the Kueue-fit lint)."""
    if not profiles:
        return {}, []
    from drakit.profiles import compile_profile, drivers_for
    from drakit.sources import load_profile_files

    classes: dict[str, list[str]] = {}
    manifests: list[dict[str, Any]] = []
    for rp in load_profile_files(profiles).selected():
        for schema in drivers_for(rp):
            cp = compile_profile(rp, schema)
            classes.setdefault(rp.name, []).append(f"{rp.name}.{schema.driver}")
            manifests += cp.manifests()
    return classes, manifests


@queue_app.command("compile")
def compile_cmd(
    catalog: CatalogArg,
    profiles: ProfilesOpt = None,
    namespace: Annotated[list[str] | None, typer.Option("--namespace", "-n", metavar="NS",
                                                        help="Namespaces that get a LocalQueue of each queue open to every namespace (repeat).")] = None,
    output: Annotated[str, output_option(Format.yaml, Format.json, Format.name,
                                         note="no text: the output is manifests; the last one is the Configuration patch.")] = Format.yaml,
) -> None:
    """Kueue v0.19.2 objects and the Configuration deviceClassMappings patch (merge it; never replace the ConfigMap)."""
    from drakit.profiles.render import to_yaml
    from drakit.queues.compile import compile_catalog
    from drakit.queues.lint import catalog_warnings

    lc = _catalog(catalog)
    classes, _ = _profile_classes(profiles)
    for w in catalog_warnings(lc, classes if profiles else None):
        print(f"Warning: {w}", file=sys.stderr)
    docs = compile_catalog(lc.catalog, classes, namespace or ())
    if output == Format.json:
        emit({"apiVersion": "v1", "kind": "List", "items": docs}, output)
    elif output == Format.name:
        for d in docs:
            typer.echo(kube_name(str(d["kind"]), str(d["apiVersion"]), str((d.get("metadata") or {}).get("name", "configuration"))))
    else:
        sys.stdout.write(to_yaml(docs))


@queue_app.command("check")
def check_cmd(
    catalog: CatalogArg,
    profiles: ProfilesOpt = None,
    namespace: Annotated[list[str] | None, typer.Option("--namespace", "-n", metavar="NS",
                                                        help="Namespaces that exist (repeat); unset: not checked.")] = None,
) -> None:
    """Who enforces each setting (Kueue or drakit only), catalog warnings, and profiles Kueue cannot admit (exit 1)."""
    from drakit.queues.compile import features
    from drakit.queues.lint import catalog_warnings, kueue_profile_problems

    lc = _catalog(catalog)
    classes, manifests = _profile_classes(profiles)
    for f in features(lc.catalog):
        typer.echo(f"{f.queue:<16} {f.setting:<28} {f.value:<18} enforced by {f.enforced_by}" + (f"  ({f.note})" if f.note else ""))
    for w in catalog_warnings(lc, classes if profiles else None, namespace):
        print(f"Warning: {w}", file=sys.stderr)
    problems = kueue_profile_problems(manifests)
    for obj, path, problem in problems:
        print(f"{obj}: {path + ': ' if path else ''}{problem}", file=sys.stderr)
    raise typer.Exit(EXIT_INVALID if problems else EXIT_OK)


@queue_app.command("explain")
def explain_cmd(
    name: Annotated[str, typer.Argument(metavar="[job/]NAME", help="The Job (or Workload) that waits, NS/NAME or NAME in -n.")],
    filename: Files = [],  # noqa: B006 - typer's list default
    catalog: Annotated[str | None, typer.Option("--catalog", metavar="CATALOG", help="A QueueCatalog; else Kueue objects in -f.")] = None,
    namespace: Annotated[str, typer.Option("--namespace", "-n", metavar="NS")] = "default",
    output: Annotated[str, output_option(Format.text, Format.json)] = Format.text,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    request_timeout: RequestTimeout = 30.0,
) -> None:
    """Why NAME waits (exit 3) or not (exit 0). With -f, offline: the Jobs in -f replayed (by creation
    time) through the engine. Without -f, live: the Job's Workload status, conditions and messages
    and its queues, read from the cluster of the kubeconfig."""
    from drakit.cli.door import Source

    if not filename:
        if catalog:
            raise UsageError("--catalog takes manifests (-f): a live explain reads Kueue's own objects")
        _explain_live(name, namespace, output, Source((), kubeconfig, context, False, request_timeout))
    Source(filename, kubeconfig, context).check()
    from drakit.cli.door import refuse_invalid
    from drakit.errors import InvalidInput
    from drakit.features import Features
    from drakit.model.load import decode_documents
    from drakit.queues.admission import Engine
    from drakit.queues.compile import setup_of
    from drakit.queues.explain import explain_workload, stuck_after_fix
    from drakit.queues.kueue import (
        counter_charges,
        setup_from_objects,
        workload_from_job,
        workload_from_object,
    )
    from drakit.sources import load_manifest_documents

    # Read once (stdin can be read only once). Core objects (Jobs' pod templates, claim templates)
    # are decoded and validated at the door as every verb does; Kueue's kinds are read by the queue
    # readers, a malformed one refused by line.
    docs = load_manifest_documents(filename)
    bundle, problems = decode_documents(docs)
    if problems:
        raise InvalidInput(problems)
    refuse_invalid((*bundle.entries, *bundle.checked_pods), Features.for_version(NEWEST_VERSION))
    objs = [d.data for d in docs]
    spaces = sorted({_namespace(o) for o in objs})
    with _malformed(docs, "Kueue objects"):
        setup = setup_of(_catalog(catalog).catalog, namespaces=spaces) if catalog else setup_from_objects(objs)
    templates = {(_namespace(o), o["metadata"]["name"]): o for o in objs if o.get("kind") == "ResourceClaimTemplate"}
    classes = {o["metadata"]["name"]: o for o in objs if o.get("kind") == "DeviceClass"}
    slices = [o for o in objs if o.get("kind") == "ResourceSlice"]
    counted = any(m.counter for m in setup.mappings)
    engine = Engine(setup)
    pending = []
    workload_docs: dict[str, Any] = {}
    for i, d in enumerate(docs):
        o = d.data
        ns = _namespace(o)
        mine = {n: t for (tns, n), t in templates.items() if tns == ns}
        with _malformed([d], str(o.get("kind"))):
            charges = counter_charges(setup, mine, classes, slices) if counted and o.get("kind") in ("Job", "Workload") else None
            if o.get("kind") == "Job":
                pending.append(workload_from_job(o, mine, setup.priority_classes, created=float(i), charges=charges))
            elif o.get("kind") == "Workload":
                wl = workload_from_object(o, mine, setup.priority_classes, charges)
                workload_docs[wl.key] = o
                admitted = ((o.get("status") or {}).get("admission") or {}).get("clusterQueue")
                if admitted:
                    engine.assume(wl, admitted)
                else:
                    pending.append(wl)
    for wl in sorted(pending, key=lambda w: (w.created, w.key)):
        engine.submit(wl, wl.created)
    engine.settle()
    key = name.split("/", 1)[1] if name.startswith(("job/", "workload/")) else name
    key = key if "/" in key else f"{namespace}/{key}"
    if key not in engine.workloads:
        raise NotFound(f"workload {key} not found in {', '.join(filename)} (Jobs and Workloads are read)")
    ex = explain_workload(engine, key)
    stuck = stuck_after_fix(workload_docs[key], engine) if key in workload_docs else ""
    if stuck and not ex.admitted:
        ex = replace(ex, lines=(*ex.lines, stuck), hint="delete the Workload; the job controller recreates it")
    if output == Format.json:
        emit(ex.to_json(), output)
    else:
        sys.stdout.write(ex.text())
    raise typer.Exit(EXIT_OK if ex.admitted else EXIT_UNSATISFIABLE)


def _explain_live(name: str, namespace: str, output: str, source: Any) -> None:
    """The live form: read the Job, its Workload and queues, and print Kueue's verdict."""
    from drakit.cli.door import live_client
    from drakit.cli.door import where as where_of
    from drakit.live.kueue import QUEUE_NAME_LABEL, read_kueue_state
    from drakit.queues.workload_status import explain_job_without_workload, explain_workload

    kind = "Workload" if name.startswith("workload/") else "Job"
    rest = name.split("/", 1)[1] if name.startswith(("job/", "workload/")) else name
    ns, _, obj_name = rest.rpartition("/")
    if not obj_name:
        raise UsageError(f"{name!r}: want [job/|workload/][NS/]NAME")
    client = live_client(source)
    origin = where_of(client)
    try:
        state = read_kueue_state(client, kind, obj_name, ns or namespace,
                                 warn=lambda w: print(f"Warning: {w}", file=sys.stderr))
    finally:
        client.close()
    if state.workloads:
        wl = state.workloads[0]
        where = f"{origin}: Workload {_namespace(wl)}/{wl['metadata'].get('name', '')}"
        with _malformed_live(where):
            ex = explain_workload(
                wl, cluster_queues=state.cluster_queues, local_queues=state.local_queues,
                workloads=state.all_workloads, device_class_mappings=state.device_class_mappings,
            )  # fmt: skip
    else:
        assert state.job is not None  # a Workload asked for by name exists (else not-found)
        ex = explain_job_without_workload(state.job, QUEUE_NAME_LABEL)
    if output == Format.json:
        emit(ex.to_json(), output)
    else:
        typer.echo(ex.text())
    raise typer.Exit(EXIT_UNSATISFIABLE if ex.verdict.waiting else EXIT_OK)


def _namespace(obj: Any) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    return ns if isinstance(ns, str) and ns else "default"


@contextmanager
def _malformed(docs: Sequence[Any], what: str) -> Iterator[None]:
    """A Kueue object or Job the readers cannot take: one line naming the file and document, no traceback."""
    try:
        yield
    except (KeyError, TypeError, AttributeError, ValueError, InvalidArgument) as e:
        where = ", ".join(f"{d.source}[{d.index}]" for d in docs[:1]) if len(docs) == 1 else ", ".join(
            sorted({str(d.source) for d in docs}))
        detail = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise InvalidInput(f"{where}: {what}: malformed ({detail})") from None


@contextmanager
def _malformed_live(where: str) -> Iterator[None]:
    """Kueue's CRD schemas keep these shapes; an object that breaks them anyway is one line, not a traceback."""
    try:
        yield
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        detail = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise InvalidInput(f"{where} (or its queues): malformed ({detail})") from None


def register(app: typer.Typer) -> None:
    app.add_typer(queue_app, name="queue")
