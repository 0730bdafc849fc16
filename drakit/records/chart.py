"""``runs compare`` as a chart: one box per group (median, quartiles, min–max whiskers), PNG or HTML.

Drawn from the groups' summary numbers (matplotlib's ``bxp``), not from the runs, so a chart of
100,000 runs costs what a chart of ten does.  The HTML page embeds the SVG and the table, so it
is one self-contained file; SVG dates and ids are pinned, so the same groups give the same bytes.
"""

from __future__ import annotations

import html
import io
from collections.abc import Sequence
from typing import Any

from drakit.errors import DrakitError
from drakit.records.compare import Group

__all__ = ["chart_html", "chart_png"]

CHARTS_EXTRA = "charts need matplotlib: pip install 'drakit[charts]'"


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise DrakitError(CHARTS_EXTRA) from None
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "drakit-runs"
    import matplotlib.pyplot as plt

    return plt


def _figure(groups: Sequence[Group], by: str, metric: str) -> Any:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(groups) + 2), 4.5))
    stats = [{"label": f"{g.key}\n(n={g.n})", "med": g.median, "q1": g.q1, "q3": g.q3, "whislo": g.min,
              "whishi": g.max, "fliers": []} for g in groups]
    if stats:
        ax.bxp(stats, showfliers=False)
    ax.set_title(f"{metric} by {by}")
    ax.set_ylabel(f"{metric} (s)" if metric in ("runtime", "startup") else metric)
    ax.tick_params(axis="x", labelsize="small")
    fig.tight_layout()
    return fig


def chart_png(groups: Sequence[Group], by: str, metric: str) -> bytes:
    plt = _pyplot()
    fig = _figure(groups, by, metric)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def chart_html(groups: Sequence[Group], by: str, metric: str) -> str:
    plt = _pyplot()
    fig = _figure(groups, by, metric)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    title = html.escape(f"drakit runs compare: {metric} by {by}")
    rows = "".join(
        f"<tr><td>{html.escape(g.key)}</td><td>{g.n}</td><td>{g.median:.6g}</td><td>{g.q1:.6g}</td>"
        f"<td>{g.q3:.6g}</td><td>{g.iqr:.6g}</td><td>{g.min:.6g}</td><td>{g.max:.6g}</td></tr>"
        for g in groups
    )
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}</style></head><body>"
        f"<h1>{title}</h1>{svg}<table><tr><th>{html.escape(by)}</th><th>n</th><th>median</th><th>q1</th>"
        f"<th>q3</th><th>IQR</th><th>min</th><th>max</th></tr>{rows}</table></body></html>\n"
    )
