"""``drakit cel``: evaluate and check CEL selector expressions the way Kubernetes does.

``eval`` prints ``{"value": ..., "type": ...}`` or ``{"error": {"phase", "message"}}`` and
exits 0 when evaluated, 1 on a compile or runtime error; ``check`` prints the result type,
the worst-case cost estimate and any compile error.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from drakit.cli.console import EXIT_INVALID, EXIT_OK, Output, dump_json
from drakit.errors import UsageError
from drakit.features import NEWEST_VERSION, Features
from drakit.quantity import Quantity
from drakit.selectors import compile_any, device_view, evaluate_expression
from drakit.selectors.compile import DeviceView
from drakit.selectors.env import MAX_COST
from drakit.selectors.types import Duration, Optional, Timestamp, TypeValue, Uint, unmap_key
from drakit.selectors.values import Semver

EnvOpt = Annotated[str, typer.Option("--environment", help="stored|new")]
GatesOpt = Annotated[str | None, typer.Option("--feature-gates", help="Name=bool,...")]
VersionOpt = Annotated[str, typer.Option("--kubernetes-version")]
OutputOpt = Annotated[Output, typer.Option("-o", "--output")]

cel_app = typer.Typer(
    help="Evaluate and check CEL device selectors (Kubernetes semantics).", no_args_is_help=True
)


def _to_json(v: Any) -> Any:
    if v is None or type(v) in (bool, str):
        return v
    if type(v) is Uint:
        return int(v)
    if type(v) is int:
        return v
    if type(v) is float:
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return v
    if type(v) is bytes:
        return v.decode("utf-8", "replace")
    if isinstance(v, list | tuple):
        return [_to_json(x) for x in v]
    if isinstance(v, dict):
        return {str(_to_json(unmap_key(k))): _to_json(x) for k, x in v.items()}
    if isinstance(v, Quantity | Semver | TypeValue):
        return str(v)
    if type(v) is Optional:
        return {"optional": _to_json(v.value)} if v.present else {"optional": None}
    if isinstance(v, Duration | Timestamp):
        from drakit.selectors.library.standard import format_duration, format_timestamp

        return format_duration(v) if isinstance(v, Duration) else format_timestamp(v)
    return str(v)


def _features(version: str, gates: str | None) -> Features:
    return Features.for_version(version).with_gates(gates)


def _load_device(path: Path | None) -> DeviceView | None:
    from drakit.sources import ReadError, parse_text, read_one

    if path is None:
        return None
    try:
        text = read_one(str(path))
    except ReadError as e:
        raise UsageError(f"cannot read device file: {e}") from None
    docs, problems = parse_text(str(path), text)
    if problems:
        raise UsageError(f"device file {problems[0]}")
    if len(docs) != 1 or not isinstance(docs[0].data, dict):
        raise UsageError(f"device file {path}: expected one Device object (a mapping), found "
                         f"{len(docs)} document(s)" + ("" if len(docs) != 1 else f" of type {type(docs[0].data).__name__}"))
    doc = docs[0].data
    driver = doc.get("driver", "")
    _check_device(str(path), {k: v for k, v in doc.items() if k != "driver"}, driver)
    return device_view(driver, doc)


def _check_device(path: str, device: dict[str, Any], driver: Any) -> None:
    """The file must decode as a v1 Device (strict, like the API server) plus a string ``driver``."""
    from pydantic import ValidationError

    from drakit.model.load import errors_from_validation
    from drakit.model.slice import Device

    if not isinstance(driver, str):
        raise UsageError(f"device file {path}: driver: must be a string")
    try:
        Device.model_validate(device)
    except ValidationError as e:
        first = errors_from_validation(Device, e)[0]
        raise UsageError(f"device file {path}: not a v1 Device: {first}") from None


@cel_app.command("eval")
def eval_cmd(
    expression: Annotated[str, typer.Argument(help="CEL expression")],
    device: Annotated[
        Path | None,
        typer.Option("--device", help="v1 Device (YAML/JSON) plus optional 'driver'; '-' for stdin"),
    ] = None,
    environment: EnvOpt = "stored",
    feature_gates: GatesOpt = None,
    kubernetes_version: VersionOpt = NEWEST_VERSION,
    output: OutputOpt = Output.text,
) -> None:
    """Evaluate EXPRESSION (any result type) against an optional device."""
    if environment not in ("stored", "new"):
        raise UsageError(f"--environment: unknown value {environment!r}, want stored or new")
    features = _features(kubernetes_version, feature_gates)
    view = _load_device(device)
    r = evaluate_expression(expression, view, environment=environment, features=features)
    if r.error is not None:
        doc: dict[str, Any] = {"error": {"phase": r.error.phase, "message": str(r.error)}}
        code = EXIT_INVALID
    else:
        doc = {"value": _to_json(r.value), "type": r.type}
        code = EXIT_OK
    _print(doc, output)
    raise typer.Exit(code)


@cel_app.command("check")
def check_cmd(
    expression: Annotated[str, typer.Argument(help="CEL expression")],
    environment: EnvOpt = "stored",
    feature_gates: GatesOpt = None,
    kubernetes_version: VersionOpt = NEWEST_VERSION,
    output: OutputOpt = Output.text,
) -> None:
    """Type-check EXPRESSION and print its type, estimated cost and errors."""
    if environment not in ("stored", "new"):
        raise UsageError(f"--environment: unknown value {environment!r}, want stored or new")
    features = _features(kubernetes_version, feature_gates)
    c = compile_any(expression, environment=environment, features=features)
    doc: dict[str, Any] = {
        "type": str(c.output_type) if c.output_type is not None else None,
        "costEstimate": c.cost_estimate,
        "costLimit": MAX_COST,
        "errors": [str(c.error)] if c.error else [],
    }
    _print(doc, output)
    raise typer.Exit(EXIT_INVALID if c.error else EXIT_OK)


def _print(doc: dict[str, Any], output: Output) -> None:
    if output == Output.text:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    elif output == Output.yaml:
        from drakit.model.codec import KubeDumper

        sys.stdout.write(yaml.dump(doc, Dumper=KubeDumper, sort_keys=False, allow_unicode=True))
    else:
        sys.stdout.write(dump_json(doc) + "\n")


def register(app: typer.Typer) -> None:
    app.add_typer(cel_app, name="cel")
