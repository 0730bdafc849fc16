"""``drakit snapshot``: the live cluster as one bundle every offline verb reads with ``-f``.

Everything explain, allocate and simulate read: Nodes, DeviceClasses, ResourceSlices,
DeviceTaintRules, claims in every namespace (their allocations hold devices), and the claim
templates, Pods and Events of ``-n NS`` (default ``default``) or ``-A``.  Secrets in it are
redacted unless ``--no-redact`` (``drakit.live.redact``), so it can go into a bug report.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
import yaml

from drakit.cli import door
from drakit.cli.console import write_plain
from drakit.cli.options import (
    AllNamespaces,
    Context,
    Format,
    Kubeconfig,
    LabelSelector,
    Namespace,
    RequestTimeout,
    namespace_scope,
    output_option,
)


def _dump_yaml(doc: object) -> None:
    """KubeDumper's quoting on libyaml's emitter: the same text, several times faster at fleet scale."""
    from drakit.model.codec import KubeDumper

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    dumper = type("Dumper", (base,), {"yaml_representers": {**base.yaml_representers, **KubeDumper.yaml_representers}})
    yaml.dump(doc, sys.stdout, Dumper=dumper, sort_keys=False, allow_unicode=True)


def register(app: typer.Typer) -> None:
    @app.command("snapshot")
    def snapshot_cmd(
        namespace: Namespace = None,
        all_namespaces: AllNamespaces = False,
        selector: LabelSelector = None,
        output: Annotated[str, output_option(Format.yaml, Format.json, note="The output is a bundle: a v1 List.")] = Format.yaml,
        no_redact: Annotated[
            bool, typer.Option("--no-redact", help="Keep env values, args, annotations and Secrets.")
        ] = False,
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        request_timeout: RequestTimeout = 30.0,
    ) -> None:
        """Write the cluster as a bundle (a v1 List) that -f reads back: explain, allocate, simulate offline.

        -l narrows the pods; a pod's claims, classes and devices are kept whatever their labels.
        """
        from drakit.live.redact import redact
        from drakit.live.snapshot import Scope, read_snapshot

        scope = Scope(namespace_scope(namespace, all_namespaces), selector or "")
        client = door.live_client(door.Source((), kubeconfig, context, timeout=request_timeout))
        try:
            snap = read_snapshot(client, scope, source=door.where(client),
                                 warn=lambda w: print(f"Warning: {w}", file=sys.stderr))
        finally:
            client.close()
        door.freeze_loaded()
        items: list[Any] = list(snap.objects())
        if not no_redact:
            items, counts = redact(items)
            print(counts.summary(), file=sys.stderr)
        meta = {"resourceVersion": snap.provenance.resource_version}
        if output == Format.json:
            # Item by item with the C encoder (json.dump would run the pure-Python one), ASCII
            # escaped, so no control character can reach a terminal and no filter is needed.
            write_plain(json.dumps({"apiVersion": "v1", "kind": "List", "metadata": meta})[:-1] + ', "items": [\n')
            for i, item in enumerate(items):
                write_plain(("," if i else "") + json.dumps(item, separators=(",", ":")) + "\n")
            write_plain("]}\n")
        else:
            _dump_yaml({"apiVersion": "v1", "kind": "List", "metadata": meta, "items": items})
