"""Hypothesis strategies for random DRA scenarios: inventories, claims, in-use claims, gates.

Written by hand because no library generates Kubernetes DRA objects.  Everything produced
is shaped like what the API server would store (v1 field names, DNS-label names, exactly one
node-selection field per slice), so any disagreement between drakit and the upstream
allocator is about allocation semantics, not about input validation.  Some inputs are
deliberately awkward but still storable: incomplete and obsolete pools, duplicate device
names (invalid pools), counter sets that do not exist, selectors that hit missing
attributes (CEL runtime errors), classes that do not exist.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

DRIVERS = ("gpu.example.com", "nic.example.com", "fpga.example.com")
COMMON_DOMAIN = "common.example.com"
MODELS = ("a100", "h100", "l4")
VERSIONS = ("1.0.0", "1.2.3", "2.0.0", "2.0.0-rc.1")
MEMORY = ("8Gi", "16Gi", "40Gi", "80Gi")
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


def _region_selector(region: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": [region]}]}]
    }


def _chance(draw: st.DrawFn, p: float) -> bool:
    """True with probability about ``p``.

    Hypothesis favours boundary values of bounded integers, so ``integers(0, n) == 0`` is
    true far more often than 1/(n+1); scrambling the draw spreads the boundaries out, and
    shrinking (towards 1) lands on "false", the plain case.
    """
    x = draw(st.integers(1, 9_999))
    return (x * 7_919) % 10_000 < p * 10_000


def _rarely(draw: st.DrawFn, enabled: bool, often: int = 3, rare: int = 25) -> bool:
    """Use a gated field mostly when its gate is on; now and then anyway, for the error path."""
    return _chance(draw, 1 / ((often if enabled else rare) + 1))


def _node_choice(draw: st.DrawFn, nodes: list[str]) -> str:
    # nodes[0] is the node allocated for: favour it so that most pools are relevant.
    return nodes[0] if draw(st.integers(0, 2)) else draw(st.sampled_from(nodes))


@st.composite
def _placement(draw: st.DrawFn, nodes: list[str], gates: dict[str, bool]) -> dict[str, Any]:
    kinds = ["nodeName", "nodeName", "nodeName", "allNodes", "nodeSelector"]
    if _rarely(draw, gates["DRAPartitionableDevices"], often=2):
        kinds = ["perDevice"]
    kind = draw(st.sampled_from(kinds))
    if kind == "nodeName":
        return {"nodeName": _node_choice(draw, nodes)}
    if kind == "allNodes":
        return {"allNodes": True}
    if kind == "nodeSelector":
        return {"nodeSelector": _region_selector(draw(st.sampled_from(("region-0", "region-1"))))}
    return {"perDeviceNodeSelection": True}


@st.composite
def _attributes(draw: st.DrawFn, index: int) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    attrs["index"] = {"int": index}
    if _chance(draw, 4 / 5):
        attrs["model"] = {"string": draw(st.sampled_from(MODELS))}
    if _chance(draw, 2 / 3):
        attrs["healthy"] = {"bool": draw(st.booleans())}
    if _chance(draw, 2 / 3):
        attrs["driverVersion"] = {"version": draw(st.sampled_from(VERSIONS))}
    if _chance(draw, 1 / 3):
        attrs[f"{COMMON_DOMAIN}/numa"] = {"int": draw(st.integers(0, 1))}
    if _chance(draw, 1 / 6):
        attrs["links"] = {
            "strings": draw(st.lists(st.sampled_from(("nvlink", "pcie", "ib")), max_size=3, unique=True))
        }
    return attrs


@st.composite
def _device(
    draw: st.DrawFn,
    name: str,
    index: int,
    per_device: bool,
    nodes: list[str],
    counter_sets: list[str],
    gates: dict[str, bool],
) -> dict[str, Any]:
    device: dict[str, Any] = {"name": name}
    attrs = draw(_attributes(index))
    if attrs:
        device["attributes"] = attrs
    multi = _rarely(draw, gates["DRAConsumableCapacity"], often=2)
    capacity: dict[str, Any] = {}
    if _chance(draw, 3 / 4):
        memory: dict[str, Any] = {"value": draw(st.sampled_from(MEMORY))}
        if multi and draw(st.booleans()):
            memory["requestPolicy"] = draw(
                st.sampled_from(
                    (
                        {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
                        {"default": "4Gi", "validValues": ["4Gi", "8Gi"]},
                        {"validRange": {"min": "2Gi", "max": "16Gi"}},
                    )
                )
            )
        capacity["memory"] = memory
    if draw(st.booleans()):
        capacity["compute"] = {"value": draw(st.sampled_from(("50", "100")))}
    if capacity:
        device["capacity"] = capacity
    if multi:
        device["allowMultipleAllocations"] = True
    if counter_sets and _chance(draw, 3 / 4):
        counter_set = draw(
            st.sampled_from([*counter_sets, "missing-set"] if _chance(draw, 1 / 40) else counter_sets)
        )
        device["consumesCounters"] = [
            {
                "counterSet": counter_set,
                "counters": {"memory": {"value": draw(st.sampled_from(("10Gi", "20Gi", "40Gi")))}},
            }
        ]
    if _rarely(draw, gates["DRADeviceTaints"], often=4, rare=10):
        device["taints"] = [
            {
                "key": "example.com/unhealthy",
                "value": draw(st.sampled_from(("yes", "maybe"))),
                "effect": draw(st.sampled_from(("NoSchedule", "NoExecute", "None"))),
            }
        ]
    if _rarely(draw, gates["DRADeviceBindingConditions"], often=5, rare=15):
        device["bindingConditions"] = ["Ready"]
        device["bindingFailureConditions"] = ["Failed"]
        if draw(st.booleans()):
            device["bindsToNode"] = True
    if per_device:
        choice = draw(st.sampled_from(("nodeName", "allNodes", "nodeSelector")))
        if choice == "nodeName":
            device["nodeName"] = _node_choice(draw, nodes)
        elif choice == "allNodes":
            device["allNodes"] = True
        else:
            device["nodeSelector"] = _region_selector(draw(st.sampled_from(("region-0", "region-1"))))
    return device


@st.composite
def _pool(
    draw: st.DrawFn,
    driver: str,
    pool: str,
    nodes: list[str],
    counter: itertools.count[int],
    gates: dict[str, bool],
) -> tuple[list[dict[str, Any]], list[_DeviceRef]]:
    placement = draw(_placement(nodes, gates))
    per_device = "perDeviceNodeSelection" in placement
    generation = draw(st.integers(1, 2))
    counter_sets = ["counters-0"] if _rarely(draw, gates["DRAPartitionableDevices"], often=1, rare=8) else []
    device_slices = draw(st.integers(1, 2))
    slice_count = device_slices + len(counter_sets)
    slices: list[dict[str, Any]] = []
    refs: list[_DeviceRef] = []
    index = 0
    names: list[str] = []
    for s in range(device_slices):
        devices = []
        for _ in range(0 if _chance(draw, 1 / 12) else draw(st.integers(1, 4))):
            name = f"dev-{index}"
            if names and _chance(draw, 1 / 100):
                name = draw(st.sampled_from(names))  # duplicate name: invalid pool
            names.append(name)
            device = draw(_device(name, index, per_device, nodes, counter_sets, gates))
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
        if devices or _chance(draw, 1 / 2):
            obj["spec"]["devices"] = devices
        slices.append(obj)
    for name in counter_sets:
        obj = _slice(f"{pool}-c-{next(counter)}", driver, pool, generation, slice_count, placement)
        obj["spec"]["sharedCounters"] = [
            {"name": name, "counters": {"memory": {"value": draw(st.sampled_from(("40Gi", "80Gi")))}}}
        ]
        slices.append(obj)
    shape = draw(st.integers(0, 19))
    if shape == 0 and len(slices) > 1:
        slices.pop(draw(st.integers(0, len(slices) - 1)))  # incomplete pool
    elif shape == 1:
        stale = _slice(
            f"{pool}-old-{next(counter)}",
            driver,
            pool,
            generation + 1 if generation == 1 and draw(st.booleans()) else max(generation - 1, 0),
            1,
            placement,
        )
        stale["spec"]["devices"] = [{"name": "dev-old"}]
        slices.append(stale)
    return draw(st.permutations(slices)), refs


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


def selector_strategy(driver: str) -> st.SearchStrategy[str]:
    """Realistic CEL selector shapes, including ones that fail at run time on some devices."""
    a = f'device.attributes["{driver}"]'
    c = f'device.capacity["{driver}"]'
    atoms = st.sampled_from(
        (
            f'device.driver == "{driver}"',
            f'{a}.model == "h100"',
            f'{a}.model in ["a100", "h100"]',
            f'"model" in {a} && {a}.model.startsWith("a")',
            f"{a}.index >= 1",
            f"{a}.index % 2 == 0",
            f"{a}.healthy",
            f'{a}.driverVersion.isGreaterThan(semver("1.0.0"))',
            f'{a}.driverVersion.compareTo(semver("2.0.0")) >= 0',
            f'{c}.memory.compareTo(quantity("40Gi")) >= 0',
            f'"memory" in {c} && {c}.memory.isLessThan(quantity("20Gi"))',
            f'device.attributes["{COMMON_DOMAIN}"].numa == 0',
            f'!("numa" in device.attributes["{COMMON_DOMAIN}"]) || device.attributes["{COMMON_DOMAIN}"].numa == 1',
            "device.allowMultipleAllocations",
            f"cel.bind(d, {a}, d.index < 3)",
            f'{a}.exists(k, k == "model")',
        )
    )
    return st.one_of(
        atoms,
        st.tuples(atoms, st.sampled_from((" && ", " || ")), atoms).map(lambda t: f"({t[0]}){t[1]}({t[2]})"),
        atoms.map(lambda s: f"!({s})"),
    )


@st.composite
def _exact(
    draw: st.DrawFn, classes: list[tuple[str, str]], gates: dict[str, bool], sub: bool = False
) -> dict[str, Any]:
    class_name, driver = draw(st.sampled_from(classes))
    if _chance(draw, 1 / 200):
        class_name = "no-such-class"
    out: dict[str, Any] = {"deviceClassName": class_name}
    if _chance(draw, 1 / 8):
        out["allocationMode"] = "All"
    else:
        out["allocationMode"] = "ExactCount"
        out["count"] = 1 if _chance(draw, 0.6) else draw(st.integers(2, 3))
    if _chance(draw, 1 / 3):
        out["selectors"] = [
            {"cel": {"expression": e}}
            for e in draw(st.lists(selector_strategy(driver), min_size=1, max_size=2))
        ]
    if not sub and _rarely(draw, gates["DRAAdminAccess"], often=6, rare=40):
        out["adminAccess"] = True  # subrequests have no adminAccess field
    if _chance(draw, 1 / 5):
        out["tolerations"] = [
            draw(
                st.sampled_from(
                    (
                        {"key": "example.com/unhealthy", "operator": "Exists"},
                        {
                            "key": "example.com/unhealthy",
                            "operator": "Equal",
                            "value": "maybe",
                            "effect": "NoSchedule",
                        },
                        {"operator": "Exists", "effect": "NoExecute"},
                    )
                )
            )
        ]
    if _rarely(draw, gates["DRAConsumableCapacity"], often=2, rare=40):
        out["capacity"] = {"requests": {"memory": draw(st.sampled_from(("1Gi", "3Gi", "6Gi", "20Gi")))}}
    return out


@st.composite
def _claim(
    draw: st.DrawFn, index: int, classes: list[tuple[str, str]], gates: dict[str, bool]
) -> dict[str, Any]:
    requests: list[dict[str, Any]] = []
    names: list[str] = []
    for r in range(draw(st.integers(1, 3))):
        name = f"r{r}"
        if _rarely(draw, gates["DRAPrioritizedList"], often=2, rare=40):
            subs = [
                {"name": f"s{s}", **draw(_exact(classes, gates, sub=True))}
                for s in range(draw(st.integers(1, 3)))
            ]
            requests.append({"name": name, "firstAvailable": subs})
            names.extend([name, f"{name}/{subs[0]['name']}"])
        else:
            requests.append({"name": name, "exactly": draw(_exact(classes, gates))})
            names.append(name)
    devices: dict[str, Any] = {"requests": requests}
    constraints = []
    for _ in range(draw(st.integers(1, 2)) if _chance(draw, 1 / 4) else 0):
        constraint: dict[str, Any] = {}
        if draw(st.booleans()):
            constraint["requests"] = draw(
                st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True)
            )
        attribute = draw(
            st.sampled_from(
                (
                    "gpu.example.com/model",
                    f"{COMMON_DOMAIN}/numa",
                    "gpu.example.com/driverVersion",
                    "nic.example.com/index",
                )
            )
        )
        distinct = _rarely(draw, gates["DRAConsumableCapacity"], often=2, rare=40)
        constraint["distinctAttribute" if distinct else "matchAttribute"] = attribute
        constraints.append(constraint)
    if constraints:
        devices["constraints"] = constraints
    if _chance(draw, 1 / 6):
        config: dict[str, Any] = {"opaque": {"driver": DRIVERS[0], "parameters": {"claim": index}}}
        if draw(st.booleans()):
            config["requests"] = draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True))
        devices["config"] = [config]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"claim-{index}", "namespace": NAMESPACE, "uid": f"uid-claim-{index}"},
        "spec": {"devices": devices},
    }


@st.composite
def _in_use(draw: st.DrawFn, index: int, refs: list[_DeviceRef]) -> dict[str, Any]:
    results = []
    for n, ref in enumerate(draw(st.lists(st.sampled_from(refs), min_size=1, max_size=2, unique=True))):
        result: dict[str, Any] = {"request": "r0", "driver": ref.driver, "pool": ref.pool, "device": ref.name}
        if _chance(draw, 1 / 6):
            result["adminAccess"] = True
        elif ref.multi and draw(st.booleans()):
            result["shareID"] = f"00000000-0000-4000-8000-{index:06d}{n:06d}"
            if "memory" in ref.capacity:
                result["consumedCapacity"] = {"memory": draw(st.sampled_from(("1Gi", "4Gi", "8Gi")))}
        results.append(result)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"in-use-{index}", "namespace": NAMESPACE, "uid": f"uid-in-use-{index}"},
        "spec": {"devices": {"requests": [{"name": "r0", "exactly": {"deviceClassName": "in-use"}}]}},
        "status": {"allocation": {"devices": {"results": results}}},
    }


def gate_string(gates: dict[str, bool]) -> str:
    return ",".join(f"{gate}={str(gates[gate]).lower()}" for gate in GATES)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """A whole scenario: nodes, slices, classes, in-use claims, claims to allocate, gates."""
    gates = {gate: draw(st.booleans()) for gate in GATES}
    node_names = [f"node-{i}" for i in range(draw(st.integers(1, 3)))]
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n, "labels": {"region": f"region-{i % 2}", "planet": "earth"}},
        }
        for i, n in enumerate(node_names)
    ]
    counter = itertools.count()
    drivers = draw(st.lists(st.sampled_from(DRIVERS), min_size=1, max_size=len(DRIVERS), unique=True))
    slices: list[dict[str, Any]] = []
    refs: list[_DeviceRef] = []
    for driver in drivers:
        for p in range(draw(st.integers(1, 2))):
            pool_slices, pool_refs = draw(
                _pool(driver, f"{driver.split('.')[0]}-pool-{p}", node_names, counter, gates)
            )
            slices.extend(pool_slices)
            refs.extend(pool_refs)
    classes = [_class(d.split(".")[0], d, config=_chance(draw, 1 / 6)) for d in drivers]
    class_refs = [(d.split(".")[0], d) for d in drivers]
    if _chance(draw, 1 / 4):
        driver = draw(st.sampled_from(drivers))
        name = f"{driver.split('.')[0]}-big"
        classes.append(_class(name, driver, extra=draw(selector_strategy(driver))))
        class_refs.append((name, driver))
    in_use = [draw(_in_use(i, refs)) for i in range(draw(st.integers(0, 2)))] if refs else []
    claims = [draw(_claim(i, class_refs, gates)) for i in range(draw(st.integers(1, 3)))]
    objects = [*nodes, *slices, *classes, *in_use, *claims]
    return Scenario(objects=tuple(objects), node=node_names[0], gates=gate_string(gates))
