"""``drakit allocate`` on small bundles: exit codes, --node handling and the text table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from drakit.cli.testing import Result, run
from drakit.model.codec import KubeDumper
from tests.unit.allocator.builders import claim, device, device_class, exact, in_use, node, slice_

BASE = [node(), slice_("s", [device("gpu-0"), device("gpu-1")]), device_class()]


def invoke(tmp_path: Path, objects: list[dict[str, Any]], *args: str) -> Result:
    """Run ``drakit allocate`` as the shell does (exit codes from the real error mapping)."""
    f = tmp_path / "in.yaml"
    f.write_text(yaml.dump_all(Dumper=KubeDumper, documents=objects, sort_keys=False), encoding="utf-8")
    return run("allocate", "-f", str(f), *args)


@pytest.mark.parametrize(
    ("claims", "args", "exit_code", "needle"),
    [
        pytest.param([claim("c", exact("r"))], (), 0, "r  ->  gpu.example.com/pool-1/gpu-0", id="allocated"),
        pytest.param(
            [in_use("u", "gpu-0", "gpu-1"), claim("c", exact("r"))],
            (),
            3,
            "[DeviceInUse]",
            id="unsatisfiable",
        ),
        pytest.param(
            [claim("c", exact("r", cls="nope"))], (), 4, "could not retrieve device class nope", id="error"
        ),
        pytest.param(
            [claim("c", exact("r"))], ("--feature-gates", "Bogus=true"), 2, "unknown feature gate", id="usage"
        ),
    ],
)
def test_exit_codes_and_text(
    tmp_path: Path, claims: list[dict[str, Any]], args: tuple[str, ...], exit_code: int, needle: str
) -> None:
    result = invoke(tmp_path, BASE + claims, *args)
    assert result.exit_code == exit_code, result.stderr
    assert needle in result.stdout + result.stderr


def test_node_required_with_two_nodes(tmp_path: Path) -> None:
    result = invoke(tmp_path, [*BASE, node("node-2"), claim("c", exact("r"))])
    assert result.exit_code == 2
    result = invoke(tmp_path, [*BASE, node("node-2"), claim("c", exact("r"))], "--node", "node-2")
    assert result.exit_code == 3  # the slice's devices are on node-1
