"""Function libraries: declarations (for the checker and cost estimator) plus implementations.

Each module contributes ``declare(env)``; overload ids are cel-go's / Kubernetes' so that the
cost rules keyed by overload id (``equals``, ``in_list``, ``matches_string``...) apply.
Implementations take the receiver first and raise :class:`~drakit.selectors.types.EvalError`
with cel-go's text on failure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drakit.selectors.decls import Env, Overload
from drakit.selectors.types import CelType


def fn(
    env: Env,
    name: str,
    oid: str,
    params: list[CelType],
    result: CelType,
    impl: Callable[..., Any] | None = None,
    *,
    member: bool = False,
) -> None:
    env.add(name, Overload(oid, tuple(params), result, member, impl))
