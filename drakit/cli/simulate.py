"""``drakit simulate``: replay a scenario, optionally against a what-if variant."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from drakit.cli.console import Output, emit, stdout
from drakit.errors import InvalidArgument, UsageError


def _progress(enabled: bool) -> Progress | None:
    """A rich progress bar on stderr for interactive runs, or nothing."""
    if not enabled:
        return None
    from rich.progress import BarColumn, TaskProgressColumn, TextColumn, TimeRemainingColumn

    from drakit.cli.console import stderr

    return Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeRemainingColumn(), console=stderr, transient=True)


def simulate(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (see docs/scenarios.md).")],
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for tie-breaks and generated names (default: the scenario's).")] = None,
    compare: Annotated[Path | None, typer.Option("--compare", help="A second scenario to run with the same seed.")] = None,
    add_nodes: Annotated[str | None, typer.Option("--add-nodes", help="What-if: add nodes, e.g. 4xh200-8x.")] = None,
    output: Annotated[Output, typer.Option("-o", "--output", help="text, json or yaml.")] = Output.text,
    chart: Annotated[Path | None, typer.Option("--chart", help="Write utilisation and queue depth to a .png or .html file.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Simulate pods and claims over a cluster with the real allocator and kube-scheduler semantics."""
    from drakit.sim import load_scenario, parse_add_nodes, run_scenario
    from drakit.sim.report import compare_json, render_compare_text, render_text, write_chart

    if compare is not None and add_nodes is not None:
        raise UsageError("--compare and --add-nodes are alternatives: give one of them")
    base = load_scenario(scenario)
    variant = None
    labels = ("base", "variant")
    if compare is not None:
        variant = load_scenario(compare)
        labels = (scenario.stem, compare.stem if compare.stem != scenario.stem else f"{compare.stem} (2)")
    elif add_nodes is not None:
        try:
            group = parse_add_nodes(add_nodes)
        except InvalidArgument as e:
            raise UsageError(f"--add-nodes: {e}") from None
        variant = base.with_nodes([group])
        labels = ("base", f"+{add_nodes}")
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
            results.append(run_scenario(sc, run_seed, progress=callback))
    finally:
        if bar is not None:
            bar.stop()

    if chart is not None:
        try:
            write_chart(chart, list(zip([label for label, _ in runs], results, strict=True)))
        except InvalidArgument as e:
            raise UsageError(f"--chart: {e}") from None
    if len(results) == 1:
        if output == Output.text:
            stdout.file.write(render_text(results[0]))
        else:
            emit(results[0].to_json(), output)
    else:
        if output == Output.text:
            stdout.file.write(render_compare_text(results[0], results[1], labels))
        else:
            emit(compare_json(results[0], results[1], labels), output)


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
