"""CEL device selectors with Kubernetes semantics: parse, type-check, estimate cost, evaluate.

Why our own engine: the Python CEL libraries we measured cannot reproduce what Kubernetes
decides with a selector — cel-go's compile-time cost estimate (pinned by upstream tests and
used to reject selectors), runtime cost accounting against the 1,000,000 limit, cel-go's
error texts, the DRA "unknown domain reads as an empty map" lookup, or two-variable
comprehensions.  So drakit implements CEL in pure Python, following cel-go (``parser/``,
``checker/`` incl. ``cost.go``, ``interpreter/`` incl. ``runtimecost.go``, ``common/types``,
``ext/``), the Kubernetes libraries (``apiserver/pkg/cel/library``, ``environment/base.go``)
and the DRA environment (``dynamic-resource-allocation/cel/compile.go``).

Pipeline, one module per stage: :mod:`.parser` (text → AST, macros; on a syntax error,
:mod:`.recovery` replays ANTLR's error recovery with a parser generated from
``grammar/CEL.g4`` to report every error cel-go reports) → :mod:`.checker`
(types, overloads; :mod:`.decls` holds the declarations, :mod:`.validators` cel-go's AST validators) → :mod:`.instantiate` (what cel-go evaluates while building
the program: constant conversions, constant regex patterns) → :mod:`.cost` (worst-case
estimate) → :mod:`.interpreter` (closures, runtime cost); :mod:`.env` declares the ``device``
variable, :mod:`.library` the functions, :mod:`.compile`/:mod:`.cache` are the public API.

Fidelity is measured against upstream (v0.37.2 / cel-go v0.29.2) by the CEL differential in
``tests/differential`` (README there).  Deliberate differences: new expressions over 10 KiB
or over the cost budget are rejected as the API server's validation does; expressions that
crash upstream (a dyn-typed optional list element or map value) compile; quantities follow
the newest apimachinery where v0.37.2 wraps (subtracting the most negative int64).  Not yet
faithful: the actual runtime cost of an evaluation (only whether it passes the limit is).
"""

from drakit.selectors.cache import clear_cache, compile_any, compile_selector, evaluate_expression
from drakit.selectors.compile import CelValueResult, CompiledSelector, DeviceView, device_view
from drakit.selectors.types import CelError, CelRuntimeError

__all__ = [
    "CelError",
    "CelRuntimeError",
    "CelValueResult",
    "CompiledSelector",
    "DeviceView",
    "clear_cache",
    "compile_any",
    "compile_selector",
    "device_view",
    "evaluate_expression",
]
