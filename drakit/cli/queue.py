"""``drakit queue compile | check | explain``: the queue catalog, compiled to Kueue and explained offline."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Annotated, Any

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, EXIT_UNSATISFIABLE, emit
from drakit.cli.options import Files, Format, kube_name, output_option
from drakit.errors import InvalidArgument, InvalidInput, NotFound
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
    filename: Files,
    catalog: Annotated[str | None, typer.Option("--catalog", metavar="CATALOG", help="A QueueCatalog; else Kueue objects in -f.")] = None,
    namespace: Annotated[str, typer.Option("--namespace", "-n", metavar="NS")] = "default",
    output: Annotated[str, output_option(Format.text, Format.json)] = Format.text,
) -> None:
    """Offline: replay the Jobs in -f (by creation time) through the engine and say why NAME waits (exit 3) or not."""
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


def register(app: typer.Typer) -> None:
    app.add_typer(queue_app, name="queue")
