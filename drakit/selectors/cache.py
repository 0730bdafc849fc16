"""Compiled-selector cache keyed by (expression, environment, the feature bits that matter).

Compiling costs far more than evaluating; the same few selectors (from classes and claims)
are compiled again and again, so results are memoised.  Only two feature gates change what a
selector means, so unrelated gate changes keep hitting the cache.
"""

from __future__ import annotations

from functools import lru_cache

from drakit.features import Features
from drakit.selectors.compile import (
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


def evaluate_expression(
    expression: str,
    device: DeviceView | None = None,
    *,
    environment: str = "stored",
    features: Features | None = None,
) -> CelValueResult:
    """Compile (cached) and evaluate an expression of any result type (``drakit cel eval``)."""
    compiled = compile_any(expression, environment=environment, features=features)
    if compiled.error is not None:
        return CelValueResult(error=compiled.error)
    try:
        value = compiled.evaluate_value(device)
    except CelRuntimeError as e:
        return CelValueResult(error=e)
    return CelValueResult(value=value, type=result_type_name(value))
