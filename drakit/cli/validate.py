"""``drakit validate``: check manifests the way the API server would, without a cluster."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, EXIT_USAGE, MAX_ERROR_LINES, emit, error_line
from drakit.cli.options import (
    AllNamespaces,
    FeatureGates,
    Files,
    Format,
    KubernetesVersion,
    LabelSelector,
    Namespace,
    features,
    kube_name,
    labels_match,
    namespace_scope,
    output_option,
    parse_label_selector,
)
from drakit.errors import InvalidArgument, InvalidInput, ObjectErrors
from drakit.features import NEWEST_VERSION

if TYPE_CHECKING:
    from drakit.model.load import Entry


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


def _print_capped(lines: list[str], stream: TextIO) -> None:
    """The first problems and a count: thousands of lines help nobody, and -o json has them all."""
    for line in lines[:MAX_ERROR_LINES]:
        print(line, file=stream)
    if len(lines) > MAX_ERROR_LINES:
        print(f"... and {len(lines) - MAX_ERROR_LINES:,} more errors (-o json lists them all)", file=stream)


def _report(problems: list[ObjectErrors], warnings: tuple[str, ...], output: str, count: int) -> int:
    valid = not problems
    if output in (Format.text, Format.name):
        for w in warnings:
            print(f"Warning: {w}", file=sys.stderr)
        lines = [line for p in problems for line in p.lines()]
        _print_capped(lines, sys.stderr if output == Format.name else sys.stdout)
        if output != Format.name:  # -o name keeps stdout for names
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


def _select(entries: Sequence[Entry], scope: str | None, selector: str | None) -> list[Entry]:
    """``-n``/``-A``/``-l`` as ``kubectl get`` reads them: ``-n`` keeps the namespaced objects of NS."""
    requirements = parse_label_selector(selector) if selector is not None else ()
    return [
        e for e in entries
        if (scope is None or e.namespace == scope)
        and labels_match(requirements, (e.wire.get("metadata") or {}).get("labels") or {})
    ]


def register(app: typer.Typer) -> None:
    @app.command("validate")
    def validate_cmd(
        filename: Files,
        namespace: Namespace = None,
        all_namespaces: AllNamespaces = False,
        selector: LabelSelector = None,
        output: Annotated[
            str, output_option(Format.text, Format.json, Format.yaml, Format.name, note="validate prints no columns, so no wide.")
        ] = Format.text,
        kubernetes_version: KubernetesVersion = NEWEST_VERSION,
        feature_gates: FeatureGates = None,
    ) -> None:
        """Validate manifests like the API server: every error, with field paths.

        Without -n or -A every object is checked; -n NS checks the namespaced objects of NS only.
        -o name prints kind.group/name of each object checked, errors go to stderr.
        """
        from drakit.cli.door import load_frozen
        from drakit.model.validate import validate_report

        if namespace is not None or all_namespaces:
            scope = namespace_scope(namespace, all_namespaces)
        else:
            scope = None
        try:
            feats = features(kubernetes_version, feature_gates)
        except InvalidArgument as e:
            error_line(str(e))
            raise typer.Exit(EXIT_USAGE) from None
        try:
            bundle = load_frozen(filename)
        except InvalidInput as e:
            raise typer.Exit(_report(e.problems, (), output, 0)) from None
        # Pods made from workload templates are validated like pods (their errors name the pod).
        objects = _select((*bundle.entries, *bundle.checked_pods), scope, selector)
        report = validate_report(objects, feats)
        warnings = (*bundle.notes, *report.warnings)
        if output == Format.name:
            raise typer.Exit(_names(list(report.errors), warnings, objects))
        raise typer.Exit(_report(list(report.errors), warnings, output, len(objects)))


def _names(problems: list[ObjectErrors], warnings: tuple[str, ...], objects: Sequence[Entry]) -> int:
    """``-o name``: one ``kind.group/name`` per object on stdout; warnings and errors on stderr."""
    for w in warnings:
        print(f"Warning: {w}", file=sys.stderr)
    _print_capped([line for p in problems for line in p.lines()], sys.stderr)
    for e in objects:
        print(kube_name(e.kind, str(e.wire.get("apiVersion", "")), e.name))
    return EXIT_OK if not problems else EXIT_INVALID
