"""Compiled manifests pass drakit's own validation and the official OpenAPI schemas."""

from __future__ import annotations

from typing import Any

import pytest

from drakit.features import Features
from drakit.profiles import compile_profile, drivers_for, parse_profiles
from drakit.profiles.loader import example_texts
from tests.unit.profiles import driver_profiles as dp

kubernetes_validate = pytest.importorskip("kubernetes_validate")

CASES = [(name, None) for name in dp.PROFILES] + [
    ("training-48g", None), ("evaluation", None), ("hopper-or-ampere", None), ("inference-small", None),
    ("nv-80gb", "gpu.nvidia.com@v25.3"),
]


def _manifests(name: str, driver: str | None) -> list[dict[str, Any]]:
    texts = [(t, f"{n}.yaml") for n, t in dp.PROFILES.items()]
    pset = parse_profiles(texts, example_texts(), select=[name])
    rp = pset.get(name)
    (schema,) = drivers_for(rp, driver)
    return compile_profile(rp, schema, namespace="ml").manifests()


@pytest.mark.parametrize(("name", "driver"), CASES, ids=[f"{n}-{d or 'default'}" for n, d in CASES])
@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_openapi_schema(name: str, driver: str | None, version: str) -> None:
    for m in _manifests(name, driver):
        kubernetes_validate.validate(m, version, strict=True)


@pytest.mark.parametrize(("name", "driver"), CASES, ids=[f"{n}-{d or 'default'}" for n, d in CASES])
def test_drakit_validate(name: str, driver: str | None) -> None:
    from drakit.model import parse_object
    from drakit.model.validate import validate

    objs = []
    for m in _manifests(name, driver):
        if m["kind"] == "PodTemplate":
            # drakit's model has no PodTemplate; its pod spec is checked as a Pod.
            m = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": m["metadata"]["name"], "namespace": "ml"},
                 "spec": {**m["template"]["spec"], "containers": [{**m["template"]["spec"]["containers"][0], "image": "x"}]}}
        objs.append(parse_object(m))
    assert validate(objs, Features.for_version("1.34")) == []
