"""cel-go extension libraries the Kubernetes base environment enables.

ext.Strings (v2 + ``reverse``), ext.Sets, ext.Lists (v3 subset), optional types and the
internal helpers the comprehension macros expand into (``cel.@mapInsert``,
``@sortByAssociatedKeys``).
"""

from __future__ import annotations

from typing import Any

from drakit.selectors import types as T
from drakit.selectors.decls import Env
from drakit.selectors.library import fn
from drakit.selectors.library.formatting import format_string
from drakit.selectors.types import OPTIONAL_NONE, EvalError, Optional, Uint, map_key, unmap_key
from drakit.selectors.values import compare, equal, in_list, size, type_name

A = T.param("A")
B = T.param("B")
LA = T.list_of(A)
S = T.STRING
N = T.INT
BOOL = T.BOOL


# ---------------------------------------------------------------------------------------------
# strings


def _char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise EvalError(f"index out of range: {i}")
    return s[i : i + 1]


def _index_of(s: str, sub: str, start: int = 0) -> int:
    """cel-go ext.Strings indexOf (``indexOfOffset``: past the end is -1, not an error)."""
    if start < 0:
        raise EvalError(f"index out of range: {start}")
    if sub == "":  # matches at the offset, clamped to the end
        return min(start, len(s))
    return -1 if start >= len(s) else s.find(sub, start)


def _last_index_of(s: str, sub: str, start: int | None = None) -> int:
    """cel-go ext.Strings lastIndexOf (``lastIndexOfOffset`` for the offset form)."""
    if start is None:
        return s.rfind(sub)
    if start < 0:
        raise EvalError(f"index out of range: {start}")
    if sub == "":  # matches at the offset, clamped to the end
        return min(start, len(s))
    if start >= len(s):
        return -1
    return s.rfind(sub, 0, min(start, len(s) - len(sub)) + len(sub))


def _lower_ascii(s: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def _upper_ascii(s: str) -> str:
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in s)


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    if n == 0:
        return s
    return s.replace(old, new, n if n > 0 else -1)


def _split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if n > 0 and len(chars) > n:
            chars = [*chars[: n - 1], "".join(chars[n - 1 :])]
        return chars
    if n < 0:
        return s.split(sep)
    return s.split(sep, n - 1)


def _substring(s: str, start: int, end: int | None = None) -> str:
    # cel-go's order of checks: the range first (two-argument form only), then each bound.
    if end is not None and start > end:
        raise EvalError(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(s):
        raise EvalError(f"index out of range: {start}")
    if end is None:
        end = len(s)
    if end < 0 or end > len(s):
        raise EvalError(f"index out of range: {end}")
    return s[start:end]


_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _trim(s: str) -> str:
    return s.strip(_GO_SPACE)


def _join(lst: list[str], sep: str = "") -> str:
    return sep.join(lst)


def _quote(s: str) -> str:
    out = ['"']
    for c in s:
        o = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
        elif c in "\a\b\f\n\r\t\v":
            out.append(
                {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}[c]
            )
        elif 0xD800 <= o <= 0xDFFF:
            out.append("\ufffd")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def declare_strings(env: Env) -> None:
    LS = T.list_of(S)
    fn(env, "charAt", "string_char_at_int", [S, N], S, _char_at, member=True)
    fn(env, "indexOf", "string_index_of_string", [S, S], N, _index_of, member=True)
    fn(env, "indexOf", "string_index_of_string_int", [S, S, N], N, _index_of, member=True)
    fn(env, "lastIndexOf", "string_last_index_of_string", [S, S], N, _last_index_of, member=True)
    fn(env, "lastIndexOf", "string_last_index_of_string_int", [S, S, N], N, _last_index_of, member=True)
    fn(env, "lowerAscii", "string_lower_ascii", [S], S, _lower_ascii, member=True)
    fn(env, "upperAscii", "string_upper_ascii", [S], S, _upper_ascii, member=True)
    fn(env, "replace", "string_replace_string_string", [S, S, S], S, _replace, member=True)
    fn(env, "replace", "string_replace_string_string_int", [S, S, S, N], S, _replace, member=True)
    fn(env, "split", "string_split_string", [S, S], LS, _split, member=True)
    fn(env, "split", "string_split_string_int", [S, S, N], LS, _split, member=True)
    fn(env, "substring", "string_substring_int", [S, N], S, _substring, member=True)
    fn(env, "substring", "string_substring_int_int", [S, N, N], S, _substring, member=True)
    fn(env, "trim", "string_trim", [S], S, _trim, member=True)
    fn(env, "join", "list_join", [LS], S, _join, member=True)
    fn(env, "join", "list_join_string", [LS, S], S, _join, member=True)
    fn(env, "strings.quote", "strings_quote", [S], S, _quote)
    fn(env, "format", "string_format", [S, T.list_of(T.DYN_T)], S, format_string, member=True)
    # No string ``reverse()``: it arrived with strings version 3, and the Kubernetes base
    # environment declares ``ext.Strings(StringsVersion(2))``.


# ---------------------------------------------------------------------------------------------
# sets


def declare_sets(env: Env) -> None:
    fn(
        env,
        "sets.contains",
        "list_sets_contains_list",
        [LA, LA],
        BOOL,
        lambda a, b: all(in_list(x, a) for x in b),
    )
    fn(
        env,
        "sets.equivalent",
        "list_sets_equivalent_list",
        [LA, LA],
        BOOL,
        lambda a, b: all(in_list(x, a) for x in b) and all(in_list(x, b) for x in a),
    )
    fn(
        env,
        "sets.intersects",
        "list_sets_intersects_list",
        [LA, LA],
        BOOL,
        lambda a, b: any(in_list(x, a) for x in b),
    )


# ---------------------------------------------------------------------------------------------
# lists (ext.Lists v3 subset)


MAX_RANGE_SIZE = 1_000_000  # cel-go ext.Lists' default ListsMaxRangeSize


def _range(n: int) -> list[int]:
    if n < 0:
        raise EvalError(f"lists.range: size must be non-negative, got {n}")
    if n > MAX_RANGE_SIZE:
        raise EvalError(f"lists.range: size {n} exceeds maximum allowed ({MAX_RANGE_SIZE})")
    return list(range(n))


def _slice(lst: list[Any], start: int, end: int) -> list[Any]:
    if start < 0 or end < 0:
        raise EvalError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise EvalError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(lst):
        raise EvalError(f"cannot slice({start}, {end}), list is length {len(lst)}")
    return list(lst[start:end])


def _flatten(lst: list[Any], depth: int = 1) -> list[Any]:
    if depth < 0:
        raise EvalError("level must be non-negative")
    out: list[Any] = []
    for x in lst:
        if isinstance(x, list | tuple) and depth > 0:
            out.extend(_flatten(list(x), depth - 1))
        else:
            out.append(x)
    return out


def _distinct(lst: list[Any]) -> list[Any]:
    out: list[Any] = []
    for x in lst:
        if not in_list(x, out):
            out.append(x)
    return out


def _sort(lst: list[Any]) -> list[Any]:
    import functools

    return sorted(lst, key=functools.cmp_to_key(compare))


def _sort_by_keys(lst: list[Any], keys: list[Any]) -> list[Any]:
    import functools

    if len(lst) != len(keys):
        raise EvalError(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys list"
        )

    def by_key(i: int, j: int) -> int:
        return compare(keys[i], keys[j])

    order = sorted(range(len(lst)), key=functools.cmp_to_key(by_key))
    return [lst[i] for i in order]


def declare_lists_ext(env: Env) -> None:
    comparable = [T.INT, T.UINT, T.DOUBLE, T.BOOL, T.STRING, T.BYTES, T.DURATION, T.TIMESTAMP]
    fn(env, "lists.range", "lists_range", [N], T.list_of(N), _range)
    fn(env, "slice", "list_slice", [LA, N, N], LA, _slice, member=True)
    fn(env, "flatten", "list_flatten", [T.list_of(LA)], LA, _flatten, member=True)
    fn(env, "flatten", "list_flatten_int", [T.list_of(T.DYN_T), N], T.list_of(T.DYN_T), _flatten, member=True)
    fn(env, "distinct", "list_distinct", [LA], LA, _distinct, member=True)
    fn(env, "reverse", "list_reverse", [LA], LA, lambda lst: list(reversed(lst)), member=True)
    for t in comparable:
        fn(env, "sort", f"list_{t.name}_sort", [T.list_of(t)], T.list_of(t), _sort, member=True)
        fn(
            env,
            "@sortByAssociatedKeys",
            f"list_{t.name}_sortByAssociatedKeys",
            [LA, T.list_of(t)],
            LA,
            _sort_by_keys,
            member=True,
        )
    fn(
        env,
        "first",
        "list_first",
        [LA],
        T.optional_of(A),
        lambda lst: Optional(lst[0]) if lst else OPTIONAL_NONE,
        member=True,
    )
    fn(
        env,
        "last",
        "list_last",
        [LA],
        T.optional_of(A),
        lambda lst: Optional(lst[-1]) if lst else OPTIONAL_NONE,
        member=True,
    )


# ---------------------------------------------------------------------------------------------
# optionals


def _zero(v: Any) -> bool:
    if v is None:
        return True
    t = type(v)
    if t is bool:
        return not v
    if t in (int, Uint, float, str, bytes):
        return not v
    if isinstance(v, list | tuple | dict):
        return len(v) == 0
    return False


def _value(o: Optional) -> Any:
    if not o.present:
        raise EvalError("optional.none() dereference")
    return o.value


def _opt_index(c: Any, k: Any) -> Optional:
    if isinstance(c, dict):
        mk = map_key(k)
        # DRA's outer maps find every domain (an unknown one is an empty map)
        return Optional(c[mk]) if mk in c or hasattr(type(c), "__missing__") else OPTIONAL_NONE
    if isinstance(c, list | tuple):
        if type(k) in (int, Uint) or (type(k) is float and k == int(k)):
            i = int(k)
            return Optional(c[i]) if 0 <= i < len(c) else OPTIONAL_NONE
        raise EvalError("no such overload")
    if type(c) is Optional:
        if not c.present:
            return OPTIONAL_NONE
        return _opt_index(c.value, k)
    raise EvalError("no such overload")


def declare_optional(env: Env) -> None:
    OA = T.optional_of(A)
    V = T.param("V")
    K = T.param("K")
    fn(env, "optional.of", "optional_of", [A], OA, Optional)
    fn(
        env,
        "optional.ofNonZeroValue",
        "optional_ofNonZeroValue",
        [A],
        OA,
        lambda v: OPTIONAL_NONE if _zero(v) else Optional(v),
    )
    fn(env, "optional.none", "optional_none", [], OA, lambda: OPTIONAL_NONE)
    fn(env, "value", "optional_value", [OA], A, _value, member=True)
    fn(env, "hasValue", "optional_hasValue", [OA], BOOL, lambda o: o.present, member=True)
    fn(env, "or", "optional_or_optional", [OA, OA], OA, lambda a, b: a if a.present else b, member=True)
    fn(
        env,
        "orValue",
        "optional_orValue_value",
        [OA, A],
        A,
        lambda a, b: a.value if a.present else b,
        member=True,
    )
    fn(env, "_[?_]", "list_optindex_optional_int", [T.list_of(V), N], T.optional_of(V), _opt_index)
    fn(
        env,
        "_[?_]",
        "optional_list_optindex_optional_int",
        [T.optional_of(T.list_of(V)), N],
        T.optional_of(V),
        _opt_index,
    )
    fn(env, "_[?_]", "map_optindex_optional_value", [T.map_of(K, V), K], T.optional_of(V), _opt_index)
    fn(
        env,
        "_[?_]",
        "optional_map_optindex_optional_value",
        [T.optional_of(T.map_of(K, V)), K],
        T.optional_of(V),
        _opt_index,
    )
    fn(env, "_[_]", "optional_list_index_int", [T.optional_of(T.list_of(V)), N], T.optional_of(V), _opt_index)
    fn(
        env,
        "_[_]",
        "optional_map_index_value",
        [T.optional_of(T.map_of(K, V)), K],
        T.optional_of(V),
        _opt_index,
    )


# ---------------------------------------------------------------------------------------------
# macro helpers


def _map_insert(m: dict[Any, Any], k: Any, v: Any = None, *rest: Any) -> dict[Any, Any]:
    if isinstance(k, dict) and v is None:
        out = dict(m)
        for kk, vv in k.items():
            if kk in out:
                raise EvalError(f"insert failed: key {unmap_key(kk)} already exists")
            out[kk] = vv
        return out
    mk = map_key(k)
    if mk in m:
        raise EvalError(f"insert failed: key {unmap_key(mk)} already exists")
    out = dict(m)
    out[mk] = v
    return out


def declare_internal(env: Env) -> None:
    K = T.param("K")
    V = T.param("V")
    fn(env, "cel.@mapInsert", "@mapInsert_map_key_value", [T.map_of(K, V), K, V], T.map_of(K, V), _map_insert)
    fn(
        env,
        "cel.@mapInsert",
        "@mapInsert_map_map",
        [T.map_of(K, V), T.map_of(K, V)],
        T.map_of(K, V),
        _map_insert,
    )


__all__ = ["equal", "size", "type_name"]
