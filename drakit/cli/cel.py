"""``drakit cel``: evaluate and check CEL selector expressions the way Kubernetes does.

``eval`` prints ``{"mode", "value", "type", "cost"}`` or ``{"mode", "error": {"phase",
"message"}}`` and exits 0 when evaluated, 1 on a compile or runtime error.  ``mode`` says how
the expression was taken: ``selector`` (the scheduler's semantics: the selector compiler, a
bool result required) or ``value`` (any result type); ``--as`` picks one, the default
``auto`` takes an expression as a selector unless only its result type rules that out.
``check`` prints the result type, the worst-case cost estimate and any compile error.

Values are rendered with CEL's JSON conversion (cel-go ``ConvertToNative`` to
``google.protobuf.Value``, then the proto3 JSON mapping): bytes as base64, NaN and ±Inf as
``"NaN"``/``"Infinity"``/``"-Infinity"``, integers beyond ±(2^53-1) as decimal strings,
durations and timestamps as CEL's ``string()`` of them (``"3600s"``, RFC 3339).  Values CEL
cannot convert to JSON print as their CEL string form: quantities, semvers, IPs, CIDRs, URLs,
format names, type values; an absent optional prints as null, a present one as its value.
This differs from the oracle's debug print (Go's ``%v``) only where that print is not JSON
conversion: ``"+Inf"`` for Infinity, Go durations (``1h0m0s``) and times
(``2020-01-01 00:00:00 +0000 UTC``), integers as numbers at any size, optionals unwrapped,
named formats as Go structs.
"""

from __future__ import annotations

import base64
import json
import math
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from drakit.cli.console import EXIT_INVALID, EXIT_OK, dump_json
from drakit.cli.options import FeatureGates, Format, KubernetesVersion, output_option
from drakit.errors import UsageError
from drakit.features import NEWEST_VERSION, Features
from drakit.selectors import compile_any, device_view, evaluate_expression
from drakit.selectors.compile import DeviceView
from drakit.selectors.env import MAX_COST
from drakit.selectors.types import Duration, Optional, Timestamp, Uint, unmap_key

EnvOpt = Annotated[str, typer.Option("--environment", metavar="ENV", help="stored or new.")]
GatesOpt = FeatureGates
VersionOpt = KubernetesVersion
OutputOpt = Annotated[
    str, output_option(Format.text, Format.json, Format.yaml, note="A result, not objects: no wide or name.")
]


class EvalAs(StrEnum):
    auto = "auto"
    selector = "selector"
    value = "value"


cel_app = typer.Typer(
    help="Evaluate and check CEL device selectors (Kubernetes semantics).", no_args_is_help=True
)

_JSON_SAFE = (1 << 53) - 1


def _to_json(v: Any) -> Any:
    """CEL's JSON conversion of a result (see the module docstring)."""
    if v is None or type(v) in (bool, str):
        return v
    if type(v) in (int, Uint):
        return int(v) if -_JSON_SAFE <= v <= _JSON_SAFE else str(int(v))
    if type(v) is float:
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if type(v) is bytes:
        return base64.b64encode(v).decode("ascii")
    if isinstance(v, list | tuple):
        return [_to_json(x) for x in v]
    if isinstance(v, dict):
        return {_json_key(unmap_key(k)): _to_json(x) for k, x in v.items()}
    if type(v) is Optional:
        return _to_json(v.value) if v.present else None
    if isinstance(v, Duration | Timestamp):
        from drakit.selectors.library.standard import format_duration, format_timestamp

        return format_duration(v) if isinstance(v, Duration) else format_timestamp(v)
    return str(v)  # quantities, semvers, IPs, CIDRs, URLs, format names, type values


def _json_key(k: Any) -> str:
    if type(k) is bool:
        return "true" if k else "false"
    return str(int(k)) if type(k) in (int, Uint) else str(k)


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
    doc = _fix_surrogates(docs[0].data)
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


def _fix_surrogates(v: Any) -> Any:
    """Join UTF-16 surrogate pairs left by ``\\u`` escapes (``"\\ud83d\\ude00"``, as Python's
    json writes non-BMP characters) and replace lone halves with U+FFFD, as Go's decoder does;
    the YAML parser decodes each escape on its own."""
    if isinstance(v, str):
        if any("\ud800" <= c <= "\udfff" for c in v):
            return v.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return v
    if isinstance(v, list):
        return [_fix_surrogates(x) for x in v]
    if isinstance(v, dict):
        return {_fix_surrogates(k): _fix_surrogates(x) for k, x in v.items()}
    return v


@cel_app.command("eval")
def eval_cmd(
    expression: Annotated[str, typer.Argument(metavar="EXPRESSION", help="CEL expression.")],
    device: Annotated[
        Path | None,
        typer.Option("-f", "--device", metavar="FILE", help="v1 Device (YAML/JSON) plus optional 'driver'; '-' for stdin."),
    ] = None,
    environment: EnvOpt = "stored",
    feature_gates: GatesOpt = None,
    kubernetes_version: VersionOpt = NEWEST_VERSION,
    output: OutputOpt = Format.text,
    as_: Annotated[
        EvalAs,
        typer.Option(
            "--as",
            help="selector: as the scheduler evaluates a device selector (bool result); "
            "value: any result type; auto: selector unless the result type rules it out",
        ),
    ] = EvalAs.auto,
) -> None:
    """Evaluate EXPRESSION against an optional device, as a selector or as a value."""
    if environment not in ("stored", "new"):
        raise UsageError(f"--environment: unknown value {environment!r}, want stored or new")
    features = _features(kubernetes_version, feature_gates)
    view = _load_device(device)
    r = evaluate_expression(expression, view, environment=environment, features=features, mode=as_.value)
    doc: dict[str, Any] = {"mode": r.mode}
    if r.error is not None:
        doc["error"] = {"phase": r.error.phase, "message": str(r.error)}
        code = EXIT_INVALID
    else:
        doc.update(value=_to_json(r.value), type=r.type)
        code = EXIT_OK
    if r.cost_estimate is not None:
        doc["cost"] = {"estimated": r.cost_estimate}
    _print(doc, output)
    raise typer.Exit(code)


@cel_app.command("check")
def check_cmd(
    expression: Annotated[str, typer.Argument(metavar="EXPRESSION", help="CEL expression.")],
    environment: EnvOpt = "stored",
    feature_gates: GatesOpt = None,
    kubernetes_version: VersionOpt = NEWEST_VERSION,
    output: OutputOpt = Format.text,
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


def _print(doc: dict[str, Any], output: str) -> None:
    if output == Format.text:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    elif output == Format.yaml:
        from drakit.model.codec import KubeDumper

        sys.stdout.write(yaml.dump(doc, Dumper=KubeDumper, sort_keys=False, allow_unicode=True))
    else:
        sys.stdout.write(dump_json(doc) + "\n")


def register(app: typer.Typer) -> None:
    app.add_typer(cel_app, name="cel")
