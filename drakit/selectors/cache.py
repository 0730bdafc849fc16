"""Compiled-selector cache keyed by (expression, environment, the feature bits that matter).

Compiling costs far more than evaluating; the same few selectors (from classes and claims)
are compiled again and again, so results are memoised.  Only two feature gates change what a
selector means, so unrelated gate changes keep hitting the cache.
"""

from __future__ import annotations

from functools import lru_cache

from drakit.features import Features
from drakit.selectors.compile import (
    EMPTY_VIEW,
    CelValueResult,
    CompiledSelector,
    DeviceView,
    compile_uncached,
    env_key,
    result_type_name,
)
from drakit.selectors.env import EnvKey
from drakit.selectors.types import CelRuntimeError

CACHE_SIZE = 4096


@lru_cache(maxsize=CACHE_SIZE)
def _compile(expression: str, key: EnvKey, require_bool: bool) -> CompiledSelector:
    return compile_uncached(expression, key, require_bool=require_bool)


def compile_selector(
    expression: str, *, environment: str = "stored", features: Features | None = None
) -> CompiledSelector:
    """Compile a device selector (must evaluate to bool); errors are returned as data."""
    return _compile(expression, env_key(environment, features), True)


def compile_any(
    expression: str, *, environment: str = "stored", features: Features | None = None
) -> CompiledSelector:
    """Compile an expression of any result type (for ``drakit cel eval``)."""
    return _compile(expression, env_key(environment, features), False)


def clear_cache() -> None:
    _compile.cache_clear()


EVAL_MODES = ("auto", "selector", "value")


def evaluate_expression(
    expression: str,
    device: DeviceView | None = None,
    *,
    environment: str = "stored",
    features: Features | None = None,
    mode: str = "value",
) -> CelValueResult:
    """Compile (cached) and evaluate an expression (``drakit cel eval``).

    ``selector`` is what the scheduler does with a device selector: the selector compiler
    (bool or the attribute type required) and a result that must be a bool.  ``value``
    accepts any result type.  ``auto`` is ``selector`` unless the selector compiler refuses
    the expression only for its result type, as the oracle's ``--mode auto`` decides.
    """
    if mode not in EVAL_MODES:
        raise ValueError(f"mode must be one of {', '.join(EVAL_MODES)}, got {mode!r}")
    if mode != "value":
        selector = compile_selector(expression, environment=environment, features=features)
        if selector.error is None:
            try:
                matched = selector.evaluate(device if device is not None else EMPTY_VIEW)
            except CelRuntimeError as e:
                return CelValueResult(error=e, mode="selector", cost_estimate=selector.cost_estimate)
            return CelValueResult(matched, "bool", None, "selector", selector.cost_estimate)
        if mode == "selector" or not selector.error.message.startswith("must evaluate to "):
            return CelValueResult(error=selector.error, mode="selector")
    compiled = compile_any(expression, environment=environment, features=features)
    if compiled.error is not None:
        return CelValueResult(error=compiled.error)
    try:
        value = compiled.evaluate_value(device)
    except CelRuntimeError as e:
        return CelValueResult(error=e, cost_estimate=compiled.cost_estimate)
    return CelValueResult(value, result_type_name(value), None, "value", compiled.cost_estimate)
