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
from drakit.profiles.trial import TRIAL_PROFILES


def inventory_summary(bundle: Bundle, objects: list[dict[str, Any]]) -> dict[str, Any]:
    """Nodes, devices per (driver, product, memory) and classes: what the cluster publishes."""
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


def placements(objects: list[dict[str, Any]], kubernetes_version: str) -> list[dict[str, Any]]:
    """Where the bundle's pods land when the simulator schedules them in order, as kube-scheduler would."""
    import yaml

    from drakit.sim import parse_scenario, run_scenario

    header = {
        "apiVersion": "drakit.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "trial"},
        "spec": {"kubernetesVersion": kubernetes_version},
    }
    scenario = parse_scenario(yaml.safe_dump_all([header, *objects], sort_keys=False), source="trial")
    result = run_scenario(scenario, seed=0)
    return [
        {
            "pod": f"{r.namespace}/{r.name}",
            "node": r.node,
            "devices": list(r.devices),
            "products": list(r.products),
            "pending": r.message if r.node is None else "",
        }
        for r in result.pods
    ]


TRIAL_NAMESPACE = "drakit-trial"


def profile_pods(profiles: Any, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One pod per selected profile (and driver), with the profile's compiled class and claim.

    The class is left out when the cluster already has one of that name (the platform
    installed it); names are ``<profile>-<n>`` in namespace ``drakit-trial``.
    """
    from drakit.profiles.compile import compile_profile, drivers_for

    have = {(o.get("kind"), (o.get("metadata") or {}).get("name")) for o in objects}
    out: list[dict[str, Any]] = []
    for rp in profiles.selected():
        for i, schema in enumerate(drivers_for(rp)):
            cp = compile_profile(rp, schema, namespace=TRIAL_NAMESPACE)
            if ("DeviceClass", cp.class_name) not in have:
                out.append(cp.device_class)
                have.add(("DeviceClass", cp.class_name))
            claim = cp.claim
            if (claim["kind"], claim["metadata"]["name"]) not in have:
                out.append(claim)
                have.add((claim["kind"], claim["metadata"]["name"]))
            template = cp.fragment.as_pod_template(cp.profile, TRIAL_NAMESPACE)["template"]
            labels = {**(template.get("metadata") or {}).get("labels", {}), "drakit.dev/recipe": rp.name}
            out.append({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{rp.name}-{i}", "namespace": TRIAL_NAMESPACE, "labels": labels},
                "spec": template["spec"],
            })
    return out


def register(app: typer.Typer) -> None:
    @app.command("trial")
    def trial(
        files: Annotated[
            list[str] | None, typer.Option("-f", "--filename", help="Manifests instead of the embedded demo")
        ] = None,
        profile: Annotated[
            list[str] | None,
            typer.Option("--profile", "-p", help="Profiles to try (files, directories or bundled names); repeatable."),
        ] = None,
        kubernetes_version: Annotated[str, typer.Option("--kubernetes-version")] = NEWEST_VERSION,
        output: Annotated[Output, typer.Option("-o", "--output")] = Output.text,
    ) -> None:
        """Run the platform trial: inventory, profile eligibility, placements, and why anything waits."""
        from drakit.profiles.loader import load_profile_files
        from drakit.profiles.trial import trial_profiles, trial_table

        features = Features.for_version(kubernetes_version)
        paths = files or demo_paths()
        bundle = load_bundle(paths)
        profiles = load_profile_files(profile) if profile else trial_profiles()
        problems = validate(bundle.objects, features)
        objects = [to_wire(o) for o in bundle.objects]
        summary = inventory_summary(bundle, objects)
        table = trial_table(bundle, profiles)
        # Your own profiles: one pod of each is placed too (the demo's recipes bring their pods).
        workload = profile_pods(profiles, objects) if profile else []
        report: dict[str, Any] = {
            "source": "embedded demo cluster" if not files else paths,
            "profilesFrom": list(profile) if profile else list(TRIAL_PROFILES),
            "valid": not problems,
            "errors": [line for p in problems for line in p.lines()],
            "inventory": summary,
            "profiles": table.to_json(),
            "placements": placements([*objects, *workload], kubernetes_version) if not problems else [],
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
    if report["placements"]:
        echo("")
        echo("Placements — the recipes' pods scheduled in order, as kube-scheduler would:")
        width = max(14, *(len(p["pod"]) for p in report["placements"]))
        for p in report["placements"]:
            if p["node"] is None:
                echo(f"  {p['pod']:<{width}} Pending: {p['pending']}")
                echo(f"  {'':<{width}} run `drakit explain pod/{p['pod'].split('/')[1]} -n {p['pod'].split('/')[0]} -f ...`")
                continue
            devices = ", ".join(d.rsplit("/", 1)[1] for d in p["devices"])
            products = sorted(set(p["products"]))
            echo(f"  {p['pod']:<{width}} {p['node']:<14} {devices:<14} {', '.join(products)}")
    echo("")
    echo("Trial " + ("PASSED" if report["passed"] else "FAILED"))
