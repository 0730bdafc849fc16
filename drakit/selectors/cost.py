"""Worst-case cost estimation (cel-go ``checker/cost.go`` + Kubernetes ``library/cost.go``).

The API server rejects new selectors whose estimated cost exceeds 1,000,000, and upstream's
tests pin the estimates, so this mirrors cel-go's estimator rule by rule: literals 0,
identifiers and field selections 1, list/map/struct literals 10/30/40, ``&&``/``||`` as
min(lhs)..sum, comprehensions as range size × (condition + step), string operations scaled
by 0.1 per character and regexes by 0.25, plus the Kubernetes library costs and DRA's
``includes`` (48).  Sizes come from literals and from the DRA size hints (attribute values 64,
domains 63, ids 32, driver 63, maps 32 entries), looked up by field path exactly as
``dynamic-resource-allocation/cel`` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

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
from drakit.selectors.parser import ACCU
from drakit.selectors.types import CelType

# Quantity library functions that cost 1 whatever their arguments (apiserver library cost.go);
# the estimator and the runtime tracker both use this set.
UNIT_COST_QUANTITY_FUNCTIONS = frozenset(
    ("sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub")
)

# Nominal-cost functions of the IP, CIDR, URL and format libraries (shared with the runtime).
NET_UNIT_COST_FUNCTIONS = frozenset(
    (
        "masked",
        "prefixLength",
        "family",
        "isUnspecified",
        "isLoopback",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "isGlobalUnicast",
        "format.named",
        "getScheme",
        "getHostname",
        "getHost",
        "getPort",
        "getEscapedPath",
        "getQuery",
    )
)
MAX_FORMAT_SIZE = 64  # apiserver cel.MaxFormatSize
MAX_NAME_FORMAT_REGEX_SIZE = 128  # apiserver cel.MaxNameFormatRegexSize

U64 = (1 << 64) - 1
STRING_FACTOR = 0.1
REGEX_FACTOR = 0.25


def _add(a: int, b: int) -> int:
    return min(a + b, U64)


def _mul(a: int, b: int) -> int:
    return min(a * b, U64)


def _by_factor(x: int, f: float) -> int:
    """cel-go's multiplyByCostFactor, in float64 as Go computes it (even for a factor of 1)."""
    xf = float(x)
    if xf > 0 and f > 0 and xf > U64 / f:
        return U64
    c = math.ceil(xf * f)
    return U64 if c >= 2**64 else c


@dataclass(frozen=True)
class Est:
    """A (min, max) estimate, used both for costs and for sizes."""

    min: int
    max: int

    def add(self, o: Est) -> Est:
        return Est(_add(self.min, o.min), _add(self.max, o.max))

    def mul(self, o: Est) -> Est:
        return Est(_mul(self.min, o.min), _mul(self.max, o.max))

    def union(self, o: Est) -> Est:
        return Est(min(self.min, o.min), max(self.max, o.max))

    def by_factor(self, f: float) -> Est:
        return Est(_by_factor(self.min, f), _by_factor(self.max, f))


ZERO = Est(0, 0)
ONE = Est(1, 1)
UNKNOWN = Est(0, U64)


@dataclass
class SizeNode:
    """Declared maximum sizes of a variable's parts (cel-go DeclType.MaxElements)."""

    max_elements: int = 0
    fields: dict[str, SizeNode] = field(default_factory=dict)
    elem: SizeNode | None = None
    key: SizeNode | None = None
    #: any field name selects this node (DRA: every attribute has the same max size)
    any_field: SizeNode | None = None


@dataclass(frozen=True)
class _Local:
    path: tuple[str, ...] | None
    size: Est | None
    entry: tuple[str, Est, Est] | None  # (container kind, key size, value size)


def _is_scalar(t: CelType) -> bool:
    if t.kind in (T.BOOL_K, T.DOUBLE_K, T.DURATION_K, T.INT_K, T.TIMESTAMP_K, T.UINT_K):
        return True
    if t.kind == T.OPAQUE_K and t.name == "optional_type":
        return _is_scalar(t.params[0])
    return False


class Coster:
    def __init__(self, checked: CheckedExpr, roots: dict[str, SizeNode]) -> None:
        self.c = checked
        self.roots = roots
        self.paths: dict[int, tuple[str, ...]] = {}
        self.sizes: dict[int, Est] = {}
        self.entries: dict[int, tuple[str, Est, Est]] = {}
        self.locals: dict[str, list[_Local]] = {}

    # sizes ---------------------------------------------------------------------------------
    def type_of(self, e: Expr) -> CelType:
        return self.c.types.get(e.id, T.DYN_T)

    def path_size(self, path: tuple[str, ...] | None) -> Est | None:
        if not path or path[0] not in self.roots:
            return None
        node: SizeNode | None = self.roots[path[0]]
        for name in path[1:]:
            assert node is not None
            if name in ("@items", "@values"):
                node = node.elem
            elif name == "@keys":
                node = node.key
            elif name in node.fields:
                node = node.fields[name]
            elif node.any_field is not None:
                node = node.any_field
            else:
                return None
            if node is None:
                return None
        assert node is not None
        return Est(0, node.max_elements)

    def computed(self, e: Expr) -> Est | None:
        if isinstance(e, Literal):
            v = e.value
            n = len(v) if isinstance(v, str | bytes) else 1
            return Est(n, n)
        if isinstance(e, CreateList):
            return Est(len(e.elements), len(e.elements))
        if isinstance(e, CreateMap):
            return Est(len(e.entries), len(e.entries))
        return self.sizes.get(e.id)

    def size(self, e: Expr) -> Est:
        s = self.computed(e)
        if s is not None:
            return s
        if _is_scalar(self.type_of(e)):
            return ONE
        s = self.path_size(self.paths.get(e.id))
        return s if s is not None else UNKNOWN

    def lib_size(self, e: Expr) -> Est:
        """Kubernetes CostEstimator.sizeEstimate: computed, else declared, else unknown."""
        s = self.computed(e)
        if s is not None:
            return s
        s = self.path_size(self.paths.get(e.id))
        return s if s is not None else UNKNOWN

    def entry(self, e: Expr) -> tuple[str, Est, Est] | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if isinstance(e, Ident):
            stack = self.locals.get(e.name)
            if stack:
                return stack[-1].entry
        return None

    # costs ---------------------------------------------------------------------------------
    def cost(self, e: Expr) -> Est:
        if isinstance(e, Literal):
            return ZERO
        if isinstance(e, Ident):
            stack = self.locals.get(e.name)
            if stack:
                loc = stack[-1]
                if loc.path is not None:
                    self.paths[e.id] = loc.path
                if loc.size is not None:
                    self.sizes[e.id] = loc.size
            else:
                self.paths[e.id] = (self.c.idents.get(e.id, e.name),)
            return ONE
        if isinstance(e, Select):
            if e.test_only:  # has(): the Kubernetes base environment sets PresenceTestHasCost(false)
                return self.cost(e.operand)
            if e.id in self.c.idents:  # qualified variable name
                self.paths[e.id] = tuple(self.c.idents[e.id].split("."))
                return ONE
            s = self.cost(e.operand)
            if self.type_of(e.operand).kind in (T.MAP_K, T.STRUCT_K, T.PARAM_K):
                s = s.add(ONE)
            p = self.paths.get(e.operand.id)
            if p is not None:
                self.paths[e.id] = (*p, e.field)
            return s
        if isinstance(e, Call):
            return self.cost_call(e)
        if isinstance(e, CreateList):
            s = Est(10, 10)
            item: Est | None = None
            for x in e.elements:
                s = s.add(self.cost(x))
                xs = self.size(x)
                item = xs if item is None else item.union(xs)
            self.entries[e.id] = ("list", ONE, item if item is not None else ZERO)
            return s
        if isinstance(e, CreateMap):
            s = Est(30, 30)
            ks: Est | None = None
            vs: Est | None = None
            for ent in e.entries:
                s = s.add(self.cost(ent.key)).add(self.cost(ent.value))
                k, v = self.size(ent.key), self.size(ent.value)
                ks = k if ks is None else ks.union(k)
                vs = v if vs is None else vs.union(v)
            self.entries[e.id] = ("map", ks or ZERO, vs or ZERO)
            return s
        if isinstance(e, CreateStruct):
            s = Est(40, 40)
            for f in e.fields:
                s = s.add(self.cost(f.value))
            return s
        if isinstance(e, Comprehension):
            if self._is_bind(e):
                return self.cost_bind(e)
            return self.cost_comprehension(e)
        return ZERO

    def _push(self, name: str, loc: _Local) -> None:
        self.locals.setdefault(name, []).append(loc)

    def _pop(self, name: str) -> None:
        self.locals[name].pop()

    def _local_for(self, e: Expr) -> _Local:
        return _Local(self.paths.get(e.id), self.computed(e), self.entry(e))

    @staticmethod
    def _is_bind(e: Comprehension) -> bool:
        return (
            isinstance(e.iter_range, CreateList)
            and not e.iter_range.elements
            and isinstance(e.loop_cond, Literal)
            and e.loop_cond.value is False
            and e.accu_var != ACCU
        )

    def cost_bind(self, e: Comprehension) -> Est:
        s = self.cost(e.iter_range).add(self.cost(e.accu_init))
        self._push(e.accu_var, self._local_for(e.accu_init))
        s = s.add(self.cost(e.result))
        self._pop(e.accu_var)
        # cel-go copies the result's size (computeSize: computed, declared by path, or fixed
        # for scalar types) and its entry sizes -- after dropping the bound variable, so a
        # result that is a bare identifier has no size of its own unless its type is scalar.
        size = None if isinstance(e.result, Ident) else self.computed(e.result)
        if size is None:
            size = self.path_size(self.paths.get(e.result.id))
        if size is None and _is_scalar(self.type_of(e.result)):
            size = ONE
        if size is not None:
            self.sizes[e.id] = size
        entry = None if isinstance(e.result, Ident) else self.entries.get(e.result.id)
        if entry is not None:
            self.entries[e.id] = entry
        return s

    def cost_comprehension(self, e: Comprehension) -> Est:
        s = self.cost(e.iter_range).add(self.cost(e.accu_init))
        self._push(e.accu_var, self._local_for(e.accu_init))
        rng = e.iter_range
        ent = self.entry(rng)
        kind = (
            ent[0]
            if ent
            else (
                "list"
                if self.type_of(rng).kind == T.LIST_K
                else "map"
                if self.type_of(rng).kind == T.MAP_K
                else ""
            )
        )
        path = self.paths.get(rng.id)

        def sub(p: str) -> tuple[str, ...] | None:
            return (*path, p) if path is not None else None

        if e.iter_var2:
            self._push(
                e.iter_var,
                _Local(sub("@indices" if kind == "list" else "@keys"), ent[1] if ent else None, None),
            )
            self._push(
                e.iter_var2,
                _Local(sub("@items" if kind == "list" else "@values"), ent[2] if ent else None, None),
            )
        elif kind == "list":
            self._push(e.iter_var, _Local(sub("@items"), ent[2] if ent else None, None))
        else:
            self._push(e.iter_var, _Local(sub("@keys"), ent[1] if ent else None, None))
        loop = self.cost(e.loop_cond)
        step = self.cost(e.loop_step)
        self._pop(e.iter_var)
        if e.iter_var2:
            self._pop(e.iter_var2)
        s = s.add(self.cost(e.result))
        self._pop(e.accu_var)
        rcnt = self.size(rng)
        s = s.add(rcnt.mul(step.add(loop)))
        if isinstance(e.accu_init, Literal):
            sz = self.computed(e.accu_init)
            if sz is not None:
                self.sizes[e.id] = sz
        elif isinstance(e.accu_init, CreateList | CreateMap):
            self.sizes[e.id] = rcnt
            # A step that builds a container (map/filter append to the accumulator) passes its
            # element sizes on to the result, so chained macros keep them.
            step_entry = self.entries.get(e.loop_step.id)
            if step_entry is not None:
                self.entries[e.id] = step_entry
        return s

    def cost_call(self, e: Call) -> Est:
        if e.function == "dyn" and len(e.args) == 1 and e.target is None:
            s = ONE.add(self.cost(e.args[0]))
            a = e.args[0]
            # cel-go copies the argument's computed size (literal, declared or scalar type):
            # dyn(1) == dyn(2) is a scalar comparison, not one of unknown size.
            size = self.size(a)
            if size != UNKNOWN:
                self.sizes[e.id] = size
            if a.id in self.paths:
                self.paths[e.id] = self.paths[a.id]
            return s
        arg_costs = [self.cost(a) for a in e.args]
        ids = self.c.overloads.get(e.id, [])
        if not ids:
            return ZERO
        receiver = self._target(e)
        target_cost = self.cost(receiver) if receiver is not None else ZERO
        fn_cost: Est | None = None
        result_size: Est | None = None
        for oid in ids:
            cost, rsize = self.function_cost(e, oid, arg_costs)
            fn_cost = cost if fn_cost is None else fn_cost.union(cost)
            if rsize is not None:
                result_size = rsize if result_size is None else result_size.union(rsize)
            if oid in ("index_list", "index_map") and e.args:
                p = self.paths.get(e.args[0].id)
                if p is not None:
                    self.paths[e.id] = (*p, "@items" if oid == "index_list" else "@values")
                ent = self.entry(e.args[0])
                if ent is not None:
                    result_size = ent[2]
        if result_size is not None:
            self.sizes[e.id] = result_size
        assert fn_cost is not None
        return target_cost.add(fn_cost)

    def _target(self, e: Call) -> Expr | None:
        """The receiver, or None for a namespaced global (``optional.of``, ``lists.range``)."""
        resolved = self.c.functions.get(e.id, e.function)
        if e.target is not None and resolved != e.function and "." in resolved:
            return None
        return e.target

    def function_cost(self, e: Call, oid: str, arg_costs: list[Est]) -> tuple[Est, Est | None]:
        args = e.args
        target = self._target(e)
        arg_sum = ZERO
        for a in arg_costs:
            arg_sum = arg_sum.add(a)
        lib = self.overload_cost(oid, target, args)
        if lib is None:
            lib = self.library_cost(self.c.functions.get(e.id, e.function), oid, target, args)
        if lib is not None:
            return lib[0].add(arg_sum), lib[1]
        if oid in ("logical_and", "logical_or"):
            lhs, rhs = arg_costs
            return Est(lhs.min, lhs.add(rhs).max), None
        if oid == "conditional":
            size = self.size(args[1]).union(self.size(args[2]))
            ea, eb = self.entry(args[1]), self.entry(args[2])
            if ea is not None and eb is not None:
                self.entries[e.id] = (ea[0], ea[1].union(eb[1]), ea[2].union(eb[2]))
            return arg_costs[0].add(arg_costs[1].union(arg_costs[2])), size
        operands = ([target] if target is not None else []) + list(args)
        if oid in ("string_format",) and target is not None:
            return self.size(target).by_factor(STRING_FACTOR).add(arg_sum), None
        if oid in ("string_to_bytes", "bytes_to_string", "strings_quote"):
            sz = self.size(operands[0])
            # cel-go computes these result sizes with plain (wrapping) uint64 arithmetic.
            if oid == "string_to_bytes":
                result = Est(sz.min, (sz.max * 4) % 2**64)
            elif oid == "bytes_to_string":
                result = Est(sz.min // 4, sz.max)
            else:
                result = Est((sz.min + 2) % 2**64, (sz.max * 2 + 2) % 2**64)
            return sz.by_factor(STRING_FACTOR).add(arg_sum), result
        if oid in ("starts_with_string", "ends_with_string") and len(operands) == 2:
            return self.size(operands[1]).by_factor(STRING_FACTOR).add(arg_sum), None
        if oid == "in_list" and len(args) == 2:
            return self.size(args[1]).by_factor(1).add(arg_sum), None
        if oid in ("matches", "matches_string") and len(operands) == 2:
            s = self.size(operands[0]).add(ONE).by_factor(STRING_FACTOR)
            r = self.size(operands[1]).by_factor(REGEX_FACTOR)
            return s.mul(r).add(arg_sum), None
        if oid == "contains_string" and len(operands) == 2:
            s = self.size(operands[0]).by_factor(STRING_FACTOR)
            r = self.size(operands[1]).by_factor(STRING_FACTOR)
            return s.mul(r).add(arg_sum), None
        if oid in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            size = self.size(args[0]).add(self.size(args[1]))
            ea, eb = self.entry(args[0]), self.entry(args[1])
            if ea is not None and eb is not None:
                self.entries[e.id] = (ea[0], ea[1].union(eb[1]), ea[2].union(eb[2]))
            if oid == "add_list":
                return ONE.add(arg_sum), size
            return size.by_factor(STRING_FACTOR).add(arg_sum), size
        if oid in _STRING_COMPARE and len(args) == 2:
            lhs, rhs = self.size(args[0]), self.size(args[1])
            smallest = min(lhs.max, rhs.max)
            return Est(1 if smallest > 0 else 0, smallest).by_factor(STRING_FACTOR).add(arg_sum), None
        return ONE.add(arg_sum), None

    def overload_cost(self, oid: str, target: Expr | None, args: list[Expr]) -> tuple[Est, Est | None] | None:
        """Per-overload estimators of cel-go's ext libraries (lists v3, sets), consulted first."""
        if oid in ("list_sets_contains_list", "list_sets_intersects_list", "list_sets_equivalent_list"):
            if len(args) != 2:
                return None
            factor = 2 if oid == "list_sets_equivalent_list" else 1
            return self.lib_size(args[0]).mul(self.lib_size(args[1])).by_factor(factor).add(ONE), None
        if oid == "lists_range" and target is None and len(args) == 1:
            return _allocating_list(1, _fixed(_literal_uint(args[0], U64)))
        if target is None:
            return None
        if oid == "list_slice" and len(args) == 2:
            sz = self.lib_size(target)
            start, end = _literal_uint(args[0], 0), _literal_uint(args[1], sz.max)
            return _allocating_list(1, _fixed((end - start) % (U64 + 1)))  # Go's uint64 wrap-around
        if oid in ("list_flatten", "list_flatten_int") and len(args) <= 1:
            depth = _literal_uint(args[0], U64) if args else 1
            return _allocating_list(depth, self.lib_size(target))
        if oid == "list_reverse" and not args:
            return _allocating_list(1, self.lib_size(target))
        if oid == "list_distinct" and not args:
            sz = self.lib_size(target)
            return _allocating_list(2, sz.mul(sz))
        if oid.endswith("_sortByAssociatedKeys") and target is not None and len(args) == 1:
            sz = self.lib_size(args[0])  # ext.Lists sorts by the keys list
            elem = oid[len("list_") : -len("_sortByAssociatedKeys")]
            return _allocating_list(2 + (STRING_FACTOR if elem in ("string", "bytes") else 0), sz.mul(sz))
        if oid.startswith("list_") and oid.endswith("_sort") and not args:
            sz = self.lib_size(target)
            elem = oid[len("list_") : -len("_sort")]
            return _allocating_list(2 + (STRING_FACTOR if elem in ("string", "bytes") else 0), sz.mul(sz))
        return None

    def library_cost(
        self, fn: str, oid: str, target: Expr | None, args: list[Expr]
    ) -> tuple[Est, Est | None] | None:
        if fn in ("quantity", "isQuantity", "semver", "isSemver") and args:
            return self.lib_size(args[0]).by_factor(STRING_FACTOR), None
        if fn in ("major", "minor", "patch"):
            return ONE, None
        if fn == "_==_" and len(args) == 2:
            lt, rt = self.type_of(args[0]), self.type_of(args[1])
            if lt == rt and lt.name in ("kubernetes.Quantity", "kubernetes.Semver", "net.IP", "net.CIDR"):
                return ONE, None
            if lt == rt == T.NAMED_FORMAT:
                return Est(1, MAX_FORMAT_SIZE).by_factor(STRING_FACTOR), None
            if lt == rt == T.URL:
                # Upstream reads the right operand's size twice (library cost.go).
                rs = self.computed(args[1])
                return Est(1, rs.max if rs is not None else 1).by_factor(STRING_FACTOR), None
        net = self.net_library_cost(fn, oid, args)
        if net is not None:
            return net, None
        if fn == "includes" and oid == "dra_includes_dyn_dyn" and target is not None:
            return Est(0, 48), None
        if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
            tt = self.type_of(target)
            if tt.kind == T.LIST_K:
                el = ONE
                et = tt.params[0]
                if et.kind in (T.STRING_K, T.BYTES_K):
                    ep = self.paths.get(target.id)
                    es = self.path_size((*ep, "@items") if ep else None) or UNKNOWN
                    el = el.add(es.by_factor(STRING_FACTOR))
                return self.lib_size(target).mul(el), None
            return self.lib_size(target).by_factor(STRING_FACTOR), None
        if fn == "url" and len(args) == 1:
            sz = self.lib_size(args[0])
            return sz.by_factor(STRING_FACTOR), sz
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            sz = self.lib_size(target)
            return sz.by_factor(STRING_FACTOR), sz
        if fn == "replace" and target is not None and len(args) >= 2:
            sz = self.lib_size(target)
            return sz.by_factor(2 * STRING_FACTOR), _replace_size(
                sz, self.lib_size(args[0]), self.lib_size(args[1])
            )
        if fn == "split" and target is not None:
            sz = self.lib_size(target)
            limit = args[1] if len(args) > 1 else None
            most = sz.max
            if isinstance(limit, Literal) and type(limit.value) is int:
                most = limit.value % (U64 + 1)  # a literal limit bounds the result (uint64 cast)
            return sz.by_factor(2 * STRING_FACTOR), Est(0, most)
        if fn == "join" and target is not None:
            ls = self.lib_size(target)
            sz = ZERO  # upstream only sizes the elements of a typed list; a dyn one adds nothing
            if self.type_of(target).params:
                ep = self.paths.get(target.id)
                sz = ls.mul(self.path_size((*ep, "@items") if ep else None) or UNKNOWN)
            if args:
                sep = self.lib_size(args[0])
                sz = sz.add(sep.mul(Est(max(ls.min - 1, 0), max(ls.max - 1, 0))))
            return sz.by_factor(STRING_FACTOR), sz
        if fn in ("find", "findAll") and target is not None and args:
            sz = self.lib_size(target)
            s = sz.add(ONE).by_factor(STRING_FACTOR)
            r = self.lib_size(args[0]).by_factor(REGEX_FACTOR)
            return s.mul(r), Est(0, sz.max)
        if fn in UNIT_COST_QUANTITY_FUNCTIONS:
            return ONE, None
        return None


    def net_library_cost(self, fn: str, oid: str, args: list[Expr]) -> Est | None:
        """The IP, CIDR, URL and format libraries' estimates (apiserver library cost.go)."""
        if fn in ("cidr", "isIP", "isCIDR") or (fn == "ip" and oid == "string_to_ip"):
            return self.lib_size(args[0]).by_factor(STRING_FACTOR) if args else None
        if fn == "ip.isCanonical" and args:
            return self.lib_size(args[0]).by_factor(2 * STRING_FACTOR)
        if fn in NET_UNIT_COST_FUNCTIONS or oid == "cidr_ip":
            return ONE
        if fn in ("containsIP", "containsCIDR") and args:
            # Two 4- or 16-byte addresses compared; containsCIDR masks and compares the bits too.
            cost = Est(8, 32).by_factor(STRING_FACTOR)
            if fn == "containsCIDR":
                cost = cost.add(Est(4, 16).by_factor(STRING_FACTOR)).add(ONE)
            if oid.endswith("_string"):
                cost = cost.add(self.lib_size(args[0]).by_factor(STRING_FACTOR))
            return cost
        if fn == "validate" and oid == "format-validate" and args:
            return self.lib_size(args[0]).by_factor(STRING_FACTOR).by_factor(MAX_NAME_FORMAT_REGEX_SIZE * REGEX_FACTOR)
        return None


def _replace_size(sz: Est, old: Est, new: Est) -> Est:
    """Result size of ``s.replace(old, new)`` (Kubernetes library cost.go): the most and the
    fewest replacements that can happen, times the replacement, plus what is kept."""
    if old.min == 0:  # an empty needle surrounds every character
        count_max, kept_max = (sz.max + 1 if sz.max < U64 else sz.max), sz.max
    elif new.max <= old.min:
        count_max, kept_max = 0, sz.max
    else:
        count_max, kept_max = math.ceil(sz.max / old.min), 0
    if old.max == 0:
        count_min, kept_min = (sz.min + 1 if sz.min < U64 else sz.min), sz.min
    elif old.max <= new.min:
        count_min, kept_min = 0, sz.min
    else:
        count_min, kept_min = math.ceil(sz.min / old.max), 0
    return Est(count_min, count_max).mul(new).add(Est(kept_min, kept_max))


def _literal_uint(e: Expr, default: int) -> int:
    """cel-go ext ``nodeAsUintValue``: an int literal (negative counts as 0), else ``default``."""
    if isinstance(e, Literal) and type(e.value) is int:
        return max(e.value, 0)
    return default


def _fixed(n: int) -> Est:
    return Est(n, n)


def _allocating_list(factor: float, size: Est) -> tuple[Est, Est | None]:
    """cel-go ext ``estimateAllocatingListCall``: size × factor, plus the call and the list."""
    return size.by_factor(factor).add(ONE).add(Est(10, 10)), size


_STRING_COMPARE = frozenset(
    f"{op}_{t}" for op in ("less", "greater", "less_equals", "greater_equals") for t in ("string", "bytes")
) | {"equals", "not_equals"}


def estimate(checked: CheckedExpr, roots: dict[str, SizeNode]) -> Est:
    return Coster(checked, roots).cost(checked.expr)
