"""API-server validation rules: each rule with a valid and an invalid object.

Every invalid case asserts the exact (field path, error type) pairs reported.
"""

from __future__ import annotations

from typing import Any

import pytest

from drakit.errors import ErrorType
from drakit.features import Features
from drakit.model.validate import validate_object, validate_report
from tests.builders import (
    Builder,
    ClaimBuilder,
    ClassBuilder,
    NodeBuilder,
    PodBuilder,
    PodTemplateBuilder,
    SliceBuilder,
    TemplateBuilder,
    first_available,
    request,
    subrequest,
)

ALL = Features.all_on()
R, INV, F, TL, TM, D, NS, NF = (ErrorType.REQUIRED, ErrorType.INVALID, ErrorType.FORBIDDEN, ErrorType.TOO_LONG,
                                ErrorType.TOO_MANY, ErrorType.DUPLICATE, ErrorType.NOT_SUPPORTED, ErrorType.NOT_FOUND)


def errors_of(b: Builder, features: Features = ALL) -> list[tuple[str, ErrorType]]:
    errs, _ = validate_object(b.obj(), features)
    return [(e.path, e.type) for e in errs]


def dev(i: int, **fields: Any) -> dict[str, Any]:
    return {"name": f"dev-{i}", **fields}


TAINT = {"key": "example.com/broken", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    "builder",
    [
        pytest.param(SliceBuilder(), id="slice"),
        pytest.param(SliceBuilder(node=None).set("spec.allNodes", True), id="slice-all-nodes"),
        pytest.param(SliceBuilder(devices=128), id="slice-128-devices"),
        pytest.param(SliceBuilder(devices=0).set("spec.devices[0]", dev(0, taints=[TAINT])), id="slice-taint"),
        pytest.param(SliceBuilder().attribute(0, "model", string="x" * 64).attribute(0, "gpu.example.com/v", version="1.2.3-rc.1+b.5"), id="slice-attributes"),
        pytest.param(ClassBuilder(), id="class"),
        pytest.param(ClaimBuilder(), id="claim"),
        pytest.param(ClaimBuilder(requests=0).request(first_available("r", subrequest("a"), subrequest("b"))), id="claim-first-available"),
        pytest.param(ClaimBuilder(requests=2).set("spec.devices.constraints", [{"requests": ["req-0", "req-1"], "matchAttribute": "driver.example.com/numa"}]), id="claim-constraint"),
        pytest.param(ClaimBuilder(namespace=None), id="claim-default-namespace"),
        pytest.param(TemplateBuilder().set("spec.metadata", {"labels": {"a": "b"}}), id="template"),
        pytest.param(PodBuilder().claim("gpu", template="t").container_claim("gpu"), id="pod"),
        pytest.param(PodTemplateBuilder().claim("gpu", template="t").container_claim("gpu"), id="pod-template"),
        pytest.param(NodeBuilder(region="r1"), id="node"),
    ],
)
def test_valid_objects_have_no_errors(builder: Builder) -> None:
    assert errors_of(builder) == []


def _slice_with(n: int, **fields: Any) -> SliceBuilder:
    b = SliceBuilder(devices=0)
    for i in range(n):
        b.device(f"dev-{i}", **fields)
    return b


def _policy(**policy: Any) -> SliceBuilder:
    return SliceBuilder().set("spec.devices[0].allowMultipleAllocations", True).capacity(
        0, "mem", "10", requestPolicy=policy)


CASES = [
    # ResourceSlice ------------------------------------------------------------------
    pytest.param(SliceBuilder("Bad_Name"), [("metadata.name", INV)], id="slice-name-not-dns-subdomain"),
    pytest.param(SliceBuilder(driver=""), [("spec.driver", R), ("spec.driver", INV)], id="driver-empty"),
    pytest.param(SliceBuilder(driver="a" * 64), [("spec.driver", TL)], id="driver-too-long"),
    pytest.param(SliceBuilder(pool="a/B"), [("spec.pool.name", INV)], id="pool-name-part-invalid"),
    pytest.param(SliceBuilder().set("spec.pool.resourceSliceCount", 0), [("spec.pool.resourceSliceCount", INV)], id="pool-count-zero"),
    pytest.param(SliceBuilder().set("spec.pool.generation", -1), [("spec.pool.generation", INV)], id="pool-generation-negative"),
    pytest.param(SliceBuilder(node=None), [("spec", R)], id="no-node-selection"),
    pytest.param(SliceBuilder().set("spec.allNodes", True), [("spec", INV)], id="two-node-selections"),
    pytest.param(SliceBuilder(node=None).set("spec.allNodes", False), [("spec.allNodes", INV), ("spec", R)], id="all-nodes-false"),
    pytest.param(SliceBuilder(node=None).set("spec.nodeSelector", {"nodeSelectorTerms": [{}, {}]}),
                 [("spec.nodeSelector.nodeSelectorTerms", INV)], id="node-selector-two-terms"),
    pytest.param(SliceBuilder(node=None).set("spec.nodeSelector", {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In"}]}]}),
                 [("spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values", R)], id="node-selector-in-without-values"),
    pytest.param(SliceBuilder(node=None).set("spec.nodeSelector", {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["x"]}]}]}),
                 [("spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].key", INV)], id="node-selector-bad-field-key"),
    pytest.param(SliceBuilder(node=""), [("spec.nodeName", INV), ("spec", R)], id="node-name-empty"),
    pytest.param(SliceBuilder(devices=129), [("spec.devices", TM)], id="too-many-devices"),
    pytest.param(_slice_with(65, taints=[TAINT]), [("spec.devices", TM)], id="too-many-devices-with-taints"),
    pytest.param(_slice_with(65, attributes={"a": {"ints": [1]}}), [("spec.devices", TM)], id="too-many-devices-with-list-attributes"),
    pytest.param(SliceBuilder(devices=0).device("x").device("x"), [("spec.devices[1]", D)], id="duplicate-device"),
    pytest.param(SliceBuilder(devices=0).device("Dev"), [("spec.devices[0].name", INV)], id="device-name-not-label"),
    pytest.param(SliceBuilder().set("spec.devices[0].attributes", {f"a{i}": {"int": i} for i in range(33)}),
                 [("spec.devices[0]", INV)], id="too-many-attributes"),
    pytest.param(SliceBuilder().set("spec.devices[0].attributes", {"a": {"ints": list(range(49))}}),
                 [("spec.devices[0]", INV)], id="too-many-attribute-values"),
    pytest.param(SliceBuilder().attribute(0, "1bad", int=1), [("spec.devices[0].attributes", INV)], id="attribute-key-not-c-identifier"),
    pytest.param(SliceBuilder().attribute(0, "x" * 33, int=1), [("spec.devices[0].attributes", TL)], id="attribute-id-too-long"),
    pytest.param(SliceBuilder().attribute(0, "/a", int=1), [("spec.devices[0].attributes", INV)], id="attribute-domain-empty"),
    pytest.param(SliceBuilder().attribute(0, "a/b/c", int=1), [("spec.devices[0].attributes", INV)], id="attribute-two-slashes"),
    pytest.param(SliceBuilder().attribute(0, "a", string="x" * 65), [("spec.devices[0].attributes[a].string", TL)], id="string-too-long"),
    pytest.param(SliceBuilder().attribute(0, "a", version="1.0"), [("spec.devices[0].attributes[a].version", INV)], id="version-not-semver"),
    pytest.param(SliceBuilder().attribute(0, "a", version="1.0.0-" + "a" * 60), [("spec.devices[0].attributes[a].version", TL)], id="version-too-long"),
    pytest.param(SliceBuilder().attribute(0, "a"), [("spec.devices[0].attributes[a]", INV)], id="attribute-no-value"),
    pytest.param(SliceBuilder().attribute(0, "a", int=1, bool=True), [("spec.devices[0].attributes[a]", INV)], id="attribute-two-values"),
    pytest.param(SliceBuilder().attribute(0, "a", strings=[]), [("spec.devices[0].attributes[a].strings", INV)], id="attribute-empty-list"),
    pytest.param(SliceBuilder().capacity(0, "mem", "1", requestPolicy={"default": "1"}),
                 [("spec.devices[0].capacity[mem].requestPolicy", F)], id="request-policy-needs-multi-allocation"),
    pytest.param(_policy(default="1", validValues=["1"], validRange={"min": "1"}), [("spec.devices[0].capacity[mem].requestPolicy", F)], id="policy-values-and-range"),
    pytest.param(_policy(validValues=["1"]), [("spec.devices[0].capacity[mem].requestPolicy.default", R)], id="policy-values-without-default"),
    pytest.param(_policy(default="1", validValues=["2", "1"]), [("spec.devices[0].capacity[mem].requestPolicy.validValues[1]", INV)], id="policy-values-not-ascending"),
    pytest.param(_policy(default="3", validValues=["1", "2"]), [("spec.devices[0].capacity[mem].requestPolicy.validValues", INV)], id="policy-default-not-in-values"),
    pytest.param(_policy(default="1", validValues=["1", "11"]), [("spec.devices[0].capacity[mem].requestPolicy.validValues[1]", INV)], id="policy-value-above-capacity"),
    pytest.param(_policy(default="1", validValues=[str(i) for i in range(11)]), [("spec.devices[0].capacity[mem].requestPolicy.validValues", TM)], id="policy-too-many-values"),
    pytest.param(_policy(default="1", validRange={}), [("spec.devices[0].capacity[mem].requestPolicy.validRange.min", R)], id="range-without-min"),
    pytest.param(_policy(default="1", validRange={"min": "2"}), [("spec.devices[0].capacity[mem].requestPolicy.validRange.default", INV)], id="range-default-below-min"),
    pytest.param(_policy(default="5", validRange={"min": "2", "max": "4"}), [("spec.devices[0].capacity[mem].requestPolicy.validRange.default", INV)], id="range-default-above-max"),
    pytest.param(_policy(default="2", validRange={"min": "2", "max": "12"}), [("spec.devices[0].capacity[mem].requestPolicy.validRange.max", INV)], id="range-max-above-capacity"),
    pytest.param(_policy(default="2", validRange={"min": "2", "step": "0"}), [("spec.devices[0].capacity[mem].requestPolicy.validRange.step", INV)], id="range-step-zero"),
    pytest.param(_policy(default="3", validRange={"min": "2", "step": "2"}), [("spec.devices[0].capacity[mem].requestPolicy.validRange.step", INV)], id="range-default-off-step"),
    pytest.param(_policy(default="2", validRange={"min": "2", "step": "9"}), [("spec.devices[0].capacity[mem].requestPolicy.validRange.step", INV)], id="range-one-step-above-capacity"),
    pytest.param(SliceBuilder().set("spec.devices[0].taints", [TAINT] * 17), [("spec.devices[0].taints", TM)], id="too-many-taints"),
    pytest.param(SliceBuilder().set("spec.devices[0].taints", [{"key": "k", "effect": "PreferNoSchedule"}]), [("spec.devices[0].taints[0].effect", NS)], id="taint-effect-unsupported"),
    pytest.param(SliceBuilder().set("spec.devices[0].taints", [{"key": "k", "effect": ""}]), [("spec.devices[0].taints[0].effect", R)], id="taint-effect-empty"),
    pytest.param(SliceBuilder().set("spec.devices[0].taints", [{"key": "a b", "effect": "None"}]), [("spec.devices[0].taints[0].key", INV)], id="taint-key-invalid"),
    pytest.param(SliceBuilder().set("spec.devices[0].bindingConditions", ["a"]), [("spec.devices[0].bindingFailureConditions", INV)], id="binding-conditions-without-failure"),
    pytest.param(SliceBuilder().set("spec.devices[0].bindingFailureConditions", ["a"]), [("spec.devices[0].bindingConditions", INV)], id="binding-failure-without-conditions"),
    pytest.param(SliceBuilder().set("spec.devices[0].bindingConditions", list("abcde")).set("spec.devices[0].bindingFailureConditions", ["f"]),
                 [("spec.devices[0].bindingConditions", TM)], id="too-many-binding-conditions"),
    pytest.param(SliceBuilder().set("spec.devices[0].bindingConditions", ["a", "a"]).set("spec.devices[0].bindingFailureConditions", ["a"]),
                 [("spec.devices[0].bindingConditions[1]", D), ("spec.devices[0].bindingFailureConditions[0]", INV)], id="binding-conditions-duplicate-and-overlap"),
    pytest.param(SliceBuilder().set("spec.devices[0].nodeName", "node-1"), [("spec.devices[0]", INV)], id="per-device-node-without-flag"),
    pytest.param(SliceBuilder(node=None).set("spec.perDeviceNodeSelection", True), [("spec.devices[0]", R)], id="per-device-node-missing"),
    pytest.param(SliceBuilder(node=None).set("spec.perDeviceNodeSelection", True).set("spec.devices[0].nodeName", "n").set("spec.devices[0].allNodes", True),
                 [("spec.devices[0]", INV)], id="per-device-node-two"),
    pytest.param(SliceBuilder().set("spec.sharedCounters", [{"name": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(9)]).delete("spec.devices"),
                 [("spec.sharedCounters", TM)], id="too-many-counter-sets"),
    pytest.param(SliceBuilder().set("spec.sharedCounters", [{"name": "s", "counters": {f"c{i}": {"value": "1"} for i in range(33)}}]).delete("spec.devices"),
                 [("spec.sharedCounters[0].counters", TM)], id="too-many-counters"),
    pytest.param(SliceBuilder().set("spec.sharedCounters", [{"name": "s", "counters": {"c": {"value": "1"}}}]),
                 [("spec", INV)], id="devices-and-shared-counters"),
    pytest.param(SliceBuilder().set("spec.devices[0].consumesCounters", [{"counterSet": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(3)]),
                 [("spec.devices[0].consumesCounters", TM)], id="too-many-consumptions"),
    pytest.param(SliceBuilder().set("spec.devices[0].consumesCounters", [{"counterSet": "s", "counters": {"c": {"value": "1"}}}] * 2),
                 [("spec.devices[0].consumesCounters[1]", D)], id="duplicate-consumption"),
    # DeviceClass -------------------------------------------------------------------
    pytest.param(ClassBuilder().set("spec.selectors", [{}]), [("spec.selectors[0].cel", R)], id="class-selector-without-cel"),
    pytest.param(ClassBuilder(selectors=("true",) * 33), [("spec.selectors", TM)], id="class-too-many-selectors"),
    pytest.param(ClassBuilder(selectors=("x" * 10241,)), [("spec.selectors[0].cel.expression", TL)], id="cel-too-long"),
    pytest.param(ClassBuilder().set("spec.config", [{}]), [("spec.config[0].opaque", R)], id="class-config-without-opaque"),
    pytest.param(ClassBuilder().set("spec.config", [{"opaque": {"driver": "d", "parameters": [1]}}]), [("spec.config[0].opaque.parameters", INV)], id="parameters-not-object"),
    pytest.param(ClassBuilder().set("spec.config", [{"opaque": {"driver": "d", "parameters": {"x": "y" * 10240}}}]), [("spec.config[0].opaque.parameters", TL)], id="parameters-too-large"),
    pytest.param(ClassBuilder().set("spec.config", [{"opaque": {"driver": "d", "parameters": {}}}] * 33), [("spec.config", TM)], id="class-too-many-configs"),
    pytest.param(ClassBuilder().set("spec.extendedResourceName", "cpu"), [("spec.extendedResourceName", INV)], id="class-bad-extended-resource"),
    # ResourceClaim ----------------------------------------------------------------
    pytest.param(ClaimBuilder(requests=33), [("spec.devices.requests", TM)], id="too-many-requests"),
    pytest.param(ClaimBuilder(requests=0).request(request("a")).request(request("a")), [("spec.devices.requests[1]", D)], id="duplicate-request"),
    pytest.param(ClaimBuilder(requests=0).request({"name": "a"}), [("spec.devices.requests[0]", R)], id="request-without-kind"),
    pytest.param(ClaimBuilder(requests=0).request({**request("a"), "firstAvailable": [subrequest("s")]}), [("spec.devices.requests[0]", INV)], id="request-both-kinds"),
    pytest.param(ClaimBuilder(requests=0).request(first_available("a", *[subrequest(f"s{i}") for i in range(9)])), [("spec.devices.requests[0].firstAvailable", TM)], id="too-many-subrequests"),
    pytest.param(ClaimBuilder(requests=0).request(first_available("a", subrequest("s"), subrequest("s"))), [("spec.devices.requests[0].firstAvailable[1]", D)], id="duplicate-subrequest"),
    pytest.param(ClaimBuilder(requests=0).request(first_available("a", subrequest("S"))), [("spec.devices.requests[0].firstAvailable[0].name", INV)], id="subrequest-name-not-label"),
    pytest.param(ClaimBuilder(requests=0).request(request(device_class="")), [("spec.devices.requests[0].exactly.deviceClassName", R)], id="class-name-required"),
    pytest.param(ClaimBuilder(requests=0).request(request(selectors=[{"cel": {"expression": "true"}}] * 33)), [("spec.devices.requests[0].exactly.selectors", TM)], id="request-too-many-selectors"),
    pytest.param(ClaimBuilder(requests=0).request(request(count=-1)), [("spec.devices.requests[0].exactly.count", INV)], id="count-negative"),
    pytest.param(ClaimBuilder(requests=0).request(request(allocationMode="All", count=2)), [("spec.devices.requests[0].exactly.count", INV)], id="all-with-count"),
    pytest.param(ClaimBuilder(requests=0).request(request(allocationMode="Some")), [("spec.devices.requests[0].exactly.allocationMode", NS)], id="allocation-mode-unsupported"),
    pytest.param(ClaimBuilder(requests=0).request(request(tolerations=[{"operator": "Exists"}] * 17)), [("spec.devices.requests[0].exactly.tolerations", TM)], id="too-many-tolerations"),
    pytest.param(ClaimBuilder(requests=0).request(request(tolerations=[{"operator": "Exists", "value": "v"}])), [("spec.devices.requests[0].exactly.tolerations[0].value", INV)], id="toleration-exists-with-value"),
    pytest.param(ClaimBuilder(requests=0).request(request(tolerations=[{"operator": "Like"}])), [("spec.devices.requests[0].exactly.tolerations[0].operator", NS)], id="toleration-operator-unsupported"),
    pytest.param(ClaimBuilder(requests=0).request(request(tolerations=[{"key": "k", "effect": "Sometimes"}])), [("spec.devices.requests[0].exactly.tolerations[0].effect", NS)], id="toleration-effect-unsupported"),
    pytest.param(ClaimBuilder(requests=0).request(request(tolerations=[{"key": "k", "value": "a b"}])), [("spec.devices.requests[0].exactly.tolerations[0].value", INV)], id="toleration-value-not-label-value"),
    pytest.param(ClaimBuilder().set("spec.devices.constraints", [{"matchAttribute": "a/b"}] * 33), [("spec.devices.constraints", TM)], id="too-many-constraints"),
    pytest.param(ClaimBuilder().set("spec.devices.constraints", [{"requests": ["nope"], "matchAttribute": "a/b"}]), [("spec.devices.constraints[0].requests[0]", INV)], id="constraint-unknown-request"),
    pytest.param(ClaimBuilder().set("spec.devices.constraints", [{"requests": ["req-0/sub"], "matchAttribute": "a/b"}]), [("spec.devices.constraints[0].requests[0]", INV)], id="constraint-unknown-subrequest"),
    pytest.param(ClaimBuilder().set("spec.devices.constraints", [{"requests": ["req-0", "req-0"], "matchAttribute": "a/b"}]), [("spec.devices.constraints[0].requests[1]", D)], id="constraint-duplicate-request"),
    pytest.param(ClaimBuilder().set("spec.devices.constraints", [{"matchAttribute": "numa"}]), [("spec.devices.constraints[0].matchAttribute", INV)], id="constraint-not-fully-qualified"),
    pytest.param(ClaimBuilder().set("spec.devices.constraints", [{}]), [("spec.devices.constraints[0]", R)], id="constraint-without-attribute"),
    pytest.param(ClaimBuilder().set("spec.devices.config", [{"requests": ["nope"], "opaque": {"driver": "d", "parameters": {}}}]), [("spec.devices.config[0].requests[0]", INV)], id="config-unknown-request"),
    pytest.param(ClaimBuilder().set("spec.devices.config", [{"opaque": {"driver": "d", "parameters": {}}}] * 33), [("spec.devices.config", TM)], id="too-many-configs"),
    pytest.param(ClaimBuilder().set("spec.devices.config", [{"opaque": {"driver": "D_x", "parameters": {}}}]), [("spec.devices.config[0].opaque.driver", INV)], id="config-driver-invalid"),
    pytest.param(ClaimBuilder().set("status.reservedFor", [{"resource": "pods", "name": "p", "uid": "1"}]), [("status.reservedFor", F)], id="reserved-for-without-allocation"),
    pytest.param(ClaimBuilder().set("status.allocation", {"devices": {"results": [{"request": "req-0", "driver": "d", "pool": "p", "device": "x"}]}})
                 .set("status.reservedFor", [{"resource": "pods", "name": "p", "uid": "1"}] * 2), [("status.reservedFor[1]", D)], id="reserved-for-duplicate-uid"),
    pytest.param(ClaimBuilder().set("status.allocation", {"devices": {"results": [{"request": "req-0", "driver": "d", "pool": "p", "device": "x"}]}})
                 .set("status.reservedFor", [{"resource": "pods", "name": "p", "uid": str(i)} for i in range(257)]), [("status.reservedFor", TM)], id="reserved-for-too-many"),
    pytest.param(ClaimBuilder().set("status.allocation", {"devices": {"results": [{"request": "other", "driver": "d", "pool": "p", "device": "x"}]}}),
                 [("status.allocation.devices.results[0].request", INV)], id="result-unknown-request"),
    pytest.param(ClaimBuilder().set("status.allocation", {"devices": {"results": [{"request": "req-0", "driver": "d", "pool": "p", "device": "x"}] * 33}}),
                 [("status.allocation.devices.results", TM)], id="too-many-results"),
    pytest.param(ClaimBuilder().set("status.allocation", {"devices": {"results": [{"request": "req-0", "driver": "d", "pool": "p", "device": "x", "shareID": "ABC"}]}}),
                 [("status.allocation.devices.results[0].shareID", INV)], id="result-share-id-not-uuid"),
    pytest.param(ClaimBuilder().set("status.allocation", {"devices": {"config": [{"source": "FromNowhere", "opaque": {"driver": "d", "parameters": {}}}]}}),
                 [("status.allocation.devices.config[0].source", NS)], id="allocation-config-source"),
    pytest.param(ClaimBuilder().set("status.devices", [{"driver": "d", "pool": "p", "device": "x"}]), [("status.devices[0]", INV)], id="device-status-not-allocated"),
    pytest.param(ClaimBuilder().set("status.allocation", {"devices": {"results": [{"request": "req-0", "driver": "d", "pool": "p", "device": "x"}]}})
                 .set("status.devices", [{"driver": "d", "pool": "p", "device": "x", "networkData": {"ips": ["10.0.0.1"]}}]),
                 [("status.devices[0].networkData.ips[0]", INV)], id="device-status-ip-not-cidr"),
    # ResourceClaimTemplate ----------------------------------------------------------
    pytest.param(TemplateBuilder().set("spec.metadata", {"name": "x"}), [("spec.metadata.name", F)], id="template-metadata-name-forbidden"),
    pytest.param(TemplateBuilder().set("spec.spec.devices.requests[0].exactly.count", 0).set("spec.spec.devices.requests[0].exactly.allocationMode", "All")
                 .set("spec.spec.devices.requests[0].name", "Bad"), [("spec.spec.devices.requests[0].name", INV)], id="template-request-name"),
    # Pod ------------------------------------------------------------------------------
    pytest.param(PodBuilder().claim("a", claim="c").claim("a", claim="c"), [("spec.resourceClaims[1].name", D)], id="pod-claim-duplicate"),
    pytest.param(PodBuilder().claim("a"), [("spec.resourceClaims[0]", INV)], id="pod-claim-no-source"),
    pytest.param(PodBuilder().claim("a", claim="c", template="t"), [("spec.resourceClaims[0]", INV)], id="pod-claim-two-sources"),
    pytest.param(PodBuilder().claim("A", claim="c"), [("spec.resourceClaims[0].name", INV)], id="pod-claim-name-not-label"),
    pytest.param(PodBuilder().claim("a", claim="c").container_claim("b"), [("spec.containers[0].resources.claims[0]", NF)], id="container-claim-unknown"),
    pytest.param(PodBuilder().claim("a", claim="c").container_claim("a").container_claim("a"), [("spec.containers[0].resources.claims[1]", D)], id="container-claim-duplicate"),
    pytest.param(PodBuilder("p" * 250).claim("gpu", template="t"), [("spec.resourceClaims[0].name", INV)], id="pod-generated-claim-name-too-long"),
    pytest.param(PodBuilder().set("spec.containers[0].image", ""), [("spec.containers[0].image", R)], id="container-image-required"),
    pytest.param(PodTemplateBuilder().set("spec.containers[0].image", ""), [("template.spec.containers[0].image", R)], id="template-container-image-required"),
    pytest.param(PodTemplateBuilder().claim("a", claim="c").container_claim("b"), [("template.spec.containers[0].resources.claims[0]", NF)], id="template-container-claim-unknown"),
    # Node --------------------------------------------------------------------------
    pytest.param(NodeBuilder("Node_1"), [("metadata.name", INV)], id="node-name"),
]


@pytest.mark.parametrize(("builder", "want"), CASES)
def test_invalid_objects_report_exact_path_and_type(builder: Builder, want: list[tuple[str, ErrorType]]) -> None:
    assert errors_of(builder) == want


def test_all_errors_are_reported_not_just_the_first() -> None:
    b = ClaimBuilder(requests=0).request(request("A", count=-1, allocationMode="Some"))
    b.set("spec.devices.constraints", [{"requests": ["x"], "matchAttribute": "numa"}])
    got = errors_of(b)
    assert ("spec.devices.requests[0].name", INV) in got
    assert ("spec.devices.requests[0].exactly.allocationMode", NS) in got
    assert ("spec.devices.constraints[0].requests[0]", INV) in got
    assert ("spec.devices.constraints[0].matchAttribute", INV) in got


def test_wording_follows_the_api_server() -> None:
    b = ClaimBuilder("train").set("spec.devices.requests[0].exactly.count", -2)
    report = validate_report([b.obj()], ALL)
    assert report.errors[0].lines() == [
        'ResourceClaim "default/train" is invalid: spec.devices.requests[0].exactly.count: '
        "Invalid value: -2: must be greater than zero"
    ]


@pytest.mark.parametrize(
    ("builder", "features", "dropped", "want"),
    [
        pytest.param(SliceBuilder().set("spec.devices[0].taints", [TAINT]), Features(device_taints=False),
                     ["spec.devices[0].taints"], [], id="taints-dropped"),
        pytest.param(ClaimBuilder(requests=0).request(first_available("a", subrequest("s"))), Features(prioritized_list=False),
                     ["spec.devices.requests[0].firstAvailable"], [("spec.devices.requests[0]", R)], id="first-available-dropped"),
        pytest.param(ClaimBuilder().set("spec.devices.requests[0].exactly.adminAccess", True), Features(admin_access=False),
                     ["spec.devices.requests[0].exactly.adminAccess"], [], id="admin-access-dropped"),
        pytest.param(ClaimBuilder().set("spec.devices.constraints", [{"distinctAttribute": "a/b"}]), Features(consumable_capacity=False),
                     ["spec.devices.constraints[0].distinctAttribute"], [("spec.devices.constraints[0].matchAttribute", R)],
                     id="distinct-attribute-dropped"),
    ],
)
def test_disabled_features_drop_fields_with_a_warning(
    builder: Builder, features: Features, dropped: list[str], want: list[tuple[str, ErrorType]]
) -> None:
    errs, got_dropped = validate_object(builder.obj(), features)
    assert got_dropped == dropped
    assert [(e.path, e.type) for e in errs] == want
    report = validate_report([builder.obj()], features)
    assert any("field dropped" in w for w in report.warnings)


EXPENSIVE = "[1,2,3,4,5,6,7,8,9,10].all(a, " * 6 + "a > 0" + ")" * 6


@pytest.mark.parametrize(
    ("expr", "want", "detail"),
    [
        pytest.param("device.driver == 'x'", [], "", id="ok"),
        pytest.param("bad(", [("spec.selectors[0].cel.expression", INV)], "compilation failed: ERROR: <input>:1:5:",
                     id="compile-error"),
        pytest.param("device.driver == 1", [("spec.selectors[0].cel.expression", INV)], "compilation failed: ERROR:",
                     id="type-error"),
        pytest.param(EXPENSIVE, [("spec.selectors[0].cel.expression", F)], "too complex, exceeds cost limit",
                     id="too-expensive-is-forbidden"),
    ],
)  # fmt: skip
def test_cel_selectors_are_compiled_and_cost_checked(expr: str, want: list[tuple[str, ErrorType]], detail: str) -> None:
    """The real engine, as the API server's validateCELSelector uses its compiler."""
    report = validate_report([ClassBuilder(selectors=(expr,)).obj()], ALL)
    got = [(e.path, e.type) for oe in report.errors for e in oe.errors]
    assert got == want
    if detail:
        assert detail in str(report.errors[0].errors[0])
