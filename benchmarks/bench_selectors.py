"""Selector evaluations per second: drakit's CEL against upstream's (``dra-oracle cel bench``).

Ratio = drakit time per evaluation / Go time per evaluation, on the same expressions and
devices, measured side by side in one run.

(i) every conformance selector with an expected boolean result
    (``../shared/conformance/cel/cases.json``) on its own device: drakit cold (compiled once,
    device view built and selector evaluated per evaluation) vs Go cold (compiled once,
    ``DeviceMatches`` per evaluation).  One aggregate row (total time over all selectors), plus
    the selectors with the worst ratios.
(ii) ``device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("48Gi")) >= 0`` over 40,000
    NVIDIA GPUs from ``drakit.inventory.templates`` (5,000 nodes × 8, SKUs drawn with a fixed
    seed, 5 % of the GPUs without a memory capacity, which is a CEL runtime error on both sides):
    * drakit cold: compile once; per device ``device_view`` + ``evaluate``;
    * drakit first sight in the allocator: the allocator's own selector path (``_Run._matches``
      over an ``Inventory``): builds the view, evaluates, stores the outcome;
    * drakit cached: the same allocator path again — the per-(selector, device) outcome cache
      the allocator consults on every later call (issue target: at least as fast per decision
      as Go's cold evaluation);
    * Go cold: compile once, ``DeviceMatches`` per device.

    .venv/bin/python benchmarks/bench_selectors.py [--quick] [--devices 40000] [--verbose]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import (
    Row,
    conformance_dir,
    oracle_binary,
    print_table,
    run_oracle,
    write_json_documents,
)

from drakit.allocator import Inventory
from drakit.allocator.search import _Req, _Run
from drakit.clock import SYSTEM_CLOCK, RandomIds
from drakit.errors import AllocationError
from drakit.features import Features
from drakit.inventory import templates
from drakit.selectors import CelRuntimeError, compile_selector, device_view

D = templates.NVIDIA_DRIVER
MEMORY_SELECTOR = f'device.capacity["{D}"].memory.compareTo(quantity("48Gi")) >= 0'
SEED = 20250601
NO_MEMORY_FRACTION = 0.05


def best_of(runs: int, fn: Callable[[], float]) -> float:
    """The smallest of ``runs`` timings (the least disturbed by the other work on the machine)."""
    return min(fn() for _ in range(runs))


# --- (i) conformance selectors ------------------------------------------------------------------


def conformance_cases() -> list[dict[str, Any]]:
    path = conformance_dir() / "cel" / "cases.json"
    cases: list[dict[str, Any]] = json.loads(path.read_text())
    return [c for c in cases if "result" in c["expect"]]


def case_features(case: dict[str, Any]) -> tuple[str, Features, str]:
    """drakit's environment and features for a case, and the same as oracle flags."""
    lta = case["features"]["listTypeAttributes"][0]
    cc = case["features"]["consumableCapacity"]
    env = "stored" if case["environment"] == "StoredExpressions" else "new"
    gates = f"DRAListTypeAttributes={str(lta).lower()},DRAConsumableCapacity={str(cc).lower()}"
    return env, Features(list_type_attributes=lta, consumable_capacity=cc), gates


def drakit_cold(expression: str, env: str, features: Features, driver: str, devices: Sequence[Any], repeat: int) -> tuple[float, int, int]:
    """Seconds per evaluation, matches, errors: compile once, view + evaluate per device."""
    compiled = compile_selector(expression, environment=env, features=features)
    if compiled.error is not None:
        raise RuntimeError(f"drakit: {expression}: {compiled.error.message}")
    for dev in devices:  # warm-up (lazy library set-up), untimed
        with contextlib.suppress(CelRuntimeError):
            compiled.evaluate(device_view(driver, dev))
    matches = errors = 0
    t0 = time.perf_counter()
    for _ in range(repeat):
        for dev in devices:
            try:
                if compiled.evaluate(device_view(driver, dev)):
                    matches += 1
            except CelRuntimeError:
                errors += 1
    return (time.perf_counter() - t0) / (repeat * len(devices)), matches, errors


def go_cold(oracle: Path, expression: str, devices_file: Path, repeat: int, env: str = "stored", gates: str = "") -> dict[str, Any]:
    args = ["cel", "bench", expression, "--devices", str(devices_file), "--repeat", str(repeat), "--environment", env]
    if gates:
        args += ["--feature-gates", gates]
    return run_oracle(oracle, args)


def conformance_rows(
    oracle: Path | None, workdir: Path, evals: int, verbose: bool, quick: bool, notes: list[str]
) -> list[Row]:
    cases = conformance_cases()
    if quick:  # every seventh selector: one oracle process each is most of a smoke run's time
        cases = cases[::7]
    per_case: list[tuple[str, float, float | None]] = []
    disagreements = []
    for i, case in enumerate(cases):
        env, features, gates = case_features(case)
        device = dict(case["device"])
        driver = device.pop("driver")
        device = {"name": "dev", **device}
        expected = case["expect"]["result"]
        d_s, d_matches, d_errors = drakit_cold(case["expression"], env, features, driver, [device], evals)
        if d_errors or (d_matches == evals) != expected:
            disagreements.append(f"drakit {case['name']}")
        g_s = None
        if oracle is not None:
            path = workdir / f"case-{i}.json"
            write_json_documents(path, [{**device, "driver": driver}])
            go = go_cold(oracle, case["expression"], path, evals, env, gates)
            g_s = go["evalSeconds"] / go["evaluations"]
            if go["errors"] or (go["matches"] == evals) != expected:
                disagreements.append(f"Go {case['name']}")
        per_case.append((case["name"], d_s, g_s))
    if disagreements:
        notes.append("(i) outcome differs from the expected result: " + ", ".join(disagreements))
    total_d = sum(d for _, d, _ in per_case)
    have_go = all(g is not None for _, _, g in per_case)
    total_g = sum(g for _, _, g in per_case if g is not None) if have_go else None
    rows = [Row(f"(i) {len(per_case)} conformance selectors, cold (mean over selectors)", "eval",
                total_d / len(per_case), total_g / len(per_case) if total_g else None)]
    if have_go:
        ratios = [d / g for _, d, g in per_case if g]
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        notes.append(
            f"(i) per-selector ratio: geometric mean {geo:.2f}×, median {sorted(ratios)[len(ratios) // 2]:.2f}×, "
            f"best {min(ratios):.2f}×, worst {max(ratios):.2f}×; {evals} evaluations per selector per side"
        )
        ranked = sorted(per_case, key=lambda p: p[1] / p[2] if p[2] else 0, reverse=True)
        shown = ranked if verbose else ranked[:3]
        rows += [Row(f"    {name}", "eval", d, g) for name, d, g in shown]
    return rows


# --- (ii) 40,000 NVIDIA devices -------------------------------------------------------------------


def nvidia_slices(devices: int) -> list[dict[str, Any]]:
    """``devices`` GPUs, 8 per node, SKU per node and missing memory per GPU drawn from SEED."""
    rng = random.Random(SEED)
    skus = sorted(templates.NVIDIA_SKUS)
    slices = []
    for n in range((devices + 7) // 8):
        name = f"node-{n:05d}"
        _, slc = templates.expand(f"{rng.choice(skus)}-8x", name)
        gpus = slc["spec"]["devices"][: devices - 8 * n]
        slc["spec"]["devices"] = [
            templates.without(g, capacity=("memory",)) if rng.random() < NO_MEMORY_FRACTION else g for g in gpus
        ]
        slices.append(slc)
    return slices


def allocator_path(inv: Inventory, features: Features) -> Callable[[], tuple[float, int, int]]:
    """A timing of the allocator's selector check for every device of ``inv`` (real cache path)."""
    node = templates.node("node-00000")
    pools = inv.pools_for(node, features)
    run = _Run(inv, features, node, pools, [{"metadata": {"name": "bench", "namespace": "bench"}}], inv.state, None, None, SYSTEM_CLOCK, RandomIds())
    req = _Req(
        claim_index=0, request_index=0, sub_index=0, name="gpu", parent="", class_name=D, device_class={},
        class_selectors=(), selectors=(MEMORY_SELECTOR,), mode="ExactCount", num_devices=1, admin=False,
        tolerations=(), capacity_requests=None,
    )
    devices = [d for s in inv.slices for d in s.devices]
    matches_fn = run._matches

    def timed() -> tuple[float, int, int]:
        matches = errors = 0
        t0 = time.perf_counter()
        for dev in devices:
            try:
                if matches_fn(MEMORY_SELECTOR, dev, req, 0, False):
                    matches += 1
            except AllocationError:
                errors += 1
        return (time.perf_counter() - t0) / len(devices), matches, errors

    return timed


def memory_rows(oracle: Path | None, workdir: Path, devices: int, runs: int, notes: list[str]) -> list[Row]:
    slices = nvidia_slices(devices)
    raw = [(s["spec"]["driver"], d) for s in slices for d in s["spec"]["devices"]]
    features = Features.for_version()

    matches = errors = 0
    compiled = compile_selector(MEMORY_SELECTOR, environment="stored", features=features)

    def cold() -> float:
        nonlocal matches, errors
        matches = errors = 0
        t0 = time.perf_counter()
        for driver, dev in raw:
            try:
                if compiled.evaluate(device_view(driver, dev)):
                    matches += 1
            except CelRuntimeError:
                errors += 1
        return (time.perf_counter() - t0) / len(raw)

    cold_s = best_of(runs, cold)
    notes.append(f"(ii) {len(raw)} devices: {matches} match, {errors} runtime errors (no memory capacity) on drakit")

    inv = Inventory(slices, [templates.nvidia_device_class()])
    path_fn = allocator_path(inv, features)
    first_s, first_matches, first_errors = path_fn()
    if (first_matches, first_errors) != (matches, errors):
        notes.append(f"(ii) allocator path outcome differs: {first_matches} match, {first_errors} errors")
    cached_s = best_of(runs, lambda: path_fn()[0])

    go_s = None
    if oracle is not None:
        path = workdir / "nvidia.json"
        write_json_documents(path, slices)
        go = go_cold(oracle, MEMORY_SELECTOR, path, runs)
        go_s = go["evalSeconds"] / go["evaluations"]
        per_pass = go["evaluations"] // go["repeat"]
        notes.append(
            f"(ii) Go: {go['matches'] // go['repeat']} match, {go['errors'] // go['repeat']} runtime errors "
            f"per pass over {per_pass} devices; {go['repeat']} passes (drakit: best of {runs})"
        )
    label = f"(ii) memory ≥ 48Gi over {len(raw)} NVIDIA GPUs"
    return [
        Row(f"{label}, drakit cold", "eval", cold_s, go_s),
        Row(f"{label}, drakit allocator path, first sight", "eval", first_s, go_s),
        Row(f"{label}, drakit allocator path, cached", "eval", cached_s, go_s, target=1),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: every 7th conformance selector, few evaluations, 800 devices"
    )
    parser.add_argument("--devices", type=int, default=None, help="devices in (ii) (default 40000)")
    parser.add_argument("--evals", type=int, default=None, help="evaluations per conformance selector (default 2000)")
    parser.add_argument("--verbose", action="store_true", help="one row per conformance selector")
    args = parser.parse_args(argv)
    devices = args.devices or (800 if args.quick else 40_000)
    evals = args.evals or (20 if args.quick else 2000)
    runs = 1 if args.quick else 3
    oracle = oracle_binary()
    notes: list[str] = []
    if oracle is None:
        notes.append("dra-oracle not built (`make oracle`): Go columns are n/a")
    with tempfile.TemporaryDirectory(prefix="drakit-bench-") as tmp:
        workdir = Path(tmp)
        rows = conformance_rows(oracle, workdir, evals, args.verbose, args.quick, notes)
        rows += memory_rows(oracle, workdir, devices, runs, notes)
    print_table("Selectors: drakit vs upstream Go CEL (dra-oracle cel bench)", rows, notes)


if __name__ == "__main__":
    main()
