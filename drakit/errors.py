"""Errors as values with structure.

Broken input is a different outcome from "does not fit": the allocator returns an
unsatisfiable result for the latter and raises only for the former.  Every public
exception descends from :class:`DrakitError`::

    DrakitError
    ├── InvalidInput          objects that fail loading or validation; carries an ErrorList
    ├── SelectorError         a CEL selector failed to compile or to evaluate
    ├── AllocationError       the allocator's "error" outcome (upstream's non-nil error)
    └── UsageError            the command line was used wrongly (exit code 2)

Field errors follow the API server's ``field.Error`` layout so that a user who knows
``kubectl apply`` recognises them: ``<path>: <Type>: <detail>``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


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
    # Mirrors field.Error.ErrorBody: strings are quoted, scalars printed plainly,
    # anything structured as JSON.
    if isinstance(value, str):
        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


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


@dataclass
class ErrorList:
    """An ordered, growing list of field errors; validators return all problems, not the first."""

    errors: list[FieldError] = field(default_factory=list)

    def add(self, path: str, type: ErrorType, value: Any = OMIT, detail: str = "") -> None:
        self.errors.append(FieldError(path, type, value, detail))

    def extend(self, other: Iterable[FieldError]) -> None:
        self.errors.extend(other)

    def __iter__(self) -> Iterator[FieldError]:
        return iter(self.errors)

    def __len__(self) -> int:
        return len(self.errors)

    def __bool__(self) -> bool:
        return bool(self.errors)


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
        return f'{self.kind} "{key}"'

    def location(self) -> str:
        if not self.source:
            return ""
        return self.source if self.index is None else f"{self.source}[{self.index}]"


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


class UsageError(DrakitError):
    """The command line was used wrongly."""
