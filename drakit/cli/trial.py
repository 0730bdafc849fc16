"""``drakit trial``: the platform trial on the embedded demo cluster (or on manifests you give).

It walks the product end to end on one small, realistic cluster: load and validate what the
drivers and the platform publish, show what each recipe's profile may use (the trial's two
checks), place the recipes' pods as the scheduler would, and explain any pod that waits.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, Output, emit
from drakit.demo import demo_paths
from drakit.features import NEWEST_VERSION, Features
from drakit.inventory.devices import inventory_devices, product_label
from drakit.model import Bundle, load_bundle, to_wire, validate


def inventory_summary(bundle: Bundle) -> dict[str, Any]:
    """Nodes, devices per (driver, product, memory) and classes: what the cluster publishes."""
    objects = [to_wire(o) for o in bundle.objects]
    groups: Counter[tuple[str, str, str]] = Counter()
    for dev in inventory_devices(objects):
        memory = ((dev.device.get("capacity") or {}).get("memory") or {}).get("value", "-")
        groups[(dev.driver, product_label(dev.driver, dev.device), str(memory))] += 1
    return {
        "nodes": [n.metadata.name for n in bundle.nodes],
        "devices": [
            {"driver": d, "product": p, "memory": m, "count": c} for (d, p, m), c in sorted(groups.items())
        ],
        "classes": [c.metadata.name for c in bundle.classes],
        "templates": [f"{t.metadata.namespace or 'default'}/{t.metadata.name}" for t in bundle.templates],
        "pods": [f"{p.metadata.namespace or 'default'}/{p.metadata.name}" for p in bundle.pods],
    }


def register(app: typer.Typer) -> None:
    @app.command("trial")
    def trial(
        files: Annotated[
            list[str] | None, typer.Option("-f", "--filename", help="Manifests instead of the embedded demo")
        ] = None,
        kubernetes_version: Annotated[str, typer.Option("--kubernetes-version")] = NEWEST_VERSION,
        output: Annotated[Output, typer.Option("-o", "--output")] = Output.text,
    ) -> None:
        """Run the platform trial: inventory, profile eligibility, placements, and why anything waits."""
        from drakit.profiles.trial import trial_table

        features = Features.for_version(kubernetes_version)
        paths = files or demo_paths()
        bundle = load_bundle(paths)
        problems = validate(bundle.objects, features)
        summary = inventory_summary(bundle)
        table = trial_table(bundle)
        report: dict[str, Any] = {
            "source": "embedded demo cluster" if not files else paths,
            "valid": not problems,
            "errors": [line for p in problems for line in p.lines()],
            "inventory": summary,
            "profiles": table.to_json(),
            "passed": table.passed and not problems,
        }
        if output != Output.text:
            emit(report, output)
        else:
            _print_text(report, table.render_text())
        raise typer.Exit(EXIT_OK if report["passed"] else EXIT_INVALID)


def _print_text(report: dict[str, Any], profile_table: str) -> None:
    inv = report["inventory"]
    echo = typer.echo
    echo(f"drakit trial — {report['source'] if isinstance(report['source'], str) else ', '.join(report['source'])}")
    echo("")
    echo(f"Inventory: {len(inv['nodes'])} nodes, {sum(d['count'] for d in inv['devices'])} devices, "
         f"classes {', '.join(inv['classes'])}")
    for d in inv["devices"]:
        echo(f"  {d['count']:>3} × {d['product']:<24} {d['memory']:>9}  ({d['driver']})")
    echo("Validation: " + ("all objects valid" if report["valid"] else f"{len(report['errors'])} error(s)"))
    for line in report["errors"]:
        echo(f"  {line}")
    echo("")
    echo("Profiles — what each recipe may use:")
    for line in profile_table.splitlines():
        echo(f"  {line}" if line else "")
    echo("")
    echo("Trial " + ("PASSED" if report["passed"] else "FAILED"))
