"""A temporary stand-in for ``drakit.selectors`` covering the CEL the allocator tests use.

Only for tests, until the real selectors module lands: it translates the handful of selector
shapes in the conformance cases (driver equality, attribute lookups, quantity comparisons,
``allowMultipleAllocations``, ``&&``) into Python.  The conformance and unit tests switch to the
real module automatically when ``drakit.selectors.compile_selector`` is importable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from drakit.allocator import quantity
from drakit.errors import SelectorError


class CelRuntimeError(SelectorError):
    def __init__(self, message: str) -> None:
        super().__init__(message, phase="runtime")


@dataclass
class _Err:
    message: str


class _Q:
    def __init__(self, v: Fraction) -> None:
        self.v = v

    def compareTo(self, other: _Q) -> int:
        return (self.v > other.v) - (self.v < other.v)


_ATTR = re.compile(r'device\.(attributes|capacity)\["([^"]+)"\](?:\.([A-Za-z_][A-Za-z0-9_]*)|\["([^"]+)"\])')
_KNOWN = {"A", "C", "Q", "DRIVER", "AMA", "True", "False", "and", "or", "not", "compareTo"}


class _Compiled:
    def __init__(self, expr: str) -> None:
        self.error: _Err | None = None
        py = _ATTR.sub(
            lambda m: (
                f'{"A" if m.group(1) == "attributes" else "C"}("{m.group(2)}", "{m.group(3) or m.group(4)}")'
            ),
            expr,
        )
        py = (
            py.replace("quantity(", "Q(")
            .replace("device.driver", "DRIVER")
            .replace("device.allowMultipleAllocations", "AMA")
        )
        py = py.replace("&&", " and ").replace("||", " or ").replace("true", "True").replace("false", "False")
        for ident in re.findall(
            r'(?<![\w."])([A-Za-z_][A-Za-z0-9_]*)(?![\w"])', re.sub(r'"[^"]*"', '""', py)
        ):
            if ident not in _KNOWN:
                self.error = _Err(
                    f"compilation failed: ERROR: <input>:1:1: undeclared reference to '{ident}' (in container '')"
                )
                return
        self.code = compile(py, "<cel>", "eval")

    def evaluate(self, view: Mapping[str, Any]) -> bool:
        def lookup(kind: str, domain: str, ident: str) -> Any:
            entries = view[kind].get(domain, {})
            if ident not in entries:
                raise CelRuntimeError(f"no such key: {ident}")
            value = entries[ident]
            if isinstance(value, _Err):
                raise CelRuntimeError(value.message)
            return value

        env = {
            "A": lambda d, i: lookup("attributes", d, i),
            "C": lambda d, i: lookup("capacity", d, i),
            "Q": lambda s: _Q(quantity.value(s)),
            "DRIVER": view["driver"],
            "AMA": view["allowMultipleAllocations"],
        }
        result = eval(self.code, {"__builtins__": {}}, env)
        if not isinstance(result, bool):
            raise CelRuntimeError(f"expression must evaluate to bool, got {result!r}")
        return result


class StandIn:
    def compile_selector(self, expr: str, *, environment: str, features: Any) -> _Compiled:
        return _Compiled(expr)

    def device_view(self, driver: str, device: Mapping[str, Any]) -> dict[str, Any]:
        attrs: dict[str, dict[str, Any]] = {}
        for name, raw in (device.get("attributes") or {}).items():
            domain, ident = name.split("/", 1) if "/" in name else (driver, name)
            value: Any = _Err(f"attribute {name}: unsupported attribute value")
            for kind in ("int", "bool", "string", "version", "ints", "bools", "strings", "versions"):
                if isinstance(raw, Mapping) and raw.get(kind) is not None:
                    value = raw[kind]
                    break
            attrs.setdefault(domain, {})[ident] = value
        caps: dict[str, dict[str, Any]] = {}
        for name, raw in (device.get("capacity") or {}).items():
            domain, ident = name.split("/", 1) if "/" in name else (driver, name)
            caps.setdefault(domain, {})[ident] = _Q(quantity.value(str(raw.get("value", "0"))))
        return {
            "driver": driver,
            "attributes": attrs,
            "capacity": caps,
            "allowMultipleAllocations": bool(device.get("allowMultipleAllocations")),
        }


def real_selectors_available() -> bool:
    try:
        from drakit.selectors import compile_selector, device_view  # noqa: F401
    except ImportError:
        return False
    return True
