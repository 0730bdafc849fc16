"""``drakit validate``: check manifests the way the API server would, without a cluster."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, EXIT_USAGE, Output, emit, error_line
from drakit.errors import InvalidArgument, InvalidInput, ObjectErrors
from drakit.features import NEWEST_VERSION, Features


def _problem_json(p: ObjectErrors) -> list[dict[str, Any]]:
    from drakit.model.load import LocatedRef, SourceProblem

    if isinstance(p, SourceProblem):
        return [{"object": "", "file": "", "index": None, "field": "", "type": "", "detail": p.lines()[0]}]
    ref = p.ref
    out = []
    for e in p.errors:
        item: dict[str, Any] = {"object": str(ref), "file": ref.source, "index": ref.index, **e.to_json()}
        if isinstance(ref, LocatedRef):
            item["line"] = ref.line
        out.append(item)
    return out


def _report(problems: list[ObjectErrors], warnings: tuple[str, ...], output: Output, count: int) -> int:
    valid = not problems
    if output == Output.text:
        for w in warnings:
            print(f"Warning: {w}", file=sys.stderr)
        lines = [line for p in problems for line in p.lines()]
        for line in lines:
            print(line)
        if valid:
            print(f"{count} object(s) valid")
        else:
            print(f"{len(lines)} error(s) in {len(problems)} object(s)/document(s); {count} object(s) checked")
    else:
        emit(
            {
                "valid": valid,
                "errors": [item for p in problems for item in _problem_json(p)],
                "warnings": list(warnings),
            },
            output,
        )
    return EXIT_OK if valid else EXIT_INVALID


def register(app: typer.Typer) -> None:
    @app.command("validate")
    def validate_cmd(
        filename: Annotated[
            list[str], typer.Option("-f", "--filename", help="File, directory or - (stdin); repeatable.")
        ],
        output: Annotated[Output, typer.Option("-o", "--output", help="text, json or yaml.")] = Output.text,
        kubernetes_version: Annotated[
            str, typer.Option("--kubernetes-version", help="Release whose feature defaults apply.")
        ] = NEWEST_VERSION,
        feature_gates: Annotated[
            str | None, typer.Option("--feature-gates", help="e.g. DRADeviceTaints=true,DRAAdminAccess=false")
        ] = None,
    ) -> None:
        """Validate manifests like the API server: every error, with field paths."""
        from drakit.model.validate import validate_report
        from drakit.sources import load_bundle

        try:
            features = Features.for_version(kubernetes_version).with_gates(feature_gates)
        except InvalidArgument as e:
            error_line(str(e))
            raise typer.Exit(EXIT_USAGE) from None
        try:
            bundle = load_bundle(filename)
        except InvalidInput as e:
            raise typer.Exit(_report(e.problems, (), output, 0)) from None
        # Pods made from workload templates are validated like pods (their errors name the pod).
        objects = (*bundle.entries, *bundle.workload_pods)
        report = validate_report(objects, features)
        warnings = (*bundle.notes, *report.warnings)
        raise typer.Exit(_report(list(report.errors), warnings, output, len(objects)))
