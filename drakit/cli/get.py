"""``drakit get devices``: the fleet as devices, with the claim and pods that hold each (kubectl lacks it).

``-l`` selects devices by their attributes written as labels (``productName=NVIDIA H100 80GB HBM3``,
``gpu.nvidia.com/architecture in (Hopper,Blackwell)``, ``!resource.kubernetes.io/pcieRoot``):
devices have attributes, not labels, and kubectl's label syntax is the one users already know.
A driver's own attributes match bare or qualified with its name.  ``--free`` keeps devices no
claim holds (a claim with ``adminAccess`` watches a device without taking it), ``--node`` and
``--driver`` narrow by where and whose.  The fleet comes from ``-f``, ``--demo`` or, without
either, the kubeconfig's cluster.  Exit 0 (also when nothing is listed), 2 usage, 1 invalid input.
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
    RequestTimeout,
    features,
    labels_match,
    output_option,
    parse_label_selector,
)
from drakit.errors import UsageError
from drakit.explain.describe import columns
from drakit.inventory.fleet import DeviceRow, attribute_labels, fleet

_RESOURCES = {"devices", "device", "dev"}

HEADERS = ("NODE", "DRIVER", "POOL", "DEVICE", "PRODUCT", "MEMORY", "TAINTS", "CLAIM", "PODS")
WIDE = ("REQUEST", "SLICE")


def _holders(row: DeviceRow) -> tuple[str, str, str]:
    """(claims, pods, requests) cells; an admin-access holder is marked, it does not take the device."""
    claims = ",".join(h.claim + (" (admin)" if h.admin_access else "") for h in row.holdings) or "<free>"
    pods = ",".join(sorted({p for h in row.holdings for p in h.pods})) or "-"
    requests = ",".join(h.request for h in row.holdings) or "-"
    return claims, pods, requests


def table(rows: Sequence[DeviceRow], *, wide: bool = False) -> str:
    cells = []
    for r in rows:
        claims, pods, requests = _holders(r)
        line = [r.node, r.driver, r.pool, r.device, r.product, r.memory or "-", ",".join(r.taints) or "-", claims, pods]
        if wide:
            line += [requests, r.slice]
        cells.append(line)
    return "\n".join(columns([*HEADERS, *WIDE] if wide else HEADERS, cells))


def select(rows: Sequence[DeviceRow], *, selector: str | None, free: bool, node: str | None,
           driver: str | None) -> list[DeviceRow]:
    requirements = parse_label_selector(selector) if selector is not None else ()
    return [
        r for r in rows
        if (not free or r.free) and (node is None or r.node == node) and (driver is None or r.driver == driver)
        and (not requirements or labels_match(requirements, attribute_labels(r)))
    ]


def register(app: typer.Typer) -> None:
    @app.command("get")
    def get_cmd(
        resource: Annotated[str, typer.Argument(metavar="devices", help="What to list: devices.")],
        files: Files = [],  # noqa: B006  (no -f: the cluster)
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        demo: Demo = False,
        request_timeout: RequestTimeout = 30.0,
        selector: Annotated[str | None, typer.Option(
            "-l", "--selector", metavar="SELECTOR",
            help="Device attributes in label syntax, e.g. 'productName=NVIDIA L4' or 'architecture in (Hopper,Blackwell)'.",
        )] = None,
        free: Annotated[bool, typer.Option("--free", help="Only devices no claim holds.")] = False,
        node: Annotated[str | None, typer.Option("--node", metavar="NODE", help="Only devices on this node.")] = None,
        driver: Annotated[str | None, typer.Option("--driver", metavar="DRIVER", help="Only this driver's devices.")] = None,
        feature_gates: FeatureGates = None,
        kubernetes_version: LiveKubernetesVersion = None,
        output: Annotated[str, output_option(Format.text, Format.wide, Format.json, Format.yaml, Format.name)] = Format.text,
    ) -> None:
        """List devices: node, driver, pool, product, memory, taints and the claim and pods holding each."""
        if resource.lower() not in _RESOURCES:
            raise UsageError(f"drakit get lists devices only, not {resource!r} (use kubectl get for other kinds)")
        source = Source(files, kubeconfig, context, demo, request_timeout)
        feats = features(release(source, kubernetes_version, feature_gates), feature_gates)
        # every namespace: a claim anywhere holds its devices; templates are not needed
        snapshot = open_source(source, feats, namespace=None,
                               kinds=("Node", "ResourceSlice", "DeviceTaintRule", "ResourceClaim", "Pod"))
        rows = select(fleet(snapshot), selector=selector, free=free, node=node, driver=driver)
        if output in (Format.json, Format.yaml):
            emit({"kind": "DeviceList", "items": [r.to_json() for r in rows]}, output)
        elif output == Format.name:
            for r in rows:
                typer.echo(r.ident)
        elif not rows:
            typer.echo("No devices found.", err=True)
        else:
            typer.echo(table(rows, wide=output == Format.wide))
