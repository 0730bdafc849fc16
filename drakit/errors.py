"""Errors as values with structure.

Broken input is a different outcome from "does not fit": the allocator returns an
unsatisfiable result for the latter and raises only for the former.  Every public
exception descends from :class:`DrakitError`::

    DrakitError
    ├── InvalidInput          objects that fail loading or validation; carries ObjectErrors
    ├── SelectorError         a CEL selector failed to compile or to evaluate
    ├── AllocationError       the allocator's "error" outcome (internal: allocate() returns it)
    ├── NotFound              a named object (pod, claim, driver, template) is not there
    ├── InvalidArgument       a value handed to the core is malformed (gate, version, spec)
    └── UsageError            the command line was used wrongly; raised by drakit.cli only

The core never raises ``UsageError`` and never names a command-line flag: a web route maps
``NotFound`` to 404 and ``InvalidArgument`` to 422 where the CLI maps both to exit code 2.
Names from the input appear in messages through :func:`drakit.gostr.quote`.

Field errors follow the API server's ``field.Error`` layout so that a user who knows
``kubectl apply`` recognises them: ``<path>: <Type>: <detail>``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from drakit.gostr import escape, quote


class ErrorType(StrEnum):
    """The API server's field.ErrorType strings (k8s.io/apimachinery/pkg/util/validation/field)."""

    NOT_FOUND = "Not found"
    REQUIRED = "Required value"
    DUPLICATE = "Duplicate value"
    INVALID = "Invalid value"
    NOT_SUPPORTED = "Unsupported value"
    FORBIDDEN = "Forbidden"
    TOO_LONG = "Too long"
    TOO_MANY = "Too many"
    INTERNAL = "Internal error"
    TYPE_INVALID = "Invalid value type"


class _Omitted:
    """Marker for "no bad value to print" (upstream's field.OmitValueType)."""

    def __repr__(self) -> str:
        return "<omitted>"


OMIT = _Omitted()


def _render_value(value: Any) -> str:
    # Mirrors field.Error.ErrorBody: strings with %q, scalars printed plainly, anything
    # structured as JSON.  (json.dumps would write ESC as \u001b and é as \u00e9.)
    if isinstance(value, str):
        return quote(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    try:
        text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)
    # encoding/json: compact, UTF-8 kept, HTML-significant characters and line separators escaped
    return text.translate(_GO_JSON_ESCAPES)


_GO_JSON_ESCAPES = {ord(c): f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"}


@dataclass(frozen=True)
class FieldError:
    """One problem at one field path, worded as the API server words it."""

    path: str
    type: ErrorType
    value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        """``<Type>: <value>: <detail>`` as field.Error.ErrorBody renders it."""
        text = self.type.value
        if self.type in (ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL):
            # These types never print the bad value upstream.
            pass
        elif not isinstance(self.value, _Omitted):
            text += ": " + _render_value(self.value)
        if self.detail:
            text += ": " + self.detail
        return text

    def __str__(self) -> str:
        return f"{self.path}: {self.body()}" if self.path else self.body()

    def to_json(self) -> dict[str, Any]:
        return {"field": self.path, "type": self.type.value, "detail": self.detail}


class DrakitError(Exception):
    """Base of every exception drakit raises on purpose."""


@dataclass(frozen=True)
class ObjectRef:
    """Which object an error belongs to, for messages: ``<Kind> "<namespace/name>"``."""

    kind: str
    name: str
    namespace: str = ""
    source: str = ""  # file name, or "-" for stdin
    index: int | None = None  # document index within the source

    def __str__(self) -> str:
        key = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {quote(key)}"

    def location(self) -> str:
        if not self.source:
            return ""
        source = escape(self.source)
        return source if self.index is None else f"{source}[{self.index}]"


@dataclass(frozen=True)
class ObjectErrors:
    """The field errors of one object, rendered as ``<Kind> "<ns/name>" is invalid: ...``."""

    ref: ObjectRef
    errors: tuple[FieldError, ...]

    def lines(self) -> list[str]:
        loc = self.ref.location()
        prefix = f"{loc}: " if loc else ""
        return [f"{prefix}{self.ref} is invalid: {e}" for e in self.errors]


class InvalidInput(DrakitError):
    """Objects that could not be loaded or failed validation."""

    def __init__(self, problems: list[ObjectErrors] | str) -> None:
        if isinstance(problems, str):
            self.problems: list[ObjectErrors] = []
            message = problems
        else:
            self.problems = problems
            message = "\n".join(line for p in problems for line in p.lines())
        super().__init__(message)


class SelectorError(DrakitError):
    """A CEL selector failed; ``phase`` is "compile" or "runtime"."""

    def __init__(self, message: str, *, expression: str = "", phase: str = "compile", path: str = "") -> None:
        super().__init__(message)
        self.expression = expression
        self.phase = phase
        self.path = path


class AllocationError(DrakitError):
    """The allocator's error outcome: broken input met during allocation (upstream returns an error)."""


class NotFound(DrakitError):
    """A named object is not in the input (``pod "ns/name" not found in the input``)."""


class InvalidArgument(DrakitError):
    """A value handed to the core is malformed: a feature gate, a version, a node-group spec."""


class UsageError(DrakitError):
    """The command line was used wrongly; only :mod:`drakit.cli` raises it."""
