"""Benchmark: speed at the door — load + validate + explain on a big inventory, next to bare parsing.

One inventory (``--nodes`` nodes x 8 H100s from the node templates, one DeviceClass, one claim
whose selector misses every GPU by 361Mi and its pod) is written twice, as one JSON ``v1 List``
and as a multi-document YAML stream.  Side by side, in one run:

* the baselines: a bare ``json.load`` of the JSON file and a bare libyaml (``yaml.CSafeLoader``)
  ``load_all`` of the YAML file, in this process, collector on as a plain script has it;
* ``drakit explain pod/train`` and ``drakit validate`` end to end, each as its own process
  (interpreter start, imports, reading, strict decoding, typing, the diagnosis, rendering);
* the library pipeline in this process: ``load_bundle`` + ``validate_report`` + ``diagnose``.

Times are CPU seconds (user + system) because the machines this runs on are shared: for a
``drakit`` command, of the whole process (interpreter start and exit included) from the
kernel's accounting of the child, run as the console script runs, with bytecode cached as an
installed package has it (the first run writes the cache); peak RSS is the process's own.
Targets (issue 11): the whole explain within 3x of ``json.load`` and 1.3x of ``CSafeLoader``
on the same file, peak RSS under 700 MB.  Nothing here asserts a time; ``--quick`` (50 nodes)
is the smoke mode.

Run: ``python benchmarks/bench_load.py [--nodes N] [--quick] [--only json|yaml]``.

Measured on the shared 2-core machine, 5,000 nodes (JSON 27 MiB, YAML 30 MiB), one run::

    scenario                                   CPU     bare parse  ratio  peak RSS
    (json) drakit explain, end to end          2.04 s  0.78 s      2.60x  344 MB
    (json) drakit validate, end to end         1.70 s  0.78 s      2.18x  334 MB
    (json) load + validate + explain (library) 1.88 s  0.78 s      2.41x  336 MB
    (yaml) drakit explain, end to end          5.86 s  9.92 s      0.59x  378 MB
    (yaml) drakit validate, end to end         5.68 s  9.92 s      0.57x  367 MB
    (yaml) load + validate + explain (library) 6.96 s  9.92 s      0.70x  369 MB

The bare ``json.load`` itself varies between runs (0.64-0.78 s, most of it the collector over
700,000 new dicts), so the JSON ratio does too (2.6-3.0x).  Before, in the same conditions:
explain 2.79 s from JSON (3.63x), 440 MB; before issue 11: 6.1 s (11x) and 15.8 s (2.1x),
780-890 MB, without validation.  What paid, in order: device attributes as plain dicts
(TypedDict) instead of a model each; the loaded objects frozen before the collector runs
again (~0.8 s of one full collection); the CLI keeping what it loaded until exit instead of
freeing it (~0.3 s: the bundle's typed objects when the verb dropped them, the snapshot when
its exit unwound); a device's attributes taken as parsed when each is one scalar of its exact
type, the strict schema wording anything else (typing 0.53 -> 0.38 s, RSS -100 MB); a
device-level validation shortcut that builds no path for a device whose checks cannot fail
(validation 0.44 -> 0.30 s); quantities checked in pydantic's core.  What did not: a
key-counting fast path for JSON duplicates (the text scans it needs cost what the hook
saves), jiter (no faster than ``json`` here), lazy verb imports (explain needs nearly every
module; ~0.04 s), skipping interpreter exit alone (freeing happened before it), disabling
pydantic's plugin discovery (``importlib.metadata`` is imported anyway).  Where the JSON
explain's time goes now: imports 0.35 s, strict parse 0.5 s (0.24 s of it ``json``'s own
scan with the collector off, 0.15 s the duplicate-key hook, 0.06 s the depth pre-scan),
typing 0.38 s, validation 0.30 s, snapshot and diagnosis 0.38 s.  The explain's pod is
valid: a refused pod (exit 1) would be timed without its diagnosis, so the run fails on it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO_ROOT
from bench_explain import MEM_80GI, _claim, _pod, inventory

TARGET_JSON = 3.0
TARGET_YAML = 1.3
RSS_LIMIT_MB = 700


def _env() -> dict[str, str]:
    """The child's environment: this tree importable, bytecode cached as an installed package has it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(REPO_ROOT), "DRAKIT_PROGRESS": "0"}


@dataclass(frozen=True)
class Measure:
    cpu_s: float
    rss_mb: float | None = None


def write_inputs(folder: Path, nodes: int) -> tuple[Path, Path]:
    objects = [*inventory(nodes), _claim("train", 1, (MEM_80GI,)), _pod("train", "train")]
    js, ym = folder / "inventory.json", folder / "inventory.yaml"
    with js.open("w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": objects}, f)
    with ym.open("w") as f:
        yaml.dump_all(objects, f, Dumper=yaml.CSafeDumper, sort_keys=False)
    return js, ym


def cpu(fn: Callable[[], Any]) -> Measure:
    t0 = time.process_time()
    fn()
    return Measure(time.process_time() - t0)


def drakit_process(args: list[str]) -> Measure:
    """``drakit ARGS`` as the console script runs it; CPU and peak RSS of the whole process
    (interpreter start and exit included), from the kernel's accounting of the child."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "drakit.cli.main", *args], stdout=subprocess.DEVNULL,
                                stderr=err, env=_env())
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 3):  # 1 would be a refusal: nothing explained
            err.seek(0)
            raise RuntimeError(f"drakit {' '.join(args[:2])}: exit {proc.returncode}: {err.read()[-800:]!r}")
    return Measure(usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def pipeline(path: Path) -> Measure:
    """load + validate + explain through the library, in a child so its RSS is its own."""
    code = (
        "import resource, sys, time\n"
        "from drakit.explain.diagnose import diagnose\n"
        "from drakit.explain.inputs import ExplainInput\n"
        "from drakit.features import Features\n"
        "from drakit.model.validate import validate_report\n"
        "from drakit.sources import load_bundle\n"
        "t = time.process_time()\n"
        f"b = load_bundle([{str(path)!r}])\n"
        "import gc; gc.freeze()  # as the CLI does once its input is loaded\n"
        "f = Features.for_version()\n"
        "validate_report(b.entries, f)\n"
        "diagnose(ExplainInput.from_bundle(b), 'pod', 'train', 'ml', features=f)\n"
        "u = resource.getrusage(resource.RUSAGE_SELF)\n"
        "print(time.process_time() - t, u.ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), check=True).stdout
    cpu_s, rss_kib = out.split()
    return Measure(float(cpu_s), int(rss_kib) / 1024)


def _row(name: str, m: Measure, base: Measure, target: float | None) -> list[str]:
    ratio = m.cpu_s / base.cpu_s if base.cpu_s else float("inf")
    met = "-" if target is None else ("yes" if ratio <= target and (m.rss_mb or 0) < RSS_LIMIT_MB else "NO")
    return [name, f"{m.cpu_s:.2f} s", f"{base.cpu_s:.2f} s", f"{ratio:.2f}×",
            f"≤ {target:g}×" if target is not None else "-", met,
            f"{m.rss_mb:.0f} MB" if m.rss_mb is not None else "-"]


def render(title: str, rows: list[list[str]]) -> str:
    header = ["scenario", "drakit (CPU)", "bare parse (CPU)", "ratio drakit/parse", "target", "met", "peak RSS"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = [f"### {title}", "", "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |",
             "| " + " | ".join("-" * w for w in widths) + " |"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--nodes", type=int, default=5000, help="nodes of 8 GPUs (default 5000)")
    parser.add_argument("--quick", action="store_true", help="50 nodes: the smoke mode")
    parser.add_argument("--only", choices=("json", "yaml"), help="measure one format's rows (both by default)")
    args = parser.parse_args(argv)
    nodes = 50 if args.quick else args.nodes
    with tempfile.TemporaryDirectory() as tmp:
        js, ym = write_inputs(Path(tmp), nodes)
        sizes = f"JSON {js.stat().st_size / 2**20:.1f} MiB, YAML {ym.stat().st_size / 2**20:.1f} MiB"
        with js.open() as fh:
            bare_json = cpu(lambda: json.load(fh))
        bare_yaml = Measure(0.0)
        if args.only != "json":
            with ym.open() as fh:
                bare_yaml = cpu(lambda: list(yaml.load_all(fh, Loader=yaml.CSafeLoader)))
        drakit_process(["validate", "-f", str(js)])  # the first run writes the bytecode cache
        rows: list[list[str]] = []
        for fmt, path, base, target in (("json", js, bare_json, TARGET_JSON), ("yaml", ym, bare_yaml, TARGET_YAML)):
            if args.only not in (None, fmt):
                continue
            explain = drakit_process(["explain", "pod/train", "-n", "ml", "-f", str(path), "-o", "json"])
            validate = drakit_process(["validate", "-f", str(path), "-o", "json"])
            rows.append(_row(f"({fmt}) drakit explain, end to end", explain, base, target))
            rows.append(_row(f"({fmt}) drakit validate, end to end", validate, base, None))
            rows.append(_row(f"({fmt}) load + validate + explain (library)", pipeline(path), base, target))
    print(render(f"Speed at the door: {nodes} nodes x 8 GPUs ({sizes}), peak RSS limit {RSS_LIMIT_MB} MB", rows))
    print(f"\nbare json.load {bare_json.cpu_s:.2f} s, bare CSafeLoader load_all {bare_yaml.cpu_s:.2f} s; "
          f"peak RSS of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
