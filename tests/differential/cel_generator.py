"""Hypothesis strategies for the CEL differential test: realistic devices and typed expressions.

Written by hand because no library generates CEL: expressions come from a small typed
grammar (each production knows the CEL type it yields), so most of them compile and reach
the interesting runtime paths (quantity and semver libraries, list macros, overflow,
short-circuiting around errors), while a fraction is deliberately ill-typed or random text
to compare compile errors.  Devices are shaped like what the API server stores (valid
qualified names, valid semantic versions, parseable quantities), so a disagreement is about
CEL semantics, not input validation.  List-valued attributes only appear with the
``DRAListTypeAttributes`` gate on, as the API server drops them otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

DRIVERS = ("gpu.example.com", "dra.example.com", "x.y")
OTHER_DOMAINS = ("common.example.com", "vendor.io")
MISSING_DOMAIN = "missing.example.com"
ATTRIBUTE_IDS = (
    "model",
    "index",
    "memory",
    "healthy",
    "driverVersion",
    "numa",
    "family",
    "cores",
    "tags",
    "ok",
)
CAPACITY_IDS = ("memory", "cores", "bandwidth", "slots")
MISSING_ID = "absent"

INTS = (0, 1, -1, 2, 3, 7, 10, 42, 100, -100, 1024, 2**31, 2**53 + 1, 2**62, 2**63 - 1, -(2**63))
STRINGS = (
    "",
    "a100",
    "H100",
    "gpu-0",
    "a.b.c",
    "1.2.3",
    "10Gi",
    "ünï",
    "x",
    "A100-SXM4-80GB",
    "a,b,c",
    " sp ",
)
VERSIONS = (
    "0.0.1",
    "1.0.0",
    "1.2.3",
    "2.0.0-rc.1",
    "1.2.3+build.5",
    "10.20.30-alpha.1+meta",
    "1.0.0-alpha",
    "1.0.0-0.3.7",
)
SEMVER_TEXTS = (*VERSIONS, "1.2", "v1.2.3", "01.2.3", "1", "1.2.3.4", "", "1.2.x", "1.02.3")
QUANTITIES = (
    "0",
    "1",
    "100m",
    "1.5Gi",
    "1e3",
    "80Gi",
    "2Ki",
    "1k",
    "1M",
    "0.5",
    "1500m",
    "123456789",
    "1Ei",
    "3.5",
    "12e-3",
    "1000Mi",
    "1024Ki",
    "1.0",
    "01",
    "8E",
    "1n",
    "999999999999999999",
    "9223372036854775807",
    "0.1",
    "16Gi",
)
QUANTITY_TEXTS = (*QUANTITIES, "-1", "-1.5Gi", "1.5", "abc", "1GiB", "", "1e", "5e18", "1P", "1u")
REGEXES = ("^a", "[0-9]+", "gpu-.*", "(?i)h100", "^$", ".", "a|b", "\\\\d", "[", "x{2,}")
GATE_NAMES = ("DRAListTypeAttributes", "DRAConsumableCapacity")


@dataclass(frozen=True)
class CelCase:
    """One question for both engines: an expression, a device, an environment and gates."""

    expression: str
    device: dict[str, Any]
    environment: str  # "stored" | "new"
    gates: str  # "DRAListTypeAttributes=true,DRAConsumableCapacity=false"
    tags: tuple[str, ...] = field(default=(), compare=False)

    def request(self) -> dict[str, Any]:
        """The oracle's ``cel eval-batch`` request line."""
        return {
            "expression": self.expression,
            "device": self.device,
            "environment": self.environment,
            "featureGates": self.gates,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "expression": self.expression,
            "device": self.device,
            "environment": self.environment,
            "featureGates": self.gates,
        }


# --- devices -------------------------------------------------------------------------------


def _int_values() -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(INTS), st.integers(-1000, 1000))


def _string_values() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(STRINGS), st.text(alphabet="abcXYZ019-._ é", max_size=12))


@st.composite
def _attribute(draw: st.DrawFn, lists: bool) -> dict[str, Any]:
    kinds = ["int", "bool", "string", "version"]
    if lists:
        kinds += ["ints", "bools", "strings", "versions"]
    kind = draw(st.sampled_from(kinds))
    if kind == "int":
        return {"int": draw(_int_values())}
    if kind == "bool":
        return {"bool": draw(st.booleans())}
    if kind == "string":
        return {"string": draw(_string_values())}
    if kind == "version":
        return {"version": draw(st.sampled_from(VERSIONS))}
    if kind == "ints":
        return {"ints": draw(st.lists(_int_values(), min_size=1, max_size=5))}
    if kind == "bools":
        return {"bools": draw(st.lists(st.booleans(), min_size=1, max_size=4))}
    if kind == "strings":
        return {"strings": draw(st.lists(_string_values(), min_size=1, max_size=5))}
    return {"versions": draw(st.lists(st.sampled_from(VERSIONS), min_size=1, max_size=4))}


@st.composite
def devices(draw: st.DrawFn, lists: bool, consumable: bool) -> dict[str, Any]:
    """A v1 Device plus its ``driver``, in the oracle's device-file shape."""
    driver = draw(st.sampled_from(DRIVERS))
    attributes: dict[str, Any] = {}
    for _ in range(draw(st.integers(0, 6))):
        ident = draw(st.sampled_from(ATTRIBUTE_IDS))
        # Qualified names only with a foreign domain: "<driver>/id" next to "id" would be one
        # key twice, and which one wins is Go map order.
        name = ident if draw(st.integers(0, 3)) else f"{draw(st.sampled_from(OTHER_DOMAINS))}/{ident}"
        attributes[name] = draw(_attribute(lists))
    capacity: dict[str, Any] = {}
    for _ in range(draw(st.integers(0, 3))):
        ident = draw(st.sampled_from(CAPACITY_IDS))
        name = ident if draw(st.integers(0, 3)) else f"{OTHER_DOMAINS[0]}/{ident}"
        capacity[name] = {"value": draw(st.sampled_from(QUANTITIES))}
    device: dict[str, Any] = {"name": "dev-0", "driver": driver}
    if attributes:
        device["attributes"] = attributes
    if capacity:
        device["capacity"] = capacity
    if consumable and draw(st.booleans()):
        device["allowMultipleAllocations"] = draw(st.booleans())
    return device


# --- expressions ---------------------------------------------------------------------------

# Value types of the grammar.  "dyn" is an attribute of unknown type.
B, U, D, S, Q, V, LI, LS, DYN = "bool", "uint", "double", "string", "quantity", "semver", "li", "ls", "dyn"
I = "int"  # noqa: E741
TYPES = (B, I, U, D, S, Q, V, LI, LS)

_ATTR_TYPE = {
    "int": I,
    "bool": B,
    "string": S,
    "version": V,
    "ints": LI,
    "strings": LS,
    "bools": "lb",
    "versions": "lv",
}


@dataclass
class _Ctx:
    draw: st.DrawFn
    device: dict[str, Any]
    lists: bool
    scope: dict[str, str] = field(default_factory=dict)  # bound variable -> type
    counter: int = 0

    def pick(self, options: list[Any] | tuple[Any, ...]) -> Any:
        return self.draw(st.sampled_from(options))

    def chance(self, n: int) -> bool:
        """True about 1 time in ``n``."""
        return self.draw(st.integers(0, n - 1)) == 0

    def fresh(self) -> str:
        self.counter += 1
        return ("x", "y", "z", "w", "v", "u")[self.counter % 6] + (
            "" if self.counter < 6 else str(self.counter)
        )

    def attributes_of(self, t: str | None) -> list[tuple[str, str]]:
        """(domain, id) of the device's attributes of CEL type ``t`` (any type when None)."""
        out = []
        driver = self.device["driver"]
        for name, value in (self.device.get("attributes") or {}).items():
            kind = next(iter(value))
            if t is not None and _ATTR_TYPE[kind] != t:
                continue
            domain, _, ident = name.rpartition("/")
            out.append((domain or driver, ident))
        return out

    def capacities(self) -> list[tuple[str, str]]:
        out = []
        driver = self.device["driver"]
        for name in self.device.get("capacity") or {}:
            domain, _, ident = name.rpartition("/")
            out.append((domain or driver, ident))
        return out


def _quote(s: str) -> str:
    body = s.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{body}'"


def _domain_expr(c: _Ctx, root: str, domain: str) -> str:
    return f"device.{root}[{_quote(domain)}]"


def _member(c: _Ctx, base: str, ident: str) -> str:
    if c.chance(3):
        return f"{base}[{_quote(ident)}]"
    return f"{base}.{ident}"


def _lookup(c: _Ctx, root: str, pairs: list[tuple[str, str]]) -> str:
    """A lookup of an existing entry when there is one; sometimes a missing id or domain."""
    roll = c.draw(st.integers(0, 9))
    if pairs and roll < 7:
        domain, ident = c.pick(pairs)
    elif roll < 9:
        domain, ident = c.pick([c.device["driver"], *OTHER_DOMAINS]), MISSING_ID
    else:
        domain, ident = MISSING_DOMAIN, c.pick(ATTRIBUTE_IDS)
    return _member(c, _domain_expr(c, root, domain), ident)


def _attr(c: _Ctx, t: str | None) -> str:
    return _lookup(c, "attributes", c.attributes_of(t))


def _cap(c: _Ctx) -> str:
    return _lookup(c, "capacity", c.capacities())


def _var(c: _Ctx, t: str) -> str | None:
    names = [n for n, vt in c.scope.items() if vt == t]
    return c.pick(names) if names else None


def _leaf(c: _Ctx, t: str) -> str:
    var = _var(c, t)
    if var is not None and c.chance(2):
        return var
    if t == B:
        return c.pick(["true", "false", _attr(c, B), "device.allowMultipleAllocations"])
    if t == I:
        if c.chance(3):
            return _attr(c, I)
        n = c.draw(st.one_of(st.sampled_from(INTS), st.integers(-5, 20)))
        return str(n) if n >= 0 else f"{n}" if n != -(2**63) else "-9223372036854775808"
    if t == U:
        return c.pick(["0u", "1u", "2u", "10u", "18446744073709551615u", "9223372036854775808u"])
    if t == D:
        return c.pick(["0.0", "1.5", "-2.5", "1e308", "0.1", "3.0", "-0.0", "1e-300", "2.0"])
    if t == S:
        if c.chance(3):
            return _attr(c, S)
        if c.chance(6):
            return "device.driver"
        return _quote(c.draw(_string_values()))
    if t == Q:
        if c.chance(2):
            return _cap(c)
        return f"quantity({_quote(c.pick(QUANTITY_TEXTS))})"
    if t == V:
        if c.chance(2):
            return _attr(c, V)
        text = c.pick(SEMVER_TEXTS)
        return f"semver({_quote(text)}, true)" if c.chance(4) else f"semver({_quote(text)})"
    if t == LI:
        if c.lists and c.chance(2):
            return _attr(c, LI)
        return "[" + ", ".join(_leaf(c, I) for _ in range(c.draw(st.integers(0, 4)))) + "]"
    if t == LS:
        if c.lists and c.chance(2):
            return _attr(c, LS)
        return (
            "[" + ", ".join(_quote(c.draw(_string_values())) for _ in range(c.draw(st.integers(0, 4)))) + "]"
        )
    raise AssertionError(t)


def _elem(t: str) -> str:
    return I if t == LI else S


def _list_t(c: _Ctx) -> str:
    return c.pick([LI, LS])


def _comprehension(c: _Ctx, t: str, d: int) -> str:
    """A macro over a list, yielding ``t`` (bool or a list)."""
    lt = _list_t(c)
    target = _gen(c, lt, d - 1)
    var = c.fresh()
    c.scope[var] = _elem(lt)
    try:
        if t == B:
            macro = c.pick(["exists", "all", "exists_one"])
            if c.chance(4):
                v2 = c.fresh()
                c.scope[v2] = I
                try:
                    body = _gen(c, B, d - 1)
                finally:
                    del c.scope[v2]
                macro = c.pick(["exists", "all", "existsOne"])
                return f"{target}.{macro}({v2}, {var}, {body})"
            return f"{target}.{macro}({var}, {_gen(c, B, d - 1)})"
        if t == lt:
            return f"{target}.filter({var}, {_gen(c, B, d - 1)})"
        out = _elem(t)
        return f"{target}.map({var}, {_gen(c, out, d - 1)})"
    finally:
        del c.scope[var]


def _bind(c: _Ctx, t: str, d: int) -> str:
    bt = c.pick(TYPES)
    init = _gen(c, bt, d - 1)
    var = c.fresh()
    c.scope[var] = bt
    try:
        return f"cel.bind({var}, {init}, {_gen(c, t, d - 1)})"
    finally:
        del c.scope[var]


def _gen_bool(c: _Ctx, d: int) -> str:
    g = lambda t: _gen(c, t, d - 1)  # noqa: E731
    choice = c.draw(st.integers(0, 27))
    if choice == 0:
        return f"{g(B)} && {g(B)}"
    if choice == 1:
        return f"{g(B)} || {g(B)}"
    if choice == 2:
        return f"!{g(B)}" if c.chance(2) else f"!({g(B)})"
    if choice == 3:
        t = c.pick([I, I, S, D, U, B])
        return f"{g(t)} {c.pick(['==', '!=', '<', '<=', '>', '>='])} {g(t)}"
    if choice == 4:  # cross-type numeric comparisons
        a, b = c.pick([I, U, D]), c.pick([I, U, D])
        return f"{g(a)} {c.pick(['==', '!=', '<', '<=', '>', '>='])} {g(b)}"
    if choice == 5:  # presence
        return c.pick(
            [
                f"has({_attr(c, None)})",
                f"{_quote(c.pick([*ATTRIBUTE_IDS, MISSING_ID]))} in {_domain_expr(c, 'attributes', c.pick([c.device['driver'], *OTHER_DOMAINS, MISSING_DOMAIN]))}",
                f"{_quote(c.pick([c.device['driver'], *OTHER_DOMAINS, MISSING_DOMAIN]))} in device.attributes",
                f"has({_cap(c)})",
                f"{_quote(c.pick([*CAPACITY_IDS, MISSING_ID]))} in {_domain_expr(c, 'capacity', c.pick([c.device['driver'], *OTHER_DOMAINS]))}",
            ]
        )
    if choice == 6:  # an attribute of any type compared with a literal
        lit = c.pick(["1", "'a100'", "true", "semver('1.2.3')", "1.0", "[1, 2]", "null"])
        return f"{_attr(c, None)} {c.pick(['==', '!='])} {lit}"
    if choice == 7:  # optionals
        a = _attr(c, None).replace("device.attributes[", "device.attributes[?", 1) if c.chance(5) else None
        if a is not None:
            return f"{a}.hasValue()"
        domain = _domain_expr(c, "attributes", c.pick([c.device["driver"], *OTHER_DOMAINS, MISSING_DOMAIN]))
        ident = c.pick([*ATTRIBUTE_IDS, MISSING_ID])
        return c.pick(
            [
                f"{domain}.?{ident}.hasValue()",
                f"{domain}.?{ident}.orValue({g(I)}) == {g(I)}",
                f"{domain}[?{_quote(ident)}].orValue({g(S)}) == {g(S)}",
                f"optional.of({g(I)}).value() == {g(I)}",
                f"optional.none().orValue({g(B)})",
            ]
        )
    if choice == 8:  # quantity predicates
        return c.pick(
            [
                f"{g(Q)}.isGreaterThan({g(Q)})",
                f"{g(Q)}.isLessThan({g(Q)})",
                f"{g(Q)}.isInteger()",
                f"isQuantity({g(S) if c.chance(3) else _quote(c.pick(QUANTITY_TEXTS))})",
                f"{g(Q)} == {g(Q)}",
            ]
        )
    if choice == 9:  # semver predicates
        return c.pick(
            [
                f"{g(V)}.isGreaterThan({g(V)})",
                f"{g(V)}.isLessThan({g(V)})",
                f"isSemver({_quote(c.pick(SEMVER_TEXTS))})",
                f"isSemver({_quote(c.pick(SEMVER_TEXTS))}, true)",
                f"isSemver({g(S)})",
                f"{g(V)} == {g(V)}",
            ]
        )
    if choice == 10:  # string predicates
        return c.pick(
            [
                f"{g(S)}.startsWith({g(S)})",
                f"{g(S)}.endsWith({g(S)})",
                f"{g(S)}.contains({g(S)})",
                f"{g(S)}.matches({_quote(c.pick(REGEXES))})",
                f"matches({g(S)}, {_quote(c.pick(REGEXES))})",
                f"{g(S)} in {g(LS)}",
            ]
        )
    if choice in (11, 12):
        return _comprehension(c, B, d)
    if choice == 13:
        lt = _list_t(c)
        return c.pick(
            [
                f"{g(_elem(lt))} in {g(lt)}",
                f"{g(lt)}.isSorted()",
                f"{g(lt)} == {g(lt)}",
                f"sets.contains({g(lt)}, {g(lt)})",
                f"sets.intersects({g(lt)}, {g(lt)})",
                f"sets.equivalent({g(lt)}, {g(lt)})",
            ]
        )
    if choice == 14:  # includes(): known version skew on cost; small lists only
        return c.pick(
            [
                f"{g(LI)}.includes({g(I)})",
                f"{_attr(c, None)}.includes({g(c.pick([I, S, V]))})",
                f"{g(S)}.includes({g(S)})",
            ]
        )
    if choice == 15:
        return _bind(c, B, d)
    if choice == 16:
        return f"{g(B)} ? {g(B)} : {g(B)}"
    if choice == 17:  # errors on either side of && / ||
        err = c.pick(
            [
                f"{_attr(c, None)} == 1",
                f"{g(I)} / 0 == 1",
                f"{g(I)} + {g(I)} > 0",
                f"{_attr(c, I)} > {g(I)}",
                f"{g(Q)}.isGreaterThan({g(Q)})",
            ]
        )
        op = c.pick(["&&", "||"])
        return f"{err} {op} {g(B)}" if c.chance(2) else f"{g(B)} {op} {err}"
    if choice == 18:
        return f"device.driver == {_quote(c.pick([c.device['driver'], *DRIVERS]))}"
    if choice == 19:  # sizes and counts
        return f"size({g(c.pick([S, LI, LS]))}) {c.pick(['==', '>', '<'])} {g(I)}"
    if choice == 20:  # string functions in comparisons
        return f"{g(S)} == {g(S)}"
    if choice == 21:
        return f"{g(I)} == {g(I)}"
    if choice == 22:  # maps
        k, v = g(S), g(I)
        return c.pick(
            [f"{{{k}: {v}}}[{g(S)}] == {g(I)}", f"{g(S)} in {{{k}: {v}}}", f"size({{{k}: {v}}}) == 1"]
        )
    if choice == 23:  # two-variable comprehensions over a map of attributes
        dom = _domain_expr(c, "attributes", c.pick([c.device["driver"], *OTHER_DOMAINS, MISSING_DOMAIN]))
        k, v = c.fresh(), c.fresh()
        c.scope[k] = S
        try:
            body = _gen(c, B, d - 1)
        finally:
            del c.scope[k]
        return c.pick(
            [
                f"{dom}.exists({k}, {body})",
                f"{dom}.all({k}, {k}.startsWith({_quote(c.pick(['m', 'i', '']))}))",
                f"{dom}.exists({k}, {v}, {k} == {_quote(c.pick(ATTRIBUTE_IDS))} && {v} == {c.pick(['1', 'true', repr('a100')])})",
                f"device.attributes.all({k}, {k}.contains('.'))",
                f"size({dom}) {c.pick(['==', '>'])} {c.draw(st.integers(0, 3))}",
            ]
        )
    if choice == 24:
        return f"{g(D)} {c.pick(['<', '==', '>='])} {g(D)}"
    if choice == 25:
        return f"{g(U)} {c.pick(['<', '==', '>='])} {g(U)}"
    if choice == 26:
        return f"{g(Q)}.compareTo({g(Q)}) {c.pick(['==', '<', '>'])} {c.pick(['0', '1', '-1'])}"
    return f"{g(V)}.compareTo({g(V)}) {c.pick(['==', '<', '>'])} {c.pick(['0', '1', '-1'])}"


def _gen_int(c: _Ctx, d: int) -> str:
    g = lambda t: _gen(c, t, d - 1)  # noqa: E731
    choice = c.draw(st.integers(0, 17))
    if choice <= 2:
        return f"{g(I)} {c.pick(['+', '-', '*', '/', '%'])} {g(I)}"
    if choice == 3:
        return f"-{g(I)}" if c.chance(2) else f"-({g(I)})"
    if choice == 4:
        return c.pick(
            [
                f"int({g(D)})",
                f"int({g(S)})",
                f"int({g(U)})",
                f"int({_quote(c.pick(['12', '-3', 'x', '9223372036854775808']))})",
            ]
        )
    if choice == 5:
        return c.pick([f"{g(Q)}.asInteger()", f"{g(Q)}.sign()", f"{g(Q)}.compareTo({g(Q)})"])
    if choice == 6:
        return c.pick([f"{g(V)}.major()", f"{g(V)}.minor()", f"{g(V)}.patch()", f"{g(V)}.compareTo({g(V)})"])
    if choice == 7:
        lst = g(LI)
        return c.pick([f"{lst}.sum()", f"{lst}.min()", f"{lst}.max()", f"{lst}[{g(I)}]", f"size({lst})"])
    if choice == 8:
        return c.pick(
            [
                f"{g(LS)}.indexOf({g(S)})",
                f"{g(S)}.indexOf({g(S)})",
                f"{g(LS)}.lastIndexOf({g(S)})",
                f"{g(S)}.lastIndexOf({g(S)})",
            ]
        )
    if choice == 9:
        return f"size({g(c.pick([S, LI, LS]))})"
    if choice == 10:
        return f"{g(B)} ? {g(I)} : {g(I)}"
    if choice == 11:
        return _bind(c, I, d)
    if choice == 12:
        return f"{_attr(c, I)}"
    if choice == 13:
        return f"{g(S)}.size()"
    return _leaf(c, I)


def _gen_string(c: _Ctx, d: int) -> str:
    g = lambda t: _gen(c, t, d - 1)  # noqa: E731
    choice = c.draw(st.integers(0, 15))
    if choice == 0:
        return f"{g(S)} + {g(S)}"
    if choice == 1:
        return f"{g(S)}.{c.pick(['lowerAscii', 'upperAscii', 'trim', 'reverse'])}()"
    if choice == 2:
        return c.pick(
            [f"{g(S)}.substring({g(I)})", f"{g(S)}.substring({g(I)}, {g(I)})", f"{g(S)}.charAt({g(I)})"]
        )
    if choice == 3:
        return f"{g(S)}.replace({g(S)}, {g(S)})" if c.chance(2) else f"{g(S)}.replace({g(S)}, {g(S)}, {g(I)})"
    if choice == 4:
        return c.pick(
            [f"string({g(I)})", f"string({g(D)})", f"string({g(U)})", f"string({g(B)})", f"string({g(S)})"]
        )
    if choice == 5:
        fmt = c.pick(["%s", "%d", "%s-%d", "%x", "%.2f", "%e", "%b", "%o", "%X", "%%", "%s %s"])
        args = c.pick(
            [f"[{g(S)}]", f"[{g(I)}]", f"[{g(S)}, {g(I)}]", f"[{g(D)}]", f"[{g(LI)}]", f"[{g(B)}]", "[]"]
        )
        return f"{_quote(fmt)}.format({args})"
    if choice == 6:
        return c.pick([f"{g(LS)}.join()", f"{g(LS)}.join({g(S)})", f"{g(LS)}[{g(I)}]"])
    if choice == 7:
        return f"{g(B)} ? {g(S)} : {g(S)}"
    if choice == 8:
        return _bind(c, S, d)
    if choice == 9:
        return f"strings.quote({g(S)})"
    if choice == 10:
        return f"{g(S)}.split({g(S)})[{g(I)}]"
    if choice == 11:
        return c.pick([f"string({g(Q)})", f"string({g(V)})", f"{g(V)}.toString()"])
    return _leaf(c, S)


def _gen_other(c: _Ctx, t: str, d: int) -> str:
    g = lambda t2: _gen(c, t2, d - 1)  # noqa: E731
    if t == U:
        return c.pick(
            [
                f"{g(U)} + {g(U)}",
                f"{g(U)} - {g(U)}",
                f"{g(U)} * {g(U)}",
                f"uint({g(I)})",
                f"{g(U)} / {g(U)}",
                _leaf(c, U),
            ]
        )
    if t == D:
        return c.pick(
            [
                f"{g(D)} {c.pick(['+', '-', '*', '/'])} {g(D)}",
                f"double({g(I)})",
                f"double({g(S)})",
                f"{g(Q)}.asApproximateFloat()",
                f"-{g(D)}",
                _leaf(c, D),
            ]
        )
    if t == Q:
        return c.pick(
            [
                f"{g(Q)}.add({g(Q)})",
                f"{g(Q)}.add({g(I)})",
                f"{g(Q)}.sub({g(Q)})",
                f"{g(Q)}.sub({g(I)})",
                f"{g(B)} ? {g(Q)} : {g(Q)}",
                _leaf(c, Q),
                _leaf(c, Q),
            ]
        )
    if t == V:
        return c.pick([_leaf(c, V), _leaf(c, V), f"{g(B)} ? {g(V)} : {g(V)}", _bind(c, V, d)])
    # lists
    e = _elem(t)
    choice = c.draw(st.integers(0, 8))
    if choice <= 1:
        return _comprehension(c, t, d)
    if choice == 2:
        return f"{g(t)} + {g(t)}"
    if choice == 3:
        return c.pick(
            [f"{g(t)}.sort()", f"{g(t)}.distinct()", f"{g(t)}.reverse()", f"{g(t)}.slice({g(I)}, {g(I)})"]
        )
    if choice == 4:
        return f"[{', '.join(g(e) for _ in range(c.draw(st.integers(0, 3))))}]"
    if choice == 5 and t == LS:
        return f"{g(S)}.split({g(S)})" if c.chance(2) else f"{g(S)}.split({g(S)}, {g(I)})"
    if choice == 5:
        return f"lists.range({c.draw(st.integers(0, 5))})"
    if choice == 6:
        return f"{g(t)}.map(m, {c.pick(['m', 'm + m'])}).filter(f, f != {g(e)})"
    return _leaf(c, t)


def _gen(c: _Ctx, t: str, d: int) -> str:
    if d <= 0 or c.chance(3):
        return _leaf(c, t)
    if t == B:
        return _gen_bool(c, d)
    if t == I:
        return _gen_int(c, d)
    if t == S:
        return _gen_string(c, d)
    return _gen_other(c, t, d)


# Ill-typed and random text, to compare compile errors.
_TOKENS = (
    "device",
    ".",
    "attributes",
    "[",
    "]",
    "(",
    ")",
    "'gpu.example.com'",
    "model",
    "==",
    "&&",
    "||",
    "1",
    "2u",
    "3.0",
    "'x'",
    "!",
    "?",
    ":",
    "in",
    "has",
    "size",
    "foo",
    ",",
    "+",
    "-",
    "<",
    "{",
    "}",
    "true",
    "null",
    "capacity",
    ".?",
    "exists",
    "x",
    "quantity",
    "semver",
    "'",
    '"',
    "@",
    "#",
    "1e",
    "0x",
)


@st.composite
def _ill_typed(draw: st.DrawFn, c: _Ctx) -> str:
    g = lambda t: _gen(c, t, 1)  # noqa: E731
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return " ".join(draw(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=8)))
    if choice == 1:
        a, b = draw(st.sampled_from(TYPES)), draw(st.sampled_from(TYPES))
        return f"{g(a)} {draw(st.sampled_from(['+', '-', '<', '==', '&&', '*']))} {g(b)}"
    if choice == 2:
        return draw(
            st.sampled_from(
                [
                    "undeclared",
                    "foo(1)",
                    "device.foo",
                    "devices.attributes",
                    "x.y.z == 1",
                    "a && b",
                    "device.attributes['a'].b.c.d()",
                ]
            )
        )
    if choice == 3:
        t = draw(st.sampled_from(TYPES))
        fn = draw(
            st.sampled_from(
                ["isGreaterThan", "startsWith", "asInteger", "major", "sum", "lowerAscii", "add", "compareTo"]
            )
        )
        return f"{g(t)}.{fn}({g(draw(st.sampled_from(TYPES)))})"
    if choice == 4:
        return f"{g(draw(st.sampled_from(TYPES)))}"  # value mode or an output-type error
    if choice == 5:
        return draw(st.text(alphabet="abc().[]'\"=!&|<>+-*/ 0123456789?:{},@\\", min_size=1, max_size=20))
    if choice == 6:
        return f"[{g(I)}, {g(S)}]"  # heterogeneous list literal
    if choice == 7:
        return f"{g(I)} ? 1 : 2"
    if choice == 8:
        return f"has({g(I)})"
    return f"{g(B)} {draw(st.sampled_from(['&&', '||']))} {g(I)}"


# --- fidelity corners (issue 13): one production per class of past disagreement ------------

_LITERAL_FORMS = (
    "1e400",
    "-1e400",
    "1e-400",
    ".5",
    "1.5e3",
    "0x1F",
    "0x1Fu",
    "0x",
    "1e",
    "1.",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615u",
    "18446744073709551616u",
    "'\\u00ff'",
    "b'\\u00ff'",
    "b'\\U0001F600'",
    "b'\\xff'",
    "b'\\377'",
    "'\\ud800'",
    "'\\U00110000'",
    "'\\x41\\101'",
    "'\\q'",
    "'\\x4'",
    "'\\400'",
    "r'\\n'",
    'R"x"',
    "'''a\nb'''",
    "r'''x'''",
    "'''abc",
    "'abc",
    'b"',
    "rb'x'",
    "br'x'",
    '"\\a\\b\\f\\n\\r\\t\\v\\?\\`"',
    "`a.b`",
    "a = b",
    "1 & 2",
    "x é y",
    ".",
    ". 1",
    "if",
    "device.if",
)
_TIMESTAMPS = (
    "2020-01-01T00:00:00Z",
    "2020-01-01T00:00:00+01:00",
    "2020-01-01T00:00:00.5-05:30",
    "2020-01-01T00:00:00-00:00",
    "2020-01-01T00:00:00.1234567891Z",
    "2020-02-30T00:00:00Z",
    "2020-01-01t00:00:00z",
    "2020-01-01T00:00:00+25:00",
    "9999-12-31T23:59:59Z",
    "0001-01-01T00:00:00Z",
    "a100",
)
_DURATIONS = ("1s", "1h30m", "-1.5s", "1ms", "0s", "100h", "2562047h", "x", "1.5µs", "3ns")
_ZONES = ("+01:00", "-05:30", "Europe/Paris", "UTC", "", "bad", "+1:x", "+01:70", "Asia/Kolkata")
_ACCESSORS = (
    "getFullYear",
    "getMonth",
    "getDayOfMonth",
    "getDate",
    "getDayOfWeek",
    "getDayOfYear",
    "getHours",
    "getMinutes",
    "getSeconds",
    "getMilliseconds",
)
_NULL_OPERANDS = (
    "[1]",
    "{'a': 1}",
    "1",
    "'a'",
    "1u",
    "1.0",
    "true",
    "b'a'",
    "duration('1s')",
    "timestamp(0)",
    "optional.none()",
    "type(1)",
    "quantity('1')",
    "device",
    "device.attributes",
    "[null]",
    "dyn([1])",
)
_MAP_KEYS = ("[1]", "{'a': 1}", "dyn(null)", "optional.none()", "duration('1s')", "1.5", "true", "1u")


def _corner(c: _Ctx) -> str:
    """An expression from one of the classes independent generators found (syntax, literals,
    parser limits, null comparisons, timestamps, list costs, map keys, device fields)."""
    g = lambda t: _gen(c, t, 1)  # noqa: E731
    kind = c.draw(st.integers(0, 15))
    if kind == 0:  # every literal form, alone or inside a larger expression
        lit = c.pick(_LITERAL_FORMS)
        return c.pick([lit, f"[{lit}, {c.pick(_LITERAL_FORMS)}]", f"{lit} == {lit}", f"size([{lit}]) == 1"])
    if kind == 1:  # optional syntax in every position
        return c.pick(
            [
                f"[?optional.of({g(I)}), ?optional.none(), {g(I)}]",
                f"[ ?optional.of({g(S)})]",
                f"{{?{g(S)}: optional.of({g(I)}), {g(S)}: {g(I)}}}",
                f"{{?{g(S)}: optional.none()}}",
                f"device.attributes[ ?{_quote(c.device['driver'])}].hasValue()",
                "device. ?attributes.hasValue()",
                "[?1]",
                "{?'a': 1}",
                f"[?optional.of(1)][0] == {g(I)}",
            ]
        )
    if kind == 2:  # the parser's nesting limits, around each boundary
        n = c.pick([248, 249, 250, 251, 260])
        op = c.pick(["+", "*", "==", "-", "&&"])
        term = "true" if op == "&&" else "1"
        return c.pick(
            [
                f" {op} ".join([term] * n) + ("" if op in ("&&", "==") else " > 0"),
                "(" * (n - 1) + "1" + ")" * (n - 1) + " > 0",
                "[" * (n // 2) + "]" * (n // 2) + " == []",
                "a.b" + ".c" * n,
                "1 < (" * (n // 2) + "1" + ")" * (n // 2),
                "-" * n + "1 > 0",
            ]
        )
    if kind == 3:  # comparisons with null, for every kind of type
        other = c.pick([*_NULL_OPERANDS, _attr(c, None)])
        return c.pick([f"{other} == null", f"null != {other}", f"[{other}] == [null]", f"{other} in [null]"])
    if kind == 4:  # timestamps and durations: offsets, Go's texts, arithmetic, accessors
        ts = f"timestamp({_quote(c.pick(_TIMESTAMPS))})"
        du = f"duration({_quote(c.pick(_DURATIONS))})"
        return c.pick(
            [
                ts,
                du,
                f"string({ts})",
                f"string({du})",
                f"{ts} + {du}",
                f"string({ts} - {du})",
                f"{du} + {ts}",
                f"{ts} - {ts}",
                f"{du} - {du}",
                f"{ts}.{c.pick(_ACCESSORS)}()",
                f"{ts}.{c.pick(_ACCESSORS)}({_quote(c.pick(_ZONES))})",
                f"{du}.{c.pick(['getHours', 'getMinutes', 'getSeconds', 'getMilliseconds'])}()",
                f"timestamp({_attr(c, S)})",
                f"duration({_attr(c, S)})",
                f"{ts} < {ts}",
                f"{du} == {g(I)}",
                f"type({ts})",
                f"int({ts})",
                f"timestamp({c.pick(['0', '1', '-62135596801', '253402300800'])})",
            ]
        )
    if kind == 5:  # integer corners
        return c.pick(
            [
                "-9223372036854775808 % -1",
                "-9223372036854775808 / -1",
                f"{g(I)} % {c.pick(['0', '-1', '1'])}",
                "9223372036854775807 + 1",
                "-(-9223372036854775808)",
                f"18446744073709551615u % {c.pick(['0u', '1u'])}",
            ]
        )
    if kind == 6:  # list library bounds; runtime cost charged before materialising
        n = c.pick(["-1", "0", "3", "1000", "2000", "10000", "1000000", "1000001", "1000000000"])
        fn_ = c.pick(
            ["", ".sort()", ".distinct()", ".reverse()", ".slice(0, 2)", ".map(x, string(x)).sort()"]
        )
        return f"lists.range({n}){fn_}{c.pick(['.size() > 0', '[0] == 0', '.all(x, x >= 0)', ''])}"
    if kind == 7:  # static estimates that must not overflow
        return c.pick(
            [
                f"dyn({g(I)}) == dyn({g(I)})",
                f"dyn({g(S)}) == dyn({g(S)})",
                f"dyn({g(I)}) + dyn({g(S)}) == 1",
                f"dyn({_attr(c, None)}) == dyn({g(I)})",
                f"dyn(dyn({g(I)})) != {g(I)}",
            ]
        )
    if kind == 8:  # map literals with keys of any type
        key = c.pick(_MAP_KEYS)
        return c.pick(
            [
                f"{{{key}: 2}}",
                f"size({{{key}: 2}})",
                f"{key} in {{{key}: 2}}",
                f"{{{key}: 2}}[{key}]",
                f"'a' in dyn({{{key}: 2}})",
            ]
        )
    if kind == 9:  # has() and presence on the device's own fields
        f_ = c.pick(["driver", "allowMultipleAllocations", "attributes", "capacity", "foo"])
        return c.pick(
            [
                f"has(device.{f_})",
                f"device.{f_} == device.{f_}",
                f"has(device.attributes.{c.pick(OTHER_DOMAINS)})",
            ]
        )
    if kind == 10:  # runtime dispatch on dyn, "no such overload"
        return c.pick(
            [
                f"dyn({g(I)}).startsWith('a')",
                f"dyn({g(S)}).size() + {g(I)}",
                f"dyn({g(I)}) + dyn({g(D)})",
                f"dyn({g(S)}).matches(1)",
                f"dyn({g(I)}).isGreaterThan({g(Q)})",
                "dyn([1]).exists(x, x == 'a')",
                f"{g(Q)}.add(dyn('x'))",
            ]
        )
    if kind == 11:  # several macro / visitor errors in one expression
        return c.pick(
            [
                "[1].all(1, true) && [2].exists(2, true)",
                "has(1) || has(a.b.c) && has(d)",
                "cel.bind(1, 2, 3)",
                "[1].map(x.y, x)",
                "if + else",
                "[1].exists(x, y, x) && [1].all(@result, true)",
            ]
        )
    if kind == 12:  # type names in checker messages
        t = c.pick(
            ["duration('1s')", "timestamp(0)", "type(duration('1s'))", "optional.none()", "[duration('1s')]"]
        )
        return c.pick([f"{t} == 1", f"string(type({t}))", f"{t} + 1", f"{t}.foo()"])
    if kind == 13:  # the length limits: 10 KiB validates new expressions only
        n = c.pick([10_230, 10_241, 100_001])
        return "true" + " " * (n - 4) if c.chance(2) else "'" + "a" * (n - 7) + "' != ''"
    if kind == 14:  # comprehensions and bind around error paths
        return c.pick(
            [
                f"cel.bind(x, {g(I)}, cel.bind(y, x + 1, y > x))",
                "[1, 2].exists(x, x / 0 == 1)",
                "[1, 2].all(x, x / 0 == 1)",
                "[0, 1].exists_one(x, 1 / x == 1)",
                "{'a': 1}.all(k, v, v / 0 == 1)",
                "[1, 2].transformList(i, v, v * 2) == [2, 4]",
                "{'a': 1}.transformMap(k, v, v + 1)",
                "[3, 1, 2].sortBy(x, -x)",
            ]
        )
    # lexer error recovery next to parse errors
    return " ".join(c.pick(_LITERAL_FORMS + _TOKENS) for _ in range(c.draw(st.integers(2, 6))))


# --- every declared function and overload -------------------------------------------------

_SKIP_FUNCTIONS = ("@not_strictly_false", "cel.@mapInsert", "@sortByAssociatedKeys", "_?_:_", "_&&_", "_||_")
_INFIX = {
    "_+_": "+",
    "_-_": "-",
    "_*_": "*",
    "_/_": "/",
    "_%_": "%",
    "_<_": "<",
    "_<=_": "<=",
    "_>_": ">",
    "_>=_": ">=",
    "_==_": "==",
    "_!=_": "!=",
    "@in": "in",
}
_FIXED_ARGS = {
    "bytes": ("b'ab'", "b''", "b'\\xff'"),
    "google.protobuf.Duration": ("duration('1s')", "duration('-1h30m')", "duration('0s')"),
    "google.protobuf.Timestamp": ("timestamp(0)", "timestamp('2020-01-01T00:00:00+01:00')"),
    "map": ("{'a': 1}", "{}", "{1: 'x'}", "device.attributes", "device.capacity['gpu.example.com']"),
    "optional_type": ("optional.of(1)", "optional.none()", "optional.of('a')", "device.attributes[?'x.y']"),
    "type": ("int", "type(1)", "string"),
    "null_type": ("null",),
}


@lru_cache(maxsize=4)
def _declared_overloads(lists: bool, consumable: bool) -> tuple[tuple[str, Any], ...]:
    """(function name, overload) for every overload the DRA environment declares."""
    from drakit.selectors.env import EnvKey, build_env

    env = build_env(EnvKey("stored", lists, consumable))
    return tuple(
        (name, o)
        for name, f in sorted(env.functions.items())
        if name not in _SKIP_FUNCTIONS
        for o in f.overloads
    )


def _arg_for(c: _Ctx, t: Any) -> str:
    kind, name = t.kind, t.name
    simple = {"bool": B, "int": I, "uint": U, "double": D, "string": S}
    if kind in simple:
        return _gen(c, simple[kind], 1)
    if name == "kubernetes.Quantity":
        return _gen(c, Q, 1)
    if name == "kubernetes.Semver":
        return _gen(c, V, 1)
    if kind == "list":
        elem = t.params[0].kind if t.params else "dyn"
        return _gen(c, LS if elem == "string" else LI, 1)
    if name in _FIXED_ARGS:
        return c.pick(_FIXED_ARGS[name])
    if kind == "map" or kind == "type":
        return c.pick(_FIXED_ARGS[kind])
    return _gen(c, c.pick(TYPES), 1)  # type parameters, dyn


def _declared_call(c: _Ctx) -> str:
    """A call of one declared overload with arguments of its parameter types; sometimes one
    argument is a dyn() of another type, to reach runtime dispatch and its error texts."""
    name, overload = c.pick(_declared_overloads(c.lists, "allowMultipleAllocations" in c.device))
    args = [_arg_for(c, p) for p in overload.params]
    if args and c.chance(5):
        i = c.draw(st.integers(0, len(args) - 1))
        args[i] = f"dyn({_gen(c, c.pick(TYPES), 1)})"
    if name in _INFIX and len(args) == 2:
        return f"({args[0]} {_INFIX[name]} {args[1]})"
    if name == "-_":
        return f"-({args[0]})"
    if name == "!_":
        return f"!({args[0]})"
    if name == "_[_]":
        return f"{args[0]}[{args[1]}]"
    if name == "_[?_]":
        return f"{args[0]}[?{args[1]}]"
    if name == "_?._":
        return f"{args[0]}.?{c.pick(['a', 'model', 'x'])}"
    if overload.member and args:
        return f"{args[0]}.{name}({', '.join(args[1:])})"
    return f"{name}({', '.join(args)})"


@st.composite
def cel_cases(draw: st.DrawFn, max_depth: int = 4) -> CelCase:
    """A generated (expression, device, environment, gates) question."""
    lists = draw(st.booleans())
    consumable = draw(st.booleans())
    gates = f"DRAListTypeAttributes={str(lists).lower()},DRAConsumableCapacity={str(consumable).lower()}"
    environment = draw(st.sampled_from(("stored", "new")))
    device = draw(devices(lists, consumable))
    c = _Ctx(draw, device, lists)
    kind = draw(st.integers(0, 27))
    if kind >= 26:  # the IP, CIDR, URL and format libraries (their own grammar)
        from tests.differential.cel_library_generator import library_cases

        return draw(library_cases())
    if kind == 0:
        expression = draw(_ill_typed(c))
        tag = "ill-typed"
    elif kind >= 22:
        expression = _corner(c)
        tag = "corner"
    elif kind >= 20:
        expression = _declared_call(c)
        tag = "declared"
    elif kind <= 3:
        t = draw(st.sampled_from((I, U, D, S, Q, V, LI, LS)))
        expression = _gen(c, t, draw(st.integers(1, max_depth)))
        tag = f"value:{t}"
    else:
        expression = _gen(c, B, draw(st.integers(1, max_depth)))
        tag = "selector"
    return CelCase(expression, device, environment, gates, (tag,))
