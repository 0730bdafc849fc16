"""``drakit allocate [pod/NAME]``: run the allocator on manifests, for one node or every node.

Without a target, every unallocated ResourceClaim in the input is allocated together; with
``pod/NAME`` (or ``pod NAME``), the pod's claims are, its templates instantiated as the claim
controller would.  Allocated claims in the input only mark their devices as in use.
``--node NAME`` picks the node (optional when the input has exactly one); ``--all-nodes``
answers for every node: which fit, and why not per node.

Exit codes: 0 allocated (on at least one node with ``--all-nodes``), 3 unsatisfiable, 4 error,
1 invalid input (refused with ``validate``'s lines unless ``--as-given``), 2 usage (target not
found, ``--node`` naming a node that is not in the input).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from drakit.allocator import AllocationOutcome, Inventory, allocate
from drakit.allocator.trace import Trace
from drakit.cli.console import EXIT_ERROR, EXIT_OK, EXIT_UNSATISFIABLE, emit
from drakit.cli.door import Source, open_source, release
from drakit.cli.options import (
    Context,
    Demo,
    FeatureGates,
    Files,
    Format,
    Kubeconfig,
    LiveKubernetesVersion,
    Namespace,
    OutputFormat,
    RequestTimeout,
    features,
    namespace_scope,
)
from drakit.errors import UsageError
from drakit.explain.diagnose import claim_from_template, node_exclusion
from drakit.explain.rejections import RejectionGroup, device_table, summarise
from drakit.gostr import quote
from drakit.inventory.snapshot import ClusterSnapshot, Obj, ObjectKey, name_of, namespace_of


def _kind(obj: Mapping[str, Any]) -> str:
    return str(obj.get("kind", ""))


def node_names(objects: Sequence[Obj]) -> list[str]:
    """Nodes of the input: its Node objects, or (without any) the nodes its slices name."""
    nodes = [name_of(o) for o in objects if _kind(o) == "Node"]
    if nodes:
        return nodes
    return sorted({str((s.get("spec") or {}).get("nodeName")) for s in objects
                   if _kind(s) == "ResourceSlice" and (s.get("spec") or {}).get("nodeName")})


def pick_node(objects: Sequence[Obj], name: str | None) -> Obj:
    """The Node ``name`` (a bare one when only slices name it); a usage error when absent."""
    names = node_names(objects)
    if name is None:
        if len(names) != 1:
            raise UsageError(
                f"--node or --all-nodes is required: the input has {len(names)} nodes, not exactly one"
            )
        name = names[0]
    for n in objects:
        if _kind(n) == "Node" and name_of(n) == name:
            return n
    if name in names:
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    raise UsageError(f"node {quote(name)} not found in the input (nodes: {shown or 'none'})")


def pod_claims(inp: ClusterSnapshot, kind: str, name: str, namespace: str) -> tuple[Obj | None, list[Obj]]:
    """The pod and its claims to allocate (a template instantiated as the claim controller would)."""
    if kind != "pod":
        raise UsageError(f"allocate takes pod/NAME, not {kind}/NAME")
    pod = inp.find_pod(name, namespace)
    if pod is None:
        raise UsageError(f'pod "{namespace}/{name}" not found in the input')
    statuses = {s.get("name"): s for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    out: list[Obj] = []
    for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
        pc_name = str(pc.get("name") or "")
        generated = (statuses.get(pc_name) or {}).get("resourceClaimName")
        claim_name = pc.get("resourceClaimName") or generated
        if claim_name:
            claim = inp.find_claim(str(claim_name), namespace)
            if claim is None:
                raise UsageError(f'pod claim {pc_name}: ResourceClaim "{namespace}/{claim_name}" not found in the input')
            out.append(claim)
        elif pc.get("resourceClaimTemplateName"):
            tname = str(pc["resourceClaimTemplateName"])
            template = inp.find_template(tname, namespace)
            if template is None:
                raise UsageError(f'pod claim {pc_name}: ResourceClaimTemplate "{namespace}/{tname}" not found in the input')
            out.append(claim_from_template(pod, pc_name, template))
    if not out:
        raise UsageError(f'pod "{namespace}/{name}" has no resource claims')
    return pod, out


@dataclass(frozen=True)
class NodeAnswer:
    node: str
    outcome: AllocationOutcome | None  # None: ruled out before DRA (nodeSelector, taints)
    excluded: str
    rejections: tuple[RejectionGroup, ...]

    @property
    def status(self) -> str:
        return "excluded" if self.outcome is None else self.outcome.status

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"node": self.node, "status": self.status}
        if self.excluded:
            out["reason"] = self.excluded
        if self.outcome is not None:
            out["message"] = self.outcome.message
            if self.outcome.status == "allocated":
                out["claims"] = [dict(c) for c in self.outcome.claims]
        out["rejections"] = [g.to_json() for g in self.rejections]
        return out


def answer(
    node: Obj, pod: Obj | None, claims: Sequence[Obj], inv: Inventory, devices: Mapping[str, tuple[str, Obj]],
    *, feats: Any, timeout: float | None,
) -> NodeAnswer:
    name = name_of(node)
    why = node_exclusion(pod, node, comparison_operators=feats.taint_comparison_operators) if pod is not None else ""
    if why:
        return NodeAnswer(name, None, why, ())
    trace = Trace()
    outcome = allocate(node=node, slices=(), classes=(), claims=claims, features=feats, timeout=timeout,
                       trace=trace, inventory=inv)
    groups = summarise(trace.reasons, devices) if outcome.status != "allocated" else ()
    return NodeAnswer(name, outcome, "", groups)


def render_text(a: NodeAnswer, *, wide: bool = False, name_node: bool = False) -> str:
    """A compact table per claim, or the counted reasons the allocation failed.

    ``name_node`` (``--all-nodes``) prefixes each answer with its node.
    """
    lines: list[str] = []
    on = f" on node {a.node}" if name_node else ""
    outcome = a.outcome
    if outcome is None:
        return f"node {a.node}: excluded: {a.excluded}"
    if outcome.status == "allocated":
        for claim in outcome.claims:
            lines.append(f"claim {ObjectKey.of(claim)}: allocated{on}")
            results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
            width = max((len(r["request"]) for r in results), default=0)
            for r in results:
                extra = " (admin)" if r.get("adminAccess") else ""
                if r.get("shareID"):
                    extra += f" share {r['shareID'][:8]}"
                lines.append(f"  {r['request']:<{width}}  ->  {r['driver']}/{r['pool']}/{r['device']}{extra}")
        return "\n".join(lines)
    lines.append(f"{'node ' + a.node + ': ' if name_node else ''}{outcome.status}: {outcome.message}")
    shown = [g for g in a.rejections if wide or g.code.value != "NodeMismatch"]
    for g in shown[:12]:
        lines.append(f"  - {g.text()}")
    if len(shown) > 12:
        lines.append(f"  ... and {len(shown) - 12} more causes (-o json lists them all)")
    hidden = sum(g.count for g in a.rejections if g not in shown)
    if hidden:
        lines.append(f"  ({hidden} devices on other nodes; -o wide lists them)")
    return "\n".join(lines)


def _exit(answers: Sequence[NodeAnswer]) -> int:
    statuses = {a.status for a in answers}
    if "allocated" in statuses:
        return EXIT_OK
    if "error" in statuses:
        return EXIT_ERROR
    return EXIT_UNSATISFIABLE


def register(app: typer.Typer) -> None:
    @app.command("allocate")
    def allocate_cmd(
        files: Files = [],  # noqa: B006  (no -f: the cluster)
        target: Annotated[
            list[str] | None, typer.Argument(metavar="TARGET", help="pod/NAME or pod NAME (default: every unallocated claim)")
        ] = None,
        namespace: Namespace = None,
        node: Annotated[
            str | None, typer.Option("--node", metavar="NODE", help="Node to allocate for (optional with exactly one node).")
        ] = None,
        all_nodes: Annotated[bool, typer.Option("--all-nodes", help="Try every node: which fit, and why not.")] = False,
        feature_gates: FeatureGates = None,
        kubernetes_version: LiveKubernetesVersion = None,
        timeout: Annotated[
            float, typer.Option("--timeout", metavar="SECONDS", help="Search budget per node in seconds (0 = none).")
        ] = 10.0,
        output: OutputFormat = Format.text,
        as_given: Annotated[
            bool,
            typer.Option(
                "--as-given",
                help="Take the objects as upstream's allocator tests do: no API validation, "
                "namespaces as written, objects sharing a name kept.",
            ),
        ] = False,
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        demo: Demo = False,
        request_timeout: RequestTimeout = 30.0,
    ) -> None:
        """Allocate devices for a pod's claims, or every unallocated claim, on one node or all."""
        from drakit.cli.explain import parse_targets

        if node is not None and all_nodes:
            raise UsageError("--node and --all-nodes exclude each other")
        source = Source(files, kubeconfig, context, demo, request_timeout)
        feats = features(release(source, kubernetes_version, feature_gates), feature_gates)
        # Without -f a prediction on the cluster: nothing is written.  Claims are read in every
        # namespace (their allocations hold devices); pods in the target's.
        inp = open_source(source, feats,
                          namespace=namespace_scope(namespace, False) if target else None, as_given=as_given)
        objects = [*inp.nodes, *inp.slices, *inp.classes, *inp.claims, *inp.templates, *inp.pods]
        pod: Obj | None = None
        claims: list[Obj] = list(inp.claims)
        if target:
            wanted = parse_targets(target)
            if len(wanted) != 1:
                raise UsageError("allocate takes one pod")
            kind, name = wanted[0]
            pod, own = pod_claims(inp, kind, name, namespace_scope(namespace, False) or "default")
            mine = {(namespace_of(c), name_of(c)) for c in own}
            claims = [c for c in inp.claims if (c.get("status") or {}).get("allocation")
                      and (namespace_of(c), name_of(c)) not in mine] + list(own)
        nodes = [pick_node(objects, n) for n in node_names(objects)] if all_nodes else [pick_node(objects, node)]
        inv = Inventory(list(inp.slices), list(inp.classes))
        devices = device_table(inp.slices)
        answers = [answer(n, pod, claims, inv, devices, feats=feats, timeout=timeout or None) for n in nodes]
        if output in (Format.json, Format.yaml):
            if all_nodes:
                emit({"kind": "NodeFit", "fits": [a.node for a in answers if a.status == "allocated"],
                      "nodes": [a.to_json() for a in answers]}, output)
            else:
                a = answers[0]
                doc: dict[str, Any] = (
                    a.outcome.to_json() if a.outcome is not None else {"status": "excluded", "message": a.excluded}
                )
                doc["node"] = a.node
                doc["rejections"] = [g.to_json() for g in a.rejections]
                emit(doc, output)
        elif output == Format.name:
            for a in answers:
                if a.status == "allocated":
                    typer.echo(f"node/{a.node}")
        elif all_nodes:
            fit = [a.node for a in answers if a.status == "allocated"]
            typer.echo(f"{len(fit)}/{len(answers)} node(s) fit" + (f": {', '.join(fit)}" if fit else ""))
            for a in answers:
                if a.status == "allocated":
                    continue
                if a.outcome is None:
                    typer.echo(f"node {a.node}: excluded: {a.excluded}")
                else:
                    typer.echo(render_text(a, wide=output == Format.wide, name_node=True))
        else:
            typer.echo(render_text(answers[0], wide=output == Format.wide))
        raise typer.Exit(_exit(answers))


