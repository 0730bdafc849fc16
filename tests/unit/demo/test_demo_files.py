"""The checked-in demo YAML is exactly what the generator writes, and uses true published values."""

from __future__ import annotations

import pytest
import yaml

from drakit import demo
from drakit.inventory import templates


@pytest.mark.parametrize("name", sorted(demo.FILES))
def test_checked_in_files_match_generator(name: str) -> None:
    on_disk = (demo.demo_dir() / name).read_text(encoding="utf-8")
    assert on_disk == demo.render(name), f"run `python -m drakit.demo` to regenerate {name}"


def test_demo_has_both_memory_classes() -> None:
    objects = list(yaml.safe_load_all((demo.demo_dir() / "cluster.yaml").read_text()))
    memories = {
        d["attributes"]["productName"]["string"]: d["capacity"]["memory"]["value"]
        for o in objects
        if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == templates.NVIDIA_DRIVER
        for d in o["spec"]["devices"]
    }
    # 24 GB class and 80 GB class, with the values NVML really reports (below the marketing size).
    assert memories == {"NVIDIA L4": "23034Mi", "NVIDIA H100 80GB HBM3": "81559Mi"}


@pytest.mark.parametrize(
    ("template", "want"),
    [
        pytest.param("h100-8x", ("h100", 8), id="h100"),
        pytest.param("example-2x", ("example", 2), id="example"),
    ],
)
def test_parse_template(template: str, want: tuple[str, int]) -> None:
    assert templates.parse_template(template) == want


@pytest.mark.parametrize("bad", ["h100", "h100-0x", "nope-8x", "h100-x8"])
def test_parse_template_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="node template"):
        templates.parse_template(bad)


def test_expansion_topology() -> None:
    slice_ = templates.expand("h100-8x", "n1")[1]
    roots = [d["attributes"]["resource.kubernetes.io/pcieRoot"]["string"] for d in slice_["spec"]["devices"]]
    assert len(set(roots)) == 4  # pairs of GPUs share a PCIe root
