"""The core speaks in its own terms: no CLI usage errors, no flag names, names quoted the Go way."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import drakit
from drakit.drivers import get_schema
from drakit.errors import ErrorType, FieldError, InvalidArgument, NotFound, ObjectErrors, ObjectRef
from drakit.features import Features

ROOT = Path(drakit.__file__).parent
# live/config.py is kubectl's choice of kubeconfig from the connection flags themselves
# (--kubeconfig, --context, $KUBECONFIG): its messages are about those flags by design.
CORE = [p for p in sorted(ROOT.rglob("*.py"))
        if p.relative_to(ROOT).parts[0] != "cli" and p.relative_to(ROOT).as_posix() != "live/config.py"]
FLAG = re.compile(r"(?:^|[\s(])--[a-z][a-z-]+")


def _raises(path: Path) -> list[ast.Raise]:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Raise)]


def test_core_never_raises_usage_error() -> None:
    offenders = [
        f"{p.relative_to(ROOT)}:{r.lineno}"
        for p in CORE
        for r in _raises(p)
        if any(isinstance(n, ast.Name) and n.id == "UsageError" for n in ast.walk(r))
    ]
    assert offenders == []


def test_core_messages_name_no_flag() -> None:
    offenders = [
        f"{p.relative_to(ROOT)}:{r.lineno}: {n.value}"
        for p in CORE
        for r in _raises(p)
        for n in ast.walk(r)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and FLAG.search(n.value)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        pytest.param(lambda: Features.for_version("1.2\x1b[0m"), InvalidArgument,
                     'unsupported Kubernetes version "1.2\\x1b[0m"', id="version"),
        pytest.param(lambda: Features().with_gates("Nope=true"), InvalidArgument,
                     'unknown feature gate "Nope"', id="gate"),
        pytest.param(lambda: get_schema("gpu.\x07.com"), NotFound,
                     'unknown driver "gpu.\\a.com"', id="driver"),
    ],
)  # fmt: skip
def test_errors_are_typed_and_quote_names(call: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        call()  # type: ignore[operator]
    assert str(info.value).startswith(message)


def test_object_errors_quote_the_name_and_escape_the_file() -> None:
    ref = ObjectRef("Pod", "a\x1b[31m", "ns", source="in\x1b.yaml", index=2)
    lines = ObjectErrors(ref, (FieldError("metadata.name", ErrorType.INVALID, "a\x1b[31m"),)).lines()
    assert lines == ['in\\x1b.yaml[2]: Pod "ns/a\\x1b[31m" is invalid: metadata.name: Invalid value: "a\\x1b[31m"']


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("a\\u001b[31mb", id="esc"),
        pytest.param("a\\u009bb", id="c1-csi"),
        pytest.param("a\\u007fb", id="del"),
        pytest.param("tab\\tok", id="json-escapes-stay"),
    ],
)
def test_standard_output_carries_no_terminal_controls(value: str) -> None:
    """Whatever a value holds, the bytes on stdout hold no control character, and JSON stays equal."""
    import json

    from drakit.cli.testing import run

    result = run("cel", "eval", f'"{value}"', "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert all(c in "\n" or c.isprintable() for c in result.stdout)
    assert json.loads(result.stdout)["value"] == json.loads(f'"{value}"')
