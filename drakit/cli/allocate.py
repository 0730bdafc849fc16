"""``drakit allocate``: run the allocator on manifests for one node.

Thin shell: resolve feature gates, open a validated snapshot, call
:func:`drakit.allocator.allocate_snapshot`, print.
Exit codes: 0 allocated, 3 unsatisfiable, 4 error, 1 invalid input, 2 usage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import typer

from drakit.allocator import AllocationOutcome, allocate_snapshot
from drakit.allocator.trace import Trace
from drakit.cli.console import EXIT_ERROR, EXIT_OK, EXIT_UNSATISFIABLE, Output, emit
from drakit.cli.door import open_snapshot
from drakit.errors import UsageError
from drakit.features import NEWEST_VERSION, Features
from drakit.inventory.snapshot import ClusterSnapshot, ObjectKey


def pick_node(snapshot: ClusterSnapshot, name: str | None) -> Mapping[str, Any] | str:
    """The Node to allocate for: ``--node``, or the input's only Node."""
    if name is None:
        if len(snapshot.nodes) != 1:
            raise UsageError(f"--node is required: the input has {len(snapshot.nodes)} Node objects, not exactly one")
        return snapshot.nodes[0]
    return name


def render_text(outcome: AllocationOutcome, trace: Trace) -> str:
    """A compact table per claim, or the reason the allocation failed."""
    lines: list[str] = []
    if outcome.status == "allocated":
        for claim in outcome.claims:
            lines.append(f"claim {ObjectKey.of(claim)}: allocated")
            results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get(
                "results"
            ) or []
            width = max((len(r["request"]) for r in results), default=0)
            for r in results:
                extra = " (admin)" if r.get("adminAccess") else ""
                if r.get("shareID"):
                    extra += f" share {r['shareID'][:8]}"
                lines.append(f"  {r['request']:<{width}}  ->  {r['driver']}/{r['pool']}/{r['device']}{extra}")
        return "\n".join(lines)
    lines.append(f"{outcome.status}: {outcome.message}")
    shown = [r for r in trace.reasons if r.code.value not in ("NotNeeded", "Backtracked")][:20]
    for r in shown:
        where = f"{r.claim}/{r.request}: " if r.claim else ""
        lines.append(f"  - [{r.code.value}] {where}{r.message}")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    @app.command("allocate")
    def allocate_cmd(
        files: Annotated[
            list[str], typer.Option("-f", "--filename", help="Manifest files (YAML/JSON, '-' for stdin).")
        ],
        node: Annotated[
            str | None, typer.Option("--node", help="Node to allocate for (optional with exactly one Node).")
        ] = None,
        feature_gates: Annotated[
            str | None, typer.Option("--feature-gates", help="Name=true,Other=false")
        ] = None,
        kubernetes_version: Annotated[
            str, typer.Option("--kubernetes-version", help="Defaults for feature gates.")
        ] = NEWEST_VERSION,
        timeout: Annotated[
            float, typer.Option("--timeout", help="Search budget in seconds (0 = none).")
        ] = 10.0,
        output: Annotated[Output, typer.Option("-o", "--output")] = Output.text,
        as_given: Annotated[
            bool,
            typer.Option(
                "--as-given",
                help="Take the objects as upstream's allocator tests do: no API validation, "
                "namespaces as written, objects sharing a name kept.",
            ),
        ] = False,
    ) -> None:
        """Allocate devices for the unallocated ResourceClaims in the input on one node."""
        features = Features.for_version(kubernetes_version).with_gates(feature_gates)
        snapshot = open_snapshot(files, features, as_given=as_given)
        trace = Trace()
        outcome = allocate_snapshot(
            snapshot, pick_node(snapshot, node), features=features, timeout=timeout or None, trace=trace
        )
        if output == Output.text:
            typer.echo(render_text(outcome, trace))
        else:
            emit(outcome.to_json(), output)
        code = {"allocated": EXIT_OK, "unsatisfiable": EXIT_UNSATISFIABLE}.get(outcome.status, EXIT_ERROR)
        raise typer.Exit(code)
