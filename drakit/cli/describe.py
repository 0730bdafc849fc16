"""``drakit describe pod/NAME | claim/NAME | deviceclass/NAME``: the objects, events and verdict together.

The view is :mod:`drakit.explain.describe` on one snapshot: ``-f`` manifests (a bundle written by
``drakit snapshot`` or ``kubectl get -o yaml``), ``--demo``, or — without either, as kubectl
does — the cluster of the kubeconfig.  Exit 0 when the object is described (the verdict is part
of the view; ``drakit explain`` exits by it), 2 when it is not in the input or the command line
is wrong, 1 for invalid input; a cluster that cannot be read exits as ``drakit snapshot`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from drakit.cli.console import emit
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
    RequestTimeout,
    features,
    output_option,
)
from drakit.errors import UsageError
from drakit.explain.describe import describe, render_description

_KINDS = {"pod": "pod", "pods": "pod", "po": "pod",
          "claim": "claim", "claims": "claim", "resourceclaim": "claim", "resourceclaims": "claim",
          "deviceclass": "deviceclass", "deviceclasses": "deviceclass", "class": "deviceclass"}

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
        files: Files = [],  # noqa: B006  (no -f: the cluster)
        namespace: Namespace = None,
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        demo: Demo = False,
        request_timeout: RequestTimeout = 30.0,
        feature_gates: FeatureGates = None,
        kubernetes_version: LiveKubernetesVersion = None,
        output: Annotated[str, output_option(Format.text, Format.yaml, Format.json,
                                             note="a description is one object: no wide or name")] = Format.text,
    ) -> None:
        """Show a pod, claim or device class with its claims, devices, classes, events and explain verdict."""
        kind, name = parse_target(target)
        ns = namespace or "default"
        source = Source(files, kubeconfig, context, demo, request_timeout)
        feats = features(release(source, kubernetes_version, feature_gates), feature_gates)
        if kind == "deviceclass":  # cluster-scoped: its devices and the claims, in every namespace, that name it
            snapshot = open_source(source, feats, namespace=None,
                                   kinds=("Node", "DeviceClass", "ResourceSlice", "DeviceTaintRule", "ResourceClaim"))
        else:
            snapshot = open_source(source, feats, namespace=ns)
        d = describe(snapshot, kind, name, ns, features=feats)
        if output in (Format.json, Format.yaml):
            emit(d.to_json(), output)
        else:
            typer.echo(render_description(d))
