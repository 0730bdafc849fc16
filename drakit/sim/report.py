"""Reports of a run: plain text, JSON documents, side-by-side comparisons and charts.

Pure renderers return strings or bytes; only :func:`write_chart` writes a file.  Charts are
drawn with matplotlib's Agg backend (no display needed); the HTML chart embeds the SVG
rendering inline so the page is self-contained.  SVG metadata (date) and element ids (hash
salt) are pinned so that the same run always gives the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from drakit.errors import DrakitError, InvalidArgument
from drakit.gostr import escape
from drakit.sim.result import GroupStats, SimulationResult, thin

MAX_PENDING_LINES = 20


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if float(value).is_integer():
        return f"{int(value)}s"
    return f"{value:.1f}s"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _wait(g: GroupStats, stat: str) -> str:
    """A wait statistic, marked ``≥`` where an open wait makes it a lower bound."""
    return ("≥" if stat in g.lower_bounds else "") + _fmt(getattr(g, f"wait_{stat}"))


def _group_lines(title: str, groups: Sequence[GroupStats]) -> list[str]:
    lines = [title, f"  {'name':<24} {'pods':>6} {'sched':>6} {'pend':>5} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}  placement"]
    censored = 0
    for g in groups:
        placement = ", ".join(f"{k} x{v}" for k, v in g.placement) or "-"
        lines.append(
            f"  {g.name:<24} {g.pods:>6} {g.scheduled:>6} {g.pending:>5} {_wait(g, 'p50'):>8} "
            f"{_wait(g, 'p90'):>8} {_wait(g, 'p99'):>8} {_wait(g, 'max'):>8}  {placement}"
        )
        censored += g.censored
        if g.stranded.devices:
            lines.append(
                f"  {'':<24} stranded: {g.stranded.devices} device(s) larger than needed, "
                f"{g.stranded.device_seconds / 3600:.1f} device-hours, {g.stranded.excess_gib_hours:.1f} GiB-hours unused memory"
            )
    if censored:
        lines.append(f"  ≥: lower bound; {censored} pod(s) still waiting at the end count with the time waited so far")
    return lines


def render_text(result: SimulationResult) -> str:
    """The human report: totals, per workload and recipe, utilisation, pending pods."""
    pending = result.pending()
    lines = [
        f"scenario {result.scenario} (seed {result.seed}, Kubernetes {result.kubernetes_version}): "
        f"{result.nodes} nodes, {result.devices} devices, "
        f"{len(result.pods)} pods, simulated {_fmt(result.end_time)}",
        f"  scheduled {len(result.pods) - len(pending)}, pending {len(pending)}, attempts {result.attempts}, "
        f"allocator calls {result.allocator_calls} (cached answers {result.cache_hits})",
        "",
    ]
    lines += _group_lines("workloads", result.by_workload())
    lines.append("")
    lines += _group_lines("recipes", result.by_recipe())
    lines.append("")
    lines.append("utilisation by device class (time-weighted mean)")
    util = result.utilisation()
    for cls, cap in result.class_capacity:
        lines.append(f"  {cls:<32} {_pct(util.get(cls)):>7} of {cap if cap is not None else '?'} devices")
    lines.append("")
    lines.append("utilisation by device product (time-weighted mean)")
    by_product = result.product_utilisation()
    for product, count in result.product_capacity:
        lines.append(f"  {product:<32} {_pct(by_product.get(product)):>7} of {count} devices")
    if result.queue_records:
        lines += _queue_lines(result)
    if pending:
        lines.append("")
        lines.append("pending pods")
        for p in pending[:MAX_PENDING_LINES]:
            lines.append(f"  {p.namespace}/{p.name}: {p.message}")
        if len(pending) > MAX_PENDING_LINES:
            lines.append(f"  ... and {len(pending) - MAX_PENDING_LINES} more")
    return "\n".join(lines) + "\n"


def _queue_lines(result: SimulationResult) -> list[str]:
    """Queue wait (suspended until admitted) next to scheduling wait (admitted until bound), and borrowing."""
    q = result.queues_json()
    lines = ["", "queues (queue wait: arrival to admission; scheduling wait: admission to bound)"]
    for name, s in q["byQueue"].items():
        lines.append(f"  {name:<20} {s['admitted']}/{s['units']} admitted, queue wait p50 {_fmt(s['queueWaitP50'])} "
                     f"p90 {_fmt(s['queueWaitP90'])} max {_fmt(s['queueWaitMax'])}, scheduling wait p50 "
                     f"{_fmt(s['schedulingWaitP50'])} max {_fmt(s['schedulingWaitMax'])}, {s['borrowedUnits']} borrowed")
    peak: dict[tuple[str, str], int] = {}
    for sample in result.quota_samples:
        for queue, res, used in sample.borrowed:
            peak[(queue, res)] = max(peak.get((queue, res), 0), used)
    for (queue, res), used in sorted(peak.items()):
        lines.append(f"  {queue:<20} borrowed up to {used} {res}")
    waiting = [r for r in result.queue_records if r.admitted is None]
    for r in waiting[:MAX_PENDING_LINES]:
        lines.append(f"  {r.unit}: still queued in {r.queue or '?'} ({r.reason}) {r.message}")
    return lines


# --- comparisons ------------------------------------------------------------------------------

_METRICS = ("pods", "scheduled", "pending", "wait_p50", "wait_p90", "wait_p99", "wait_max")


def _metrics(result: SimulationResult) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {}
    for g in result.by_workload():
        out[g.name] = {m: getattr(g, m) for m in _METRICS}
        out[g.name]["stranded_devices"] = g.stranded.devices
    return out


_JSON_METRIC = {"wait_p50": "waitP50", "wait_p90": "waitP90", "wait_p99": "waitP99", "wait_max": "waitMax",
                "stranded_devices": "strandedDevices"}


def _util_diff(a: dict[str, float | None], b: dict[str, float | None]) -> dict[str, float | None]:
    return {k: None if a.get(k) is None or b.get(k) is None else round((b[k] or 0) - (a[k] or 0), 6) for k in sorted(set(a) | set(b))}


def compare_json(base: SimulationResult, variant: SimulationResult, labels: tuple[str, str] = ("base", "variant")) -> dict[str, Any]:
    """Both runs' summaries and the per-workload differences (variant - base).

    The keys are fixed (``base``, ``variant``, ``labels``, ``diff``) whatever the runs are
    called, so a script can read a what-if without knowing the file names or node spec.
    """
    a, b = _metrics(base), _metrics(variant)
    diff: dict[str, dict[str, float | None]] = {}
    for wl in sorted(set(a) | set(b)):
        row = {}
        for m in (*_METRICS, "stranded_devices"):
            x, y = a.get(wl, {}).get(m), b.get(wl, {}).get(m)
            row[_JSON_METRIC.get(m, m)] = None if x is None or y is None else round(y - x, 6)
        diff[wl] = row
    return {
        "labels": {"base": labels[0], "variant": labels[1]},
        "base": base.to_json(pods=False, events=False),
        "variant": variant.to_json(pods=False, events=False),
        "diff": {
            "nodes": variant.nodes - base.nodes,
            "devices": variant.devices - base.devices,
            "workloads": diff,
            "utilisation": {
                "byClass": _util_diff(base.utilisation(), variant.utilisation()),
                "byProduct": _util_diff(base.product_utilisation(), variant.product_utilisation()),
            },
        },
    }


def render_compare_text(base: SimulationResult, variant: SimulationResult, labels: tuple[str, str] = ("base", "variant")) -> str:
    """Side by side: one row per workload and metric, with the change."""
    a, b = _metrics(base), _metrics(variant)
    # (run, workload, statistic) that an open wait makes a lower bound
    bounds = {(run, g.name, stat) for run, r in (("a", base), ("b", variant)) for g in r.by_workload() for stat in g.lower_bounds}
    la, lb = labels
    lines = [
        f"{'':<34} {la[:16]:>16} {lb[:16]:>16} {'change':>10}",
        f"{'nodes':<34} {base.nodes:>16} {variant.nodes:>16} {variant.nodes - base.nodes:>+10}",
        f"{'devices':<34} {base.devices:>16} {variant.devices:>16} {variant.devices - base.devices:>+10}",
    ]
    for wl in sorted(set(a) | set(b)):
        for m in (*_METRICS, "stranded_devices"):
            x, y = a.get(wl, {}).get(m), b.get(wl, {}).get(m)
            if m.startswith("wait"):
                stat = m.removeprefix("wait_")
                sx = ("≥" if ("a", wl, stat) in bounds else "") + _fmt(x)
                sy = ("≥" if ("b", wl, stat) in bounds else "") + _fmt(y)
                change = "-" if x is None or y is None else f"{y - x:+.1f}s"
            else:
                sx, sy = ("-" if x is None else str(int(x))), ("-" if y is None else str(int(y)))
                change = "-" if x is None or y is None else f"{int(y - x):+d}"
            lines.append(f"{wl + ' ' + m:<34} {sx:>16} {sy:>16} {change:>10}")
    for ua, ub in ((base.utilisation(), variant.utilisation()), (base.product_utilisation(), variant.product_utilisation())):
        for key in sorted(set(ua) | set(ub)):
            x, y = ua.get(key), ub.get(key)
            change = "-" if x is None or y is None else f"{(y - x) * 100:+.1f}pt"
            lines.append(f"{'utilisation ' + key:<34} {_pct(x):>16} {_pct(y):>16} {change:>10}")
    return "\n".join(lines) + "\n"


# --- charts -----------------------------------------------------------------------------------


CHARTS_EXTRA = 'charts need matplotlib, which is not installed: pip install "drakit[charts]"'


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend; matplotlib is the optional ``charts`` extra."""
    try:
        import matplotlib
    except ImportError:
        raise DrakitError(CHARTS_EXTRA) from None
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "drakit-sim"
    import matplotlib.pyplot as plt

    return plt


def _figure(runs: Sequence[tuple[str, SimulationResult]]) -> Any:
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    fig, (ax_class, ax_product, ax_queue) = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    end = 0.0
    for label, result in runs:
        samples = thin(result.samples)
        times = [s.time / 3600 for s in samples]
        if samples and result.end_time > samples[-1].time:
            samples = [*samples, samples[-1]]
            times = [*times, result.end_time / 3600]
        end = max(end, result.end_time / 3600)
        prefix = f"{label}: " if len(runs) > 1 else ""
        for ax, capacity, series in (
            (ax_class, result.class_capacity, lambda s: s.by_class),
            (ax_product, result.product_capacity, lambda s: s.by_product),
        ):
            for key, cap in capacity:
                if cap:
                    values = [dict(series(s)).get(key, 0) / cap * 100 for s in samples]
                    ax.step(times, values, where="post", label=f"{prefix}{key} ({cap})")
        ax_queue.step(times, [s.pending for s in samples], where="post", label=f"{prefix}pending")
    for ax, what in ((ax_class, "device class"), (ax_product, "device product")):
        ax.set_ylabel("allocated devices (%)")
        ax.set_ylim(0, 105)
        ax.set_title(f"utilisation per {what}")
        ax.legend(loc="upper right", fontsize="small")
    ax_queue.set_title("scheduling queue depth")
    ax_queue.set_ylabel("pending pods")
    ax_queue.set_ylim(bottom=0)
    ax_queue.yaxis.set_major_locator(MaxNLocator(integer=True))  # pods come in whole numbers
    ax_queue.set_xlabel("simulated time (hours)")
    ax_queue.set_xlim(0, end or 1)
    ax_queue.legend(loc="upper right", fontsize="small")
    fig.tight_layout()
    return fig


def chart_png(runs: Sequence[tuple[str, SimulationResult]]) -> bytes:
    plt = _pyplot()
    fig = _figure(runs)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def chart_html(runs: Sequence[tuple[str, SimulationResult]]) -> str:
    import html

    plt = _pyplot()
    fig = _figure(runs)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    title = html.escape(" vs ".join(f"{label} ({r.scenario}, seed {r.seed})" for label, r in runs))
    rows = "".join(
        f"<tr><td>{html.escape(label)}</td><td>{html.escape(g.name)}</td><td>{g.pods}</td><td>{g.scheduled}</td>"
        f"<td>{g.pending}</td><td>{_wait(g, 'p50')}</td><td>{_wait(g, 'p90')}</td><td>{_wait(g, 'p99')}</td></tr>"
        for label, r in runs
        for g in r.by_workload()
    )
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>drakit simulate: "
        f"{title}</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}</style></head><body>"
        f"<h1>{title}</h1>{svg}<table><tr><th>run</th><th>workload</th><th>pods</th><th>scheduled</th>"
        f"<th>pending</th><th>p50</th><th>p90</th><th>p99</th></tr>{rows}</table></body></html>\n"
    )


def write_chart(path: str | Path, runs: Sequence[tuple[str, SimulationResult]]) -> None:
    """Write a PNG (``.png``) or a self-contained HTML page (``.html``/``.htm``)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".png":
        p.write_bytes(chart_png(runs))
    elif suffix in (".html", ".htm"):
        p.write_text(chart_html(runs), encoding="utf-8")
    else:
        raise InvalidArgument(f"chart {escape(str(path))}: the file name must end in .png or .html")
