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

from drakit.cli.console import EXIT_INVALID, EXIT_OK, Output, emit
from drakit.cli.door import open_snapshot
from drakit.drivers.identity import product_of
from drakit.errors import SelectorError, UsageError
from drakit.features import NEWEST_VERSION, Features
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
    expressions += [(f"--selector #{i}", e) for i, e in enumerate(selectors)]
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


def register(app: typer.Typer) -> None:
    @app.command("match")
    def match(
        files: Annotated[list[str], typer.Option("-f", "--filename", help="Inventory: files, directories or -")],
        selector: Annotated[list[str], typer.Option("--selector", help="CEL selector (repeatable)")] = [],  # noqa: B006
        class_name: Annotated[str | None, typer.Option("--class", help="Apply this DeviceClass's selectors first")] = None,
        kubernetes_version: Annotated[str, typer.Option("--kubernetes-version")] = NEWEST_VERSION,
        feature_gates: Annotated[str | None, typer.Option("--feature-gates", help="Name=bool,...")] = None,
        output: Annotated[Output, typer.Option("-o", "--output")] = Output.text,
    ) -> None:
        """List the devices that match a selector, grouped by node and product, and every device that errs."""
        if not selector and not class_name:
            raise UsageError("give --selector EXPR and/or --class NAME")
        features = Features.for_version(kubernetes_version).with_gates(feature_gates)
        report = _report(match_devices(open_snapshot(files, features), list(selector), class_name, features))
        if output != Output.text:
            emit(report, output)
        else:
            for g in report["groups"]:
                typer.echo(f"{g['node']:<28} {g['count']:>4} × {g['product']}")
            for e in report["errors"]:
                typer.echo(f"error  {e['device']}: {e['error']}")
            typer.echo(
                f"{report['matched']} of {report['devices']} device(s) match"
                + (f"; {len(report['errors'])} device(s) err (this blocks scheduling)" if report["errors"] else "")
            )
        raise typer.Exit(EXIT_INVALID if report["errors"] else EXIT_OK)
