"""``drakit runs ls | show | compare``: what the store recorded, and results grouped by device.

``compare`` groups runs by product, profile or driver version and gives n, the median and the
spread (quartiles, min–max) of runtime, startup or any correctness metric; ``--chart`` writes
the same as a PNG or a self-contained HTML page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from drakit.cli.console import emit
from drakit.cli.options import Format, output_option
from drakit.cli.run import open_records
from drakit.cli.store import StoreOption
from drakit.errors import InvalidArgument
from drakit.gostr import escape

runs_app = typer.Typer(help="Recorded runs: list, show one, compare results by device.", no_args_is_help=True)


@runs_app.command("ls")
def ls(
    state: Annotated[str | None, typer.Option("--state", help="Only runs in this state (finished, failed...).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most this many (oldest first).")] = None,
    store: StoreOption = None,
    output: Annotated[str, output_option(Format.text, Format.json, Format.yaml)] = Format.text,
) -> None:
    """List runs, oldest first."""
    from drakit.records.render import run_line, runs_json
    from drakit.records.run import RunState

    try:
        wanted = RunState(state) if state else None
    except ValueError:
        raise InvalidArgument(f"--state {state!r}: choose one of {', '.join(s.value for s in RunState)}") from None
    records = open_records(store)
    found = [records.get(r.id) for r in records.runs(state=wanted, limit=limit)]
    if output != Format.text:
        emit(runs_json(found), output)
        return
    typer.echo(f"{'ID':<24} {'PROFILE':<18} {'STATE':<14} {'NODE':<12} EXIT   STARTUP   RUNTIME  DEVICES")
    for record in found:
        typer.echo(run_line(record))


@runs_app.command("show")
def show(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run ID.")],
    store: StoreOption = None,
    output: Annotated[str, output_option(Format.yaml, Format.json)] = Format.yaml,
) -> None:
    """Everything recorded about one run: states, claim, devices as allocated, environment, results."""
    from drakit.records.render import record_json

    emit(record_json(open_records(store).get(run_id)), output)


@runs_app.command("compare")
def compare(
    by: Annotated[str, typer.Option("--by", help="product, profile or driverVersion.")] = "product",
    metric: Annotated[str, typer.Option("--metric", help="runtime, startup or a correctness metric's name.")] = "runtime",
    chart: Annotated[str | None, typer.Option("--chart", metavar="FILE", help="Also write a chart: FILE.png or FILE.html.")] = None,
    store: StoreOption = None,
    output: Annotated[str, output_option(Format.text, Format.json, Format.yaml)] = Format.text,
) -> None:
    """n, median and spread of a metric per group of runs (a run counts once per group it belongs to)."""
    from drakit.records.compare import parse_by
    from drakit.records.render import comparison_json

    by_value = parse_by(by).value
    if chart and Path(chart).suffix.lower() not in (".png", ".html", ".htm"):
        raise InvalidArgument(f"--chart {escape(chart)}: the file name must end in .png or .html")
    groups = open_records(store).compare(by_value, metric)
    if chart:
        from drakit.records.chart import chart_html, chart_png

        path = Path(chart)
        try:
            if path.suffix.lower() == ".png":
                path.write_bytes(chart_png(groups, by_value, metric))
            else:
                path.write_text(chart_html(groups, by_value, metric), encoding="utf-8")
        except OSError as e:
            raise InvalidArgument(f"--chart {escape(chart)}: {e.strerror}") from None
    if output != Format.text:
        emit(comparison_json(by_value, metric, groups), output)
        return
    if not groups:
        typer.echo(f"no finished run has {metric}")
        return
    width = max(len(by_value), *(len(g.key) for g in groups))
    typer.echo(f"{by_value:<{width}} {'N':>6} {'MEDIAN':>10} {'Q1':>10} {'Q3':>10} {'MIN':>10} {'MAX':>10}")
    for g in groups:
        typer.echo(f"{g.key:<{width}} {g.n:>6} {g.median:>10.4g} {g.q1:>10.4g} {g.q3:>10.4g} {g.min:>10.4g} {g.max:>10.4g}")


@runs_app.command("mirror")
def mirror(
    run_ids: Annotated[list[str] | None, typer.Argument(metavar="[RUN]...", help="Runs to mirror (default: every ended run).")] = None,
    tracking_uri: Annotated[str, typer.Option("--mlflow", envvar="MLFLOW_TRACKING_URI", help="MLflow tracking URI.")] = "",
    experiment: Annotated[str, typer.Option("--experiment", help="MLflow experiment to write into.")] = "drakit",
    store: StoreOption = None,
) -> None:
    """Write runs to MLflow with drakit.* tags (claim, devices by UUID and product, queue, profile)."""
    from drakit.executors.mlflow import mirror as write
    from drakit.records.run import TERMINAL

    if not tracking_uri:
        raise InvalidArgument("no MLflow tracking URI: pass --mlflow URI or set MLFLOW_TRACKING_URI")
    records = open_records(store)
    ids = run_ids or [r.id for r in records.runs() if r.state in TERMINAL]
    for run_id in ids:
        typer.echo(f"{run_id} -> mlflow run {write(records.get(run_id), tracking_uri, experiment)}")


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")
