"""Selector evaluation throughput (prints evaluations/s and ratios; no assertions).

Run: .venv/bin/python benchmarks/bench_selectors.py
"""

from __future__ import annotations

import time

from drakit.selectors import compile_selector, device_view

DEVICE = {
    "name": "gpu-0",
    "attributes": {
        "productName": {"string": "NVIDIA A100-SXM4-80GB"},
        "index": {"int": 0},
        "migCapable": {"bool": True},
        "driverVersion": {"version": "550.54.15"},
    },
    "capacity": {"memory": {"value": "80Gi"}},
}
D = "gpu.nvidia.com"

SELECTORS = {
    "S1 quantity compareTo": f'device.capacity["{D}"].memory.compareTo(quantity("48Gi")) >= 0',
    "S2 string equality": f'device.attributes["{D}"].productName == "NVIDIA A100-SXM4-80GB"',
    "S4 driver && index": f'device.driver == "{D}" && device.attributes["{D}"].index < 4',
    "S5 semver": f'device.attributes["{D}"].driverVersion.isGreaterThan(semver("535.0.0"))',
    "S6 exists over map": f'device.attributes["{D}"].exists(k, k == "index")',
}


def rate(fn: object, n: int) -> float:
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            fn()  # type: ignore[operator]
        dt = time.perf_counter() - t
        best = max(best, n / dt)
    return best


def main() -> None:
    view = device_view(D, DEVICE)
    base = None
    for name, expr in SELECTORS.items():
        c = compile_selector(expr)
        assert c.error is None, c.error
        r = rate(lambda c=c: c.evaluate(view), 100_000)
        base = base or r
        print(f"{name:28s} {r:>12,.0f} evals/s  ({r / base:.2f}x S1)")
    r_build = rate(lambda: compile_selector(SELECTORS["S1 quantity compareTo"]).evaluate(device_view(D, DEVICE)), 20_000)
    print(f"{'S1 + device_view each time':28s} {r_build:>12,.0f} evals/s  ({r_build / (base or 1):.2f}x S1)")
    from drakit.selectors import clear_cache
    from drakit.selectors.compile import compile_uncached, env_key

    key = env_key("stored", None)
    t = time.perf_counter()
    for _ in range(200):
        compile_uncached(SELECTORS["S1 quantity compareTo"], key)
    print(f"{'cold compile S1':28s} {(time.perf_counter() - t) / 200 * 1e3:>12.3f} ms")
    clear_cache()


if __name__ == "__main__":
    main()
