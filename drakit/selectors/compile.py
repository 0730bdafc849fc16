"""The public selector API: compile once, evaluate against many devices.

``compile_selector`` never raises for a bad expression: like upstream's
``CompilationResult`` it returns the error as data (``CompiledSelector.error``), because the
allocator must report compile errors per selector, not abort on the first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drakit.features import Features
from drakit.selectors import types as T
from drakit.selectors.ast import depth
from drakit.selectors.checker import CheckedExpr, check
from drakit.selectors.cost import estimate
from drakit.selectors.env import (
    MAX_COST,
    MAX_EXPRESSION_LENGTH,
    EnvKey,
    build_env,
    device_vars_both,
    size_roots,
)
from drakit.selectors.instantiate import instantiation_error
from drakit.selectors.interpreter import COST_LIMIT_MESSAGE, Frame, Program, plan
from drakit.selectors.parser import (
    Issues,
    ParsedExpr,
    ParseError,
    Parser,
    Source,
    deep_recursion,
)
from drakit.selectors.types import CelError, CelRuntimeError, CelType, CostLimitExceeded, EvalError
from drakit.selectors.validators import validate
from drakit.selectors.values import as_selector_result, type_name

ENVIRONMENTS = ("stored", "new")
_ENV_ALIASES = {"stored": "stored", "new": "new", "StoredExpressions": "stored", "NewExpressions": "new"}


@dataclass(frozen=True, slots=True)
class DeviceView:
    """One device's CEL activation, built once and shared by every selector evaluated on it.

    Deliberately small (slots, no cached frames): callers such as the allocator keep one per
    device for a long time, and every extra container per device is more work for Python's
    cyclic garbage collector, which dominated the allocator's first sight of large inventories.
    """

    driver: str
    _vars_all: dict[str, Any] | EvalError  # list-valued attributes converted
    _vars_scalar: dict[str, Any] | EvalError  # list-valued attributes rejected (feature off)

    def vars(self, lists: bool) -> dict[str, Any]:
        v = self._vars_all if lists else self._vars_scalar
        if isinstance(v, EvalError):
            raise v
        return v

    def frame(self, lists: bool) -> Frame:
        """A fresh evaluation frame (frames carry per-evaluation state, so none is kept)."""
        return Frame(self.vars(lists))


def device_view(driver: str, device: Mapping[str, Any]) -> DeviceView:
    """Build the activation for a v1 Device (JSON shape) published by ``driver``."""
    all_, scalar = device_vars_both(driver, device)
    return DeviceView(driver, all_, scalar)


@dataclass(frozen=True)
class CelValueResult:
    """The outcome of evaluating an expression of any result type."""

    value: Any = None
    type: str = ""
    error: CelError | CelRuntimeError | None = None
    mode: str = "value"  # how it was evaluated: "selector" (the scheduler's way) or "value"
    cost_estimate: int | None = None


@dataclass(frozen=True)
class CompiledSelector:
    expression: str
    error: CelError | None
    cost_estimate: int | None
    output_type: CelType | None = None
    environment: str = "stored"
    _program: Program | None = field(default=None, repr=False, compare=False)
    _lists: bool = field(default=True, repr=False, compare=False)

    def evaluate(self, device: DeviceView) -> bool:
        """Match the device; raises CelError (compile error) or CelRuntimeError."""
        value = self.evaluate_value(device)
        if type(value) is bool:
            return value
        try:
            return as_selector_result(value)
        except EvalError as err:
            raise CelRuntimeError(err.message, expression=self.expression) from None

    def evaluate_value(self, device: DeviceView | None) -> Any:
        if self.error is not None:
            raise self.error
        prog = self._program
        assert prog is not None
        try:
            if device is None:
                device = EMPTY_VIEW
            frame = Frame(device.vars(self._lists), prog.nslots, prog.limit)
            if prog.deep:
                with deep_recursion():
                    return prog.root(frame)
            return prog.root(frame)
        except EvalError as e:
            raise CelRuntimeError(e.message, expression=self.expression) from None
        except CostLimitExceeded:
            raise CelRuntimeError(COST_LIMIT_MESSAGE, expression=self.expression) from None
        except RecursionError:
            raise CelRuntimeError(
                "expression too deeply nested to evaluate", expression=self.expression
            ) from None


def _normalise_env(environment: str) -> str:
    try:
        return _ENV_ALIASES[environment]
    except KeyError:
        raise CelError(f"unknown CEL environment {environment!r}: use 'stored' or 'new'") from None


def env_key(environment: str, features: Features | None) -> EnvKey:
    f = features or Features()
    return EnvKey(_normalise_env(environment), f.list_type_attributes, f.consumable_capacity)


def _fail(expression: str, message: str, env: str) -> CompiledSelector:
    return CompiledSelector(expression, CelError(message, expression=expression), None, None, env)


def compile_uncached(expression: str, key: EnvKey, *, require_bool: bool = True) -> CompiledSelector:
    env_name = key.environment
    raw: object = expression
    if isinstance(raw, bytes):
        try:
            expression = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return _fail(
                repr(raw), f"compilation failed: invalid UTF-8 in expression at byte {e.start}", env_name
            )
    try:
        expression.encode("utf-8")
    except UnicodeEncodeError as e:
        return _fail(
            expression, f"compilation failed: invalid UTF-8 in expression at offset {e.start}", env_name
        )
    size = len(expression.encode("utf-8"))
    # The 10 KiB limit is the API server's validation of new objects; a stored expression
    # of any length is compiled (cel-go's own limit is 100,000 code points).
    if env_name == "new" and size > MAX_EXPRESSION_LENGTH:
        return _fail(
            expression, f"Too long: may not be more than {MAX_EXPRESSION_LENGTH} bytes (got {size})", env_name
        )
    source = Source(expression)
    with deep_recursion():
        try:
            parser = Parser(expression)
            root = parser.parse()
        except ParseError as e:
            found = Issues(source)
            for issue in e.issues:
                found.add(issue.offset, issue.message)
            return _fail(expression, "compilation failed: " + found.render(), env_name)
        except RecursionError:
            return _fail(expression, "compilation failed: expression too deeply nested", env_name)
        parsed = ParsedExpr(root, source, parser.positions, parser.next_id)
        env = build_env(key)
        try:
            checked, errors = check(env, parsed)
            errors = errors or validate(checked)
        except RecursionError:
            return _fail(expression, "compilation failed: expression too deeply nested", env_name)
        if errors:
            issues = Issues(source)
            for off, msg in errors:
                issues.add(off, msg)
            return _fail(expression, "compilation failed: " + issues.render(), env_name)
        out = checked.output_type
        # DRA accepts bool or exactly the attribute value type: dyn where list attributes are
        # possible, the unknown type (any) where they are not.
        attribute_t = T.DYN_T if key.lists else T.ANY
        if require_bool and not (out == T.BOOL or out == attribute_t):
            return _fail(
                expression, f"must evaluate to bool or the unknown type, not {T.format_type(out)}", env_name
            )
        # The DRA compiler builds the program (cel-go folds constants and precompiles regex
        # patterns then) after the result-type check and before estimating the cost.
        failure = instantiation_error(checked)
        if failure is not None:
            return _fail(expression, "program instantiation failed: " + failure, env_name)
        est = estimate(checked, size_roots())
        if env_name == "new" and est.max > MAX_COST:
            return CompiledSelector(
                expression,
                CelError(
                    f"too complex, exceeds cost limit: estimated cost {est.max} exceeds budget of {MAX_COST}",
                    expression=expression,
                ),
                est.max,
                out,
                env_name,
            )
        program = _plan(checked, est.max, root)
    return CompiledSelector(expression, None, est.max, out, env_name, program, key.lists)


def _plan(checked: CheckedExpr, estimated: int, root: Any) -> Program:
    track = estimated > MAX_COST
    prog = plan(checked, track=track, limit=MAX_COST)
    prog.deep = depth(root) > 150
    return prog


EMPTY_VIEW = device_view("", {})


_SHORT_TYPES = {"kubernetes.Quantity": "quantity", "kubernetes.Semver": "semver"}


def result_type_name(value: Any) -> str:
    """The type name reported for results: CEL's, with ``quantity``/``semver`` shortened."""
    name = type_name(value)
    return _SHORT_TYPES.get(name, name)
