"""Profiles per driver schema used by the golden and matching tests (as YAML text, like users write them)."""

from __future__ import annotations

HEADER = "apiVersion: drakit.dev/v1alpha1\nkind: Profile\n"


def doc(name: str, spec: str, extra: str = "") -> str:
    body = "\n".join("  " + line for line in spec.strip("\n").splitlines())
    return f"{HEADER}metadata:\n  name: {name}\n{extra}spec:\n{body}\n"


PROFILES: dict[str, str] = {
    "nv-80gb": doc("nv-80gb", """
vendor: nvidia
memory: {min: 80GB}
minComputeCapability: "8.0"
minDriverVersion: "570"
"""),
    "nv-80gi": doc("nv-80gi", """
vendor: nvidia
memory: {min: 80Gi}
"""),
    "nv-pair-pcie": doc("nv-pair-pcie", """
vendor: nvidia
count: 2
colocate: pcieRoot
"""),
    "nv-small-first": doc("nv-small-first", """
vendor: nvidia
alternatives:
  options:
  - name: hopper
    architectures: {allow: [Hopper]}
  - name: small
    memory: {max: 32GB}
"""),
    "nv-no-t4": doc("nv-no-t4", """
vendor: nvidia
products: {exclude: [Tesla T4, NVIDIA L4]}
architectures: {exclude: [Blackwell]}
"""),
    "ex-any": doc("ex-any", """
vendor: example
memory: {min: 40Gi}
minDriverVersion: "1.0"
"""),
    "intel-16g": doc("intel-16g", """
vendor: intel
memory: {min: 16GB}
architectures: {allow: [Data Center Max, Data Center Flex]}
"""),
    "intel-small": doc("intel-small", """
vendor: intel
memory: {max: 16GiB}
"""),
    "amd-mi300": doc("amd-mi300", """
vendor: amd
products: {allow: [AMD_Instinct_MI300X_OAM]}
minDriverVersion: "6.0"
colocate: pcieRoot
"""),
}

H100 = {f"nogap-h100-{i}" for i in range(4)}
ALL_NVIDIA_GPUS = H100 | {"nogap-l4", "nogap-l40s", "nogap-a100-80", "gap-t4-no-pcieroot", "gap-gb10-no-memory",
                          "gap-h100-driver-550", "gap-a100-40-v25-3"}

# profile -> (driver ref, {device: option or None}) : exactly the devices that must qualify.
EXPECTED: dict[str, tuple[str, dict[str, str | None]]] = {
    "nv-80gb": ("gpu.nvidia.com", {d: None for d in H100 | {"nogap-a100-80"}}),
    "nv-80gi": ("gpu.nvidia.com", {"nogap-a100-80": None}),
    "nv-pair-pcie": ("gpu.nvidia.com", {d: None for d in ALL_NVIDIA_GPUS - {"gap-t4-no-pcieroot"}}),
    "nv-small-first": ("gpu.nvidia.com", {**{d: "hopper" for d in H100 | {"gap-h100-driver-550"}},
                                          "nogap-l4": "small", "gap-t4-no-pcieroot": "small"}),
    "nv-no-t4": ("gpu.nvidia.com", {d: None for d in ALL_NVIDIA_GPUS - {"gap-t4-no-pcieroot", "nogap-l4", "gap-gb10-no-memory"}}),
    "ex-any": ("gpu.example.com", {f"gpu-{i}": None for i in range(4)}),
    "intel-16g": ("gpu.intel.com", {"nogap-max1550": None, "nogap-flex170": None}),
    "intel-small": ("gpu.intel.com", {"nogap-flex170": None, "gap-b580-no-pcieroot": None}),
    "amd-mi300": ("gpu.amd.com", {"nogap-mi300x": None}),
}
