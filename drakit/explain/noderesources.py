"""kube-scheduler's NodeResourcesFit Filter for one pod against one node, in exact integers.

``explain`` needs it because a pod whose devices fit can still be held back by cpu, memory or
the node's pod limit; without it the scheduler's "Insufficient cpu" contradicts an "OK".
Quantities go through :class:`~drakit.quantity.Quantity` (cpu as ``MilliValue``, everything
else as ``Value``, as upstream's ``framework.Resource`` stores them), never through floats.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from drakit.quantity import Quantity, QuantityError

Obj = Mapping[str, Any]
Amounts = dict[str, int]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL = "ephemeral-storage"
PODS = "pods"
DEFAULT_MAX_PODS = 110  # kubelet's --max-pods default, for a hand-written Node that omits ``pods``
_TERMINAL = ("Succeeded", "Failed")


def _amount(name: str, value: Any) -> int:
    try:
        q = Quantity.parse(str(value))
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


def allocatable(node: Obj) -> Amounts:
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


def fit(request: Mapping[str, int], alloc: Mapping[str, int], used: Mapping[str, int]) -> list[Insufficient]:
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


def show(resource: str, amount: int) -> str:
    """An amount for a message: cpu in cores (``500m`` below one core), others as Quantities."""
    if resource == CPU:
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    return str(Quantity.from_int(amount)) if resource != MEMORY else _binary(amount)


def _binary(n: int) -> str:
    for suffix, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{suffix}"
    return str(n)
