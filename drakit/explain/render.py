"""Diagnosis -> text (80 columns) or JSON.  Pure: returns strings and dicts, prints nothing.

Layout, most important first: the verdict line, the owner and the fix, then one funnel table
per request, holders / partial assignment, the nodes line, and the remaining evidence.  Every
line is wrapped to ``WIDTH`` so the output reads in a plain 80-column terminal.
"""

from __future__ import annotations

import textwrap
from typing import Any

from drakit.explain.diagnosis import Diagnosis, Funnel
from drakit.outcomes import ExplainCode

WIDTH = 80
_COUNT_COL = 8  # right-aligned count column
_LABEL_COL = WIDTH - 2 * _COUNT_COL - 4


def _wrap(text: str, indent: str = "", hang: str | None = None) -> list[str]:
    return textwrap.wrap(
        text,
        width=WIDTH,
        initial_indent=indent,
        subsequent_indent=hang if hang is not None else indent + "  ",
        break_long_words=True,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def render_json(d: Diagnosis) -> dict[str, Any]:
    return d.to_json()


def render_text(d: Diagnosis) -> str:
    lines: list[str] = []
    lines += _wrap(f"{d.target}: {d.verdict.value.upper()} ({d.code.value})", "", "  ")
    lines += _wrap(d.headline, "  ")
    if d.origin:
        lines += _wrap(f"from: {d.origin}", "  ", "    ")
    lines.append(f"  owner: {d.owner.value}")
    if d.fix:
        lines += _wrap(f"fix: {d.fix}", "  ", "       ")
    if d.scheduler:
        lines += _wrap(f"scheduler: {d.scheduler}", "  ", "    ")
    for funnel in d.funnels:
        lines.append("")
        lines += _funnel(funnel)
    if d.holders:
        lines.append("")
        lines.append("held by:")
        for h in d.holders[:8]:
            when = f", expected back at t={h.expected_release:g}s" if h.expected_release is not None else ""
            pods = f" (pod {', '.join(h.pods)})" if h.pods else ""
            lines += _wrap(f"{h.claim}: {h.devices} device(s){pods}{when}", "  ", "    ")
        if len(d.holders) > 8:
            lines.append(f"  ... and {len(d.holders) - 8} more claims")
    if d.partial is not None:
        lines.append("")
        lines += _wrap(f"best partial assignment on node {d.partial.node} ({d.partial.claim}):", "")
        for req, dev in d.partial.placed:
            lines += _wrap(f"{req} -> {dev}", "  ", "    ")
        lines += _wrap(d.partial.missing, "  ")
    if d.nodes is not None and (d.nodes.excluded or d.nodes.inferred):
        lines.append("")
        head = f"nodes: {d.nodes.usable}/{d.nodes.total} usable by the pod"
        if d.nodes.inferred:
            head += " (no Node objects in the input: taken from slices)"
        lines += _wrap(head, "")
        for why, n in d.nodes.excluded.items():
            lines += _wrap(f"{n} {why}", "  ", "    ")
    evidence = [
        f
        for f in d.findings
        if f.code != ExplainCode.NEAR_MISS and f.message != d.headline and f.message not in d.fix
    ]
    blockers = [f for f in evidence if f.blocking]
    if blockers:
        lines.append("")
        lines.append("also blocking:")
        for f in blockers:
            lines += _wrap(f"- [{f.code.value}] {f.message}", "  ", "    ")
    others = [f for f in evidence if not f.blocking]
    if others:
        lines.append("")
        lines.append("evidence:")
        for f in others:
            lines += _wrap(f"- [{f.code.value}] {f.message}", "  ", "    ")
    return "\n".join(line.rstrip() for line in lines)


def _funnel(f: Funnel) -> list[str]:
    need = "all" if f.mode == "All" else str(f.needed)
    admin = ", admin access" if f.admin_access else ""
    lines = _wrap(f"request {f.request} of claim {f.claim} (class {f.device_class}, {need} needed{admin}):", "")
    for s in f.steps:
        label = s.label if len(s.label) <= _LABEL_COL else s.label[: _LABEL_COL - 1] + "…"
        removed = f"-{s.removed}" if s.removed else ""
        lines.append(f"  {label:<{_LABEL_COL}}{s.count:>{_COUNT_COL}}{removed:>{_COUNT_COL}}")
    if f.near_misses:
        lines.append("  near misses (fail exactly one condition):")
        for nm in f.near_misses:
            lines += _wrap(f"{nm.count} × {nm.product}: {nm.message}", "    ", "      ")
            if nm.suggestion:
                lines += _wrap(f"-> {nm.suggestion}", "      ", "         ")
    return lines
