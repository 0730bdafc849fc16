"""Random DRA scenarios: inventories, claims, in-use claims, gates — for hypothesis and bulk runs.

Written by hand because no library generates Kubernetes DRA objects.  Everything produced
is shaped like what the API server would store (v1 field names, DNS-label names, exactly one
node-selection field per slice), so any disagreement between drakit and the upstream
allocator is about allocation semantics, not about input validation.  Some inputs are
deliberately awkward but still storable: incomplete and obsolete pools, duplicate device
names (invalid pools), counter sets that do not exist, selectors that hit missing
attributes (CEL runtime errors), classes that do not exist, claims asking for more than the
32 devices a claim may hold.  A few are what only a bundle on disk can hold, because the
allocator's answer to them is still defined: node selectors that do not parse (pool
gathering fails), duplicate object names, and odd claim statuses (``status: {}``,
``allocation: {}`` or ``null``).

Every building block takes a :class:`Chooser` instead of hypothesis's ``draw``, so the same
code serves two drivers:

- :func:`scenarios` — a hypothesis strategy (``HypothesisChooser``), which shrinks failures;
- :func:`random_scenario` — plain ``random.Random`` (``RandomChooser``), about a hundred times
  faster to draw, for the bulk differential run (``tests/differential/bulk.py``).

Known version-skew areas (the oracle runs DRA v0.37.2; drakit and the shared conformance
vectors follow upstream master of 2026-07) must be avoided here; ``README.md`` lists them.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")

DRIVERS = ("gpu.example.com", "nic.example.com", "fpga.example.com")
COMMON_DOMAIN = "common.example.com"
MODELS = ("a100", "h100", "l4")
VERSIONS = ("1.0.0", "1.2.3", "2.0.0", "2.0.0-rc.1", "2.0.0+build.1")
# Awkward but valid quantity spellings: the canonical form, rounding and cross-suffix
# arithmetic of capacities and counters must follow Go's resource.Quantity exactly.
MEMORY = ("8Gi", "16Gi", "40Gi", "80Gi", "20G", "1.5Gi", "12884901888", "48Gi")
GATES = (
    "DRAAdminAccess",
    "DRAPrioritizedList",
    "DRAPartitionableDevices",
    "DRADeviceTaints",
    "DRAConsumableCapacity",
    "DRADeviceBindingConditions",
    "DRAResourceClaimDeviceStatus",
    "DRAListTypeAttributes",
)
NAMESPACE = "default"


class Chooser(Protocol):
    """The random decisions a scenario is built from."""

    def integer(self, lo: int, hi: int) -> int: ...

    def boolean(self) -> bool: ...

    def choice(self, options: Sequence[T]) -> T: ...

    def chance(self, p: float) -> bool: ...

    def subset(self, options: Sequence[T], min_size: int, max_size: int) -> list[T]: ...

    def shuffled(self, items: Sequence[T]) -> list[T]: ...


class RandomChooser:
    """Decisions from ``random.Random``: fast, reproducible from a seed, no shrinking."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def subset(self, options: Sequence[T], min_size: int, max_size: int) -> list[T]:
        k = self.rng.randint(min_size, min(max_size, len(options)))
        return self.rng.sample(list(options), k)

    def shuffled(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        self.rng.shuffle(out)
        return out


class HypothesisChooser:
    """Decisions drawn from hypothesis, so that failures shrink towards the plain case."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def boolean(self) -> bool:
        return self.draw(st.booleans())

    def choice(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(options))

    def chance(self, p: float) -> bool:
        """True with probability about ``p``.

        Hypothesis favours boundary values of bounded integers, so ``integers(0, n) == 0`` is
        true far more often than 1/(n+1); scrambling the draw spreads the boundaries out, and
        shrinking (towards 1) lands on "false", the plain case.
        """
        x = self.draw(st.integers(1, 9_999))
        return (x * 7_919) % 10_000 < p * 10_000

    def subset(self, options: Sequence[T], min_size: int, max_size: int) -> list[T]:
        # by index: options may be unhashable (dicts)
        indices = st.lists(
            st.integers(0, len(options) - 1),
            min_size=min_size,
            max_size=min(max_size, len(options)),
            unique=True,
        )
        return [options[i] for i in self.draw(indices)]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        return self.draw(st.permutations(items))


@dataclass(frozen=True)
class Scenario:
    """One allocation question: a bundle, the node to allocate for and the gates."""

    objects: tuple[dict[str, Any], ...]
    node: str
    gates: str

    def to_json(self) -> dict[str, Any]:
        return {"objects": list(self.objects), "node": self.node, "featureGates": self.gates}


@dataclass(frozen=True)
class _DeviceRef:
    driver: str
    pool: str
    name: str
    multi: bool
    capacity: tuple[str, ...]


def _slice(
    name: str, driver: str, pool: str, generation: int, count: int, placement: dict[str, Any]
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
    }
    spec.update(placement)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


# Node selector requirements that nodeaffinity.NewNodeSelector refuses (pool gathering fails).
_UNPARSABLE: tuple[dict[str, Any], ...] = (
    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-0", "node-1"]}]},
    {"matchFields": [{"key": "metadata.name", "operator": "Exists"}]},
    {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": []}]},
    {"matchExpressions": [{"key": "region", "operator": "In", "values": []}]},
    {"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["many"]}]},
    {"matchExpressions": [{"key": "planet", "operator": "Exists", "values": ["earth"]}]},
    {"matchExpressions": [{"key": "-region", "operator": "DoesNotExist"}]},
    {"matchExpressions": [{"key": "region", "operator": "Equals", "values": ["region-0"]}]},
)


def _region_selector(c: Chooser) -> dict[str, Any]:
    if c.chance(1 / 4):
        expression: dict[str, Any] = {"key": "planet", "operator": "Exists"}
    elif c.chance(1 / 8):
        expression = {"key": "gpus", "operator": c.choice(("Gt", "Lt")), "values": [c.choice(("4", "+7", "08"))]}
    else:
        expression = {"key": "region", "operator": "In", "values": [c.choice(("region-0", "region-1"))]}
    term: dict[str, Any] = {"matchExpressions": [expression]}
    if c.chance(1 / 10):
        op = c.choice(("In", "NotIn"))
        term["matchFields"] = [{"key": "metadata.name", "operator": op, "values": [c.choice(("node-0", "node-1"))]}]
    terms = [term]
    if c.chance(1 / 40):
        terms.append(dict(c.choice(_UNPARSABLE)))
    elif c.chance(1 / 30):
        terms.append({"matchExpressions": [{"key": "planet", "operator": "DoesNotExist"}]})  # two terms
    if c.chance(1 / 40):
        terms.insert(0, {})  # an empty term selects nothing
    return {"nodeSelectorTerms": c.shuffled(terms) if len(terms) > 1 else terms}


def _rarely(c: Chooser, enabled: bool, often: int = 3, rare: int = 25) -> bool:
    """Use a gated field mostly when its gate is on; now and then anyway, for the error path."""
    return c.chance(1 / ((often if enabled else rare) + 1))


def _node_choice(c: Chooser, nodes: list[str]) -> str:
    # nodes[0] is the node allocated for: favour it so that most pools are relevant.
    return nodes[0] if c.integer(0, 2) else c.choice(nodes)


def _placement(c: Chooser, nodes: list[str], gates: dict[str, bool]) -> dict[str, Any]:
    kinds = ["nodeName", "nodeName", "nodeName", "allNodes", "nodeSelector"]
    if _rarely(c, gates["DRAPartitionableDevices"], often=2):
        kinds = ["perDevice"]
    kind = c.choice(kinds)
    if kind == "nodeName":
        return {"nodeName": _node_choice(c, nodes)}
    if kind == "allNodes":
        return {"allNodes": True}
    if kind == "nodeSelector":
        return {"nodeSelector": _region_selector(c)}
    return {"perDeviceNodeSelection": True}


def _list_attribute(c: Chooser) -> dict[str, Any]:
    kind = c.choice(("strings", "ints", "bools", "versions"))
    options: dict[str, tuple[Any, ...]] = {
        "strings": ("nvlink", "pcie", "ib"),
        "ints": (0, 1, 2),
        "bools": (True, False),
        "versions": ("1.0.0", "1.2.3", "2.0.0"),
    }
    return {kind: c.subset(options[kind], 0 if c.chance(1 / 8) else 1, 2)}


def _attributes(c: Chooser, index: int, gates: dict[str, bool]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    attrs["index"] = {"int": index}
    if c.chance(4 / 5):
        attrs["model"] = {"string": c.choice(MODELS)}
    if c.chance(2 / 3):
        attrs["healthy"] = {"bool": c.boolean()}
    if c.chance(2 / 3):
        attrs["driverVersion"] = {"version": c.choice(VERSIONS)}
    if c.chance(1 / 3):
        attrs[f"{COMMON_DOMAIN}/numa"] = {"int": c.integer(0, 1)}
    if _rarely(c, gates["DRAListTypeAttributes"], often=1, rare=1_000_000):
        attrs["links"] = _list_attribute(c)
    if _rarely(c, gates["DRAListTypeAttributes"], often=3, rare=1_000_000):
        attrs[f"{COMMON_DOMAIN}/numa"] = {"ints": c.subset((0, 1), 1, 2)}
    return attrs


def _capacity_policy(c: Chooser) -> dict[str, Any]:
    return c.choice(
        (
            {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
            {"default": "4Gi", "validValues": ["4Gi", "8Gi"]},
            {"validRange": {"min": "2Gi", "max": "16Gi"}},
            {"default": "1Gi", "validRange": {"min": "1Gi", "max": "32Gi", "step": "512Mi"}},
            {"default": "1G", "validRange": {"min": "500M", "step": "1.5G"}},
            {"default": "0", "validValues": ["0", "2Gi", "16Gi"]},
        )
    )


def _device(
    c: Chooser,
    name: str,
    index: int,
    per_device: bool,
    nodes: list[str],
    counter_sets: dict[str, bool],
    gates: dict[str, bool],
) -> dict[str, Any]:
    """One device; ``counter_sets`` maps the pool's counter sets to whether they count "cores"."""
    device: dict[str, Any] = {"name": name}
    attrs = _attributes(c, index, gates)
    if attrs:
        device["attributes"] = attrs
    multi = _rarely(c, gates["DRAConsumableCapacity"], often=2)
    capacity: dict[str, Any] = {}
    if c.chance(3 / 4):
        memory: dict[str, Any] = {"value": c.choice(MEMORY)}
        if multi and c.boolean():
            memory["requestPolicy"] = _capacity_policy(c)
        capacity["memory"] = memory
    if c.boolean():
        compute: dict[str, Any] = {"value": c.choice(("50", "100", "1500m"))}
        if multi and c.chance(1 / 3):
            compute["requestPolicy"] = c.choice(
                ({"default": "10", "validRange": {"min": "10", "step": "10"}}, {"validValues": ["25", "50"]})
            )
        capacity["compute"] = compute
    if c.chance(1 / 10):
        capacity[f"{COMMON_DOMAIN}/bandwidth"] = {"value": c.choice(("10G", "100G"))}
    if capacity:
        device["capacity"] = capacity
    if multi:
        device["allowMultipleAllocations"] = True
    if counter_sets and c.chance(3 / 4):
        consumptions = []
        for counter_set in c.subset(sorted(counter_sets), 1, 2):
            counters: dict[str, Any] = {"memory": {"value": c.choice(("10Gi", "20Gi", "40Gi", "15G"))}}
            if c.chance(1 / 2 if counter_sets[counter_set] else 1 / 60):  # an unknown counter: invalid pool
                counters["cores"] = {"value": c.choice(("1", "2", "4"))}
            if c.chance(1 / 60):
                counter_set = "missing-set"
            consumptions.append({"counterSet": counter_set, "counters": counters})
        device["consumesCounters"] = consumptions
    if _rarely(c, gates["DRADeviceTaints"], often=4, rare=10):
        taints = []
        for key in c.subset(("example.com/unhealthy", "example.com/maintenance"), 1, 2):
            taint: dict[str, Any] = {"key": key, "effect": c.choice(("NoSchedule", "NoExecute", "None"))}
            if c.chance(3 / 4):
                taint["value"] = c.choice(("yes", "maybe"))
            taints.append(taint)
        device["taints"] = taints
    if _rarely(c, gates["DRADeviceBindingConditions"], often=5, rare=15):
        device["bindingConditions"] = ["Ready"]
        device["bindingFailureConditions"] = ["Failed"]
        if c.boolean():
            device["bindsToNode"] = True
    if per_device:
        choice = c.choice(("nodeName", "allNodes", "nodeSelector"))
        if choice == "nodeName":
            device["nodeName"] = _node_choice(c, nodes)
        elif choice == "allNodes":
            device["allNodes"] = True
        else:
            device["nodeSelector"] = _region_selector(c)
    return device


def _pool(
    c: Chooser,
    driver: str,
    pool: str,
    nodes: list[str],
    counter: itertools.count[int],
    gates: dict[str, bool],
    big: bool = False,
) -> tuple[list[dict[str, Any]], list[_DeviceRef]]:
    placement = _placement(c, nodes, gates)
    per_device = "perDeviceNodeSelection" in placement
    generation = c.integer(1, 2)
    counter_sets: dict[str, bool] = {}
    if _rarely(c, gates["DRAPartitionableDevices"], often=1, rare=8):
        counter_sets = {name: c.boolean() for name in ["counters-0", "counters-1"][: c.integer(1, 2)]}
    device_slices = c.integer(1, 3) if c.chance(1 / 4) else c.integer(1, 2)
    counter_slices = 0 if not counter_sets else (2 if len(counter_sets) == 2 and c.chance(1 / 3) else 1)
    slice_count = device_slices + counter_slices
    slices: list[dict[str, Any]] = []
    refs: list[_DeviceRef] = []
    index = 0
    names: list[str] = []
    for s in range(device_slices):
        devices = []
        size = c.integer(30, 36) if big and s == 0 else 0 if c.chance(1 / 12) else c.integer(1, 4)
        for _ in range(size):
            name = f"dev-{index}"
            if names and c.chance(1 / 200):
                name = c.choice(names)  # duplicate name: invalid pool
            names.append(name)
            device = _device(c, name, index, per_device, nodes, counter_sets, gates)
            devices.append(device)
            refs.append(
                _DeviceRef(
                    driver,
                    pool,
                    name,
                    bool(device.get("allowMultipleAllocations")),
                    tuple(device.get("capacity", {})),
                )
            )
            index += 1
        obj = _slice(f"{pool}-s{s}-{next(counter)}", driver, pool, generation, slice_count, placement)
        if devices or c.chance(1 / 2):
            obj["spec"]["devices"] = devices
        slices.append(obj)
    groups = [list(counter_sets)] if counter_slices == 1 else [[name] for name in counter_sets]
    for group in groups:
        obj = _slice(f"{pool}-c-{next(counter)}", driver, pool, generation, slice_count, placement)
        if slices and c.chance(1 / 15):
            # Two slices with one name: when upstream collects the rest of a pool it skips
            # slices named like one it already has.
            obj["metadata"]["name"] = c.choice(slices)["metadata"]["name"]
            if "nodeName" in obj["spec"]:
                obj["spec"]["nodeName"] = c.choice(nodes)
        shared = []
        for name in group:
            counters: dict[str, Any] = {"memory": {"value": c.choice(("40Gi", "80Gi", "45G"))}}
            if counter_sets[name]:
                counters["cores"] = {"value": c.choice(("2", "4", "8"))}
            shared.append({"name": name, "counters": counters})
        obj["spec"]["sharedCounters"] = shared
        slices.append(obj)
    shape = c.integer(0, 19)
    if shape == 0 and len(slices) > 1:
        slices.pop(c.integer(0, len(slices) - 1))  # incomplete pool
    elif shape == 1:
        stale = _slice(
            f"{pool}-old-{next(counter)}",
            driver,
            pool,
            generation + 1 if generation == 1 and c.boolean() else max(generation - 1, 0),
            1,
            placement,
        )
        stale["spec"]["devices"] = [{"name": "dev-old"}]
        slices.append(stale)
    return c.shuffled(slices), refs


def _class(name: str, driver: str, extra: str | None = None, config: bool = False) -> dict[str, Any]:
    selectors = [{"cel": {"expression": f'device.driver == "{driver}"'}}]
    if extra:
        selectors.append({"cel": {"expression": extra}})
    spec: dict[str, Any] = {"selectors": selectors}
    if config:
        spec["config"] = [{"opaque": {"driver": driver, "parameters": {"class": name}}}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


def _atoms(driver: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Selector atoms: (safe on every generated device, may fail at run time on some)."""
    a = f'device.attributes["{driver}"]'
    cap = f'device.capacity["{driver}"]'
    common = f'device.attributes["{COMMON_DOMAIN}"]'
    safe = (
        f'device.driver == "{driver}"',
        f"{a}.index >= 1",
        f"{a}.index % 2 == 0",
        f'"model" in {a} && {a}.model.startsWith("a")',
        f'"memory" in {cap} && {cap}.memory.isLessThan(quantity("20Gi"))',
        f'!("numa" in {common}) || {common}.numa == 1',
        "device.allowMultipleAllocations",
        f"cel.bind(d, {a}, d.index < 3)",
        f'{a}.exists(k, k == "model")',
        f'{a}.?model.orValue("none") == "l4"',
        f"has({a}.healthy) && {a}.healthy",
        f'{cap}.?compute.orValue(quantity("0")).isGreaterThan(quantity("60"))',
        f'{cap}.?memory.orValue(quantity("0")).compareTo(quantity("16Gi")) >= 0',
        f'{a}.?driverVersion.hasValue() && {a}.driverVersion.isLessThan(semver("2.0.0"))',
        f"{a}.size() > 3",
    )
    risky = (
        f'{a}.model == "h100"',
        f'{a}.model in ["a100", "h100"]',
        f"{a}.healthy",
        f'{a}.driverVersion.isGreaterThan(semver("1.0.0"))',
        f'{a}.driverVersion.compareTo(semver("2.0.0")) >= 0',
        f'{cap}.memory.compareTo(quantity("40Gi")) >= 0',
        f"{common}.numa == 0",
        f'{a}.model.matches("^[ah]")',
    )
    return safe, risky


def selector(c: Chooser, driver: str) -> str:
    """A realistic CEL selector; about one in six atoms can fail at run time on some devices."""
    safe, risky = _atoms(driver)

    def atom() -> str:
        return c.choice(risky if c.chance(1 / 6) else safe)

    shape = c.integer(0, 2)
    if shape == 0:
        return atom()
    if shape == 1:
        return f"({atom()}){c.choice((' && ', ' || '))}({atom()})"
    return f"!({atom()})"


def selector_strategy(driver: str) -> st.SearchStrategy[str]:
    """:func:`selector` as a hypothesis strategy."""
    return st.composite(lambda draw: selector(HypothesisChooser(draw), driver))()


_TOLERATIONS: tuple[dict[str, Any], ...] = (
    {"key": "example.com/unhealthy", "operator": "Exists"},
    {"key": "example.com/unhealthy", "operator": "Equal", "value": "maybe", "effect": "NoSchedule"},
    {"key": "example.com/unhealthy", "operator": "Equal", "value": "yes"},
    {"operator": "Exists", "effect": "NoExecute"},
    {"operator": "Exists", "effect": "NoSchedule"},
    {"key": "example.com/maintenance", "operator": "Exists", "effect": "None"},
    {"operator": "Exists"},
)


def _exact(
    c: Chooser, classes: list[tuple[str, str]], gates: dict[str, bool], sub: bool = False, big_counts: bool = False
) -> dict[str, Any]:
    class_name, driver = c.choice(classes)
    if c.chance(1 / 200):
        class_name = "no-such-class"
    out: dict[str, Any] = {"deviceClassName": class_name}
    if c.chance(1 / 8):
        out["allocationMode"] = "All"
    else:
        out["allocationMode"] = "ExactCount"
        if big_counts and c.chance(1 / 2):
            out["count"] = c.choice((16, 20, 33, 40))  # the 32-devices-per-claim limit
        else:
            out["count"] = 1 if c.chance(0.6) else c.integer(2, 3)
    if c.chance(1 / 3):
        out["selectors"] = [{"cel": {"expression": selector(c, driver)}} for _ in range(c.integer(1, 2))]
    if not sub and _rarely(c, gates["DRAAdminAccess"], often=6, rare=40):
        out["adminAccess"] = True  # subrequests have no adminAccess field
    if c.chance(1 / 3):
        out["tolerations"] = c.subset(_TOLERATIONS, 1, 2)
    if _rarely(c, gates["DRAConsumableCapacity"], often=2, rare=40):
        requests: dict[str, Any] = {"memory": c.choice(("1Gi", "3Gi", "6Gi", "20Gi", "1.5Gi", "700M", "0"))}
        if c.chance(1 / 4):
            requests["compute"] = c.choice(("10", "25", "33"))
        if c.chance(1 / 20):
            requests[f"{driver}/memory"] = "2Gi"  # the same capacity named both ways
        out["capacity"] = {"requests": requests}
    return out


def _claim(
    c: Chooser, index: int, classes: list[tuple[str, str]], gates: dict[str, bool], big_counts: bool = False
) -> dict[str, Any]:
    requests: list[dict[str, Any]] = []
    names: list[str] = []
    for r in range(c.integer(1, 3) if big_counts or c.chance(1 / 3) else 1):
        name = f"r{r}"
        if _rarely(c, gates["DRAPrioritizedList"], often=2, rare=40):
            subs = [
                {"name": f"s{s}", **_exact(c, classes, gates, sub=True, big_counts=big_counts)}
                for s in range(c.integer(1, 3))
            ]
            requests.append({"name": name, "firstAvailable": subs})
            names.extend([name, f"{name}/{subs[0]['name']}"])
        else:
            requests.append({"name": name, "exactly": _exact(c, classes, gates, big_counts=big_counts)})
            names.append(name)
    devices: dict[str, Any] = {"requests": requests}
    constraints = []
    for _ in range(c.integer(1, 2) if c.chance(1 / 4) else 0):
        constraint: dict[str, Any] = {}
        if c.boolean():
            constraint["requests"] = c.subset(names, 1, 2)
        attribute = c.choice(
            (
                "gpu.example.com/model",
                f"{COMMON_DOMAIN}/numa",
                "gpu.example.com/driverVersion",
                "nic.example.com/index",
                "gpu.example.com/links",
                "fpga.example.com/healthy",
            )
        )
        distinct = _rarely(c, gates["DRAConsumableCapacity"], often=2, rare=40)
        constraint["distinctAttribute" if distinct else "matchAttribute"] = attribute
        constraints.append(constraint)
    if constraints:
        devices["constraints"] = constraints
    if c.chance(1 / 6):
        config: dict[str, Any] = {"opaque": {"driver": DRIVERS[0], "parameters": {"claim": index}}}
        if c.boolean():
            config["requests"] = c.subset(names, 1, 2)
        devices["config"] = [config]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"claim-{index}", "namespace": NAMESPACE, "uid": f"uid-claim-{index}"},
        "spec": {"devices": devices},
    }


# Claim statuses beyond "no status" and "allocated with results": whether a claim counts as
# allocated is key presence (``allocation: {}`` is an allocation of nothing; ``null`` is none).
_ODD_ALLOCATIONS: tuple[dict[str, Any] | None, ...] = (
    {},
    {"devices": {}},
    {"devices": {"results": []}},
    {"nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}},
    None,
)


def _odd_status(c: Chooser) -> dict[str, Any]:
    if c.chance(1 / 3):
        return c.choice(({}, {"reservedFor": [{"resource": "pods", "name": "p", "uid": "uid-p"}]}))
    return {"allocation": c.choice(_ODD_ALLOCATIONS)}


def _in_use(c: Chooser, index: int, refs: list[_DeviceRef]) -> dict[str, Any]:
    if c.chance(1 / 12):
        status = _odd_status(c)
    else:
        status = {"allocation": {"devices": {"results": _in_use_results(c, index, refs)}}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"in-use-{index}", "namespace": NAMESPACE, "uid": f"uid-in-use-{index}"},
        "spec": {"devices": {"requests": [{"name": "r0", "exactly": {"deviceClassName": "in-use"}}]}},
        "status": status,
    }


def _in_use_results(c: Chooser, index: int, refs: list[_DeviceRef]) -> list[dict[str, Any]]:
    results = []
    for n, ref in enumerate(c.subset(refs, 1, 2)):
        result: dict[str, Any] = {"request": "r0", "driver": ref.driver, "pool": ref.pool, "device": ref.name}
        if c.chance(1 / 6):
            result["adminAccess"] = True
        elif ref.multi and c.boolean():
            result["shareID"] = f"00000000-0000-4000-8000-{index:06d}{n:06d}"
            consumed = {}
            if "memory" in ref.capacity:
                consumed["memory"] = c.choice(("1Gi", "4Gi", "8Gi", "1.5Gi", "1G"))
            if "compute" in ref.capacity and c.boolean():
                consumed["compute"] = c.choice(("10", "50"))
            if consumed:
                result["consumedCapacity"] = consumed
        results.append(result)
    return results


def gate_string(gates: dict[str, bool]) -> str:
    return ",".join(f"{gate}={str(gates[gate]).lower()}" for gate in GATES)


def build_scenario(c: Chooser) -> Scenario:
    """A whole scenario: nodes, slices, classes, in-use claims, claims to allocate, gates."""
    gates = {gate: c.boolean() for gate in GATES}
    # Claims near the 32-device limit: either a pool of 30-36 devices (for "All") or counts
    # of 16-40 with pools of ordinary size, never both: a count of 16 over 36 devices that
    # a constraint rejects is a search neither side finishes in its deadline.
    scale = c.choice(("big-pool", "big-counts")) if c.chance(1 / 25) else ""
    node_names = [f"node-{i}" for i in range(c.integer(1, 3))]
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n, "labels": {"region": f"region-{i % 2}", "planet": "earth", "gpus": str(4 + 2 * i)}},
        }
        for i, n in enumerate(node_names)
    ]
    counter = itertools.count()
    drivers = c.subset(DRIVERS, 1, len(DRIVERS))
    slices: list[dict[str, Any]] = []
    refs: list[_DeviceRef] = []
    for driver in drivers:
        for p in range(c.integer(1, 2)):
            big = scale == "big-pool" and not slices
            pool_slices, pool_refs = _pool(
                c, driver, f"{driver.split('.')[0]}-pool-{p}", node_names, counter, gates, big
            )
            slices.extend(pool_slices)
            refs.extend(pool_refs)
    classes = [_class(d.split(".")[0], d, config=c.chance(1 / 6)) for d in drivers]
    class_refs = [(d.split(".")[0], d) for d in drivers]
    if c.chance(1 / 4):
        driver = c.choice(drivers)
        name = f"{driver.split('.')[0]}-big"
        classes.append(_class(name, driver, extra=selector(c, driver)))
        class_refs.append((name, driver))
    in_use = [_in_use(c, i, refs) for i in range(c.integer(0, 2))] if refs else []
    claims = [
        _claim(c, i, class_refs, gates, scale == "big-counts") for i in range(c.integer(1, 3) if c.chance(1 / 2) else 1)
    ]
    for claim in claims:
        if c.chance(1 / 30):
            claim["status"] = _odd_status(c)  # still to be allocated unless it has an allocation
    if len(claims) > 1 and c.chance(1 / 30):
        claims[-1]["metadata"]["name"] = claims[0]["metadata"]["name"]  # duplicate claim names
    if c.chance(1 / 40):
        # Two classes with one name: the lister returns the first.
        twin = _class(classes[0]["metadata"]["name"], c.choice(drivers), extra=selector(c, c.choice(drivers)))
        classes.insert(c.integer(0, len(classes)), twin)
    objects = [*nodes, *slices, *classes, *in_use, *claims]
    return Scenario(objects=tuple(objects), node=node_names[0], gates=gate_string(gates))


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """:func:`build_scenario` as a hypothesis strategy."""
    return build_scenario(HypothesisChooser(draw))


def random_scenario(seed: int | str) -> Scenario:
    """The scenario for one seed (the bulk run uses ``f"{run_seed}:{case_index}"``)."""
    return build_scenario(RandomChooser(random.Random(seed)))
