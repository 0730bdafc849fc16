"""``drakit match``: which devices of an inventory a selector (and optionally a class) matches.

Evaluates the way the allocator does — class selectors first, then the given selectors, the
first ``false`` stops — in the stored-expressions environment.  Devices whose evaluation errs are
listed with the error, because upstream aborts the whole scheduling attempt on such an error.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, emit, error_line
from drakit.cli.door import Source, open_source, release
from drakit.cli.options import (
    Context,
    Demo,
    FeatureGates,
    Files,
    Format,
    Kubeconfig,
    LiveKubernetesVersion,
    RequestTimeout,
    features,
    output_option,
)
from drakit.drivers.identity import product_of
from drakit.errors import SelectorError, UsageError
from drakit.features import Features
from drakit.gostr import quote
from drakit.inventory.devices import InventoryDevice, inventory_devices
from drakit.inventory.snapshot import ClusterSnapshot
from drakit.selectors import compile_selector, device_view


@dataclass(frozen=True)
class DeviceMatch:
    device: InventoryDevice
    product: str
    matched: bool
    error: str = ""


def match_devices(
    snapshot: ClusterSnapshot, selectors: list[str], class_name: str | None, features: Features
) -> list[DeviceMatch]:
    """Evaluate class selectors then ``selectors`` on every device; compile errors raise."""
    expressions: list[tuple[str, str]] = []
    if class_name:
        device_class = snapshot.find_class(class_name)
        if device_class is None:
            raise UsageError(f"device class {quote(class_name)} is not in the input")
        for i, sel in enumerate((device_class.get("spec") or {}).get("selectors") or []):
            expressions.append((f"class {class_name}: selector #{i}", (sel.get("cel") or {}).get("expression", "")))
    expressions += [(f"-s/--cel #{i}", e) for i, e in enumerate(selectors)]
    compiled = []
    for where, expr in expressions:
        sel = compile_selector(expr, environment="stored", features=features)
        if sel.error is not None:
            raise SelectorError(f"{where}: CEL compile error: {sel.error.message}", expression=expr, phase="compile")
        compiled.append((where, sel))
    out = []
    for dev in inventory_devices(snapshot.slices):
        view = device_view(dev.driver, dev.device)
        matched, error = True, ""
        for where, sel in compiled:
            try:
                if not sel.evaluate(view):
                    matched = False
                    break
            except SelectorError as e:
                matched, error = False, f"{where}: CEL runtime error: {e}"
                break
        out.append(DeviceMatch(dev, product_of(dev.driver, dev.device), matched, error))
    return out


def _report(matches: list[DeviceMatch]) -> dict[str, Any]:
    groups: Counter[tuple[str, str]] = Counter((m.device.node, m.product) for m in matches if m.matched)
    return {
        "matched": sum(groups.values()),
        "devices": len(matches),
        "groups": [{"node": n, "product": p, "count": c} for (n, p), c in sorted(groups.items())],
        "matches": [m.device.ident for m in matches if m.matched],
        "errors": [{"device": m.device.ident, "node": m.device.node, "error": m.error} for m in matches if m.error],
    }


_CEL_HINT = "match selects devices by CEL with -s/--cel EXPR; devices have attributes, not labels"


def register(app: typer.Typer) -> None:
    @app.command("match")
    def match(
        files: Files = [],  # noqa: B006  (no -f: the cluster)
        cel: Annotated[
            list[str],
            typer.Option("-s", "--cel", metavar="EXPR", help="CEL selector, as in a claim's selectors; repeatable."),
        ] = [],  # noqa: B006
        legacy_selector: Annotated[list[str], typer.Option("--selector", hidden=True)] = [],  # noqa: B006
        label_selector: Annotated[str | None, typer.Option("-l", hidden=True)] = None,
        class_name: Annotated[
            str | None, typer.Option("--class", metavar="CLASS", help="Apply this DeviceClass's selectors first.")
        ] = None,
        kubernetes_version: LiveKubernetesVersion = None,
        feature_gates: FeatureGates = None,
        output: Annotated[
            str,
            output_option(*Format, note="wide adds the devices of each group; name prints driver/pool/device of each match."),
        ] = Format.text,
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        demo: Demo = False,
        request_timeout: RequestTimeout = 30.0,
    ) -> None:
        """List the devices that match a selector, grouped by node and product, and every device that errs.

        The CEL selector is -s/--cel (--selector, its old name, still works): kubectl's
        -l/--selector is a label selector, and devices have attributes, not labels.  No -n or
        -A: ResourceSlices are cluster-scoped.
        """
        if label_selector is not None:
            raise UsageError(_CEL_HINT)
        if legacy_selector:
            error_line("note: --selector is -s/--cel now (kubectl's -l/--selector selects labels)")
        selectors = [*cel, *legacy_selector]
        if not selectors and not class_name:
            raise UsageError("give -s/--cel EXPR and/or --class NAME")
        source = Source(files, kubeconfig, context, demo, request_timeout)
        feats = features(release(source, kubernetes_version, feature_gates), feature_gates)
        snapshot = open_source(source, feats, namespace=None, kinds=("DeviceClass", "ResourceSlice"))
        matches = match_devices(snapshot, selectors, class_name, feats)
        report = _report(matches)
        if output in (Format.json, Format.yaml):
            emit(report, output)
        elif output == Format.name:
            for ident in report["matches"]:
                typer.echo(ident)
        else:
            names: dict[tuple[str, str], list[str]] = {}
            for m in matches:
                if m.matched:
                    names.setdefault((m.device.node, m.product), []).append(m.device.name)
            for g in report["groups"]:
                extra = "  " + ",".join(names[g["node"], g["product"]]) if output == Format.wide else ""
                typer.echo(f"{g['node']:<28} {g['count']:>4} × {g['product']}{extra}")
            for e in report["errors"]:
                typer.echo(f"error  {e['device']}: {e['error']}")
            typer.echo(
                f"{report['matched']} of {report['devices']} device(s) match"
                + (f"; {len(report['errors'])} device(s) err (this blocks scheduling)" if report["errors"] else "")
            )
        raise typer.Exit(EXIT_INVALID if report["errors"] else EXIT_OK)
