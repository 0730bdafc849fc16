"""Kubernetes CEL libraries (``k8s.io/apiserver/pkg/cel/library``) on drakit's own ports.

Quantity and semver use :mod:`drakit.quantity` / :mod:`drakit.semver`, which reproduce
apimachinery and blang/semver exactly.  Also here: the lists library (``isSorted``, ``sum``,
``min``, ``max``, ``indexOf``, ``lastIndexOf``), regex (``find``, ``findAll``) and the DRA
``includes()`` function.  Overload ids are upstream's, since cost rules are keyed by them.
"""

from __future__ import annotations

from typing import Any

from drakit.quantity import Quantity, QuantityError
from drakit.selectors import types as T
from drakit.selectors.decls import Env
from drakit.selectors.library import fn
from drakit.selectors.library.standard import compile_re2
from drakit.selectors.types import EvalError, Uint
from drakit.selectors.values import (
    NO_SUCH_OVERLOAD,
    QuantityResult,
    Semver,
    check_int,
    compare,
    equal,
    go_type_name,
)
from drakit.semver import SemverError

#: Upstream ResourceSliceMaxAttributeValuesPerDevice: includes() looks at this many list items.
INCLUDES_MAX = 48


# ---------------------------------------------------------------------------------------------
# quantity


def parse_quantity(s: str) -> Quantity:
    try:
        return Quantity.parse(s)
    except QuantityError as e:
        raise EvalError(str(e)) from None


def _is_quantity(s: str) -> bool:
    try:
        Quantity.parse(s)
    except QuantityError:
        return False
    return True


def _as_integer(q: Quantity) -> int:
    if not q.is_integer():
        raise EvalError("cannot convert value to integer")
    return q.as_integer()


def _q_add(q: Quantity, other: Quantity | int) -> Quantity:
    try:
        return QuantityResult.of(q.add(other))
    except QuantityError as e:
        raise EvalError(str(e)) from None


def _q_sub(q: Quantity, other: Quantity | int) -> Quantity:
    try:
        return QuantityResult.of(q.sub(other))
    except QuantityError as e:
        raise EvalError(str(e)) from None


def declare_quantity(env: Env) -> None:
    Q, S, B, N, D = T.QUANTITY, T.STRING, T.BOOL, T.INT, T.DOUBLE
    fn(env, "quantity", "string_to_quantity", [S], Q, parse_quantity)
    fn(env, "isQuantity", "is_quantity_string", [S], B, _is_quantity)
    fn(env, "sign", "quantity_sign", [Q], N, lambda q: q.sign())
    fn(env, "isGreaterThan", "quantity_is_greater_than", [Q, Q], B, lambda a, b: a.cmp(b) == 1, member=True)
    fn(env, "isLessThan", "quantity_is_less_than", [Q, Q], B, lambda a, b: a.cmp(b) == -1, member=True)
    fn(env, "compareTo", "quantity_compare_to", [Q, Q], N, lambda a, b: a.cmp(b), member=True)
    fn(
        env,
        "asApproximateFloat",
        "quantity_get_float",
        [Q],
        D,
        lambda q: q.as_approximate_float(),
        member=True,
    )
    fn(env, "asInteger", "quantity_get_int", [Q], N, _as_integer, member=True)
    fn(env, "isInteger", "quantity_is_integer", [Q], B, lambda q: q.is_integer(), member=True)
    fn(env, "add", "quantity_add", [Q, Q], Q, _q_add, member=True)
    fn(env, "add", "quantity_add_int", [Q, N], Q, _q_add, member=True)
    fn(env, "sub", "quantity_sub", [Q, Q], Q, _q_sub, member=True)
    fn(env, "sub", "quantity_sub_int", [Q, N], Q, _q_sub, member=True)


# ---------------------------------------------------------------------------------------------
# semver


def parse_semver(s: str, normalize: bool = False) -> Semver:
    try:
        return Semver.parse_normalized(s) if normalize else Semver.parse(s)
    except SemverError as e:
        raise EvalError(str(e)) from None


def _is_semver(s: str, normalize: bool = False) -> bool:
    try:
        parse_semver(s, normalize)
    except EvalError:
        return False
    return True


def declare_semver(env: Env) -> None:
    V, S, B, N = T.SEMVER, T.STRING, T.BOOL, T.INT
    fn(env, "semver", "string_to_semver", [S], V, parse_semver)
    fn(env, "semver", "string_bool_to_semver", [S, B], V, parse_semver)
    fn(env, "isSemver", "is_semver_string", [S], B, _is_semver)
    fn(env, "isSemver", "is_semver_string_bool", [S, B], B, _is_semver)
    fn(env, "isGreaterThan", "semver_is_greater_than", [V, V], B, lambda a, b: a.compare(b) == 1, member=True)
    fn(env, "isLessThan", "semver_is_less_than", [V, V], B, lambda a, b: a.compare(b) == -1, member=True)
    fn(env, "compareTo", "semver_compare_to", [V, V], N, lambda a, b: a.compare(b), member=True)
    fn(env, "major", "semver_major", [V], N, lambda v: v.major, member=True)
    fn(env, "minor", "semver_minor", [V], N, lambda v: v.minor, member=True)
    fn(env, "patch", "semver_patch", [V], N, lambda v: v.patch, member=True)


# ---------------------------------------------------------------------------------------------
# lists


# cel-go's traits.Comparer and traits.Adder: the runtime types the library's loops accept.
_COMPARERS = (bool, int, Uint, float, str, bytes, T.Duration, T.Timestamp)


def _ordered(a: Any, b: Any) -> int | None:
    """``a.Compare(b)`` as the library reads it: an error (NaN, mixed types) is no order."""
    try:
        return compare(a, b)
    except EvalError:
        return None


def _comparable(lst: list[Any]) -> None:
    # a list of the declared element type reaches the call whenever its first element has
    # that type (cel-go's runtime overload guard looks no further)
    for x in lst:
        if type(x) not in _COMPARERS:
            raise EvalError(NO_SUCH_OVERLOAD)


def _is_sorted(lst: list[Any]) -> bool:
    """Kubernetes' isSorted: false at the first pair in decreasing order; pairs that do not
    compare (NaN, mixed types) do not count, a non-comparable element is an error."""
    if lst and type(lst[0]) not in _COMPARERS:
        raise EvalError(NO_SUCH_OVERLOAD)
    for i in range(1, len(lst)):
        if type(lst[i]) not in _COMPARERS:
            raise EvalError(NO_SUCH_OVERLOAD)
        if _ordered(lst[i - 1], lst[i]) == 1:
            return False
    return True


def _add(acc: Any, x: Any) -> Any:
    """``acc.Add(x)`` for the sums' accumulators (int, uint, double, duration)."""
    ta = type(acc)
    if ta is not type(x):
        raise EvalError(NO_SUCH_OVERLOAD)
    if ta is int:
        return check_int(acc + x)
    if ta is Uint:
        total = Uint(acc + x)
        if total > T.UINT64_MAX:
            raise EvalError("unsigned integer overflow")
        return total
    if ta is T.Duration:
        return T.Duration(check_int(acc.nanos + x.nanos))
    if ta is float:
        return acc + x
    raise EvalError(NO_SUCH_OVERLOAD)


def _sum(lst: list[Any], zero: Any) -> Any:
    acc = zero
    for x in lst:
        acc = _add(acc, x)
    return acc


def _extreme(lst: list[Any], name: str, prefer: int) -> Any:
    """min()/max(): the running result is replaced when it compares as ``prefer`` with the
    next element; comparisons that fail (NaN, mixed types) keep it."""
    _comparable(lst)
    if not lst:
        raise EvalError(f"{name} called on empty list")
    best = lst[0]
    for x in lst[1:]:
        if _ordered(best, x) == prefer:
            best = x
    return best


def _min(lst: list[Any]) -> Any:
    return _extreme(lst, "min", 1)


def _max(lst: list[Any]) -> Any:
    return _extreme(lst, "max", -1)


def _index_of(lst: list[Any], x: Any) -> int:
    for i, e in enumerate(lst):
        if equal(e, x):
            return i
    return -1


def _last_index_of(lst: list[Any], x: Any) -> int:
    for i in range(len(lst) - 1, -1, -1):
        if equal(lst[i], x):
            return i
    return -1


def declare_lists(env: Env) -> None:
    A = T.param("A")
    LA = T.list_of(A)
    comparable = [T.INT, T.UINT, T.DOUBLE, T.BOOL, T.STRING, T.BYTES, T.DURATION, T.TIMESTAMP]
    names = {
        "int": T.INT,
        "uint": T.UINT,
        "double": T.DOUBLE,
        "bool": T.BOOL,
        "string": T.STRING,
        "bytes": T.BYTES,
        "duration": T.DURATION,
        "timestamp": T.TIMESTAMP,
    }
    rev = {v: k for k, v in names.items()}
    for t in comparable:
        n = rev[t]
        fn(env, "isSorted", f"list_{n}_is_sorted_bool", [T.list_of(t)], T.BOOL, _is_sorted, member=True)
        fn(env, "min", f"list_{n}_min_{n}", [T.list_of(t)], t, _min, member=True)
        fn(env, "max", f"list_{n}_max_{n}", [T.list_of(t)], t, _max, member=True)
    for t, zero in ((T.INT, 0), (T.UINT, Uint(0)), (T.DOUBLE, 0.0), (T.DURATION, T.Duration(0))):
        n = rev[t]
        fn(
            env,
            "sum",
            f"list_{n}_sum_{n}",
            [T.list_of(t)],
            t,
            (lambda z: lambda lst: _sum(lst, z))(zero),
            member=True,
        )
    fn(env, "indexOf", "list_a_index_of_int", [LA, A], T.INT, _index_of, member=True)
    fn(env, "lastIndexOf", "list_a_last_index_of_int", [LA, A], T.INT, _last_index_of, member=True)


# ---------------------------------------------------------------------------------------------
# regex


def _compile(pattern: str) -> Any:
    """The library compiles the pattern on each call and labels a failure (a constant
    pattern fails earlier, when the program is built, without the label)."""
    try:
        return compile_re2(pattern)
    except EvalError as e:
        raise EvalError(f"Illegal regex: {e.message}") from None


def _find(s: str, pattern: str) -> str:
    m = _compile(pattern).search(s)
    return "" if m is None else m.group(0)


def _find_all(s: str, pattern: str, n: int = -1) -> list[str]:
    r = _compile(pattern)
    if n == 0:
        return []
    out: list[str] = []
    pos = 0
    prev_end = -1
    while pos <= len(s):
        m = r.search(s, pos)
        if m is None:
            break
        start, end = m.span()
        if start == end and start == prev_end:
            pos = start + 1
            continue
        out.append(m.group(0))
        if 0 < n <= len(out):
            break
        prev_end = end
        pos = end if end > start else end + 1
    return out


def declare_regex(env: Env) -> None:
    S = T.STRING
    fn(env, "find", "string_find_string", [S, S], S, _find, member=True)
    fn(env, "findAll", "string_find_all_string", [S, S], T.list_of(S), _find_all, member=True)
    fn(env, "findAll", "string_find_all_string_int", [S, S, T.INT], T.list_of(S), _find_all, member=True)


# ---------------------------------------------------------------------------------------------
# DRA includes()


def includes(target: Any, arg: Any) -> bool:
    """``<attr>.includes(x)``: membership for list attributes, equality for scalars.

    Upstream only looks at the first 48 list items and reports longer lists as an error.
    """
    if isinstance(target, list | tuple):
        if len(target) > INCLUDES_MAX:
            raise EvalError(
                f"'includes' function cannot be applied to lists longer than {INCLUDES_MAX} values"
            )
        return any(_eq_or_false(e, arg) for e in target)
    return _eq_or_false(target, arg)


def _eq_or_false(a: Any, b: Any) -> bool:
    try:
        return equal(a, b)
    except EvalError:
        return False


def declare_includes(env: Env) -> None:
    fn(env, "includes", "dra_includes_dyn_dyn", [T.DYN_T, T.DYN_T], T.BOOL, includes, member=True)


__all__ = ["INCLUDES_MAX", "go_type_name", "parse_quantity", "parse_semver"]
