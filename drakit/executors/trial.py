"""``drakit trial --execute``: both recipes run for real on every product their profile may use.

Placement proves only placement.  So for each eligible (profile, product) pair of the trial
table the shipped workload (:mod:`drakit.demo.workload`) runs through the local executor with
its claim pinned to that product, and the record keeps startup, runtime and correctness apart.
The report puts them next to the table's exclusion and retention checks, as Markdown and as a
self-contained HTML page.
"""

from __future__ import annotations

import html
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from drakit.executors.base import RunRequest, execute
from drakit.executors.local import LocalLauncher
from drakit.executors.placement import DeviceBook
from drakit.profiles.loader import ProfileSet
from drakit.profiles.trial import TrialTable
from drakit.records.run import RunRecord, RunState
from drakit.store.protocol import RecordStore

__all__ = ["MODES", "ExecutedTrial", "Measured", "execute_trial", "render_html", "render_markdown"]

# Which half of the workload each trial profile runs.
MODES = {"training-48g": "train", "evaluation": "evaluate"}


@dataclass(frozen=True)
class Measured:
    profile: str
    product: str
    runs: tuple[RunRecord, ...]

    def _values(self, pick: Callable[[RunRecord], float | None]) -> list[float]:
        return [v for r in self.runs if (v := pick(r)) is not None]

    @property
    def placed(self) -> int:
        return sum(1 for r in self.runs if r.run.state is RunState.FINISHED)

    @property
    def correct(self) -> int:
        return sum(1 for r in self.runs if r.result and r.result.correctness.get("passed") == 1.0)

    def median(self, what: str) -> float | None:
        values = self._values(lambda r: getattr(r.result, f"{what}_s") if r.result else None)
        return statistics.median(values) if values else None

    def worst_error(self) -> float | None:
        values = self._values(lambda r: max((v for k, v in r.result.correctness.items() if k.endswith("error")),
                                            default=None) if r.result else None)
        return max(values) if values else None

    @property
    def passed(self) -> bool:
        return bool(self.runs) and self.placed == self.correct == len(self.runs)


@dataclass(frozen=True)
class ExecutedTrial:
    table: TrialTable
    measured: tuple[Measured, ...]

    @property
    def passed(self) -> bool:
        return self.table.passed and all(m.passed for m in self.measured)


def execute_trial(table: TrialTable, profiles: ProfileSet, book: DeviceBook, store: RecordStore, *,
                  repeat: int = 1, run_prefix: str = "trial", python: str = sys.executable,
                  workdir: str | None = None) -> ExecutedTrial:
    """Run every eligible (profile, product) of ``table`` ``repeat`` times, one after the other."""
    pairs = sorted({(r.profile, r.product) for r in table.rows if r.eligible})
    launcher = LocalLauncher(workdir)
    measured = []
    for profile, product in pairs:
        mode = MODES.get(profile, "evaluate")
        runs = []
        for i in range(repeat):
            request = RunRequest(run_id=f"{run_prefix}-{profile}-{_slug(product)}-{i}", profile=profiles.get(profile),
                                 command=(python, "-m", "drakit.demo.workload", mode), recipe=profile,
                                 namespace="drakit-trial", product=product)
            runs.append(execute(store, book, launcher, request, executor="local"))
        measured.append(Measured(profile, product, tuple(runs)))
    return ExecutedTrial(table, tuple(measured))


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def _cells(m: Measured) -> list[str]:
    def seconds(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    error = m.worst_error()
    return [m.profile, m.product, f"{m.placed}/{len(m.runs)}", seconds(m.median("startup")),
            seconds(m.median("runtime")), f"{m.correct}/{len(m.runs)}", "-" if error is None else f"{error:.2e}",
            "PASS" if m.passed else "FAIL"]


_HEAD = ["profile", "product", "placed", "startup s (median)", "runtime s (median)", "correct", "worst error", "verdict"]


def render_markdown(trial: ExecutedTrial) -> str:
    lines = ["# drakit trial — executed", "",
             "Placement proves placement only; startup, runtime and correctness are measured separately per product.", "",
             "| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
    lines += ["| " + " | ".join(_cells(m)) + " |" for m in trial.measured]
    lines += ["", "## Exclusion and retention checks", ""]
    lines += [f"- [{'x' if c.passed else ' '}] **{c.name}**: {c.detail}" for c in trial.table.checks]
    excluded = [r for r in trial.table.rows if not r.eligible]
    if excluded:
        lines += ["", "## Excluded", ""] + [f"- {r.profile}: {r.product} — {r.reason}" for r in excluded]
    lines += ["", f"Trial **{'PASSED' if trial.passed else 'FAILED'}**", ""]
    return "\n".join(lines)


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
    for row in rows:
        out += "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
    return out + "</table>"


def render_html(trial: ExecutedTrial) -> str:
    checks = [[c.name, "ok" if c.passed else "FAIL", c.detail] for c in trial.table.checks]
    excluded = [[r.profile, r.product, r.reason] for r in trial.table.rows if not r.eligible]
    verdict = "PASSED" if trial.passed else "FAILED"
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>drakit trial — executed</title>"
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1em}"
            "td,th{border:1px solid #ccc;padding:2px 8px}</style></head><body><h1>drakit trial — executed</h1>"
            "<p>Placement proves placement only; startup, runtime and correctness are measured separately per product.</p>"
            + _table(_HEAD, [_cells(m) for m in trial.measured])
            + "<h2>Exclusion and retention checks</h2>" + _table(["check", "result", "detail"], checks)
            + ("<h2>Excluded</h2>" + _table(["profile", "product", "reason"], excluded) if excluded else "")
            + f"<p>Trial <b>{verdict}</b></p></body></html>\n")
