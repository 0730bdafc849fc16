"""API-server validation for the DRA kinds, Pods and Nodes, returning every problem.

Ported rule by rule (not copied) from kubernetes ``pkg/apis/resource/validation``
(newest, 1.37-dev), ``pkg/apis/core/validation`` (object metadata, node selectors, pod
claims) and apimachinery's name formats.  Messages keep the API server's wording so
a user who knows ``kubectl apply`` recognises them.

Feature gates: for create, the API server *drops* fields whose gate is off before
validating.  :func:`validate_report` does the same and reports each dropped field as a
warning (not an error); the remaining object is then validated as the server would.

CEL: every selector is compiled in the "new expressions" environment and its estimated
cost checked against 1,000,000.  If ``drakit.selectors`` cannot be imported, the report
says "CEL not checked" in its warnings instead of passing silently.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from drakit.errors import OMIT, ErrorType, FieldError, ObjectErrors, ObjectRef
from drakit.features import Features
from drakit.model import names
from drakit.model._base import Wire, to_wire
from drakit.model.claim import (
    AllocationResult,
    DeviceClaim,
    DeviceRequestAllocationResult,
    DeviceToleration,
    ResourceClaim,
    ResourceClaimTemplate,
)
from drakit.model.deviceclass import DeviceClass, DeviceSelector, OpaqueDeviceConfiguration
from drakit.model.kinds import DEFAULT_NAMESPACE, NAMESPACED
from drakit.model.meta import Condition, ObjectMeta
from drakit.model.node import Node, NodeSelector, NodeSelectorRequirement
from drakit.model.pod import Pod, PodSpec, PodTemplate
from drakit.model.slice import (
    LIST_ATTRIBUTE_KEYS,
    CapacityRequestPolicy,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceCounterConsumption,
    DeviceTaint,
    ResourceSlice,
    ResourceSliceSpec,
)
from drakit.model.taintrule import DeviceTaintRule
from drakit.quantity import Quantity, QuantityError
from drakit.selectors import compile_selector

# Limits of resource.k8s.io/v1 (k8s.io/api resource/v1/types.go, 1.36/1.37).
MAX_DEVICES = 128
MAX_DEVICES_ADVANCED = 64  # any device with taints, consumesCounters or list attributes
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUES = 48  # scalars plus list items (DRAListTypeAttributes)
MAX_ATTRIBUTE_VALUE_LENGTH = 64
MAX_ID_LENGTH = 32
MAX_DOMAIN_LENGTH = 63
DRIVER_NAME_MAX = 63
POOL_NAME_MAX = 253
MAX_TAINTS = 16
MAX_COUNTER_SETS = 8
MAX_COUNTERS_PER_SET = 32
MAX_CONSUMPTIONS_PER_DEVICE = 2
MAX_COUNTERS_PER_CONSUMPTION = 32
MAX_BINDING_CONDITIONS = 4
MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
MAX_SELECTORS = 32
MAX_CONSTRAINTS = 32
MAX_CONFIG = 32
MAX_TOLERATIONS = 16
MAX_RESULTS = 32
MAX_RESERVED_FOR = 256
MAX_VALID_VALUES = 10
MAX_DEVICE_CONDITIONS = 8
MAX_IPS = 16
MAX_INTERFACE_NAME = 256
MAX_HARDWARE_ADDRESS = 128
CEL_MAX_LENGTH = 10 * 1024
CEL_MAX_COST = 1_000_000
OPAQUE_MAX_BYTES = 10 * 1024
STATUS_DATA_MAX_BYTES = 10 * 1024
MAX_INT64 = 2**63 - 1

TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")  # sorted, as sets.List prints them
TOLERATION_OPERATORS = ("Equal", "Exists")
ALLOCATION_MODES = ("All", "ExactCount")
CONFIG_SOURCES = ("FromClaim", "FromClass")
SKIP_NODE_OPERATIONS_ALL = "*"


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ValidationReport:
    """All errors plus warnings (fields dropped because their feature gate is off)."""

    errors: tuple[ObjectErrors, ...]
    warnings: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.errors


class _Errs:
    """Accumulator with the field.Error constructors' names."""

    def __init__(self) -> None:
        self.items: list[FieldError] = []

    def add(self, path: str, type: ErrorType, value: Any = OMIT, detail: str = "") -> None:
        self.items.append(FieldError(path, type, value, detail))

    def required(self, path: str, detail: str = "") -> None:
        self.add(path, ErrorType.REQUIRED, OMIT, detail)

    def invalid(self, path: str, value: Any, detail: str) -> None:
        self.add(path, ErrorType.INVALID, value, detail)

    def forbidden(self, path: str, detail: str) -> None:
        self.add(path, ErrorType.FORBIDDEN, OMIT, detail)

    def too_long(self, path: str, limit: int) -> None:
        self.add(path, ErrorType.TOO_LONG, OMIT, f"may not be more than {limit} bytes")

    def too_many(self, path: str, actual: int, limit: int) -> None:
        self.add(path, ErrorType.TOO_MANY, actual, f"must have at most {limit} items")

    def duplicate(self, path: str, value: Any) -> None:
        self.add(path, ErrorType.DUPLICATE, value)

    def not_supported(self, path: str, value: Any, supported: Sequence[str]) -> None:
        self.add(path, ErrorType.NOT_SUPPORTED, value, "supported values: " + ", ".join(f'"{s}"' for s in supported))

    def not_found(self, path: str, value: Any, detail: str = "") -> None:
        self.add(path, ErrorType.NOT_FOUND, value, detail)

    def messages(self, path: str, value: Any, msgs: Iterable[str]) -> None:
        for m in msgs:
            self.invalid(path, value, m)


def _key(path: str, key: str) -> str:
    return f"{path}[{key}]"


class _CEL:
    """Compiles selector expressions as the API server does (the "new expressions" environment)."""

    def __init__(self, features: Features) -> None:
        self.features = features

    def check(self, errs: _Errs, expr: str, path: str) -> None:
        if len(expr.encode()) > CEL_MAX_LENGTH:
            errs.too_long(path, CEL_MAX_LENGTH)
            return
        result = compile_selector(expr, environment="new", features=self.features)
        # validateCELSelector: a compiled expression over the cost budget is Forbidden; drakit's
        # compiler also reports that case as an error, so the cost is looked at first.
        if result.cost_estimate is not None and result.cost_estimate > CEL_MAX_COST:
            errs.forbidden(path, "too complex, exceeds cost limit")
        elif result.error is not None:
            message = result.error.message
            detail = message if message.startswith("compilation failed") else f"compilation failed: {message}"
            errs.invalid(path, expr, detail)


# --------------------------------------------------------------------------- quantities


def _exact(q: str | int | float) -> Fraction | None:
    """Exact value of a quantity through the faithful parser; None if it is none (or too huge).

    Validation needs only comparisons and integer Value(); a value whose exact form would need
    a giant power of ten (``1e99999999``) is refused rather than materialised.
    """
    try:
        return Quantity.parse(repr(q) if isinstance(q, float) else str(q)).exact()
    except QuantityError:
        return None


def _int_value(v: Fraction) -> int:
    """Quantity.Value(): rounded up to an integer."""
    return math.ceil(v)


# --------------------------------------------------------------------------- common pieces


def _validate_driver_name(errs: _Errs, name: str, path: str) -> None:
    if not name:
        errs.required(path)
    if len(name) > DRIVER_NAME_MAX:
        errs.too_long(path, DRIVER_NAME_MAX)
    errs.messages(path, name, names.dns1123_subdomain(name.lower()))


def _validate_pool_name(errs: _Errs, name: str, path: str) -> None:
    if not name:
        errs.required(path)
        return
    if len(name) > POOL_NAME_MAX:
        errs.too_long(path, POOL_NAME_MAX)
    for part in name.split("/"):
        errs.messages(path, part, names.dns1123_subdomain(part))


def _validate_label(errs: _Errs, value: str, path: str) -> None:
    errs.messages(path, value, _dns1123_label(value))


@functools.lru_cache(maxsize=4096)
def _dns1123_label(value: str) -> tuple[str, ...]:
    """Device names repeat across slices (gpu-0 ... gpu-7 on every node)."""
    return tuple(names.dns1123_label(value))


def _validate_c_identifier(errs: _Errs, value: str, path: str) -> None:
    if len(value) > MAX_ID_LENGTH:
        errs.too_long(path, MAX_ID_LENGTH)
    errs.messages(path, value, names.c_identifier(value))


_GOOD_NAMES: set[str] = set()
"""Qualified names already found valid: a 5,000-node inventory repeats a dozen attribute names
500,000 times, and a set lookup is cheaper than the cached call."""


def _validate_qualified_name(errs: _Errs, name: str, path: str) -> None:
    found = _qualified_name_errors(name)
    if found:
        errs.items.extend(replace(e, path=path) for e in found)
    elif len(_GOOD_NAMES) < 4096:
        _GOOD_NAMES.add(name)


@functools.lru_cache(maxsize=4096)
def _qualified_name_errors(name: str) -> tuple[FieldError, ...]:
    errs = _Errs()
    path = ""
    parts = name.split("/")
    if len(parts) == 1:
        _validate_c_identifier(errs, parts[0], path)
    elif len(parts) == 2:
        if not parts[0]:
            errs.invalid(path, "", "the domain must not be empty")
        else:
            _validate_driver_name(errs, parts[0], path)
        if not parts[1]:
            errs.invalid(path, "", "the name must not be empty")
        else:
            _validate_c_identifier(errs, parts[1], path)
    else:
        errs.invalid(path, name, "must not contain more than one slash")
    return tuple(errs.items)


def _validate_fully_qualified_name(errs: _Errs, name: str, path: str) -> None:
    _validate_qualified_name(errs, name, path)
    if "/" not in name:
        errs.invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash")


def _validate_label_name(errs: _Errs, key: str, path: str) -> None:
    errs.messages(path, key, names.qualified_name(key))


def _validate_labels(errs: _Errs, labels: dict[str, str], path: str) -> None:
    for k, v in labels.items():
        _validate_label_name(errs, k, path)
        errs.messages(path, v, names.label_value(v))


_ANNOTATIONS_MAX_BYTES = 256 * 1024


def _validate_annotations(errs: _Errs, annotations: dict[str, str], path: str) -> None:
    total = 0
    for k, v in annotations.items():
        errs.messages(path, k, names.qualified_name(k.lower()))
        total += len(k) + len(v)
    if total > _ANNOTATIONS_MAX_BYTES:
        errs.too_long(path, _ANNOTATIONS_MAX_BYTES)


def _mask_trailing_dash(name: str) -> str:
    return name[:-1] + "a" if len(name) > 1 and name.endswith("-") else name


def _validate_object_meta(
    errs: _Errs, meta: ObjectMeta, namespaced: bool, name_fn: Callable[[str], list[str]], path: str = "metadata"
) -> None:
    if meta.generate_name:
        errs.messages(f"{path}.generateName", meta.generate_name, name_fn(_mask_trailing_dash(meta.generate_name)))
    if not meta.name:
        if not meta.generate_name:
            errs.required(f"{path}.name", "name or generateName is required")
    else:
        errs.messages(f"{path}.name", meta.name, name_fn(meta.name))
    # An unset namespace is defaulted (kubectl's context namespace), so only check a set one;
    # the server clears the namespace of cluster-scoped objects instead of rejecting it.
    if namespaced and meta.namespace:
        errs.messages(f"{path}.namespace", meta.namespace, names.dns1123_label(meta.namespace))
    if meta.generation is not None and meta.generation < 0:
        errs.invalid(f"{path}.generation", meta.generation, "must be greater than or equal to 0")
    _validate_labels(errs, meta.labels, f"{path}.labels")
    _validate_annotations(errs, meta.annotations, f"{path}.annotations")
    for i, fin in enumerate(meta.finalizers):
        errs.messages(f"{path}.finalizers[{i}]", fin, names.qualified_name(fin))


def _validate_node_selector(errs: _Errs, sel: NodeSelector, path: str) -> None:
    terms = f"{path}.nodeSelectorTerms"
    if not sel.node_selector_terms:
        errs.required(terms, "must have at least one node selector term")
        return
    for i, term in enumerate(sel.node_selector_terms):
        for j, req in enumerate(term.match_expressions):
            _validate_selector_requirement(errs, req, f"{terms}[{i}].matchExpressions[{j}]")
        for j, req in enumerate(term.match_fields):
            _validate_field_requirement(errs, req, f"{terms}[{i}].matchFields[{j}]")


def _validate_selector_requirement(errs: _Errs, req: NodeSelectorRequirement, path: str) -> None:
    op = req.operator
    if op in ("In", "NotIn"):
        if not req.values:
            errs.required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist"):
        if req.values:
            errs.forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif op in ("Gt", "Lt"):
        if len(req.values) != 1:
            errs.required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
    else:
        errs.invalid(f"{path}.operator", op, "not a valid selector operator")
    _validate_label_name(errs, req.key, f"{path}.key")
    for i, v in enumerate(req.values):
        errs.messages(f"{path}.values[{i}]", v, names.label_value(v))


def _validate_field_requirement(errs: _Errs, req: NodeSelectorRequirement, path: str) -> None:
    if req.operator in ("In", "NotIn"):
        if len(req.values) != 1:
            errs.required(
                f"{path}.values", "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
            )
    else:
        errs.invalid(f"{path}.operator", req.operator, "not a valid selector operator")
    if req.key != "metadata.name":
        errs.invalid(f"{path}.key", req.key, "not a valid field selector key")
    else:
        for i, v in enumerate(req.values):
            errs.messages(f"{path}.values[{i}]", v, names.dns1123_subdomain(v))


def _validate_node_name(errs: _Errs, name: str, path: str) -> None:
    errs.messages(path, name, names.dns1123_subdomain(name))


def _check_size(errs: _Errs, items: Sequence[Any] | dict[str, Any], limit: int, path: str) -> bool:
    """validateSlice/validateSet's size check; False means "stop, too many"."""
    if len(items) > limit:
        errs.too_many(path, len(items), limit)
        return False
    return True


def _check_unique(errs: _Errs, keys: Sequence[Any], path: str) -> None:
    seen: set[Any] = set()
    for i, k in enumerate(keys):
        if k in seen:
            errs.duplicate(f"{path}[{i}]", k)
        else:
            seen.add(k)


def _validate_raw(errs: _Errs, raw: Any, path: str, limit: int, set_: bool) -> None:
    if not set_ or raw is None:
        errs.required(path)
        return
    encoded = json.dumps(raw, separators=(",", ":"), ensure_ascii=False).encode()
    if len(encoded) > limit:
        errs.too_long(path, limit)
    elif not isinstance(raw, dict):
        errs.invalid(path, "<value omitted>", "must be a valid JSON object")


def _validate_opaque(errs: _Errs, opaque: OpaqueDeviceConfiguration | None, path: str) -> None:
    if opaque is None:
        errs.required(f"{path}.opaque")
        return
    _validate_driver_name(errs, opaque.driver, f"{path}.opaque.driver")
    _validate_raw(errs, opaque.parameters, f"{path}.opaque.parameters", OPAQUE_MAX_BYTES,
                  "parameters" in opaque.model_fields_set)


def _validate_taint(errs: _Errs, taint: DeviceTaint, path: str) -> None:
    _validate_label_name(errs, taint.key, f"{path}.key")
    if taint.value:
        errs.messages(f"{path}.value", taint.value, names.label_value(taint.value))
    if not taint.effect:
        errs.required(f"{path}.effect")
    elif taint.effect not in TAINT_EFFECTS:
        errs.not_supported(f"{path}.effect", taint.effect, TAINT_EFFECTS)


def _validate_toleration(errs: _Errs, tol: DeviceToleration, path: str) -> None:
    if tol.key:
        _validate_label_name(errs, tol.key, f"{path}.key")
    # v1 defaulting: an unset operator becomes Equal before validation.
    op = tol.operator if tol.operator is not None else "Equal"
    value = tol.value or ""
    if op == "Exists":
        if value:
            errs.invalid(f"{path}.value", value, "must be empty for operator `Exists`")
    elif op == "Equal":
        errs.messages(f"{path}.value", value, names.label_value(value))
    elif op == "":
        errs.required(f"{path}.operator")
    else:
        errs.not_supported(f"{path}.operator", op, TOLERATION_OPERATORS)
    if tol.effect and tol.effect not in TAINT_EFFECTS:
        errs.not_supported(f"{path}.effect", tol.effect, TAINT_EFFECTS)


def _validate_tolerations(errs: _Errs, tols: Sequence[DeviceToleration], path: str) -> None:
    if _check_size(errs, tols, MAX_TOLERATIONS, path):
        for i, t in enumerate(tols):
            _validate_toleration(errs, t, f"{path}[{i}]")


def _validate_binding(errs: _Errs, conds: Sequence[str], failures: Sequence[str], path: str) -> None:
    cpath, fpath = f"{path}.bindingConditions", f"{path}.bindingFailureConditions"
    if _check_size(errs, conds, MAX_BINDING_CONDITIONS, cpath):
        for i, c in enumerate(conds):
            _validate_label_name(errs, c, f"{cpath}[{i}]")
    if _check_size(errs, failures, MAX_BINDING_CONDITIONS, fpath):
        for i, c in enumerate(failures):
            _validate_label_name(errs, c, f"{fpath}[{i}]")
    _check_unique(errs, list(conds), cpath)
    seen: set[str] = set()
    for i, c in enumerate(failures):
        if c in seen:
            errs.duplicate(f"{fpath}[{i}]", c)
        seen.add(c)
        if c in conds:
            errs.invalid(f"{fpath}[{i}]", c, "bindingFailureConditions must not overlap with bindingConditions")
    if not conds and failures:
        errs.invalid(cpath, list(conds), "bindingConditions are required to use bindingFailureConditions")
    if not failures and conds:
        errs.invalid(fpath, list(failures), "bindingFailureConditions are required to use bindingConditions")


def _validate_uid(errs: _Errs, uid: str, path: str) -> None:
    try:
        uuid.UUID(uid)
    except ValueError as e:
        errs.invalid(path, uid, f"error validating uid: {e}")
        return
    if len(uid) != 36 or uid != uid.lower():
        errs.invalid(
            path, uid,
            "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` "
            "with lowercase hexadecimal characters",
        )


def _validate_skip_ops(errs: _Errs, ops: Sequence[str], path: str) -> None:
    s = set(ops)
    if "NodePrepareResources" in s and "NodeUnprepareResources" not in s and SKIP_NODE_OPERATIONS_ALL not in s:
        errs.invalid(path, list(ops), "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped")


# --------------------------------------------------------------------------- ResourceSlice


def _validate_slice(errs: _Errs, s: ResourceSlice, features: Features) -> None:
    _validate_object_meta(errs, s.metadata, False, names.dns1123_subdomain)
    _validate_slice_spec(errs, s.spec, "spec")


def _validate_slice_spec(errs: _Errs, spec: ResourceSliceSpec, path: str) -> None:
    setf = spec.model_fields_set
    _validate_driver_name(errs, spec.driver, f"{path}.driver")
    pool = spec.pool
    _validate_pool_name(errs, pool.name, f"{path}.pool.name")
    if pool.resource_slice_count <= 0:
        errs.invalid(f"{path}.pool.resourceSliceCount", pool.resource_slice_count, "must be greater than zero")
    if pool.generation < 0:
        errs.invalid(f"{path}.pool.generation", pool.generation, "must be greater than or equal to zero")

    chosen: list[str] = []
    if spec.node_name is not None:
        if spec.node_name:
            chosen.append("`nodeName`")
            _validate_node_name(errs, spec.node_name, f"{path}.nodeName")
        else:
            errs.invalid(f"{path}.nodeName", spec.node_name, "must be either unset or set to a non-empty string")
    if spec.node_selector is not None:
        chosen.append("`nodeSelector`")
        _validate_node_selector(errs, spec.node_selector, f"{path}.nodeSelector")
        if len(spec.node_selector.node_selector_terms) != 1:
            errs.invalid(f"{path}.nodeSelector.nodeSelectorTerms",
                         [to_wire(t) for t in spec.node_selector.node_selector_terms],
                         "must have exactly one node selector term")
    if spec.all_nodes is not None:
        if spec.all_nodes:
            chosen.append("`allNodes`")
        else:
            errs.invalid(f"{path}.allNodes", False, "must be either unset or set to true")
    if spec.per_device_node_selection is not None:
        if spec.per_device_node_selection:
            chosen.append("`perDeviceNodeSelection`")
        else:
            errs.invalid(f"{path}.perDeviceNodeSelection", False, "must be either unset or set to true")
    if not chosen:
        errs.required(path, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required")
    elif len(chosen) > 1:
        errs.invalid(path, "{" + ", ".join(chosen) + "}",
                     "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, "
                     "but multiple fields are set")
    if "shared_counters" in setf and "devices" in setf:
        errs.invalid(path, "", "only one of `sharedCounters` or `devices` is allowed")

    advanced = any(d.taints or d.consumes_counters or _has_list_attribute(d) for d in spec.devices)
    limit = MAX_DEVICES_ADVANCED if advanced else MAX_DEVICES
    dpath = f"{path}.devices"
    if _check_size(errs, spec.devices, limit, dpath):
        for i, d in enumerate(spec.devices):
            _validate_device(errs, d, f"{dpath}[{i}]", bool(spec.per_device_node_selection))
        _check_unique(errs, [d.name for d in spec.devices], dpath)

    cpath = f"{path}.sharedCounters"
    if _check_size(errs, spec.shared_counters, MAX_COUNTER_SETS, cpath):
        for i, cs in enumerate(spec.shared_counters):
            p = f"{cpath}[{i}]"
            if not cs.name:
                errs.required(f"{p}.name")
            else:
                _validate_label(errs, cs.name, f"{p}.name")
            _validate_counters(errs, cs.counters, MAX_COUNTERS_PER_SET, f"{p}.counters")
        _check_unique(errs, [cs.name for cs in spec.shared_counters], cpath)

    if spec.partition_type_attribute is not None:
        _validate_partition_type_attribute(errs, spec, path)
    _validate_skip_ops(errs, spec.skip_node_operations, f"{path}.skipNodeOperations")


def _validate_counters(errs: _Errs, counters: dict[str, Any], limit: int, path: str) -> None:
    if not counters:
        errs.required(path)
        return
    if _check_size(errs, counters, limit, path):
        for name in counters:
            _validate_label(errs, name, path)


def _has_list_attribute(d: Device) -> bool:
    """Whether any attribute of ``d`` holds a list value (keys gathered in C: no per-attribute call)."""
    attrs = d.attributes.values()
    if LIST_ATTRIBUTE_KEYS.isdisjoint(itertools.chain.from_iterable(attrs)):
        return False
    return any(a.get(k) is not None for a in attrs for k in LIST_ATTRIBUTE_KEYS)


def _validate_partition_type_attribute(errs: _Errs, spec: ResourceSliceSpec, path: str) -> None:
    name = spec.partition_type_attribute or ""
    if not any(d.consumes_counters for d in spec.devices):
        errs.invalid(f"{path}.partitionTypeAttribute", name,
                     "may only be set on a slice which declares devices that consume counters")
        return
    probe = _Errs()
    _validate_fully_qualified_name(probe, name, f"{path}.partitionTypeAttribute")
    if probe.items:
        errs.items.extend(probe.items)
        return
    bare = name[len(spec.driver) + 1:] if name.startswith(spec.driver + "/") else ""
    for i, d in enumerate(spec.devices):
        if not d.consumes_counters:
            continue
        apath = f"{path}.devices[{i}].attributes[{name}]"
        attr = d.attributes.get(name) or (d.attributes.get(bare) if bare else None)
        if attr is None:
            errs.required(apath, "device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set")
        elif attr.get("string") is None:
            errs.invalid(apath, dict(attr), "must be a string value because `partitionTypeAttribute` names this attribute")


def _validate_device(errs: _Errs, d: Device, path: str, per_device: bool) -> None:
    _validate_label(errs, d.name, f"{path}.name")
    n = len(d.attributes) + len(d.capacity)
    if n > MAX_ATTRIBUTES_AND_CAPACITIES:
        errs.invalid(path, n, f"the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}")
    values = 0
    attr_errs = _Errs()  # reported after the total, as upstream orders them
    apath = f"{path}.attributes"
    for k, a in d.attributes.items():
        if k not in _GOOD_NAMES:
            _validate_qualified_name(attr_errs, k, apath)
        # _plain_attribute_ok inlined for the usual short string: it runs 500,000 times.
        if len(a) == 1 and (((s := a.get("string")) is not None and len(s) <= MAX_ATTRIBUTE_VALUE_LENGTH
                             and s.isascii()) or _plain_attribute_ok(a)):
            values += 1  # one short scalar: nothing below can fail, no path is built
            continue
        lists = [x for x in (a.get("bools"), a.get("ints"), a.get("strings"), a.get("versions")) if x]
        values += sum(len(x) for x in lists) if lists else 1
        _validate_attribute(attr_errs, a, _key(apath, _truncate(k)))
    if values > MAX_ATTRIBUTE_VALUES:
        errs.invalid(path, values, f"the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}")
    errs.items.extend(attr_errs.items)
    cpath = f"{path}.capacity"
    multi = bool(d.allow_multiple_allocations)
    for k, c in d.capacity.items():
        if k not in _GOOD_NAMES:
            _validate_qualified_name(errs, k, cpath)
        _validate_capacity(errs, c, _key(cpath, _truncate(k)), multi)
    tpath = f"{path}.taints"
    if _check_size(errs, d.taints, MAX_TAINTS, tpath):
        for i, t in enumerate(d.taints):
            _validate_taint(errs, t, f"{tpath}[{i}]")
    ccpath = f"{path}.consumesCounters"
    if _check_size(errs, d.consumes_counters, MAX_CONSUMPTIONS_PER_DEVICE, ccpath):
        for i, cc in enumerate(d.consumes_counters):
            _validate_consumption(errs, cc, f"{ccpath}[{i}]")
        _check_unique(errs, [cc.counter_set for cc in d.consumes_counters], ccpath)
    if per_device:
        chosen: list[str] = []
        if d.node_name is not None:
            if d.node_name:
                chosen.append("`nodeName`")
                _validate_node_name(errs, d.node_name, f"{path}.nodeName")
            else:
                errs.invalid(f"{path}.nodeName", d.node_name, "must not be empty")
        if d.node_selector is not None:
            chosen.append("`nodeSelector`")
            _validate_node_selector(errs, d.node_selector, f"{path}.nodeSelector")
        if d.all_nodes is not None:
            if d.all_nodes:
                chosen.append("`allNodes`")
            else:
                errs.invalid(f"{path}.allNodes", False, "must be either unset or set to true")
        msg = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
               "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
        if not chosen:
            errs.required(path, msg)
        elif len(chosen) > 1:
            errs.invalid(path, "{" + ", ".join(chosen) + "}", msg)
    elif d.node_name is not None or d.node_selector is not None or d.all_nodes is not None:
        errs.invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                                 "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
    _validate_binding(errs, d.binding_conditions, d.binding_failure_conditions, path)
    _validate_node_allocatable(errs, d, f"{path}.nodeAllocatableResources")


def _truncate(key: str, max_len: int = MAX_DOMAIN_LENGTH + 1 + MAX_ID_LENGTH) -> str:
    max_len = max(max_len, 16)
    if len(key) <= max_len:
        return key
    remaining = max_len - 3
    return key[: (remaining + 1) // 2] + "..." + key[len(key) - remaining // 2:]


def _plain_attribute_ok(a: DeviceAttribute) -> bool:
    """One scalar value, short enough that no length or semver check can fail (most attributes).

    A shortcut only: ``False`` sends the attribute through the full checks.  It runs for
    every attribute of every device.
    """
    if len(a) != 1:
        return False
    s = a.get("string")
    if s is not None:
        return len(s) <= MAX_ATTRIBUTE_VALUE_LENGTH and (s.isascii() or len(s.encode()) <= MAX_ATTRIBUTE_VALUE_LENGTH)
    v = a.get("version")
    if v is not None:
        return len(v) <= MAX_ATTRIBUTE_VALUE_LENGTH and v.isascii() and _is_semver(v)
    return a.get("int") is not None or a.get("bool") is not None


@functools.lru_cache(maxsize=4096)
def _is_semver(v: str) -> bool:
    """Driver and CUDA versions repeat on every device of an inventory."""
    return names.SEMVER_RE.match(v) is not None


def _validate_attribute(errs: _Errs, a: DeviceAttribute, path: str) -> None:
    count = 0
    if a.get("bool") is not None:
        count += 1
    if a.get("int") is not None:
        count += 1
    string = a.get("string")
    if string is not None:
        count += 1
        if len(string.encode()) > MAX_ATTRIBUTE_VALUE_LENGTH:
            errs.too_long(f"{path}.string", MAX_ATTRIBUTE_VALUE_LENGTH)
    version = a.get("version")
    if version is not None:
        count += 1
        _validate_version(errs, version, f"{path}.version")
    for alias in ("bools", "ints", "strings", "versions"):
        values: list[Any] | None = a.get(alias)  # type: ignore[assignment]
        if values is None:
            continue
        count += 1
        if not values:
            errs.invalid(f"{path}.{alias}", [], "must not be empty if specified")
        for i, item in enumerate(values):
            if alias == "strings" and len(str(item).encode()) > MAX_ATTRIBUTE_VALUE_LENGTH:
                errs.too_long(f"{path}.strings[{i}]", MAX_ATTRIBUTE_VALUE_LENGTH)
            if alias == "versions":
                _validate_version(errs, str(item), f"{path}.versions[{i}]")
    if count == 0:
        errs.invalid(path, "", "exactly one value must be specified")
    elif count > 1:
        errs.invalid(path, dict(a), "exactly one value must be specified")


def _validate_version(errs: _Errs, v: str, path: str) -> None:
    if len(v) <= 64 and names.SEMVER_RE.match(v):
        return  # the common case: well-formed and far below the length limit
    if not names.SEMVER_RE.match(v):
        errs.invalid(path, v, "must be a string compatible with semver.org spec 2.0.0")
    if len(v.encode()) > MAX_ATTRIBUTE_VALUE_LENGTH:
        errs.too_long(path, MAX_ATTRIBUTE_VALUE_LENGTH)


def _validate_capacity(errs: _Errs, c: DeviceCapacity, path: str, multi: bool) -> None:
    if c.request_policy is None:
        return
    ppath = f"{path}.requestPolicy"
    if not multi:
        errs.forbidden(ppath, "allowMultipleAllocations must be true")
        return
    _validate_request_policy(errs, c.value, c.request_policy, ppath)


def _qstr(q: Any) -> str:
    return str(q)


def _validate_request_policy(errs: _Errs, cap_raw: Any, pol: CapacityRequestPolicy, path: str) -> None:
    cap = _exact(cap_raw)
    if cap is None:
        return
    if pol.valid_values and pol.valid_range is not None:
        errs.forbidden(path, 'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time')
        return
    if pol.valid_values:
        if pol.default is None:
            errs.required(f"{path}.default", "required when validValues is defined")
            return
        vpath = f"{path}.validValues"
        vals = [_exact(v) for v in pol.valid_values]
        default = _exact(pol.default)
        for i in range(len(vals) - 1):
            a, b = vals[i], vals[i + 1]
            if a is not None and b is not None and a > b:
                errs.invalid(f"{vpath}[{i + 1}]", _qstr(pol.valid_values[i + 1]), "values must be sorted in ascending order")
        if not _check_size(errs, pol.valid_values, MAX_VALID_VALUES, vpath):
            return
        found = False
        for i, (raw, v) in enumerate(zip(pol.valid_values, vals, strict=True)):
            if v is None:
                continue
            if v > cap:
                errs.invalid(f"{vpath}[{i}]", _qstr(raw), f"option is larger than capacity value: {_qstr(cap_raw)}")
            if default is not None and v == default:
                found = True
        _check_unique(errs, [_int_value(v) if v is not None else None for v in vals], vpath)
        if not found:
            errs.invalid(vpath, _qstr(pol.default), "default value is not valid according to the requestPolicy")
    elif pol.valid_range is not None:
        if pol.default is None:
            errs.required(f"{path}.default", "required when validRange is defined")
            return
        _validate_range(errs, cap_raw, cap, pol, f"{path}.validRange")


def _validate_range(errs: _Errs, cap_raw: Any, cap: Fraction, pol: CapacityRequestPolicy, path: str) -> None:
    r = pol.valid_range
    assert r is not None and pol.default is not None
    if r.min is None:
        errs.required(f"{path}.min", "required when validRange is defined")
        return
    mn, default = _exact(r.min), _exact(pol.default)
    mx = _exact(r.max) if r.max is not None else None
    step = _exact(r.step) if r.step is not None else None
    if mn is None or default is None:
        return
    if mn > cap:
        errs.invalid(f"{path}.min", _qstr(r.min), f"min is larger than capacity value: {_qstr(cap_raw)}")
    if default < mn:
        errs.invalid(f"{path}.default", _qstr(pol.default), f"default is less than min: {_qstr(r.min)}")
    if mx is not None:
        if mn > mx:
            errs.invalid(f"{path}.max", _qstr(r.min), f"min is larger than max: {_qstr(r.max)}")
        if mx > cap:
            errs.invalid(f"{path}.max", _qstr(r.max), f"max is larger than capacity value: {_qstr(cap_raw)}")
        if default > mx:
            errs.invalid(f"{path}.default", _qstr(pol.default), f"default is more than max: {_qstr(r.max)}")
    if step is None:
        return
    if step <= 0:
        errs.invalid(f"{path}.step", _qstr(r.step), "must be greater than zero")
        return
    if mn + step > cap:
        errs.invalid(f"{path}.step", _qstr(r.step),
                     f"one step {_fmt_sum(r.min, mn + step)} is larger than capacity value: {_qstr(cap_raw)}")
    unsafe = False
    for name, raw, v in (("default", pol.default, default), ("min", r.min, mn), ("max", r.max, mx), ("step", r.step, step)):
        if v is None:
            continue
        if v < 0:
            errs.invalid(f"{path}.{name}", _qstr(raw), "must be greater than or equal to 0")
            unsafe = True
        elif v > MAX_INT64:
            errs.invalid(f"{path}.{name}", _qstr(raw), f"must not be larger than {MAX_INT64}")
            unsafe = True
    if unsafe:
        return
    sv, mv = _int_value(step), _int_value(mn)
    for raw, v in ((pol.default, default), (r.max, mx)):
        if v is None:
            continue
        if (_int_value(v) - mv) % sv != 0:
            errs.invalid(f"{path}.step", _qstr(raw),
                         f"value is not a multiple of a given step ({_qstr(r.step)}) from ({_qstr(r.min)})")


def _fmt_sum(_raw: Any, value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(float(value))


def _validate_consumption(errs: _Errs, cc: DeviceCounterConsumption, path: str) -> None:
    if not cc.counter_set:
        errs.required(f"{path}.counterSet")
    else:
        _validate_label(errs, cc.counter_set, f"{path}.counterSet")
    _validate_counters(errs, cc.counters, MAX_COUNTERS_PER_CONSUMPTION, f"{path}.counters")


_NODE_ALLOCATABLE = {"cpu", "memory", "ephemeral-storage"}


def _validate_node_allocatable(errs: _Errs, d: Device, path: str) -> None:
    for rname, m in d.node_allocatable_resources.items():
        kpath = _key(path, rname)
        if rname not in _NODE_ALLOCATABLE and not rname.startswith("hugepages-"):
            errs.invalid(kpath, rname, "must be a node allocatable resource name")
        if m.mapping is None and m.overhead is None:
            errs.required(kpath, "at least one of mapping or overhead must be set")
        if m.mapping is not None:
            mp = m.mapping
            if mp.capacity_key is not None:
                if mp.capacity_key == "":
                    errs.invalid(f"{kpath}.mapping.capacityKey", "", "capacityKey must not be an empty string")
                elif mp.capacity_key not in d.capacity:
                    errs.not_found(f"{kpath}.mapping.capacityKey", mp.capacity_key)
                if mp.capacity_multiplier is None:
                    errs.required(f"{kpath}.mapping.capacityMultiplier", "capacityMultiplier is required when capacityKey is set")
                elif (_exact(mp.capacity_multiplier) or 0) <= 0:
                    errs.invalid(f"{kpath}.mapping.capacityMultiplier", _qstr(mp.capacity_multiplier), "must be positive")
            if mp.device_multiplier is not None and (_exact(mp.device_multiplier) or 0) <= 0:
                errs.invalid(f"{kpath}.mapping.deviceMultiplier", _qstr(mp.device_multiplier), "must be positive")
            if mp.capacity_multiplier is not None and mp.capacity_key is None:
                errs.required(f"{kpath}.mapping.capacityKey", "capacityKey is required when capacityMultiplier is set")
        if m.overhead is not None:
            o = m.overhead
            if o.per_pod is None and o.per_container is None:
                errs.invalid(f"{kpath}.overhead", "", "at least one of perPod or perContainer must be set")
            else:
                for name, q in (("perPod", o.per_pod), ("perContainer", o.per_container)):
                    if q is not None and (_exact(q) or 0) < 0:
                        errs.invalid(f"{kpath}.overhead.{name}", _qstr(q), "must be non-negative")


# --------------------------------------------------------------------------- claims


class _RequestNames:
    """request -> set of subrequest names (None for ``exactly`` requests)."""

    def __init__(self, dc: DeviceClaim) -> None:
        self.names: dict[str, set[str] | None] = {}
        for r in dc.requests:
            self.names[r.name] = {s.name for s in r.first_available} if r.first_available else None

    def has(self, ref: str) -> bool:
        parts = ref.split("/")
        if len(parts) > 2 or parts[0] not in self.names:
            return False
        if len(parts) == 1:
            return True
        subs = self.names[parts[0]]
        return subs is not None and parts[1] in subs


_REF_DETAIL = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


def _validate_request_ref(errs: _Errs, ref: str, path: str, rn: _RequestNames) -> None:
    parts = ref.split("/")
    if len(parts) > 2:
        errs.invalid(path, ref, _REF_DETAIL)
        return
    for p in parts:
        _validate_label(errs, p, path)
    if not rn.has(ref):
        errs.invalid(path, ref, _REF_DETAIL)


def _validate_request_refs(errs: _Errs, refs: Sequence[str], path: str, rn: _RequestNames) -> None:
    if _check_size(errs, refs, MAX_REQUESTS, path):
        for i, r in enumerate(refs):
            _validate_request_ref(errs, r, f"{path}[{i}]", rn)
        _check_unique(errs, list(refs), path)


def _validate_selectors(errs: _Errs, sels: Sequence[DeviceSelector], path: str, cel: _CEL) -> None:
    if _check_size(errs, sels, MAX_SELECTORS, path):
        for i, s in enumerate(sels):
            if s.cel is None:
                errs.required(f"{path}[{i}].cel")
            else:
                cel.check(errs, s.cel.expression, f"{path}[{i}].cel.expression")


def _validate_mode(errs: _Errs, mode: str | None, count: int | None, path: str) -> None:
    # v1 defaulting first: "" -> ExactCount, ExactCount with count 0 -> 1.
    mode = mode or "ExactCount"
    if mode == "All":
        if count:
            errs.invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'")
    elif mode == "ExactCount":
        effective = count if count else 1
        if effective <= 0:
            errs.invalid(f"{path}.count", effective, "must be greater than zero")
    else:
        errs.not_supported(f"{path}.allocationMode", mode, ALLOCATION_MODES)


def _validate_class_name(errs: _Errs, name: str, path: str) -> None:
    if not name:
        errs.required(path)
    else:
        errs.messages(path, name, names.dns1123_subdomain(name))


def _constraint_attributes(dc: DeviceClaim) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for c in dc.constraints:
        attr = c.match_attribute if c.match_attribute is not None else c.distinct_attribute
        if attr is None:
            continue
        for r in c.requests or [""]:
            out.setdefault(r, set()).add(attr)
    return out


def _validate_derived(errs: _Errs, attrs: Sequence[Any], path: str, req: str,
                      used: dict[str, set[str]], cel: _CEL) -> None:
    for i, a in enumerate(attrs):
        p = f"{path}[{i}]"
        if a.name:
            parent = req.split("/")[0]
            if not (a.name in used.get("", set()) or a.name in used.get(req, set()) or a.name in used.get(parent, set())):
                errs.invalid(f"{p}.name", a.name,
                             "must be referenced by at least one matchAttribute or distinctAttribute constraint targeting this request")
        if a.expression:
            cel.check(errs, a.expression, f"{p}.expression")
    _check_unique(errs, [a.name for a in attrs], path)


def _validate_device_claim(errs: _Errs, dc: DeviceClaim, path: str, cel: _CEL, features: Features) -> None:
    rn = _RequestNames(dc)
    used = _constraint_attributes(dc)
    rpath = f"{path}.requests"
    if _check_size(errs, dc.requests, MAX_REQUESTS, rpath):
        for i, r in enumerate(dc.requests):
            p = f"{rpath}[{i}]"
            _validate_label(errs, r.name, f"{p}.name")
            has_fa, has_ex = bool(r.first_available), r.exactly is not None
            if not has_fa and not has_ex:
                errs.required(p, "exactly one of `exactly` or `firstAvailable` is required")
            elif has_fa and has_ex:
                errs.invalid(p, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set")
            elif has_fa:
                fpath = f"{p}.firstAvailable"
                if _check_size(errs, r.first_available, MAX_SUBREQUESTS, fpath):
                    for j, s in enumerate(r.first_available):
                        sp = f"{fpath}[{j}]"
                        _validate_label(errs, s.name, f"{sp}.name")
                        _validate_class_name(errs, s.device_class_name, f"{sp}.deviceClassName")
                        _validate_selectors(errs, s.selectors, f"{sp}.selectors", cel)
                        _validate_derived(errs, s.derived_attributes, f"{sp}.derivedAttributes",
                                          f"{r.name}/{s.name}", used, cel)
                        _validate_mode(errs, s.allocation_mode, s.count, sp)
                        _validate_tolerations(errs, s.tolerations, f"{sp}.tolerations")
                    _check_unique(errs, [s.name for s in r.first_available], fpath)
            else:
                ex = r.exactly
                assert ex is not None
                ep = f"{p}.exactly"
                _validate_class_name(errs, ex.device_class_name, f"{ep}.deviceClassName")
                _validate_selectors(errs, ex.selectors, f"{ep}.selectors", cel)
                _validate_derived(errs, ex.derived_attributes, f"{ep}.derivedAttributes", r.name, used, cel)
                _validate_mode(errs, ex.allocation_mode, ex.count, ep)
                _validate_tolerations(errs, ex.tolerations, f"{ep}.tolerations")
        _check_unique(errs, [r.name for r in dc.requests], rpath)
    cpath = f"{path}.constraints"
    if _check_size(errs, dc.constraints, MAX_CONSTRAINTS, cpath):
        for i, c in enumerate(dc.constraints):
            p = f"{cpath}[{i}]"
            _validate_request_refs(errs, c.requests, f"{p}.requests", rn)
            if c.match_attribute is not None:
                _validate_fully_qualified_name(errs, c.match_attribute, f"{p}.matchAttribute")
            elif c.distinct_attribute is not None:
                _validate_fully_qualified_name(errs, c.distinct_attribute, f"{p}.distinctAttribute")
            elif features.consumable_capacity:
                errs.required(p, 'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set')
            else:
                errs.required(f"{p}.matchAttribute")
    gpath = f"{path}.config"
    if _check_size(errs, dc.config, MAX_CONFIG, gpath):
        for i, g in enumerate(dc.config):
            p = f"{gpath}[{i}]"
            _validate_request_refs(errs, g.requests, f"{p}.requests", rn)
            _validate_opaque(errs, g.opaque, p)


def _validate_claim(errs: _Errs, c: ResourceClaim, cel: _CEL, features: Features) -> None:
    _validate_object_meta(errs, c.metadata, True, names.dns1123_subdomain)
    _validate_device_claim(errs, c.spec.devices, "spec.devices", cel, features)
    if "status" in c.model_fields_set:
        _validate_claim_status(errs, c)


def _validate_claim_status(errs: _Errs, c: ResourceClaim) -> None:
    st = c.status
    rn = _RequestNames(c.spec.devices)
    rpath = "status.reservedFor"
    if _check_size(errs, st.reserved_for, MAX_RESERVED_FOR, rpath):
        for i, ref in enumerate(st.reserved_for):
            p = f"{rpath}[{i}]"
            if not ref.resource:
                errs.required(f"{p}.resource")
            if not ref.name:
                errs.required(f"{p}.name")
            if not ref.uid:
                errs.required(f"{p}.uid")
        _check_unique(errs, [r.uid for r in st.reserved_for], rpath)
    allocated: set[tuple[str, str, str, str | None]] = set()
    if st.allocation is not None:
        allocated = {(r.driver, r.pool, r.device, r.share_id) for r in st.allocation.devices.results}
    dpath = "status.devices"
    for i, ds in enumerate(st.devices):
        p = f"{dpath}[{i}]"
        _validate_driver_name(errs, ds.driver, f"{p}.driver")
        _validate_pool_name(errs, ds.pool, f"{p}.pool")
        _validate_label(errs, ds.device, f"{p}.device")
        if ds.share_id is not None:
            _validate_uid(errs, ds.share_id, f"{p}.shareID")
        dev_id = (ds.driver, ds.pool, ds.device, ds.share_id)
        if dev_id not in allocated:
            shown = f"{ds.driver}/{ds.pool}/{ds.device}" + (f"/{ds.share_id}" if ds.share_id else "")
            errs.invalid(p, shown, "must be an allocated device in the claim")
        if len(ds.conditions) > MAX_DEVICE_CONDITIONS:
            errs.too_many(f"{p}.conditions", len(ds.conditions), MAX_DEVICE_CONDITIONS)
        _validate_conditions(errs, ds.conditions, f"{p}.conditions")
        if "data" in ds.model_fields_set and ds.data is not None:
            _validate_raw(errs, ds.data, f"{p}.data", STATUS_DATA_MAX_BYTES, True)
        nd = ds.network_data
        if nd is not None:
            if nd.interface_name and len(nd.interface_name.encode()) > MAX_INTERFACE_NAME:
                errs.too_long(f"{p}.networkData.interfaceName", MAX_INTERFACE_NAME)
            if nd.hardware_address and len(nd.hardware_address.encode()) > MAX_HARDWARE_ADDRESS:
                errs.too_long(f"{p}.networkData.hardwareAddress", MAX_HARDWARE_ADDRESS)
            ipath = f"{p}.networkData.ips"
            if _check_size(errs, nd.ips, MAX_IPS, ipath):
                for j, ip in enumerate(nd.ips):
                    _validate_interface_address(errs, ip, f"{ipath}[{j}]")
                _check_unique(errs, list(nd.ips), ipath)
    _check_unique(errs, [(d.driver, d.pool, d.device, d.share_id) for d in st.devices], dpath)
    if st.reserved_for and st.allocation is None:
        errs.forbidden(rpath, "may not be specified when `allocated` is not set")
    if st.allocation is not None:
        validate_allocation_result(errs.items, st.allocation, "status.allocation", rn)


def _validate_interface_address(errs: _Errs, value: str, path: str) -> None:
    import ipaddress

    try:
        iface = ipaddress.ip_interface(value)
    except ValueError:
        errs.invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")
        return
    if "/" not in value:
        errs.invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")
    elif str(iface) != value:
        errs.invalid(path, value, f"must be in canonical form (\"{iface}\")")


_CONDITION_STATUSES = ("False", "True", "Unknown")


def _validate_conditions(errs: _Errs, conds: Sequence[Condition], path: str) -> None:
    seen: set[str] = set()
    for i, c in enumerate(conds):
        p = f"{path}[{i}]"
        if not c.type:
            errs.required(f"{p}.type")
        else:
            _validate_label_name(errs, c.type, f"{p}.type")
            if c.type in seen:
                errs.duplicate(f"{p}.type", c.type)
            seen.add(c.type)
        if c.status not in _CONDITION_STATUSES:
            errs.not_supported(f"{p}.status", c.status, _CONDITION_STATUSES)
        if c.observed_generation is not None and c.observed_generation < 0:
            errs.invalid(f"{p}.observedGeneration", c.observed_generation, "must be greater than or equal to zero")
        if not c.last_transition_time:
            errs.required(f"{p}.lastTransitionTime", "must be set")
        if not c.reason:
            errs.required(f"{p}.reason", "must be set")
        if c.message is None:
            errs.required(f"{p}.message", "must be set")


def validate_allocation_result(
    out: list[FieldError], alloc: AllocationResult, path: str, rn: _RequestNames | None = None
) -> None:
    """Rules for a *new* allocation result (what the scheduler writes)."""
    errs = _Errs()
    rpath = f"{path}.devices.results"
    if _check_size(errs, alloc.devices.results, MAX_RESULTS, rpath):
        for i, r in enumerate(alloc.devices.results):
            _validate_result(errs, r, f"{rpath}[{i}]", rn)
    gpath = f"{path}.devices.config"
    if _check_size(errs, alloc.devices.config, 2 * MAX_CONFIG, gpath):
        for i, g in enumerate(alloc.devices.config):
            p = f"{gpath}[{i}]"
            if not g.source:
                errs.required(f"{p}.source")
            elif g.source not in CONFIG_SOURCES:
                errs.not_supported(f"{p}.source", g.source, CONFIG_SOURCES)
            if rn is not None:
                _validate_request_refs(errs, g.requests, f"{p}.requests", rn)
            _validate_opaque(errs, g.opaque, p)
    if alloc.node_selector is not None:
        _validate_node_selector(errs, alloc.node_selector, f"{path}.nodeSelector")
    out.extend(errs.items)


def _validate_result(errs: _Errs, r: DeviceRequestAllocationResult, path: str, rn: _RequestNames | None) -> None:
    if rn is not None:
        _validate_request_ref(errs, r.request, f"{path}.request", rn)
    _validate_driver_name(errs, r.driver, f"{path}.driver")
    _validate_pool_name(errs, r.pool, f"{path}.pool")
    _validate_label(errs, r.device, f"{path}.device")
    _validate_binding(errs, r.binding_conditions, r.binding_failure_conditions, path)
    for i, t in enumerate(r.tolerations):
        _validate_toleration(errs, t, f"{path}.tolerations[{i}]")
    if r.share_id is not None:
        _validate_uid(errs, r.share_id, f"{path}.shareID")
    _validate_skip_ops(errs, r.skip_node_operations, f"{path}.skipNodeOperations")


def _validate_template(errs: _Errs, t: ResourceClaimTemplate, cel: _CEL, features: Features) -> None:
    _validate_object_meta(errs, t.metadata, True, names.dns1123_subdomain)
    meta = t.spec.metadata
    _validate_annotations(errs, meta.annotations, "spec.metadata.annotations")
    _validate_labels(errs, meta.labels, "spec.metadata.labels")
    for fname in sorted(meta.model_fields_set - {"labels", "annotations"}):
        alias = type(meta).model_fields[fname].alias or fname
        errs.forbidden(f"spec.metadata.{alias}", "cannot be set for a template")
    _validate_device_claim(errs, t.spec.spec.devices, "spec.spec.devices", cel, features)


def _validate_class(errs: _Errs, c: DeviceClass, cel: _CEL) -> None:
    _validate_object_meta(errs, c.metadata, False, names.dns1123_subdomain)
    _validate_selectors(errs, c.spec.selectors, "spec.selectors", cel)
    gpath = "spec.config"
    if _check_size(errs, c.spec.config, MAX_CONFIG, gpath):
        for i, g in enumerate(c.spec.config):
            _validate_opaque(errs, g.opaque, f"{gpath}[{i}]")
    ern = c.spec.extended_resource_name
    if ern is not None and not _is_extended_resource_name(ern):
        errs.invalid("spec.extendedResourceName", ern, "must be a valid extended resource name")


def _is_extended_resource_name(name: str) -> bool:
    # IsExtendedResourceName: not in kubernetes.io/ (except deviceclass.resource.kubernetes.io/
    # is allowed via prefix check upstream), no "requests." prefix, and a qualified name
    # once prefixed with "requests.".
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    if (domain == "kubernetes.io" or domain.endswith(".kubernetes.io")) and not name.startswith(
        "deviceclass.resource.kubernetes.io/"
    ):
        return False
    return not names.qualified_name("requests." + name)


def _validate_taint_rule(errs: _Errs, r: DeviceTaintRule) -> None:
    _validate_object_meta(errs, r.metadata, False, names.dns1123_subdomain)
    sel = r.spec.device_selector
    if sel is not None:
        if sel.driver is not None:
            _validate_driver_name(errs, sel.driver, "spec.deviceSelector.driver")
        if sel.pool is not None:
            _validate_pool_name(errs, sel.pool, "spec.deviceSelector.pool")
        if sel.device is not None:
            _validate_label(errs, sel.device, "spec.deviceSelector.device")
    _validate_taint(errs, r.spec.taint, "spec.taint")


# --------------------------------------------------------------------------- Pod, Node


def _validate_pod(errs: _Errs, pod: Pod) -> None:
    _validate_object_meta(errs, pod.metadata, True, names.dns1123_subdomain)
    _validate_pod_spec(errs, pod.spec, "spec", pod.metadata.name or "")


def _validate_pod_template(errs: _Errs, tmpl: PodTemplate) -> None:
    _validate_object_meta(errs, tmpl.metadata, True, names.dns1123_subdomain)
    _validate_labels(errs, tmpl.template.metadata.labels, "template.metadata.labels")
    # A template's pods get generated names, so the final-claim-name check has no pod name.
    _validate_pod_spec(errs, tmpl.template.spec, "template.spec", "")


def _validate_pod_spec(errs: _Errs, spec: PodSpec, prefix: str, pod_name: str) -> None:
    if spec.priority_class_name:
        # ValidatePriorityClassName: a DNS subdomain.
        errs.messages(f"{prefix}.priorityClassName", spec.priority_class_name, names.dns1123_subdomain(spec.priority_class_name))
    claim_names: set[str] = set()
    cpath = f"{prefix}.resourceClaims"
    for i, c in enumerate(spec.resource_claims):
        p = f"{cpath}[{i}]"
        if not c.name:
            errs.required(f"{p}.name")
        elif c.name in claim_names:
            errs.duplicate(f"{p}.name", c.name)
        else:
            name_errs = names.dns1123_label(c.name)
            errs.messages(f"{p}.name", c.name, name_errs)
            if not name_errs and c.resource_claim_template_name is not None and pod_name:
                final = f"{pod_name}-{c.name}"
                for m in names.dns1123_subdomain(final):
                    errs.invalid(f"{p}.name", final, "final ResourceClaim name: " + m)
            claim_names.add(c.name)
        if c.resource_claim_name is not None and c.resource_claim_template_name is not None:
            errs.invalid(p, to_wire(c), "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified")
        if c.resource_claim_name is None and c.resource_claim_template_name is None:
            errs.invalid(p, to_wire(c), "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        if c.resource_claim_name is not None:
            errs.messages(f"{p}.resourceClaimName", c.resource_claim_name, names.dns1123_subdomain(c.resource_claim_name))
        if c.resource_claim_template_name is not None:
            errs.messages(f"{p}.resourceClaimTemplateName", c.resource_claim_template_name,
                          names.dns1123_subdomain(c.resource_claim_template_name))
    for field_name, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, ctr in enumerate(containers):
            # The API server requires an image for every pod (and pod template) container.
            if not ctr.image:
                errs.required(f"{prefix}.{field_name}[{i}].image")
            base = f"{prefix}.{field_name}[{i}].resources.claims"
            seen: set[str] = set()
            for j, rc in enumerate(ctr.resources.claims):
                p = f"{base}[{j}]"
                if not rc.name:
                    errs.required(p)
                    continue
                key = rc.name
                if rc.request:
                    _validate_label(errs, rc.request, f"{p}.request")
                    key += "/" + rc.request
                if key in seen:
                    errs.duplicate(p, rc.name)
                seen.add(key)
                if rc.name not in claim_names:
                    detail = "must be one of the names in pod.spec.resourceClaims"
                    detail += " which is empty" if not claim_names else ": " + ", ".join(sorted(claim_names))
                    errs.not_found(p, rc.name, detail)


def _validate_node(errs: _Errs, node: Node) -> None:
    _validate_object_meta(errs, node.metadata, False, names.dns1123_subdomain)


# --------------------------------------------------------------------------- feature drops


def _drop(d: dict[str, Any], key: str, path: str, dropped: list[str]) -> None:
    if key in d:
        del d[key]
        dropped.append(path)


def _drop_claim_spec(devices: dict[str, Any], path: str, f: Features, dropped: list[str]) -> None:
    for i, r in enumerate(devices.get("requests") or []):
        if not isinstance(r, dict):
            continue
        p = f"{path}.requests[{i}]"
        if not f.prioritized_list:
            _drop(r, "firstAvailable", f"{p}.firstAvailable", dropped)
        ex = r.get("exactly")
        if isinstance(ex, dict):
            if not f.admin_access:
                _drop(ex, "adminAccess", f"{p}.exactly.adminAccess", dropped)
            if not f.device_taints:
                _drop(ex, "tolerations", f"{p}.exactly.tolerations", dropped)
            if not f.consumable_capacity:
                _drop(ex, "capacity", f"{p}.exactly.capacity", dropped)
        for j, s in enumerate(r.get("firstAvailable") or []):
            if isinstance(s, dict):
                if not f.device_taints:
                    _drop(s, "tolerations", f"{p}.firstAvailable[{j}].tolerations", dropped)
                if not f.consumable_capacity:
                    _drop(s, "capacity", f"{p}.firstAvailable[{j}].capacity", dropped)
    if not f.consumable_capacity:
        for i, c in enumerate(devices.get("constraints") or []):
            if isinstance(c, dict):
                _drop(c, "distinctAttribute", f"{path}.constraints[{i}].distinctAttribute", dropped)


def _nothing_to_drop(f: Features) -> bool:
    """Whether every gate :func:`drop_disabled_fields` consults is on (1.37's defaults)."""
    return all((f.admin_access, f.binding_conditions, f.consumable_capacity, f.device_status, f.device_taints,
                f.list_type_attributes, f.partitionable_devices, f.prioritized_list))


_DEVICE_GATED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("partitionable_devices", ("consumes_counters", "node_name", "node_selector", "all_nodes")),
    ("device_taints", ("taints",)),
    ("consumable_capacity", ("allow_multiple_allocations",)),
)


def _may_drop(obj: Wire, f: Features) -> bool:
    """Whether :func:`drop_disabled_fields` could drop anything from ``obj`` (never a false no).

    Read from the typed object's set fields (exactly the keys ``to_wire`` would write), so the
    thousands of slices, nodes and pods a big inventory holds are not dumped to find nothing.
    """
    if isinstance(obj, (ResourceClaim, ResourceClaimTemplate)):
        return True  # few per input: the dump answers
    if not isinstance(obj, ResourceSlice):
        return False  # no other kind has a gated field
    spec = obj.spec
    if not f.partitionable_devices and spec.model_fields_set & {"per_device_node_selection", "shared_counters"}:
        return True
    gated = {k for gate, keys in _DEVICE_GATED if not getattr(f, gate) for k in keys}
    if not (f.binding_conditions and f.device_status):
        gated |= {"binds_to_node", "binding_conditions", "binding_failure_conditions"}
    for d in spec.devices:
        if gated & d.model_fields_set:
            return True
        if not f.consumable_capacity and any("request_policy" in c.model_fields_set for c in d.capacity.values()):
            return True
        if not f.list_type_attributes and not LIST_ATTRIBUTE_KEYS.isdisjoint(
                itertools.chain.from_iterable(d.attributes.values())):
            return True
    return False


def drop_disabled_fields(kind: str, data: dict[str, Any], f: Features) -> list[str]:
    """Remove fields whose gate is off (in place), as the API server does on create."""
    dropped: list[str] = []
    spec = data.get("spec")
    if not isinstance(spec, dict):
        return dropped
    binding = f.binding_conditions and f.device_status
    if kind == "ResourceSlice":
        if not f.partitionable_devices:
            _drop(spec, "perDeviceNodeSelection", "spec.perDeviceNodeSelection", dropped)
            _drop(spec, "sharedCounters", "spec.sharedCounters", dropped)
        for i, d in enumerate(spec.get("devices") or []):
            if not isinstance(d, dict):
                continue
            p = f"spec.devices[{i}]"
            if not f.partitionable_devices:
                for k in ("consumesCounters", "nodeName", "nodeSelector", "allNodes"):
                    _drop(d, k, f"{p}.{k}", dropped)
            if not f.device_taints:
                _drop(d, "taints", f"{p}.taints", dropped)
            if not binding:
                for k in ("bindsToNode", "bindingConditions", "bindingFailureConditions"):
                    _drop(d, k, f"{p}.{k}", dropped)
            if not f.consumable_capacity:
                _drop(d, "allowMultipleAllocations", f"{p}.allowMultipleAllocations", dropped)
                for name, cap in (d.get("capacity") or {}).items():
                    if isinstance(cap, dict):
                        _drop(cap, "requestPolicy", f"{p}.capacity[{name}].requestPolicy", dropped)
            if not f.list_type_attributes:
                for name, attr in (d.get("attributes") or {}).items():
                    if isinstance(attr, dict):
                        for k in ("ints", "bools", "strings", "versions"):
                            _drop(attr, k, f"{p}.attributes[{name}].{k}", dropped)
    elif kind == "ResourceClaim":
        if isinstance(spec.get("devices"), dict):
            _drop_claim_spec(spec["devices"], "spec.devices", f, dropped)
        status = data.get("status")
        if isinstance(status, dict):
            if not f.device_status:
                _drop(status, "devices", "status.devices", dropped)
            alloc = status.get("allocation")
            if isinstance(alloc, dict):
                if not binding:
                    _drop(alloc, "allocationTimestamp", "status.allocation.allocationTimestamp", dropped)
                devs = alloc.get("devices")
                for i, r in enumerate((devs or {}).get("results") or [] if isinstance(devs, dict) else []):
                    if not isinstance(r, dict):
                        continue
                    p = f"status.allocation.devices.results[{i}]"
                    if not f.admin_access:
                        _drop(r, "adminAccess", f"{p}.adminAccess", dropped)
                    if not f.device_taints:
                        _drop(r, "tolerations", f"{p}.tolerations", dropped)
                    if not binding:
                        _drop(r, "bindingConditions", f"{p}.bindingConditions", dropped)
                        _drop(r, "bindingFailureConditions", f"{p}.bindingFailureConditions", dropped)
                    if not f.consumable_capacity:
                        _drop(r, "shareID", f"{p}.shareID", dropped)
                        _drop(r, "consumedCapacity", f"{p}.consumedCapacity", dropped)
            if not f.consumable_capacity:
                for i, ds in enumerate(status.get("devices") or []):
                    if isinstance(ds, dict):
                        _drop(ds, "shareID", f"status.devices[{i}].shareID", dropped)
    elif kind == "ResourceClaimTemplate":
        inner = spec.get("spec")
        if isinstance(inner, dict) and isinstance(inner.get("devices"), dict):
            _drop_claim_spec(inner["devices"], "spec.spec.devices", f, dropped)
    return dropped


# --------------------------------------------------------------------------- entry points


def _ref_of(obj: Wire, entry: Any = None) -> ObjectRef:
    kind = getattr(obj, "kind", None) or type(obj).__name__
    meta = getattr(obj, "metadata", None)
    name = (getattr(meta, "name", None) or getattr(meta, "generate_name", None) or "") if meta else ""
    ns = (getattr(meta, "namespace", None) or "") if meta else ""
    if kind in NAMESPACED and not ns:
        ns = DEFAULT_NAMESPACE
    if kind not in NAMESPACED:
        ns = ""
    if entry is not None:
        from drakit.model.load import LocatedRef

        doc = entry.document
        return LocatedRef(kind, name, ns, doc.source, doc.index, doc.line, doc.item)
    return ObjectRef(kind, name, ns)


def validate_object(obj: Wire, features: Features, *, cel: _CEL | None = None) -> tuple[list[FieldError], list[str]]:
    """(errors, dropped field paths) for one object, after dropping disabled fields."""
    cel = cel or _CEL(features)
    kind = getattr(obj, "kind", None) or type(obj).__name__
    dropped: list[str] = []
    if not _nothing_to_drop(features) and _may_drop(obj, features):  # else dumping each object is wasted
        data = to_wire(obj)
        dropped = drop_disabled_fields(kind, data, features)
        if dropped:
            obj = type(obj).model_validate(data)
    errs = _Errs()
    if isinstance(obj, ResourceSlice):
        _validate_slice(errs, obj, features)
    elif isinstance(obj, ResourceClaim):
        _validate_claim(errs, obj, cel, features)
    elif isinstance(obj, ResourceClaimTemplate):
        _validate_template(errs, obj, cel, features)
    elif isinstance(obj, DeviceClass):
        _validate_class(errs, obj, cel)
    elif isinstance(obj, DeviceTaintRule):
        _validate_taint_rule(errs, obj)
    elif isinstance(obj, Pod):
        _validate_pod(errs, obj)
    elif isinstance(obj, PodTemplate):
        _validate_pod_template(errs, obj)
    elif isinstance(obj, Node):
        _validate_node(errs, obj)
    return errs.items, dropped


def validate_report(objects: Iterable[Any], features: Features) -> ValidationReport:
    """Validate objects (typed objects or load.Entry values) and collect warnings."""
    cel = _CEL(features)
    out: list[ObjectErrors] = []
    warnings: list[str] = []
    for item in objects:
        entry = item if hasattr(item, "document") and hasattr(item, "obj") else None
        obj = entry.obj if entry is not None else item
        errors, dropped = validate_object(obj, features, cel=cel)
        if not errors and not dropped:
            continue
        ref = _ref_of(obj, entry)  # only now: a List item's line is found by composing its text
        loc = ref.location()
        prefix = f"{loc}: " if loc else ""
        for path in dropped:
            warnings.append(f"{prefix}{ref}: {path}: field dropped because its feature gate is disabled")
        if errors:
            out.append(ObjectErrors(ref, tuple(errors)))
    return ValidationReport(tuple(out), tuple(warnings))


def validate(objects: Iterable[Any], features: Features) -> list[ObjectErrors]:
    """Every API-server validation error of every object (see :func:`validate_report`)."""
    return list(validate_report(objects, features).errors)
