"""``drakit explain``: why a pod or claim waits, or every waiting pod at once.

Targets as kubectl takes them: ``pod/NAME``, ``claim/NAME``, ``pod NAME [NAME...]``, a bare
``NAME`` (a pod), or ``pods --all-pending [-n NS | -A] [-l SELECTOR]`` for every pod that
requests devices and has not started, grouped by verdict and cause.

Exit codes follow the worst verdict: 0 ok (or no waiting pod), 3 waiting or never (the pod
cannot run now), 1 broken (an object is wrong) or unreadable input, 2 usage (target not
found, bad flags).  The input is one validated snapshot (``cli/door.py``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Annotated

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, EXIT_UNSATISFIABLE, emit
from drakit.cli.door import Source, open_source, release
from drakit.cli.options import (
    AllNamespaces,
    Context,
    Demo,
    FeatureGates,
    Files,
    Format,
    Kubeconfig,
    LabelSelector,
    LiveKubernetesVersion,
    Namespace,
    OutputFormat,
    RequestTimeout,
    features,
    labels_match,
    namespace_scope,
    parse_label_selector,
)
from drakit.errors import UsageError
from drakit.explain.diagnose import Shared, diagnose
from drakit.explain.diagnosis import Diagnosis
from drakit.explain.pending import PendingReport, explain_pending, waiting_pods
from drakit.explain.render import WIDTH, render_json, render_text
from drakit.outcomes import Verdict

EXIT_FOR_VERDICT = {
    Verdict.OK: EXIT_OK,
    Verdict.WAITING: EXIT_UNSATISFIABLE,
    Verdict.NEVER: EXIT_UNSATISFIABLE,
    Verdict.BROKEN: EXIT_INVALID,
}
_ALIASES = {"pod": "pod", "pods": "pod", "po": "pod", "claim": "claim", "claims": "claim",
            "resourceclaim": "claim", "resourceclaims": "claim",
            # a workload is explained through the pod its template makes
            "job": "job", "jobs": "job", "cronjob": "cronjob", "cronjobs": "cronjob", "cj": "cronjob",
            "deployment": "deployment", "deployments": "deployment", "deploy": "deployment",
            "statefulset": "statefulset", "statefulsets": "statefulset", "sts": "statefulset",
            "daemonset": "daemonset", "daemonsets": "daemonset", "ds": "daemonset",
            "replicaset": "replicaset", "replicasets": "replicaset", "rs": "replicaset",
            "jobset": "jobset", "jobsets": "jobset"}


def parse_target(target: str) -> tuple[str, str]:
    """``pod/NAME``, ``claim/NAME`` or a bare pod ``NAME`` -> (kind, name)."""
    kind, sep, name = target.partition("/")
    if not sep:
        return "pod", target
    if not name or kind.lower() not in _ALIASES:
        raise UsageError(f"target {target!r}: want pod/NAME, claim/NAME, job/NAME, deployment/NAME or NAME")
    return _ALIASES[kind.lower()], name


def parse_targets(words: Sequence[str]) -> list[tuple[str, str]]:
    """kubectl's forms: ``KIND NAME...`` or ``KIND/NAME...`` / bare names."""
    if not words:
        return []
    if words[0].lower() in _ALIASES and "/" not in words[0]:
        if len(words) == 1:
            raise UsageError(f"name a {_ALIASES[words[0].lower()]} (e.g. {words[0]} NAME), or use pods --all-pending")
        return [(_ALIASES[words[0].lower()], w) for w in words[1:]]
    return [parse_target(w) for w in words]


def worst_exit(verdicts: Sequence[Verdict]) -> int:
    codes = {EXIT_FOR_VERDICT[v] for v in verdicts}
    return next((c for c in (EXIT_INVALID, EXIT_UNSATISFIABLE) if c in codes), EXIT_OK)


def render_pending_text(report: PendingReport, *, wide: bool = False) -> str:
    """Groups, worst first: the verdict line, the example's headline and fix, one line per pod."""
    if not report.pods:
        return "no waiting pods that request devices"
    lines = [
        f"{len(report.pods)} waiting pod(s) in {len(report.groups)} group(s) "
        f"({report.diagnosed} distinct shape(s) diagnosed)"
    ]
    labels = {p.pod: p.labels for p in report.pods}
    origins = {p.pod: p.origin for p in report.pods}
    for g in report.groups:
        d = g.diagnosis
        lines.append("")
        lines.append(f"{d.verdict.value.upper()} ({d.code.value}): {len(g.pods)} pod(s), owner {d.owner.value}")
        lines += textwrap.wrap(f"e.g. {g.pods[0]}: {d.headline}", WIDTH, initial_indent="  ", subsequent_indent="    ")
        if d.fix:
            lines += textwrap.wrap(f"fix: {d.fix}", WIDTH, initial_indent="  ", subsequent_indent="       ")
        for pod in g.pods:
            extra = ""
            if wide and labels[pod]:
                extra = "  " + ",".join(f"{k}={v}" for k, v in sorted(labels[pod].items()))
            origin = f" ({origins[pod]})" if origins[pod] else ""
            lines.append(f"  - {pod}{origin}{extra}")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    @app.command("explain")
    def explain_cmd(
        files: Files = [],  # noqa: B006  (no -f: the cluster)
        targets: Annotated[
            list[str] | None,
            typer.Argument(metavar="TARGET", help="pod/NAME, claim/NAME, NAME, pod NAME..., or pods with --all-pending"),
        ] = None,
        namespace: Namespace = None,
        all_namespaces: AllNamespaces = False,
        selector: LabelSelector = None,
        all_pending: Annotated[
            bool, typer.Option("--all-pending", help="Every pod that requests devices and has not started.")
        ] = False,
        feature_gates: FeatureGates = None,
        kubernetes_version: LiveKubernetesVersion = None,
        output: OutputFormat = Format.text,
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        demo: Demo = False,
        request_timeout: RequestTimeout = 30.0,
    ) -> None:
        """Explain why a pod or claim waits: verdict, evidence, owner and a suggested fix."""
        words = list(targets or [])
        if all_pending:
            if words and not (len(words) == 1 and words[0].lower() in ("pod", "pods", "po")):
                raise UsageError("--all-pending takes no names (drakit explain pods --all-pending)")
        else:
            if not words:
                raise UsageError("name a target (pod/NAME, claim/NAME or NAME), or use pods --all-pending")
            if selector is not None:
                raise UsageError("-l/--selector selects pods for --all-pending; it cannot be used with names")
            if all_namespaces:
                raise UsageError("a resource cannot be retrieved by name across all namespaces (-A)")
        wanted = parse_targets(words) if not all_pending else []
        requirements = parse_label_selector(selector) if selector is not None else ()
        scope = namespace_scope(namespace, all_namespaces)
        source = Source(files, kubeconfig, context, demo, request_timeout)
        feats = features(release(source, kubernetes_version, feature_gates), feature_gates)
        # frozen out of the cyclic collector's view there; without -f, the cluster is read
        inp = open_source(source, feats,
                          namespace=scope if all_pending else scope or "default", pod_selector=selector or "")
        if all_pending:
            pods = waiting_pods(inp, scope, lambda labels: labels_match(requirements, labels))
            report = explain_pending(inp, pods, features=feats)
            if output in (Format.json, Format.yaml):
                emit(report.to_json(), output)
            elif output == Format.name:
                for p in report.pods:
                    typer.echo(f"pod/{p.pod.split('/', 1)[1]}")
            else:
                typer.echo(render_pending_text(report, wide=output == Format.wide))
            worst = report.worst
            raise typer.Exit(worst_exit([worst] if worst is not None else []))
        ns = scope or "default"
        shared = Shared(inp, feats)
        results: list[Diagnosis] = [diagnose(inp, kind, name, ns, features=feats, shared=shared) for kind, name in wanted]
        if output in (Format.json, Format.yaml):
            docs = [render_json(d) for d in results]
            emit(docs[0] if len(docs) == 1 else {"kind": "List", "items": docs}, output)
        elif output == Format.name:
            for (kind, name), _ in zip(wanted, results, strict=True):
                typer.echo(f"{kind}/{name}")
        else:
            typer.echo("\n\n".join(render_text(d) for d in results))
        raise typer.Exit(worst_exit([d.verdict for d in results]))
