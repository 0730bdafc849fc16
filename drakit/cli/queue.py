"""``drakit queue compile | check | explain``: the queue catalog, compiled to Kueue and explained offline."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, EXIT_UNSATISFIABLE, emit
from drakit.cli.options import Files, Format, kube_name, output_option
from drakit.errors import NotFound

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
    docs = compile_catalog(lc.catalog, classes)
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
    from drakit.queues.admission import Engine
    from drakit.queues.compile import setup_of
    from drakit.queues.explain import explain_workload
    from drakit.queues.kueue import setup_from_objects, workload_from_job, workload_from_object
    from drakit.sources import load_manifest_documents

    objs = [d.data for d in load_manifest_documents(filename)]
    spaces = sorted({(o.get("metadata") or {}).get("namespace") or "default" for o in objs})
    setup = setup_of(_catalog(catalog).catalog, namespaces=spaces) if catalog else setup_from_objects(objs)
    templates = {(o["metadata"].get("namespace") or "default", o["metadata"]["name"]): o
                 for o in objs if o.get("kind") == "ResourceClaimTemplate"}
    engine = Engine(setup)
    pending = []
    for i, o in enumerate(objs):
        ns = (o.get("metadata") or {}).get("namespace") or "default"
        mine = {n: t for (tns, n), t in templates.items() if tns == ns}
        if o.get("kind") == "Job":
            pending.append(workload_from_job(o, mine, setup.priority_classes, created=float(i)))
        elif o.get("kind") == "Workload":
            wl = workload_from_object(o, mine, setup.priority_classes)
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
        raise NotFound(f"workload {key} not found in the input")
    ex = explain_workload(engine, key)
    if output == Format.json:
        emit(ex.to_json(), output)
    else:
        sys.stdout.write(ex.text())
    raise typer.Exit(EXIT_OK if ex.admitted else EXIT_UNSATISFIABLE)


def register(app: typer.Typer) -> None:
    app.add_typer(queue_app, name="queue")
