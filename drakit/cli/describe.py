"""``drakit describe pod/NAME | claim/NAME | deviceclass/NAME``: the objects, events and verdict together.

The view is :mod:`drakit.explain.describe` on one snapshot: ``-f`` manifests (a bundle written by
``kubectl get -o yaml`` or ``drakit simulate --snapshot-at``) or ``--demo``.  Exit 0 when the
object is described (the verdict is part of the view; ``drakit explain`` exits by it), 2 when it
is not in the input or the command line is wrong, 1 for invalid input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from drakit.cli.console import emit
from drakit.cli.door import open_snapshot
from drakit.cli.options import (
    FeatureGates,
    Format,
    KubernetesVersion,
    Namespace,
    features,
    output_option,
)
from drakit.errors import UsageError
from drakit.explain.describe import describe, render_description
from drakit.features import NEWEST_VERSION, Features
from drakit.inventory.snapshot import ClusterSnapshot

_KINDS = {"pod": "pod", "pods": "pod", "po": "pod",
          "claim": "claim", "claims": "claim", "resourceclaim": "claim", "resourceclaims": "claim",
          "deviceclass": "deviceclass", "deviceclasses": "deviceclass", "class": "deviceclass"}

SourceFiles = Annotated[
    list[str] | None,
    typer.Option("-f", "--filename", metavar="FILE", help="Manifest files or folders ('-' for stdin); repeatable."),
]
Demo = Annotated[bool, typer.Option("--demo", help="The embedded demo cluster instead of -f.")]


def open_source(files: Sequence[str] | None, demo: bool, feats: Features) -> ClusterSnapshot:
    """The snapshot a read-only view answers on: ``-f`` files or the demo cluster."""
    if files and demo:
        raise UsageError("-f/--filename and --demo exclude each other")
    if demo:
        from drakit.demo import demo_paths

        return open_snapshot(demo_paths(), feats)
    if not files:
        raise UsageError("give the cluster as -f FILE (e.g. kubectl get pods,resourceclaims,resourceslices,"
                         "deviceclasses,events -A -o yaml) or use --demo")
    return open_snapshot(list(files), feats)


def parse_target(words: Sequence[str]) -> tuple[str, str]:
    """``KIND/NAME`` or ``KIND NAME`` (kubectl's two spellings)."""
    if len(words) == 1 and "/" in words[0]:
        kind, _, name = words[0].partition("/")
    elif len(words) == 2 and "/" not in words[0]:
        kind, name = words
    else:
        raise UsageError("name one object: pod/NAME, claim/NAME or deviceclass/NAME")
    if kind.lower() not in _KINDS or not name:
        raise UsageError(f"cannot describe {'/'.join(words)!r}: want pod/NAME, claim/NAME or deviceclass/NAME")
    return _KINDS[kind.lower()], name


def register(app: typer.Typer) -> None:
    @app.command("describe")
    def describe_cmd(
        target: Annotated[list[str], typer.Argument(metavar="KIND/NAME", help="pod/NAME, claim/NAME or deviceclass/NAME")],
        files: SourceFiles = None,
        demo: Demo = False,
        namespace: Namespace = None,
        feature_gates: FeatureGates = None,
        kubernetes_version: KubernetesVersion = NEWEST_VERSION,
        output: Annotated[str, output_option(Format.text, Format.yaml, Format.json,
                                             note="a description is one object: no wide or name")] = Format.text,
    ) -> None:
        """Show a pod, claim or device class with its claims, devices, classes, events and explain verdict."""
        kind, name = parse_target(target)
        feats = features(kubernetes_version, feature_gates)
        snapshot = open_source(files, demo, feats)
        d = describe(snapshot, kind, name, namespace or "default", features=feats)
        if output in (Format.json, Format.yaml):
            emit(d.to_json(), output)
        else:
            typer.echo(render_description(d))
