"""``drakit simulate``: replay a scenario, optionally against a what-if variant."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress

from drakit.cli.console import emit, stdout
from drakit.cli.options import Format, kube_name, output_option
from drakit.errors import InvalidArgument, UsageError
from drakit.sim.scenario import Scenario


def _progress(enabled: bool) -> Progress | None:
    """A rich progress bar on stderr for interactive runs, or nothing."""
    if not enabled:
        return None
    from rich.progress import BarColumn, TaskProgressColumn, TextColumn, TimeRemainingColumn

    from drakit.cli.console import stderr

    return Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeRemainingColumn(), console=stderr, transient=True)


def simulate(
    scenario: Annotated[Path | None, typer.Argument(metavar="SCENARIO", help="Scenario file (see docs/scenarios.md).")] = None,
    filename: Annotated[Path | None, typer.Option("-f", "--filename", metavar="FILE", help="The scenario file, kubectl style.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", metavar="SEED", help="Seed for tie-breaks and generated names (default: the scenario's).")] = None,
    compare: Annotated[Path | None, typer.Option("--compare", metavar="SCENARIO", help="A second scenario to run with the same seed.")] = None,
    add_nodes: Annotated[
        str | None,
        typer.Option("--add-nodes", metavar="NODES", help="What-if: add nodes, e.g. 4xh200-8x or 2xh100-8x@root4-numa2, or a file of Node and ResourceSlice manifests."),
    ] = None,
    output: Annotated[
        str,
        output_option(Format.text, Format.json, Format.yaml, Format.name,
                      note="name lists the objects --snapshot-at writes; no wide: the report has no columns."),
    ] = Format.text,
    chart: Annotated[Path | None, typer.Option("--chart", metavar="FILE", help="Write utilisation per class and product and queue depth to a .png or .html file.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    snapshot_at: Annotated[
        str | None,
        typer.Option("--snapshot-at", metavar="SECONDS", help="Write the simulated cluster at SECONDS (or 'end') as a bundle (-o yaml|json)."),
    ] = None,
    queues: Annotated[
        Path | None,
        typer.Option("--queues", metavar="CATALOG", help="A QueueCatalog: Jobs wait suspended until its queues admit them, as with Kueue."),
    ] = None,
) -> None:
    """Simulate pods and claims over a cluster with the real allocator and kube-scheduler semantics.

    No -n, -A or -l: the scenario names its namespaces and workloads, and the report covers all of them.
    """
    from drakit.sim import run_scenario
    from drakit.sim.report import compare_json, render_compare_text, render_text, write_chart
    from drakit.sources import load_scenario

    if scenario is not None and filename is not None:
        raise UsageError("give the scenario once: as an argument or with -f, not both")
    scenario = scenario or filename
    if scenario is None:
        raise UsageError("missing the scenario file: drakit simulate SCENARIO (or -f SCENARIO)")
    if compare is not None and add_nodes is not None:
        raise UsageError("--compare and --add-nodes are alternatives: give one of them")
    if output == Format.name and snapshot_at is None:
        raise UsageError("-o name lists the objects of --snapshot-at; a simulation report has no kind/name")
    base = load_scenario(scenario)
    if snapshot_at is not None:
        if compare is not None or add_nodes is not None or chart is not None:
            raise UsageError("--snapshot-at writes one run's cluster: it does not combine with --compare, --add-nodes or --chart")
        _write_snapshot(base, seed, _snapshot_time(snapshot_at), output)
        return
    variant = None
    labels = ("base", "variant")
    if compare is not None:
        variant = load_scenario(compare)
        labels = (scenario.stem, compare.stem if compare.stem != scenario.stem else f"{compare.stem} (2)")
    elif add_nodes is not None:
        variant = _with_added_nodes(base, add_nodes)
        labels = ("base", f"+{Path(add_nodes).name}")
    base.check_memory()
    if variant is not None:
        variant.check_memory()
    run_seed = base.seed if seed is None else seed

    bar = _progress(not quiet and sys.stderr.isatty())
    results = []
    runs = [(labels[0], base)] + ([(labels[1], variant)] if variant is not None else [])
    if bar is not None:
        bar.start()
    try:
        for label, sc in runs:
            callback = None
            if bar is not None:
                task = bar.add_task(f"simulating {label}", total=sc.pod_count())
                callback = lambda done, total, t=task: bar.update(t, completed=done, total=total)  # noqa: E731
            results.append(run_scenario(sc, run_seed, progress=callback, admitter=_admitter(queues, sc)))
    finally:
        if bar is not None:
            bar.stop()

    if chart is not None:
        try:
            write_chart(chart, list(zip([label for label, _ in runs], results, strict=True)))
        except InvalidArgument as e:
            raise UsageError(f"--chart: {e}") from None
    if len(results) == 1:
        if output == Format.text:
            stdout.file.write(render_text(results[0]))
        else:
            emit(results[0].to_json(), output)
    else:
        if output == Format.text:
            stdout.file.write(render_compare_text(results[0], results[1], labels))
        else:
            emit(compare_json(results[0], results[1], labels), output)


def _admitter(catalog: Path | None, scenario: Any) -> Any:
    """A fresh queue engine per run (``--queues``), or None."""
    if catalog is None:
        return None
    from drakit.queues.catalog import load_catalog_text
    from drakit.queues.compile import setup_of
    from drakit.queues.sim import EngineAdmitter
    from drakit.sources.read import read_one

    cat = load_catalog_text(read_one(str(catalog)), str(catalog)).catalog
    spaces = sorted({w.namespace for w in scenario.workloads})
    templates = [o for o in scenario.objects if o.get("kind") == "ResourceClaimTemplate"]
    return EngineAdmitter(setup_of(cat, namespaces=spaces), templates, cat)


def _with_added_nodes(base: Any, spec: str) -> Any:
    """``--add-nodes``: ``<count>x<template>``, or else a file of the user's Nodes and ResourceSlices."""
    from drakit.sim.scenario import ADD_NODES_PATTERN, parse_add_nodes
    from drakit.sources import load_node_manifests

    if ADD_NODES_PATTERN.match(spec.strip()) or not Path(spec).exists():
        try:
            return base.with_nodes([parse_add_nodes(spec)])
        except InvalidArgument as e:
            raise UsageError(f"--add-nodes: {e}, or a file of Node and ResourceSlice manifests") from None
    return base.with_objects(load_node_manifests(spec, base))


def _snapshot_time(text: str) -> float | None:
    """``end`` → None (run to the end), else seconds of simulated time."""
    if text.strip().lower() == "end":
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"--snapshot-at {text!r}: want a number of seconds >= 0 or 'end'")
    return value


def _write_snapshot(scenario: Scenario, seed: int | None, at: float | None, output: str) -> None:
    from drakit.sim.snapshot import simulate_snapshot

    _, snapshot = simulate_snapshot(scenario, seed, at)
    bundle = snapshot.to_list()
    if output == Format.name:
        for o in bundle["items"]:
            typer.echo(kube_name(str(o.get("kind", "")), str(o.get("apiVersion", "")), str((o.get("metadata") or {}).get("name", ""))))
        return
    emit(bundle, Format.json if output == Format.json else Format.yaml)


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
