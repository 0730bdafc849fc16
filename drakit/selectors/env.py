"""The DRA selector environment (``k8s.io/dynamic-resource-allocation/cel/compile.go``).

Two flavours, as the API server has them:

* ``stored``: everything this version knows (the scheduler evaluates stored selectors), so
  ``includes()``, list-valued attributes and ``device.allowMultipleAllocations`` are always
  available;
* ``new``: what a create/update may use.  ``includes()`` and list attributes need
  DRAListTypeAttributes; ``allowMultipleAllocations`` needs DRAConsumableCapacity (otherwise
  ``undefined field 'allowMultipleAllocations'``).  Without list-type attributes an attribute
  is typed ``google.protobuf.Any`` (so macros over it are compile errors), with them ``dyn``.

The device value mirrors upstream's construction: unqualified names go to the driver's
domain, unknown domains look up as an empty map (while ``"d" in device.attributes`` stays
false), version strings become Semver values, a value-less attribute is
``attribute <name>: unsupported attribute value``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from drakit.quantity import Quantity, QuantityError
from drakit.selectors import types as T
from drakit.selectors.cost import SizeNode
from drakit.selectors.decls import Env
from drakit.selectors.interpreter import StructValue
from drakit.selectors.library import ext, formats, kubernetes, net, standard, urls
from drakit.selectors.types import EvalError

DEVICE_TYPE = "kubernetes.DRADevice"
ATTRIBUTE_MAX_VALUE_LENGTH = 64  # DeviceAttributeMaxValueLength
ATTRIBUTE_MAX_VALUES = 48  # ResourceSliceMaxAttributeValuesPerDevice
DOMAIN_MAX = 63  # DeviceMaxDomainLength
ID_MAX = 32  # DeviceMaxIDLength
DRIVER_MAX = 63  # DriverNameMaxLength
MAP_MAX = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
MAX_EXPRESSION_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength
MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost


@dataclass(frozen=True)
class EnvKey:
    """The bits of configuration that change the compiled result."""

    environment: str  # "stored" | "new"
    list_type_attributes: bool
    consumable_capacity: bool

    @property
    def lists(self) -> bool:
        return self.environment == "stored" or self.list_type_attributes

    @property
    def multi_alloc(self) -> bool:
        return self.environment == "stored" or self.consumable_capacity


@lru_cache(maxsize=16)
def build_env(key: EnvKey) -> Env:
    env = Env()
    standard.declare(env)
    kubernetes.declare_quantity(env)
    kubernetes.declare_semver(env)
    kubernetes.declare_lists(env)
    kubernetes.declare_regex(env)
    # Base environment: URLs always, IP/CIDR since 1.30, format since 1.31; new expressions
    # use the previous minor version, so every supported version (1.34+) has all three.
    urls.declare(env)
    net.declare(env)
    formats.declare(env)
    ext.declare_strings(env)
    ext.declare_sets(env)
    ext.declare_lists_ext(env)
    ext.declare_optional(env)
    ext.declare_internal(env)
    if key.lists:
        kubernetes.declare_includes(env)
    attr_t = T.DYN_T if key.lists else T.ANY
    fields = {
        "driver": T.STRING,
        "attributes": T.map_of(T.STRING, T.map_of(T.STRING, attr_t)),
        "capacity": T.map_of(T.STRING, T.map_of(T.STRING, T.QUANTITY)),
    }
    if key.multi_alloc:
        fields["allowMultipleAllocations"] = T.BOOL
    env.structs[DEVICE_TYPE] = fields
    env.variables["device"] = T.struct(DEVICE_TYPE)
    return env


def size_roots() -> dict[str, SizeNode]:
    """The declared maximum sizes (compile.go's DeclTypes) for the cost estimator."""
    attribute = SizeNode(max(ATTRIBUTE_MAX_VALUE_LENGTH, ATTRIBUTE_MAX_VALUES))
    domain, ident = SizeNode(DOMAIN_MAX), SizeNode(ID_MAX)
    inner_attrs = SizeNode(MAP_MAX, elem=attribute, key=ident, any_field=attribute)
    inner_caps = SizeNode(MAP_MAX, elem=SizeNode(0), key=ident)
    device = SizeNode(
        0,
        fields={
            "driver": SizeNode(DRIVER_MAX),
            "allowMultipleAllocations": SizeNode(1),
            "attributes": SizeNode(MAP_MAX, elem=inner_attrs, key=domain),
            "capacity": SizeNode(MAP_MAX, elem=inner_caps, key=domain),
        },
    )
    return {"device": device}


# ---------------------------------------------------------------------------------------------
# device values


class DomainMap(dict[str, Any]):
    """``device.attributes``/``device.capacity``: unknown domains read as an empty map."""

    __slots__ = ()

    def __missing__(self, key: Any) -> dict[str, Any]:
        return _EMPTY


_EMPTY: dict[str, Any] = {}


def _attribute_value(name: str, attr: Mapping[str, Any], lists: bool) -> Any:
    if lists:
        for k in ("ints", "bools", "strings"):
            if attr.get(k) is not None:
                return list(attr[k])
        if attr.get("versions") is not None:
            out = []
            for s in attr["versions"]:
                try:
                    out.append(kubernetes.parse_semver(s))
                except EvalError as e:
                    raise EvalError(f"attribute {name}: parse semantic version: {e.message}") from None
            return out
    if attr.get("int") is not None:
        return int(attr["int"])
    if attr.get("bool") is not None:
        return bool(attr["bool"])
    if attr.get("string") is not None:
        return str(attr["string"])
    if attr.get("version") is not None:
        try:
            return kubernetes.parse_semver(attr["version"])
        except EvalError as e:
            raise EvalError(f"attribute {name}: parse semantic version: {e.message}") from None
    raise EvalError(f"attribute {name}: unsupported attribute value")


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


class _BadVersion:
    """A memoised version-parse failure (its message, without the attribute name)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


_SEMVER_CACHE_MAX = 8192
_semver_cache: dict[str, Any] = {}


def _version_value(name: str, text: Any) -> Any:
    """``kubernetes.parse_semver`` memoised by string: the same few driver/CUDA versions appear on
    every device of a fleet, and a parsed ``Semver`` is immutable, so devices may share it."""
    if type(text) is not str:
        try:
            return kubernetes.parse_semver(text)
        except EvalError as e:
            raise EvalError(f"attribute {name}: parse semantic version: {e.message}") from None
    v = _semver_cache.get(text)
    if v is None:
        try:
            v = kubernetes.parse_semver(text)
        except EvalError as e:
            v = _BadVersion(e.message)
        if len(_semver_cache) >= _SEMVER_CACHE_MAX:
            _semver_cache.clear()
        _semver_cache[text] = v
    if type(v) is _BadVersion:
        raise EvalError(f"attribute {name}: parse semantic version: {v.message}")
    return v


_SPLIT_CACHE_MAX = 65536
_split_cache: dict[tuple[str, str], tuple[str, str]] = {}


def _has_list_value(attr: Any) -> bool:
    return isinstance(attr, Mapping) and any(attr.get(k) is not None for k in _LIST_KEYS)


_LIST_KEYS = ("ints", "bools", "strings", "versions")


def device_vars_both(
    driver: str, device: Mapping[str, Any]
) -> tuple[dict[str, Any] | EvalError, dict[str, Any] | EvalError]:
    """``(device_vars(lists=True), device_vars(lists=False))`` in one pass over the attributes.

    The cold path of every selector (the allocator's first sight of a device) is dominated by
    building this activation, so the common shape -- each attribute a dict with exactly one
    typed, non-null value -- is converted inline, version strings are parsed once per distinct
    string, and the scalar-only variant is derived in the same loop.  Anything unusual
    (several keys in one attribute, a null value, a conversion error) goes through
    :func:`device_vars`, the reference, so outcomes and error texts are identical.
    """
    raw_attrs = device.get("attributes") or {}
    attributes: DomainMap = DomainMap()
    first_list: str | None = None  # the first list-valued attribute: where the scalar-only variant fails
    splits = _split_cache
    for name, attr in raw_attrs.items():
        if type(attr) is dict and len(attr) == 1:
            ((k, v),) = attr.items()
            if v is None:
                return _fallback(driver, device)
            if k == "string":
                value: Any = str(v)
            elif k == "int":
                value = int(v)
            elif k == "version":
                try:
                    value = _version_value(name, v)
                except EvalError:
                    return _fallback(driver, device)
            elif k == "bool":
                value = bool(v)
            elif k in ("ints", "bools", "strings"):
                if first_list is None:
                    first_list = name
                value = list(v)
            elif k == "versions":
                if first_list is None:
                    first_list = name
                try:
                    value = [_version_value(name, x) for x in v]
                except EvalError:
                    return _fallback(driver, device)
            else:
                return _fallback(driver, device)
        else:
            return _fallback(driver, device)
        key = (name, driver)
        where = splits.get(key)
        if where is None:
            where = _split(name, driver)
            if len(splits) >= _SPLIT_CACHE_MAX:
                splits.clear()
            splits[key] = where
        inner = attributes.get(where[0])
        if inner is None:
            inner = attributes[where[0]] = {}
        inner[where[1]] = value
    capacity: DomainMap = DomainMap()
    for name, cap in (device.get("capacity") or {}).items():
        raw = cap.get("value") if isinstance(cap, Mapping) else cap
        if isinstance(raw, Quantity):
            q = raw
        else:
            try:
                q = Quantity.parse(str(raw))
            except QuantityError:
                return _fallback(driver, device)
        domain, ident = _split(name, driver)
        inner = capacity.get(domain)
        if inner is None:
            inner = capacity[domain] = {}
        inner[ident] = q
    all_: dict[str, Any] = {
        "device": StructValue(
            DEVICE_TYPE,
            {
                "driver": driver,
                "attributes": attributes,
                "capacity": capacity,
                "allowMultipleAllocations": bool(device.get("allowMultipleAllocations") or False),
            },
        )
    }
    if first_list is not None:
        # device_vars(lists=False) stops at the first list-valued attribute (every attribute
        # before it converted exactly as above).
        return all_, EvalError(f"attribute {first_list}: unsupported attribute value")
    return all_, all_


def _fallback(
    driver: str, device: Mapping[str, Any]
) -> tuple[dict[str, Any] | EvalError, dict[str, Any] | EvalError]:
    all_ = device_vars(driver, device, lists=True)
    has_lists = any(_has_list_value(a) for a in (device.get("attributes") or {}).values())
    return all_, (device_vars(driver, device, lists=False) if has_lists else all_)


def device_vars(driver: str, device: Mapping[str, Any], *, lists: bool) -> dict[str, Any] | EvalError:
    """The ``device`` activation, or the error upstream reports while building it."""
    attributes: DomainMap = DomainMap()
    for name, attr in (device.get("attributes") or {}).items():
        try:
            value = _attribute_value(name, attr or {}, lists)
        except EvalError as e:
            return e
        domain, ident = _split(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: DomainMap = DomainMap()
    for name, cap in (device.get("capacity") or {}).items():
        raw = cap.get("value") if isinstance(cap, Mapping) else cap
        if isinstance(raw, Quantity):
            q = raw
        else:
            try:
                q = Quantity.parse(str(raw))
            except QuantityError as e:
                return EvalError(f"capacity {name}: {e}")
        domain, ident = _split(name, driver)
        capacity.setdefault(domain, {})[ident] = q
    value = StructValue(
        DEVICE_TYPE,
        {
            "driver": driver,
            "attributes": attributes,
            "capacity": capacity,
            "allowMultipleAllocations": bool(device.get("allowMultipleAllocations") or False),
        },
    )
    return {"device": value}
