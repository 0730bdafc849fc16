"""``drakit allocate``: run the allocator on manifests for one node.

Thin shell: load objects, resolve feature gates, call :func:`drakit.allocator.allocate`, print.
Exit codes: 0 allocated, 3 unsatisfiable, 4 error, 1 invalid input, 2 usage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer

from drakit.allocator import AllocationOutcome, allocate
from drakit.allocator.trace import Trace
from drakit.cli.console import EXIT_ERROR, EXIT_OK, EXIT_UNSATISFIABLE, Output, emit
from drakit.errors import UsageError
from drakit.features import NEWEST_VERSION, Features
from drakit.model import load_bundle, to_wire


def load_objects(paths: Sequence[str]) -> list[dict[str, Any]]:
    """Wire dicts of every object in ``paths``, loaded strictly (unknown fields are errors).

    Objects that share a name are kept, in input order: the allocator decides on them as
    upstream's does (e.g. two slices of one pool with the same name make the pool invalid).
    """
    bundle = load_bundle(list(paths), allow_duplicate_names=True)
    return [to_wire(obj) for obj in bundle.objects]


def _kind(obj: Mapping[str, Any]) -> str:
    return str(obj.get("kind", ""))


def pick_node(objects: Sequence[Mapping[str, Any]], name: str | None) -> Mapping[str, Any]:
    nodes = [o for o in objects if _kind(o) == "Node"]
    if name is None:
        if len(nodes) != 1:
            raise UsageError(f"--node is required: the input has {len(nodes)} Node objects, not exactly one")
        return nodes[0]
    for n in nodes:
        if (n.get("metadata") or {}).get("name") == name:
            return n
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def render_text(outcome: AllocationOutcome, trace: Trace) -> str:
    """A compact table per claim, or the reason the allocation failed."""
    lines: list[str] = []
    if outcome.status == "allocated":
        for claim in outcome.claims:
            meta = claim.get("metadata") or {}
            label = (
                f"{meta['namespace']}/{meta.get('name', '')}"
                if meta.get("namespace")
                else meta.get("name", "")
            )
            lines.append(f"claim {label}: allocated")
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
    ) -> None:
        """Allocate devices for the unallocated ResourceClaims in the input on one node."""
        features = Features.for_version(kubernetes_version).with_gates(feature_gates)
        objects = load_objects(files)
        node_obj = pick_node(objects, node)
        trace = Trace()
        outcome = allocate(
            node=node_obj,
            slices=[o for o in objects if _kind(o) == "ResourceSlice"],
            classes=[o for o in objects if _kind(o) == "DeviceClass"],
            claims=[o for o in objects if _kind(o) == "ResourceClaim"],
            features=features,
            timeout=timeout or None,
            trace=trace,
        )
        if output == Output.text:
            typer.echo(render_text(outcome, trace))
        else:
            emit(outcome.to_json(), output)
        code = {"allocated": EXIT_OK, "unsatisfiable": EXIT_UNSATISFIABLE}.get(outcome.status, EXIT_ERROR)
        raise typer.Exit(code)
