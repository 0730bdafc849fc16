"""Compile a checked CEL AST into Python closures, with cel-go's runtime cost accounting.

A tree-walking interpreter would re-dispatch on node kinds for every evaluation; the
allocator evaluates the same selector against thousands of devices, so each node is turned
once into a closure specialised for what the checker proved (single overload with concrete
argument types → direct call; otherwise runtime dispatch over the candidate overloads, as
cel-go does for ``dyn`` arguments).  Calls whose arguments are all constants, such as
``quantity("48Gi")``, are evaluated once at plan time.

Errors travel as :class:`EvalError` exceptions and are absorbed exactly where cel-go absorbs
error values: commutatively by ``&&``/``||``, by ``@not_strictly_false`` in comprehension
conditions, and inside comprehension accumulators.  Cost tracking (cel-go
``interpreter/runtimecost.go`` + Kubernetes' ``CallCost``) is compiled in only when needed:
a program whose worst-case estimate is within the limit cannot exceed it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from drakit.quantity import Quantity
from drakit.selectors import types as T
from drakit.selectors.ast import (
    Call,
    Comprehension,
    CreateList,
    CreateMap,
    CreateStruct,
    Expr,
    Ident,
    Literal,
    Select,
)
from drakit.selectors.checker import CheckedExpr
from drakit.selectors.cost import UNIT_COST_QUANTITY_FUNCTIONS
from drakit.selectors.decls import Overload
from drakit.selectors.library.ext import MAX_RANGE_SIZE
from drakit.selectors.types import (
    BOOL_KEYS,
    INT64_MIN,
    CelType,
    CostLimitExceeded,
    Duration,
    EvalError,
    Optional,
    Timestamp,
    TypeValue,
    Uint,
    map_key,
    unmap_key,
)
from drakit.selectors.values import Semver, format_key, go_type_name, size, type_name

Fn = Callable[["Frame"], Any]

COST_LIMIT_MESSAGE = "operation cancelled: actual cost limit exceeded"


class Frame:
    """Per-evaluation state: top-level variables, local slots, runtime cost."""

    __slots__ = ("cost", "limit", "slots", "vars")

    def __init__(self, vars: dict[str, Any], nslots: int = 0, limit: int = 0) -> None:
        self.vars = vars
        self.slots: list[Any] = [None] * nslots
        self.cost = 0
        self.limit = limit


class StructValue(dict[str, Any]):
    """A message value (the DRA ``device``); a dict of fields tagged with its type name."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self.type_name = type_name


class ErrorValue:
    """An error held in a comprehension accumulator (cel-go keeps errors as values there)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


# ---------------------------------------------------------------------------------------------
# runtime type predicates for overload dispatch


def _pred(t: CelType) -> Callable[[Any], bool] | None:
    k = t.kind
    if k in (T.DYN_K, T.ANY_K, T.PARAM_K, T.ERROR_K):
        return None
    if k == T.INT_K:
        return lambda v: type(v) is int
    if k == T.UINT_K:
        return lambda v: type(v) is Uint
    if k == T.DOUBLE_K:
        return lambda v: type(v) is float
    if k == T.BOOL_K:
        return lambda v: type(v) is bool
    if k == T.STRING_K:
        return lambda v: type(v) is str
    if k == T.BYTES_K:
        return lambda v: type(v) is bytes
    if k == T.NULL_K:
        return lambda v: v is None
    # cel-go's runtime guard (Type.IsAssignableRuntimeType) checks a list's first element and
    # a map's first entry, no more.
    if k == T.LIST_K:
        elem = _pred(t.params[0]) if t.params else None
        if elem is None:
            return lambda v: isinstance(v, list | tuple)
        return lambda v: isinstance(v, list | tuple) and (not v or elem(v[0]))
    if k == T.MAP_K:
        kp = _pred(t.params[0]) if t.params else None
        vp = _pred(t.params[1]) if len(t.params) > 1 else None
        if kp is None and vp is None:
            return lambda v: isinstance(v, dict) and not isinstance(v, StructValue)
        return lambda v: isinstance(v, dict) and not isinstance(v, StructValue) and _first_entry(v, kp, vp)
    if k == T.TIMESTAMP_K:
        return lambda v: type(v) is Timestamp
    if k == T.DURATION_K:
        return lambda v: type(v) is Duration
    if k == T.TYPE_K:
        return lambda v: type(v) is TypeValue
    if t == T.QUANTITY:
        return lambda v: isinstance(v, Quantity)
    if t == T.SEMVER:
        return lambda v: isinstance(v, Semver)
    if k == T.STRUCT_K and t.name not in T.LIB_TYPES:
        name = t.name
        return lambda v: isinstance(v, StructValue) and v.type_name == name
    if k == T.OPAQUE_K and t.name == "optional_type":
        return lambda v: type(v) is Optional
    lib = T.LIB_TYPES.get(t.name)
    if lib is not None:
        return lambda v: type(v) is lib
    return lambda v: False


def _first_entry(m: dict[Any, Any], kp: Callable[[Any], bool] | None, vp: Callable[[Any], bool] | None) -> bool:
    for k, v in m.items():
        return (kp is None or kp(unmap_key(k))) and (vp is None or vp(v))
    return True


def _overload_matcher(o: Overload) -> Callable[[tuple[Any, ...]], bool]:
    preds = [_pred(p) for p in o.params]
    active = [(i, p) for i, p in enumerate(preds) if p is not None]
    if not active:
        return lambda args: True
    return lambda args: all(p(args[i]) for i, p in active)


def _concrete(t: CelType) -> bool:
    if t.kind in (T.DYN_K, T.ANY_K, T.PARAM_K, T.ERROR_K):
        return False
    return all(_concrete(p) for p in t.params)


# ---------------------------------------------------------------------------------------------
# runtime cost of a call (cel-go CostTracker.costCall + Kubernetes library CallCost)


def _ceil(x: float) -> int:
    return math.ceil(x)


def _traversal(v: Any) -> int:
    if type(v) is str:
        return int(len(v) * 0.1)
    if type(v) is bytes:
        return int(len(v) * 0.1)
    if isinstance(v, list | tuple):
        return sum(_traversal(x) for x in v)
    if isinstance(v, dict):
        return sum(_traversal(unmap_key(k)) + _traversal(x) for k, x in v.items())
    return 1


# Runtime cost of library calls whose cost depends on their arguments' sizes (cel-go and the
# apiserver library cost.go).  ``_static_call_cost`` derives from the same sets, so a function
# added here is never priced as a constant by mistake.
_TRAVERSAL_FUNCTIONS = frozenset(("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"))
_RECEIVER_SIZE_FUNCTIONS = frozenset(
    (
        "url",
        "lowerAscii",
        "upperAscii",
        "substring",
        "trim",
        "quantity",
        "isQuantity",
        "cidr",
        "isIP",
        "isCIDR",
    )
)
_NET_SIZE_FUNCTIONS = frozenset(("ip", "ip.isCanonical", "containsIP", "containsCIDR", "validate"))
_SIZE_DEPENDENT_FUNCTIONS = (
    _TRAVERSAL_FUNCTIONS
    | _RECEIVER_SIZE_FUNCTIONS
    | _NET_SIZE_FUNCTIONS
    | {"replace", "split", "join", "find", "findAll"}
)
_SIZE_MIN_OPS = frozenset(
    f"{op}_{t}" for op in ("less", "greater", "less_equals", "greater_equals") for t in ("string", "bytes")
) | {"equals", "not_equals"}
_SIZE_DEPENDENT_OVERLOADS = _SIZE_MIN_OPS | {
    "starts_with_string",
    "ends_with_string",
    "string_to_bytes",
    "bytes_to_string",
    "in_list",
    "add_string",
    "add_bytes",
    "matches",
    "matches_string",
    "contains_string",
}


# cel-go ext.Lists/ext.Sets register their own trackers (they take precedence over the
# Kubernetes estimator).  They depend on the arguments only, so they are charged *before*
# the call: sorting a huge list, or building lists.range(n), must hit the cost limit, not
# the memory or the clock.
_LIST_CREATE_BASE = 10
_SETS_FACTOR = {"list_sets_contains_list": 1, "list_sets_intersects_list": 1, "list_sets_equivalent_list": 2}


def _self_compare(lst: Any) -> int:
    n = len(lst)
    factor = 2.0
    if n and type(lst[0]) in (str, bytes):
        factor += 0.1
    return int(n * n * factor) + 1 + _LIST_CREATE_BASE


def pre_call_cost(oid: str, args: tuple[Any, ...]) -> int | None:
    """The tracker cost of an ext list/set call, known before calling it (None: not one, or
    arguments of the wrong type, which the call itself then reports)."""
    try:
        return _pre_call_cost(oid, args)
    except TypeError:
        return None


def _pre_call_cost(oid: str, args: tuple[Any, ...]) -> int | None:
    if oid == "lists_range":
        n = args[0]
        return n + 1 + _LIST_CREATE_BASE if type(n) is int and 0 <= n <= MAX_RANGE_SIZE else None
    if oid == "list_reverse":
        return len(args[0]) + 1 + _LIST_CREATE_BASE
    if oid == "list_distinct":
        return _self_compare(args[0])
    if oid.endswith("_sort") and oid.startswith("list_"):
        return _self_compare(args[0])
    if oid.endswith("_sortByAssociatedKeys"):
        return _self_compare(args[1])
    factor = _SETS_FACTOR.get(oid)
    if factor is not None:
        return 1 + len(args[0]) * len(args[1]) * factor
    return None


def _post_list_cost(oid: str, args: tuple[Any, ...], result: Any) -> int | None:
    """Trackers that need the result: slice (its size), flatten (input size × depth)."""
    if oid == "list_slice":
        return len(result) + 1 + _LIST_CREATE_BASE
    if oid in ("list_flatten", "list_flatten_int"):
        depth = args[1] if len(args) == 2 else 1
        return int(len(args[0]) * (depth if depth >= 0 else 1)) + 1 + _LIST_CREATE_BASE
    return None


_TRACKED_OVERLOADS = frozenset(
    (
        "lists_range",
        "list_reverse",
        "list_distinct",
        "list_slice",
        "list_flatten",
        "list_flatten_int",
        *_SETS_FACTOR,
    )
)


def _tracked_overload(oid: str) -> bool:
    return oid in _TRACKED_OVERLOADS or (
        oid.startswith("list_") and oid.endswith(("_sort", "_sortByAssociatedKeys"))
    )


def call_cost(fn: str, oid: str, args: tuple[Any, ...], result: Any) -> int:
    tracked = pre_call_cost(oid, args) if _tracked_overload(oid) else None
    if tracked is None and _tracked_overload(oid):
        tracked = _post_list_cost(oid, args, result)
    if tracked is not None:
        return tracked
    if fn in _TRAVERSAL_FUNCTIONS:
        return _traversal(args[0]) if args else 0
    if fn in _RECEIVER_SIZE_FUNCTIONS and args:
        return _ceil(size(args[0]) * 0.1)
    if fn in ("replace", "split") and args:
        return _ceil(size(args[0]) * 2 * 0.1)
    if fn == "join" and args:
        return _ceil(size(result) * 2 * 0.1)
    if fn in ("find", "findAll") and len(args) >= 2:
        return _ceil((1.0 + size(args[0])) * 0.1) * _ceil(size(args[1]) * 0.25)
    if fn in UNIT_COST_QUANTITY_FUNCTIONS:
        return 1
    if fn in _NET_SIZE_FUNCTIONS and args:
        return _net_call_cost(fn, oid, args)
    if fn == "_==_" and args and isinstance(args[0], T.LibValue):
        return 1
    if oid in ("starts_with_string", "ends_with_string", "string_to_bytes", "bytes_to_string"):
        return _ceil(size(args[0]) * 0.1)
    if oid == "in_list":
        return size(args[1])
    if oid in _SIZE_MIN_OPS:
        return _ceil(min(size(args[0]), size(args[1])) * 0.1)
    if oid in ("add_string", "add_bytes"):
        return _ceil((size(args[0]) + size(args[1])) * 0.1)
    if oid in ("matches", "matches_string"):
        return _ceil((1.0 + size(args[0])) * 0.1) * _ceil(size(args[1]) * 0.25)
    if oid == "contains_string":
        return _ceil(size(args[0]) * 0.1) * _ceil(size(args[1]) * 0.1)
    return 1


def _net_call_cost(fn: str, oid: str, args: tuple[Any, ...]) -> int:
    """The IP, CIDR and format libraries' runtime costs (apiserver library cost.go)."""
    if fn == "ip":
        return 1 if oid == "cidr_ip" else _ceil(size(args[0]) * 0.1)
    if fn == "ip.isCanonical":
        return _ceil(size(args[0]) * 2 * 0.1)
    if fn == "validate":
        f = args[0]
        regex = getattr(f, "max_regex_size", None)
        if regex is None or len(args) < 2:
            return 1
        return _ceil((1.0 + size(args[1])) * 0.1) * _ceil(regex * 0.25)
    if len(args) < 2:
        return 1
    cidr = size(args[0])
    cost = _ceil((cidr + cidr) * 0.1)
    if fn == "containsCIDR":
        cost += _ceil(cidr * 0.1) + 1
    if oid.endswith("_string"):
        cost += _ceil(size(args[1]) * 0.1)
    return cost


def _static_call_cost(fn: str, oid: str) -> int | None:
    """The cost of a call when it does not depend on the argument values (None: it does)."""
    if fn in UNIT_COST_QUANTITY_FUNCTIONS:
        return 1
    if fn in _SIZE_DEPENDENT_FUNCTIONS or oid in _SIZE_DEPENDENT_OVERLOADS or _tracked_overload(oid):
        return None
    return 1


# ---------------------------------------------------------------------------------------------
# planner


class _Const:
    """Marks a closure whose value is known at plan time."""

    __slots__ = ("error", "value")

    def __init__(self, value: Any = None, error: str | None = None) -> None:
        self.value = value
        self.error = error


class Planner:
    def __init__(self, checked: CheckedExpr, track: bool) -> None:
        self.c = checked
        self.track = track
        self.scopes: list[dict[str, tuple[int, bool]]] = []  # name -> (slot, is_accumulator)
        self.nslots = 0
        self.consts: dict[int, _Const] = {}  # id(closure) -> constant
        # Every constant closure stays referenced while planning: a folded-away constant freed
        # early would let a later, non-constant closure reuse its id() and be mistaken for it.
        self._pinned: list[Fn] = []

    # utilities -------------------------------------------------------------------------------
    def const(self, value: Any) -> Fn:
        f: Fn = lambda fr: value  # noqa: E731
        self.consts[id(f)] = _Const(value)
        self._pinned.append(f)
        return f

    def const_error(self, message: str) -> Fn:
        def f(fr: Frame) -> Any:
            raise EvalError(message)

        self.consts[id(f)] = _Const(error=message)
        self._pinned.append(f)
        return f

    def charge(self, f: Fn, cost: int) -> Fn:
        if not self.track or cost == 0:
            return f

        def g(fr: Frame) -> Any:
            v = f(fr)
            fr.cost += cost
            if fr.cost > fr.limit:
                raise CostLimitExceeded()
            return v

        return g

    def lookup(self, name: str) -> tuple[int, bool] | None:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None

    # nodes -----------------------------------------------------------------------------------
    def plan(self, e: Expr) -> Fn:
        if isinstance(e, Literal):
            return self.const(e.value)
        if isinstance(e, Ident):
            return self.charge(self.plan_ident(e), 1)
        if isinstance(e, Select):
            if e.test_only or e.id in self.c.idents:
                return self.plan_select(e)
            return self.plan_chain(e)
        if isinstance(e, Call):
            if self._qualification(e) is not None:
                return self.plan_chain(e)
            return self.plan_call(e)
        if isinstance(e, CreateList):
            return self.plan_list(e)
        if isinstance(e, CreateMap):
            return self.plan_map(e)
        if isinstance(e, CreateStruct):
            raise EvalError(f"unsupported struct {e.type_name}")
        if isinstance(e, Comprehension):
            return self.plan_comprehension(e)
        raise AssertionError(e)

    def plan_ident(self, e: Ident) -> Fn:
        name = e.name.lstrip(".")
        loc = self.lookup(name)
        if loc is not None:
            slot, is_accu = loc
            if is_accu:

                def accu(fr: Frame) -> Any:
                    v = fr.slots[slot]
                    if type(v) is ErrorValue:
                        raise EvalError(v.message)
                    return v

                return accu
            return lambda fr: fr.slots[slot]
        resolved = self.c.idents.get(e.id, name)
        if self._is_type_name(e.id, resolved):
            return self.const(TypeValue(resolved))
        return lambda fr: fr.vars[resolved]

    def _is_type_name(self, node: int, resolved: str) -> bool:
        """A global identifier naming a type (``int``, ``list``, ``google.protobuf.Duration``):
        its value is the type itself, named as ``type()`` names runtime types."""
        t = self.c.types.get(node)
        return t is not None and t.kind == T.TYPE_K and resolved not in self.c.env.variables

    def plan_select(self, e: Select) -> Fn:
        if e.id in self.c.idents and not e.test_only:
            name = self.c.idents[e.id]
            if self._is_type_name(e.id, name):
                return self.const(TypeValue(name))
            return self.charge(lambda fr: fr.vars[name], 1)
        operand = self.plan(e.operand)
        field = e.field
        if e.test_only:

            def has(fr: Frame) -> bool:
                v = operand(fr)
                if isinstance(v, StructValue):
                    # DRA binds ``device`` as a map that always has all its keys, so has()
                    # is true for every declared field, whatever its value.
                    if field not in v:
                        raise EvalError(f"no such field '{field}'")
                    return True
                if isinstance(v, dict) and hasattr(type(v), "__missing__"):
                    # DRA's outer maps (env.DomainMap) answer every lookup (an unknown domain
                    # is an empty map), and cel-go's has() asks the map's Find: always present.
                    return True
                if isinstance(v, dict):
                    return field in v
                if type(v) is Optional:
                    if not v.present:
                        return False
                    inner = v.value
                    return isinstance(inner, dict) and field in inner
                raise EvalError("no such overload")

            # The Kubernetes base environment sets PresenceTestHasCost(false): has() is free.
            return has
        raise AssertionError("plain selections are planned as attribute chains")

    # attributes --------------------------------------------------------------------------------
    def _qualification(self, e: Expr) -> tuple[Expr, Expr | str, bool] | None:
        """``e`` as one qualifier step of a cel-go attribute: (operand, key, optional)."""
        if isinstance(e, Select):
            if e.test_only or e.id in self.c.idents:
                return None
            return e.operand, e.field, False
        if not isinstance(e, Call) or e.target is not None or len(e.args) != 2:
            return None
        fname = self.c.functions.get(e.id, e.function)
        if fname == "_?._":
            lit = e.args[1]
            return e.args[0], lit.value if isinstance(lit, Literal) else "", True
        if fname in ("_[_]", "_[?_]"):
            return e.args[0], e.args[1], fname == "_[?_]"
        return None

    def plan_chain(self, e: Expr) -> Fn:
        """Selections and indexes as cel-go plans them: one attribute, a root value and its
        qualifiers, resolved in order (``applyQualifiers``).  An empty optional root answers
        itself without evaluating any index; an optional root, or an optional step, turns
        every later step into a presence test and the result into an optional; a computed
        index is evaluated only when its step is reached and must be a string, integer,
        bool or double."""
        steps: list[tuple[Expr, Expr | str, bool]] = []
        node: Expr = e
        while (q := self._qualification(node)) is not None:
            steps.append(q)
            node = q[0]
        steps.reverse()
        root = self.plan(node)
        keys: list[tuple[Fn | None, Any, bool]] = []
        for _, key, optional in steps:
            if isinstance(key, str):
                keys.append((None, key, optional))
                continue
            kf = self.plan(key)
            known = self.consts.get(id(kf))
            if known is not None and known.error is None and type(known.value) in _QUALIFIER_TYPES:
                keys.append((None, known.value, optional))
            else:
                keys.append((kf, None, optional))
        n = len(keys)
        if all(kf is None and not opt for kf, _, opt in keys) and all(
            self._is_map(operand) for operand, _, _ in steps
        ):
            # The common selector shape (device.attributes["d"].model): maps all the way.
            lookups = [(map_key(k), k) for _, k, _ in keys]

            def maps(fr: Frame) -> Any:
                obj = root(fr)
                for mk, k in lookups:
                    try:
                        obj = obj[mk]
                    except KeyError:
                        raise EvalError(f"no such key: {format_key(k)}") from None
                return obj

            return self._fold(self.charge(maps, n), root, keys)

        def chain(fr: Frame) -> Any:
            obj = root(fr)
            is_opt = False
            if type(obj) is Optional:
                if not obj.present:
                    return obj
                obj, is_opt = obj.value, True
            for kf, k, optional in keys:
                if kf is not None:
                    k = kf(fr)
                    if type(k) not in _QUALIFIER_TYPES:
                        raise EvalError(f"invalid qualifier type: {go_type_name(k)}")
                is_opt = is_opt or optional
                found, obj = _qualify(obj, k, is_opt)
                if not found:
                    return T.OPTIONAL_NONE
            return Optional(obj) if is_opt else obj

        return self._fold(self.charge(chain, n), root, keys)

    def _fold(self, f: Fn, root: Fn, keys: list[tuple[Fn | None, Any, bool]]) -> Fn:
        """A chain over a constant with constant keys is evaluated once, at plan time."""
        if self.track or id(root) not in self.consts or any(kf is not None for kf, _, _ in keys):
            return f
        try:
            return self.const(f(Frame({})))
        except EvalError as err:
            return self.const_error(err.message)

    def _is_map(self, operand: Expr) -> bool:
        t = self.c.types.get(operand.id)
        return t is not None and t.kind in (T.MAP_K, T.STRUCT_K) and t.name not in T.LIB_TYPES

    def plan_list(self, e: CreateList) -> Fn:
        elems = [self.plan(x) for x in e.elements]
        opt = e.optional_indices
        if opt:

            def mk_opt(fr: Frame) -> list[Any]:
                out = []
                for i, f in enumerate(elems):
                    v = f(fr)
                    if i in opt:
                        if type(v) is not Optional:
                            raise EvalError("no such overload")
                        if v.present:
                            out.append(v.value)
                    else:
                        out.append(v)
                return out

            return self.charge(mk_opt, 10)
        if all(id(f) in self.consts and self.consts[id(f)].error is None for f in elems):
            value = [self.consts[id(f)].value for f in elems]
            if not self.track:
                return self.const(value)
        f = self.charge(lambda fr: [g(fr) for g in elems], 10)
        return f

    def plan_map(self, e: CreateMap) -> Fn:
        entries = [(self.plan(x.key), self.plan(x.value), x.optional) for x in e.entries]

        def mk(fr: Frame) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for kf, vf, opt in entries:
                k = kf(fr)
                v = vf(fr)
                mk_ = map_key(k)
                if opt:
                    if type(v) is not Optional:
                        raise EvalError("no such overload")
                    if not v.present:
                        continue
                    v = v.value
                # cel-go's map literal is a Go map: a repeated key replaces the earlier value.
                out[mk_] = v
            return out

        return self.charge(mk, 30)

    def plan_comprehension(self, e: Comprehension) -> Fn:
        rng = self.plan(e.iter_range)
        init = self.plan(e.accu_init)
        accu_slot = self.nslots
        self.nslots += 1
        self.scopes.append({e.accu_var: (accu_slot, True)})
        v1 = self.nslots
        self.nslots += 1
        scope = {e.iter_var: (v1, False)}
        v2 = -1
        if e.iter_var2:
            v2 = self.nslots
            self.nslots += 1
            scope[e.iter_var2] = (v2, False)
        self.scopes.append(scope)
        cond = self.plan(e.loop_cond)
        step = self.plan(e.loop_step)
        self.scopes.pop()
        result = self.plan(e.result)
        self.scopes.pop()
        two = bool(e.iter_var2)
        cond_const = self.consts.get(id(cond))
        always = cond_const is not None and cond_const.value is True

        def fold(fr: Frame) -> Any:
            r = rng(fr)
            if isinstance(r, dict) and not isinstance(r, StructValue):
                items: Any = ((unmap_key(k), v) for k, v in r.items()) if two else (unmap_key(k) for k in r)
            elif isinstance(r, list | tuple):
                items = enumerate(r) if two else r
            else:
                raise EvalError(f"got '{go_type_name(r)}', expected iterable type")
            slots = fr.slots
            try:
                slots[accu_slot] = init(fr)
            except EvalError as err:
                slots[accu_slot] = ErrorValue(err.message)
            for x in items:
                if two:
                    slots[v1], slots[v2] = x
                else:
                    slots[v1] = x
                if not always:
                    try:
                        c = cond(fr)
                    except EvalError:
                        c = None
                    if c is False:
                        break
                try:
                    slots[accu_slot] = step(fr)
                except EvalError as err:
                    slots[accu_slot] = ErrorValue(err.message)
            return result(fr)

        return fold

    # calls -----------------------------------------------------------------------------------
    def plan_call(self, e: Call) -> Fn:
        fname = self.c.functions.get(e.id, e.function)
        ids = self.c.overloads.get(e.id, [])
        fn_decl = self.c.env.functions.get(fname)
        if fname == "_&&_":
            return self.plan_logic(e, is_and=True)
        if fname == "_||_":
            return self.plan_logic(e, is_and=False)
        if fname == "_?_:_":
            c, t, fl = (self.plan(a) for a in e.args)

            def cond(fr: Frame) -> Any:
                v = c(fr)
                if v is True:
                    return t(fr)
                if v is False:
                    return fl(fr)
                raise EvalError("no such overload")

            return cond
        if fname == "@not_strictly_false":
            inner = self.plan(e.args[0])

            def nsf(fr: Frame) -> bool:
                try:
                    v = inner(fr)
                except EvalError:
                    return True
                return v if type(v) is bool else True

            return self.charge(nsf, 1)
        assert fn_decl is not None, fname
        if (
            fname in ("orValue", "or")
            and e.target is not None
            and ids in (["optional_orValue_value"], ["optional_or_optional"])
        ):
            return self.plan_optional_or(e, value=fname == "orValue")
        rhs = e.args[-1] if e.args else None
        if fname == "@in" and ids == ["in_list"] and isinstance(rhs, CreateList) and not rhs.elements:
            # cel-go's set-membership optimisation: membership in a constant empty list is
            # false without evaluating the left operand (errors there never surface).
            return self.const(False)
        operands = ([e.target] if e.target is not None and fname == e.function else []) + list(e.args)
        if e.target is not None and fname != e.function:
            operands = list(e.args)  # namespaced global function called with dotted syntax
        arg_fns = [self.plan(a) for a in operands]
        overloads = [o for o in (fn_decl.by_id(i) for i in ids) if o is not None]
        impl: Callable[..., Any] | None
        if len(overloads) == 1 and all(_concrete(self.c.types.get(a.id, T.DYN_T)) for a in operands):
            impl = overloads[0].impl
        else:
            impl = _dispatcher(overloads, fname)
        assert impl is not None
        oid = ids[0] if len(ids) == 1 else ""
        static_cost = _static_call_cost(fname, oid) if len(ids) == 1 else None
        if static_cost is None and len(ids) > 1:
            costs = {_static_call_cost(fname, i) for i in ids}
            static_cost = costs.pop() if len(costs) == 1 else None

        # constant folding
        if fname not in ("lists.range",) and all(id(f) in self.consts for f in arg_fns):
            consts = [self.consts[id(f)] for f in arg_fns]
            if all(c.error is None for c in consts):
                args = tuple(c.value for c in consts)
                try:
                    value = impl(*args)
                except EvalError as err:
                    folded = self.const_error(err.message)
                except (ArithmeticError, ValueError, TypeError, OverflowError) as err:
                    folded = self.const_error(str(err))
                else:
                    folded = self.const(value)
                if not self.track:
                    return folded
                cost = (
                    static_cost
                    if static_cost is not None
                    else call_cost(
                        fname,
                        oid or (ids[0] if ids else ""),
                        args,
                        None if id(folded) not in self.consts else self.consts[id(folded)].value,
                    )
                )
                return self.charge(folded, cost)

        n = len(arg_fns)
        if self.track and static_cost is None:

            flatten = ids == ["list_flatten_int"]

            def tracked(fr: Frame) -> Any:
                try:
                    args = tuple(f(fr) for f in arg_fns)
                except EvalError:
                    if flatten:
                        _charge_failed_flatten(fr, arg_fns[1])
                    raise
                used = oid or _which(overloads, args)
                pre = pre_call_cost(used, args)
                if pre is not None:
                    fr.cost += pre
                    if fr.cost > fr.limit:
                        raise CostLimitExceeded()
                    return impl(*args)
                v = impl(*args)
                fr.cost += call_cost(fname, used, args, v)
                if fr.cost > fr.limit:
                    raise CostLimitExceeded()
                return v

            return tracked
        if n == 0:
            f: Fn = lambda fr: impl()  # noqa: E731
        elif n == 1:
            a0 = arg_fns[0]
            f = lambda fr: impl(a0(fr))  # noqa: E731
        elif n == 2:
            a0, a1 = arg_fns
            f = lambda fr: impl(a0(fr), a1(fr))  # noqa: E731
        else:
            f = lambda fr: impl(*[g(fr) for g in arg_fns])  # noqa: E731
        return self.charge(f, static_cost or 0)

    def plan_optional_or(self, e: Call, *, value: bool) -> Fn:
        """cel-go special-cases ``opt.or(o)`` / ``opt.orValue(v)``: the alternative is only
        evaluated when the optional is empty (its errors never surface otherwise)."""
        assert e.target is not None
        lhs, rhs = self.plan(e.target), self.plan(e.args[0])

        def optional_or(fr: Frame) -> Any:
            v = lhs(fr)
            if type(v) is not Optional:
                raise EvalError("no such overload")
            if v.present:
                return v.value if value else v
            return rhs(fr)

        return optional_or

    def plan_logic(self, e: Call, *, is_and: bool) -> Fn:
        lhs, rhs = (self.plan(a) for a in e.args)
        stop = not is_and  # the absorbing value: False for &&, True for ||

        # cel-go keeps the *first* error (or non-bool operand) it meets and reports it unless
        # the other operand absorbs; an error on the right never replaces one from the left.
        def logic(fr: Frame) -> Any:
            try:
                a = lhs(fr)
            except EvalError as err:
                try:
                    b = rhs(fr)
                except EvalError:
                    raise err from None
                if b is stop:
                    return stop
                raise err from None
            if a is stop:
                return stop
            if type(a) is not bool:
                try:
                    b = rhs(fr)
                except EvalError:
                    raise EvalError("no such overload") from None
                if b is stop:
                    return stop
                raise EvalError("no such overload")
            b = rhs(fr)
            if type(b) is not bool:
                raise EvalError("no such overload")
            return b

        return logic


def _charge_failed_flatten(fr: Frame, depth_fn: Fn) -> None:
    """cel-go prices ``l.flatten(depth)`` even when ``l`` is an error (the call returns the
    error, its tracker still sees size 1 × depth): a huge depth hits the cost limit first."""
    try:
        depth = depth_fn(fr)
    except EvalError:
        return  # upstream's tracker panics on an error depth
    if type(depth) is int and depth >= 0:
        fr.cost += depth + 1 + _LIST_CREATE_BASE
        if fr.cost > fr.limit:
            raise CostLimitExceeded()


def _which(overloads: list[Overload], args: tuple[Any, ...]) -> str:
    for o in overloads:
        if _overload_matcher(o)(args):
            return o.id
    return overloads[0].id if overloads else ""


# cel-go's standard operators and string predicates dispatch on their operand's traits and
# answer a plain "no such overload"; size() and sort() name the function; every other
# function is bound per overload and names the function and the runtime argument types.
_PLAIN_NO_SUCH_OVERLOAD = frozenset(
    (
        *("_+_", "_-_", "_*_", "_/_", "_%_", "-_", "!_", "_<_", "_<=_", "_>_", "_>=_", "_==_", "_!=_"),
        *("@in", "startsWith", "endsWith", "contains", "matches", "orValue", "_?_:_"),
    )
)
_NAMED_NO_SUCH_OVERLOAD = frozenset(("size", "sort"))


# The operand types that have the trait an operator dispatches on (cel-go common/types).
# A left operand without it is "no such overload: <operator>" unless its type receives
# calls itself (bool, string, duration, timestamp), which answers a plain "no such overload".
_ADDERS = (int, Uint, float, str, bytes, list, tuple, Duration, Timestamp)
_OPERATOR_TRAITS: dict[str, tuple[type, ...]] = {
    "_+_": _ADDERS,
    "_-_": (int, Uint, float, Duration, Timestamp),
    "_*_": (int, Uint, float),
    "_/_": (int, Uint, float),
    "_%_": (int, Uint),
    "-_": (int, float, Duration),
    **dict.fromkeys(("_<_", "_<=_", "_>_", "_>=_"), (bool, int, Uint, float, str, bytes, Duration, Timestamp)),
}


_RECEIVERS = (bool, str, Duration, Timestamp)


def no_such_overload_message(fname: str, args: tuple[Any, ...]) -> str:
    traits = _OPERATOR_TRAITS.get(fname)
    receivers = _RECEIVERS if len(args) == 1 else _RECEIVERS[1:]  # measured: bool only for '-'
    if traits is not None and args and type(args[0]) not in traits and type(args[0]) not in receivers:
        return f"no such overload: {fname}"
    if fname in _PLAIN_NO_SUCH_OVERLOAD:
        return "no such overload"
    if fname in _NAMED_NO_SUCH_OVERLOAD:
        return f"no such overload: {fname}"
    if fname == "flatten" and args:
        return f"no such overload: {type_name(args[0])}.flatten({', '.join(type_name(a) for a in args[1:])})"
    return f"no such overload: {fname}({', '.join(type_name(a) for a in args)})"


def _negate_duration(d: Duration) -> Duration:
    if d.nanos == INT64_MIN:
        raise EvalError("integer overflow")
    return Duration(-d.nanos)


# cel-go binds some operators to a trait of the operand rather than per overload, so a dyn
# operand of a type the declarations do not list still dispatches: a duration negates
# (traits.Negater), although the checker only declares '-' for int and double.
_TRAIT_ONLY: dict[str, list[tuple[Callable[[tuple[Any, ...]], bool], Callable[..., Any]]]] = {
    "-_": [(lambda args: type(args[0]) is Duration, _negate_duration)],
}


def _dispatcher(overloads: list[Overload], fname: str = "") -> Callable[..., Any]:
    table = [(_overload_matcher(o), o.impl) for o in overloads if o.impl is not None]
    table += _TRAIT_ONLY.get(fname, [])

    def dispatch(*args: Any) -> Any:
        for match, impl in table:
            if match(args):
                return impl(*args)
        raise EvalError(no_such_overload_message(fname, args) if fname else "no such overload")

    return dispatch


_QUALIFIER_TYPES = frozenset((str, int, Uint, bool, float))


def _qualify(obj: Any, k: Any, presence: bool) -> tuple[bool, Any]:
    """One qualifier step (cel-go ``refQualify``): (found, value).  Without ``presence`` a
    miss is an error; with it, a miss — or a value that cannot be qualified — is absent."""
    if isinstance(obj, dict):
        mk = map_key(k)
        # DRA's outer maps find every domain (an unknown one is an empty map)
        if mk in obj or hasattr(type(obj), "__missing__"):
            return True, obj[mk]
        if presence:
            return False, None
        raise EvalError(f"no such key: {format_key(k)}")
    if isinstance(obj, list | tuple):
        tk = type(k)
        if tk is float:
            if not k.is_integer():
                raise EvalError(f"unsupported index value {format_key(k)} in list")
            k = int(k)
        elif tk is not int and tk is not Uint:
            raise EvalError(f"unsupported index type '{type_name(k)}' in list")
        if 0 <= k < len(obj):
            return True, obj[k]
        if presence:
            return False, None
        raise EvalError(f"index out of bounds: {int(k)}")
    if presence:
        return False, None
    raise EvalError(f"no such key: {format_key(k)}")  # cel-go's qualifier on a non-container


class Program:
    """An executable selector: closures plus what evaluation needs to know."""

    def __init__(self, root: Fn, nslots: int, tracked: bool, limit: int) -> None:
        self.root = root
        self.nslots = nslots
        self.tracked = tracked
        self.limit = limit
        self.deep = False

    def eval(self, vars: dict[str, Any], frame: Frame | None = None) -> Any:
        """Evaluate; raises EvalError (CEL error) or CostLimitExceeded."""
        if frame is None or self.nslots or self.tracked:
            frame = Frame(vars, self.nslots, self.limit)
        return self.root(frame)


def plan(checked: CheckedExpr, *, track: bool, limit: int) -> Program:
    p = Planner(checked, track)
    root = p.plan(checked.expr)
    return Program(root, p.nslots, track, limit)


__all__ = ["BOOL_KEYS", "COST_LIMIT_MESSAGE", "Frame", "Program", "StructValue", "plan"]
