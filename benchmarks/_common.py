"""Shared pieces of the side-by-side benchmarks: the Go oracle, the conformance data, the table.

Every benchmark compares drakit with the upstream Go code (``dra-oracle``, built by
``make oracle``) on the same inputs in the same run, and prints one table whose ratio column
is drakit time / Go time (below 1 means drakit is faster).  Nothing here asserts a time.
When the oracle has not been built the Go columns read ``n/a`` so that the scripts still run
(the smoke test relies on that); the ratios then cannot be computed.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # the scripts run as plain files, not as a package
    sys.path.insert(0, str(REPO_ROOT))

DEFAULT_ORACLE = REPO_ROOT / "oracle" / "bin" / "dra-oracle"


def oracle_binary() -> Path | None:
    """``$DRAKIT_ORACLE`` or ``oracle/bin/dra-oracle`` when it exists and is executable."""
    path = Path(os.environ.get("DRAKIT_ORACLE", DEFAULT_ORACLE))
    return path if path.is_file() and os.access(path, os.X_OK) else None


def run_oracle(binary: Path, args: Sequence[str]) -> dict[str, Any]:
    """Run one ``dra-oracle`` command and return its JSON answer (errors carry its stderr)."""
    proc = subprocess.run([str(binary), *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"dra-oracle {' '.join(args[:2])}: exit {proc.returncode}: {proc.stderr.strip()}")
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer


def conformance_dir() -> Path:
    """``$DRAKIT_CONFORMANCE_DIR`` or ``../shared/conformance`` next to the repository."""
    env = os.environ.get("DRAKIT_CONFORMANCE_DIR")
    return Path(env) if env else REPO_ROOT / ".." / "shared" / "conformance"


def write_json_documents(path: Path, documents: Iterable[Any]) -> None:
    """A JSON array, written element by element so a large bundle is never one big string."""
    with path.open("w") as f:
        f.write("[")
        for i, doc in enumerate(documents):
            if i:
                f.write(",\n")
            json.dump(doc, f, separators=(",", ":"))
        f.write("]\n")


def peak_rss_mib() -> float:
    """This process's peak resident set size so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass(frozen=True)
class Row:
    """One scenario: drakit's and Go's time per unit of work (seconds), and the target ratio."""

    scenario: str
    unit: str  # what one unit of work is ("call", "eval", "claim")
    drakit_s: float
    go_s: float | None
    target: float | None = None  # the largest acceptable drakit/Go time ratio; None = report only
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return self.drakit_s / self.go_s if self.go_s else None

    @property
    def met(self) -> str:
        if self.target is None:
            return "-"
        if self.ratio is None:
            return "n/a"
        return "yes" if self.ratio <= self.target else "NO"


def fmt_time(seconds: float | None) -> str:
    """Time per unit with a throughput, e.g. ``12.3 us (81.3k/s)``."""
    if seconds is None:
        return "n/a"
    if seconds >= 1:
        text = f"{seconds:.2f} s"
    elif seconds >= 1e-3:
        text = f"{seconds * 1e3:.2f} ms"
    else:
        text = f"{seconds * 1e6:.2f} us"
    rate = 1 / seconds if seconds > 0 else float("inf")
    if rate >= 1e6:
        rate_text = f"{rate / 1e6:.2f}M/s"
    elif rate >= 1e3:
        rate_text = f"{rate / 1e3:.1f}k/s"
    else:
        rate_text = f"{rate:.1f}/s"
    return f"{text} ({rate_text})"


def render_table(title: str, rows: Sequence[Row]) -> str:
    """A Markdown table (it reads as plain text too and pastes into the README as is)."""
    header = ["scenario", "unit", "drakit", "Go (upstream)", "ratio drakit/Go", "target", "met"]
    body = [
        [
            r.scenario + (f" — {r.note}" if r.note else ""),
            r.unit,
            fmt_time(r.drakit_s),
            fmt_time(r.go_s),
            f"{r.ratio:.2f}×" if r.ratio is not None else "n/a",
            f"≤ {r.target:g}×" if r.target is not None else "-",
            r.met,
        ]
        for r in rows
    ]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header)]
    lines = [f"### {title}", ""]
    lines.append("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    lines.append("| " + " | ".join("-" * w for w in widths) + " |")
    for b in body:
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(b, widths, strict=True)) + " |")
    return "\n".join(lines)


def print_table(title: str, rows: Sequence[Row], notes: Sequence[str] = ()) -> None:
    print(render_table(title, rows))
    for note in notes:
        print(f"\n{note}")
    sys.stdout.flush()
