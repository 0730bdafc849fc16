"""The trial's real workload: a small numpy "training" and an "evaluation" with a correctness check.

``python -m drakit.demo.workload train`` fits a linear model to seeded synthetic data by
gradient descent and reports the loss per step; ``evaluate`` predicts a held-out set with the
fitted weights and checks them against the closed-form least-squares solution.  Both report
through drakit's metrics channel (``$DRAKIT_METRICS``, plain JSON lines, so the workload needs
nothing from drakit): a ``ready`` mark once numpy is imported and the data made — startup ends
there — then the series and the correctness metrics.  The exit status is 0 only if the check
passed.  The arithmetic runs on the CPU; on a GPU machine the devices are what the record
proves, and a framework workload would take this one's place.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

TOLERANCE = 1e-6


def _put(item: dict[str, Any]) -> None:
    path = os.environ.get("DRAKIT_METRICS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(item) + "\n")


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else "train"
    if mode not in ("train", "evaluate"):
        print(f"usage: python -m drakit.demo.workload train|evaluate (not {mode!r})", file=sys.stderr)
        return 2
    import numpy as np

    rng = np.random.default_rng(16)
    x = rng.normal(size=(4096, 32))
    true_w = rng.normal(size=32)
    y = x @ true_w + 0.01 * rng.normal(size=4096)
    _put({"ready": True, "at": time.time()})
    w = np.zeros(32)
    steps = 400 if mode == "train" else 200
    for step in range(steps):
        grad = x.T @ (x @ w - y) / len(y)
        w -= 0.5 * grad
        if step % 20 == 0:
            _put({"metric": "loss", "step": step, "value": float(np.mean((x @ w - y) ** 2))})
    exact = np.linalg.lstsq(x, y, rcond=None)[0]
    error = float(np.max(np.abs(w - exact)))
    _put({"correctness": "max_abs_error", "value": error})
    if mode == "evaluate":
        held_out = rng.normal(size=(1024, 32))
        agreement = float(np.max(np.abs(held_out @ w - held_out @ exact)))
        _put({"correctness": "prediction_max_abs_error", "value": agreement})
        error = max(error, agreement)
    passed = error < TOLERANCE
    _put({"correctness": "passed", "value": 1.0 if passed else 0.0})
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
