"""core/v1 semantics every part of drakit shares, each with upstream's one contract.

* Node selectors, as ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` reads them:
  terms are ORed and the requirements of a term ANDed; a term with neither
  ``matchExpressions`` nor ``matchFields`` selects nothing, so a selector without terms
  matches no node; ``matchFields`` accept only ``In``/``NotIn`` with exactly one value; a term
  that does not parse (bad key, wrong value count, unknown operator) matches nothing and its
  errors are kept (:attr:`NodeSelector.errors`): DRA refuses a slice whose selector has any,
  the scheduler's node affinity just finds no match.  *Absent* is the caller's business: a
  pod without required affinity may go anywhere, a slice without a node selector is not
  "on" any node.
* Tolerations, as ``k8s.io/api/core/v1`` ``Toleration.ToleratesTaint`` (node taints, with the
  ``Lt``/``Gt`` operators behind TaintTolerationComparisonOperators) and
  ``resourceclaim.ToleratesTaint`` (device taints: ``Equal``/``Exists`` only).
* cpu and memory through :class:`~drakit.quantity.Quantity`, never ``float``: ``0.1`` cpu is
  exactly 100m, and ``1.5Gi`` exactly 1,610,612,736 bytes.

Inputs are wire dicts (``to_wire`` shapes); nothing here raises on malformed input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drakit.errors import ErrorType, FieldError
from drakit.gostr import parse_int64
from drakit.model.names import label_key, label_value
from drakit.quantity import Quantity, QuantityError

__all__ = [
    "CPU",
    "DEVICE_TAINT_EFFECTS",
    "MEMORY",
    "PODS",
    "Amounts",
    "Insufficient",
    "NodeSelector",
    "cpu_millis",
    "find_untolerated_taint",
    "memory_bytes",
    "node_allocatable",
    "node_resource_fit",
    "node_selector_matches",
    "parse_node_selector",
    "parse_quantity",
    "parsed_node_selector",
    "pod_matches_node_affinity",
    "pod_requests",
    "requested_by_node",
    "show_amount",
    "tolerates",
    "tolerates_device_taint",
    "untolerated_device_taint",
]

Obj = Mapping[str, Any]

_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS = ("In", "NotIn")


# --- node selectors ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Requirement:
    key: str
    operator: str
    values: tuple[str, ...]

    def matches_label(self, labels: Mapping[str, Any]) -> bool:
        """labels.Requirement.Matches."""
        present = self.key in labels
        value = labels.get(self.key, "")
        value = value if isinstance(value, str) else str(value)
        op = self.operator
        if op == "In":
            return present and value in self.values
        if op == "NotIn":
            return not present or value not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        have = parse_int64(value) if present else None
        want = parse_int64(self.values[0]) if len(self.values) == 1 else None
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want

    def matches_field(self, fields: Mapping[str, str]) -> bool:
        """fields.OneTermEqualSelector / OneTermNotEqualSelector: a missing field reads as ""."""
        equal = fields.get(self.key, "") == self.values[0]
        return equal if self.operator == "In" else not equal


@dataclass(frozen=True)
class _Term:
    expressions: tuple[_Requirement, ...]
    fields: tuple[_Requirement, ...]
    errors: tuple[FieldError, ...]

    def matches(self, labels: Mapping[str, Any], fields: Mapping[str, str]) -> bool:
        if self.errors:
            return False
        if not all(r.matches_label(labels) for r in self.expressions):
            return False
        # upstream skips the field selector for a node without a name (no fields at all)
        return not fields or all(r.matches_field(fields) for r in self.fields)


@dataclass(frozen=True)
class NodeSelector:
    """A parsed core/v1 NodeSelector: its non-empty terms and every parse error in them."""

    terms: tuple[_Term, ...]

    @property
    def errors(self) -> tuple[FieldError, ...]:
        return tuple(e for t in self.terms for e in t.errors)

    def matches(self, node: Obj) -> bool:
        """Whether some term matches ``node`` (terms that did not parse never do)."""
        meta = node.get("metadata") or {}
        labels = meta.get("labels") or {}
        name = meta.get("name") or ""
        fields = {"metadata.name": str(name)} if name else {}
        return any(t.matches(labels, fields) for t in self.terms)


def parse_node_selector(selector: Obj, path: str = "") -> NodeSelector:
    """``NewLazyErrorNodeSelector``: parse every non-empty term, keeping errors with field paths."""
    base = f"{path}.nodeSelectorTerms" if path else "nodeSelectorTerms"
    terms = []
    for i, term in enumerate(_seq(selector.get("nodeSelectorTerms"))):
        term = term if isinstance(term, Mapping) else {}
        exprs, fields = _seq(term.get("matchExpressions")), _seq(term.get("matchFields"))
        if not exprs and not fields:
            continue  # an empty term selects nothing
        errors: list[FieldError] = []
        parsed_exprs = _label_requirements(exprs, f"{base}[{i}].matchExpressions", errors)
        parsed_fields = _field_requirements(fields, f"{base}[{i}].matchFields", errors)
        terms.append(_Term(parsed_exprs, parsed_fields, tuple(errors)))
    return NodeSelector(tuple(terms))


def node_selector_matches(node: Obj, selector: Obj) -> bool:
    """``NodeSelector.Match``: a selector with no (non-empty) terms matches no node."""
    return parsed_node_selector(selector).matches(node)


_PARSED: dict[int, tuple[Obj, NodeSelector]] = {}
_PARSED_MAX = 4096


def parsed_node_selector(selector: Obj) -> NodeSelector:
    """:func:`parse_node_selector` memoised per selector object (published objects never change).

    The cache holds the selector itself, so its ``id`` cannot be reused while cached.
    """
    hit = _PARSED.get(id(selector))
    if hit is not None and hit[0] is selector:
        return hit[1]
    parsed = parse_node_selector(selector)
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[id(selector)] = (selector, parsed)
    return parsed


def _seq(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else ()


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in _seq(value))


def _label_requirements(items: Iterable[Any], path: str, errors: list[FieldError]) -> tuple[_Requirement, ...]:
    """nodeSelectorRequirementsAsSelector + labels.NewRequirement's checks."""
    out = []
    for i, raw in enumerate(items):
        raw = raw if isinstance(raw, Mapping) else {}
        p = f"{path}[{i}]"
        key, op, values = str(raw.get("key") or ""), raw.get("operator"), _strings(raw.get("values"))
        if op not in _LABEL_OPERATORS:
            errors.append(FieldError(f"{p}.operator", ErrorType.NOT_SUPPORTED, _go_str(op), _supported(_LABEL_OPERATORS)))
            continue
        found, shown = len(errors), _go_values(raw)
        if problems := label_key(key):  # labels.NewRequirement checks IsLabelKey
            errors.append(FieldError(f"{p}.key", ErrorType.INVALID, key, "; ".join(problems)))
        if op in ("In", "NotIn") and not values:
            errors.append(FieldError(f"{p}.values", ErrorType.INVALID, shown,
                                     "for 'in', 'notin' operators, values set can't be empty"))
        elif op in ("Exists", "DoesNotExist") and values:
            errors.append(FieldError(f"{p}.values", ErrorType.INVALID, shown,
                                     "values set must be empty for exists and does not exist"))
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                errors.append(FieldError(f"{p}.values", ErrorType.INVALID, shown,
                                         "for 'Gt', 'Lt' operators, exactly one value is required"))
            for j, v in enumerate(values):
                if parse_int64(v) is None:
                    errors.append(FieldError(f"{p}.values[{j}]", ErrorType.INVALID, v,
                                             "for 'Gt', 'Lt' operators, the value must be an integer"))
        for j, v in enumerate(values):
            if problems := label_value(v):
                errors.append(FieldError(f"{p}.values[{j}][{key}]", ErrorType.INVALID, v, "; ".join(problems)))
        if len(errors) == found:
            out.append(_Requirement(key, str(op), values))
    return tuple(out)


def _field_requirements(items: Iterable[Any], path: str, errors: list[FieldError]) -> tuple[_Requirement, ...]:
    """nodeSelectorRequirementsAsFieldSelector: In/NotIn with exactly one value."""
    out = []
    for i, raw in enumerate(items):
        raw = raw if isinstance(raw, Mapping) else {}
        p = f"{path}[{i}]"
        op, values = raw.get("operator"), _strings(raw.get("values"))
        if op not in _FIELD_OPERATORS:
            errors.append(FieldError(f"{p}.operator", ErrorType.NOT_SUPPORTED, _go_str(op), _supported(_FIELD_OPERATORS)))
        elif len(values) != 1:
            errors.append(FieldError(f"{p}.values", ErrorType.INVALID, _go_values(raw), "must have one element"))
        else:
            out.append(_Requirement(str(raw.get("key") or ""), str(op), values))
    return tuple(out)


def _go_str(value: Any) -> str:
    """A Go string field as decoded: absent is ""."""
    return "" if value is None else str(value)


def _go_values(raw: Mapping[str, Any]) -> list[str] | None:
    """``values`` as the ``[]string`` upstream prints in errors: absent is nil (``null``), not ``[]``."""
    values = raw.get("values")
    return None if values is None else list(_strings(values))


def _supported(values: Sequence[str]) -> str:
    return "supported values: " + ", ".join(f'"{v}"' for v in values)


def pod_matches_node_affinity(pod_spec: Obj, node: Obj) -> bool:
    """``RequiredNodeAffinity.Match``: ``spec.nodeSelector`` labels, then required node affinity.

    No ``nodeSelector`` and no required affinity: every node.  Required affinity present but
    with no terms: no node.
    """
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    wanted = pod_spec.get("nodeSelector") or {}
    if isinstance(wanted, Mapping) and any(k not in labels or str(labels[k]) != str(v) for k, v in wanted.items()):
        return False
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is None:
        return True
    return isinstance(required, Mapping) and parse_node_selector(required).matches(node)


# --- tolerations ------------------------------------------------------------------------------


def tolerates(toleration: Obj, taint: Obj, *, comparison_operators: bool = False) -> bool:
    """core/v1 ``Toleration.ToleratesTaint``.

    An empty effect or key matches every effect or key; an empty operator means ``Equal``
    (which then compares values even when the key is empty, as upstream does: validation
    is what forbids that combination).  ``Lt``/``Gt`` compare canonical decimal integers
    (no sign ``+``, no leading zeros) only when ``comparison_operators`` is on.
    """
    effect, key = toleration.get("effect") or "", toleration.get("key") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    if key and key != (taint.get("key") or ""):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    if op == "Exists":
        return True
    if op in ("Lt", "Gt") and comparison_operators:
        want = _canonical_int64(toleration.get("value") or "")
        have = _canonical_int64(taint.get("value") or "")
        if want is None or have is None:
            return False
        return have < want if op == "Lt" else have > want
    return False


def tolerates_device_taint(toleration: Obj, taint: Obj) -> bool:
    """``resourceclaim.ToleratesTaint``: the same rules with ``Equal`` and ``Exists`` only."""
    if (toleration.get("operator") or "Equal") not in ("Equal", "Exists"):
        return False
    return tolerates(toleration, taint)


def find_untolerated_taint(
    taints: Iterable[Obj], tolerations: Sequence[Obj], effects: Iterable[str], *, comparison_operators: bool = False
) -> Obj | None:
    """``FindMatchingUntoleratedTaint``: the first taint with one of ``effects`` no toleration covers."""
    wanted = set(effects)
    for taint in taints:
        if (taint.get("effect") or "") not in wanted:
            continue
        if not any(tolerates(t, taint, comparison_operators=comparison_operators) for t in tolerations):
            return taint
    return None


# The device taint effects the allocator acts on; "None" and effects it does not know are ignored.
DEVICE_TAINT_EFFECTS = ("NoSchedule", "NoExecute")


def untolerated_device_taint(taints: Iterable[Obj], tolerations: Sequence[Obj]) -> Obj | None:
    """The first device taint the allocator would hold against a request with ``tolerations``."""
    for taint in taints:
        if (taint.get("effect") or "") in DEVICE_TAINT_EFFECTS and not any(
            tolerates_device_taint(t, taint) for t in tolerations
        ):
            return taint
    return None


def _canonical_int64(text: str) -> int | None:
    """content.IsDecimalInteger then strconv.ParseInt: "0", or an optional "-" and no leading zero."""
    digits = text[1:] if text.startswith("-") else text
    if text != "0" and (not digits or digits[0] not in "123456789"):
        return None
    return parse_int64(text)


# --- cpu and memory ---------------------------------------------------------------------------


def cpu_millis(value: Any) -> int:
    """A cpu quantity in millicores, rounded up as the scheduler does (``MilliValue``).

    Raises :class:`~drakit.quantity.QuantityError` (a ``ValueError``) for a bad quantity.
    """
    return parse_quantity(value).milli_value()


def memory_bytes(value: Any) -> int:
    """A memory (or any byte) quantity in bytes, rounded up (``Value``)."""
    return parse_quantity(value).value()


def parse_quantity(value: Any) -> Quantity:
    """A quantity from a wire value: its text, an integer, or a YAML float as written."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        # float YAML scalars (0.5) are read as the text they were written as
        if isinstance(value, float) and value == value and abs(value) != float("inf"):
            return Quantity.parse(repr(value))
        raise QuantityError(f"quantities must be strings or integers, not {type(value).__name__}")
    return Quantity.parse(str(value))


# --- NodeResourcesFit -------------------------------------------------------------------------
# kube-scheduler's Filter for one pod against one node, in exact integers (cpu in millicores as
# ``MilliValue``, everything else as ``Value``, as upstream's ``framework.Resource`` holds them):
# ``explain`` and the simulator need the same "Insufficient cpu" the scheduler reports.

Amounts = dict[str, int]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL = "ephemeral-storage"
PODS = "pods"
DEFAULT_MAX_PODS = 110  # kubelet's --max-pods default, for a hand-written Node that omits ``pods``
_TERMINAL = ("Succeeded", "Failed")


def _amount(name: str, value: Any) -> int:
    try:
        q = parse_quantity(value)
    except QuantityError:
        return 0  # the API server rejects such a pod or node; nothing to add here
    return q.milli_value() if name == CPU else q.value()


def _container_requests(container: Obj) -> Amounts:
    """Requests with the API server's defaulting: a limit without a request is the request.

    Works on a pod spec too (its ``resources`` are the pod-level ones).
    """
    resources = container.get("resources") or {}
    merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return {name: _amount(name, v) for name, v in merged.items()}


def _add(into: Amounts, more: Mapping[str, int]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def _max(into: Amounts, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        if v > into.get(k, 0):
            into[k] = v


def pod_requests(pod: Obj) -> Amounts:
    """What the scheduler charges for the pod (``resourcehelper.PodRequests``).

    The sum over containers and restartable (sidecar) init containers, raised to the peak of
    any regular init container running beside the sidecars started before it; pod-level
    ``spec.resources`` (PodLevelResources) replaces that for cpu and memory; plus
    ``spec.overhead``.
    """
    spec = pod.get("spec") or {}
    total: Amounts = {}
    for c in spec.get("containers") or []:
        _add(total, _container_requests(c))
    sidecars: Amounts = {}
    init_peak: Amounts = {}
    for c in spec.get("initContainers") or []:
        req = _container_requests(c)
        if c.get("restartPolicy") == "Always":
            _add(sidecars, req)
            peak = dict(sidecars)
        else:
            peak = dict(sidecars)
            _add(peak, req)
        _max(init_peak, peak)
    _add(total, sidecars)
    _max(total, init_peak)
    pod_level = _container_requests(spec)
    total.update({k: v for k, v in pod_level.items() if k in (CPU, MEMORY)})
    _add(total, {k: _amount(k, v) for k, v in (spec.get("overhead") or {}).items()})
    return total


def node_allocatable(node: Obj) -> Amounts:
    """``status.allocatable`` as integers; an unlisted resource is 0, unlisted ``pods`` the kubelet default."""
    out = {k: _amount(k, v) for k, v in ((node.get("status") or {}).get("allocatable") or {}).items()}
    out.setdefault(PODS, DEFAULT_MAX_PODS)
    return out


def requested_by_node(pods: Iterable[Obj], *, exclude: Obj | None = None) -> dict[str, Amounts]:
    """Per node name: what its bound, non-terminal pods request, ``pods`` counting each once."""
    out: dict[str, Amounts] = {}
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if not node or p is exclude or (p.get("status") or {}).get("phase") in _TERMINAL:
            continue
        used = out.setdefault(str(node), {})
        _add(used, pod_requests(p))
        used[PODS] = used.get(PODS, 0) + 1
    return out


@dataclass(frozen=True)
class Insufficient:
    """One resource the node lacks for the pod, in the resource's unit (millicores for cpu)."""

    resource: str
    requested: int
    used: int
    capacity: int

    @property
    def reason(self) -> str:
        """Upstream's Filter wording."""
        return "Too many pods" if self.resource == PODS else f"Insufficient {self.resource}"

    @property
    def unresolvable(self) -> bool:
        """Even an empty node could not hold the request (upstream: UnschedulableAndUnresolvable)."""
        return self.requested > self.capacity


def node_resource_fit(request: Mapping[str, int], alloc: Mapping[str, int], used: Mapping[str, int]) -> list[Insufficient]:
    """``fitsRequest``: pod count first, then cpu, memory, ephemeral storage, then the rest by name."""
    out: list[Insufficient] = []
    if used.get(PODS, 0) + 1 > alloc.get(PODS, 0):
        out.append(Insufficient(PODS, 1, used.get(PODS, 0), alloc.get(PODS, 0)))
    order = [CPU, MEMORY, EPHEMERAL, *sorted(k for k in request if k not in (CPU, MEMORY, EPHEMERAL, PODS))]
    for name in order:
        want = request.get(name, 0)
        if want > 0 and want > alloc.get(name, 0) - used.get(name, 0):
            out.append(Insufficient(name, want, used.get(name, 0), alloc.get(name, 0)))
    return out


def show_amount(resource: str, amount: int) -> str:
    """An amount for a message: cpu in cores (``500m`` below one core), others as Quantities."""
    if resource == CPU:
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    return str(Quantity.from_int(amount)) if resource != MEMORY else _binary(amount)


def _binary(n: int) -> str:
    for suffix, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{suffix}"
    return str(n)
