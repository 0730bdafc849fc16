"""``drakit explain pod/NAME|claim/NAME``: why a workload waits.

Thin shell: resolve feature gates, open a validated snapshot, call :func:`drakit.explain.diagnose.diagnose`,
render.  Exit codes follow the verdict: 0 ok, 3 waiting or never (the pod cannot run now),
1 broken (an object is wrong), 2 usage (target not found, bad flags).
"""

from __future__ import annotations

import gc
from typing import Annotated

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, EXIT_UNSATISFIABLE, Output, emit
from drakit.cli.door import open_snapshot
from drakit.errors import UsageError
from drakit.explain.diagnose import diagnose
from drakit.explain.render import render_json, render_text
from drakit.features import NEWEST_VERSION, Features
from drakit.outcomes import Verdict

EXIT_FOR_VERDICT = {
    Verdict.OK: EXIT_OK,
    Verdict.WAITING: EXIT_UNSATISFIABLE,
    Verdict.NEVER: EXIT_UNSATISFIABLE,
    Verdict.BROKEN: EXIT_INVALID,
}


def parse_target(target: str) -> tuple[str, str]:
    kind, sep, name = target.partition("/")
    kind = kind.lower()
    aliases = {"pod": "pod", "pods": "pod", "po": "pod", "claim": "claim", "resourceclaim": "claim",
               "resourceclaims": "claim", "claims": "claim"}
    if not sep or not name or kind not in aliases:
        raise UsageError(f"target {target!r}: want pod/NAME or claim/NAME")
    return aliases[kind], name


def register(app: typer.Typer) -> None:
    @app.command("explain")
    def explain_cmd(
        target: Annotated[str, typer.Argument(help="pod/NAME or claim/NAME")],
        files: Annotated[
            list[str], typer.Option("-f", "--filename", help="Manifest files or folders ('-' for stdin).")
        ],
        namespace: Annotated[str, typer.Option("-n", "--namespace")] = "default",
        feature_gates: Annotated[
            str | None, typer.Option("--feature-gates", help="Name=true,Other=false")
        ] = None,
        kubernetes_version: Annotated[
            str, typer.Option("--kubernetes-version", help="Defaults for feature gates.")
        ] = NEWEST_VERSION,
        output: Annotated[Output, typer.Option("-o", "--output")] = Output.text,
    ) -> None:
        """Explain why a pod or claim waits: verdict, evidence, owner and a suggested fix."""
        kind, name = parse_target(target)
        features = Features.for_version(kubernetes_version).with_gates(feature_gates)
        snapshot = open_snapshot(files, features)
        # The loaded bundle lives until the process exits: move it out of the cyclic
        # collector's view, so the diagnosis's many short-lived records do not trigger full
        # passes over it (measured: ~40% of a diagnosis on 5,000 nodes).
        gc.freeze()
        d = diagnose(snapshot, kind, name, namespace, features=features)
        if output == Output.text:
            typer.echo(render_text(d))
        else:
            emit(render_json(d), output)
        raise typer.Exit(EXIT_FOR_VERDICT[d.verdict])
