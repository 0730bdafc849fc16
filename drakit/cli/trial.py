"""``drakit trial``: the platform trial on the embedded demo cluster (or on manifests you give).

It walks the product end to end on one small, realistic cluster: load and validate what the
drivers and the platform publish, show what each recipe's profile may use (with the checks the
profiles themselves imply, ``--profile`` for your own), place the recipes' pods as the
scheduler would, and explain any pod that waits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, emit
from drakit.cli.door import Source, open_source, or_demo, release
from drakit.cli.options import (
    Context,
    Demo,
    FeatureGates,
    Format,
    Kubeconfig,
    LiveKubernetesVersion,
    RequestTimeout,
    features,
    output_option,
)
from drakit.demo import demo_paths
from drakit.drivers.identity import product_of
from drakit.errors import UsageError
from drakit.features import NEWEST_VERSION
from drakit.inventory.devices import inventory_devices
from drakit.inventory.snapshot import ClusterSnapshot, ObjectKey, name_of
from drakit.profiles.trial import TRIAL_PROFILES


def inventory_summary(snapshot: ClusterSnapshot) -> dict[str, Any]:
    """Nodes, devices per (driver, product, memory) and classes: what the cluster publishes."""
    groups: Counter[tuple[str, str, str]] = Counter()
    for dev in inventory_devices(snapshot.slices):
        memory = ((dev.device.get("capacity") or {}).get("memory") or {}).get("value", "-")
        groups[(dev.driver, product_of(dev.driver, dev.device), str(memory))] += 1
    return {
        "nodes": [name_of(n) for n in snapshot.nodes],
        "devices": [
            {"driver": d, "product": p, "memory": m, "count": c} for (d, p, m), c in sorted(groups.items())
        ],
        "classes": [name_of(c) for c in snapshot.classes],
        "templates": [str(ObjectKey.of(t)) for t in snapshot.templates],
        "pods": [str(ObjectKey.of(p)) for p in snapshot.pods],
    }


def placements(snapshot: ClusterSnapshot, kubernetes_version: str, extra: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """Where the snapshot's pods (and ``extra`` objects' pods) land when the simulator schedules them in order."""
    from drakit.sim import run_scenario, scenario_from_objects

    header = {
        "apiVersion": "drakit.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "trial"},
        "spec": {"kubernetesVersion": kubernetes_version},
    }
    # What a scenario replays: the inventory, the claims and the pods (events are history).
    s = snapshot
    objects = [*s.nodes, *s.classes, *s.slices, *s.templates, *s.claims, *s.pods, *extra]
    scenario = scenario_from_objects(header, objects, source="trial")
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


def profile_pods(profiles: Any, existing: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One pod per selected profile (and driver), with the profile's compiled class and claim.

    The class is left out when the cluster already has one of that name (the platform
    installed it); names are ``<profile>-<n>`` in namespace ``drakit-trial``.
    """
    from drakit.profiles.compile import compile_profile, drivers_for

    have = {(o.get("kind"), name_of(o)) for o in existing}
    out: list[dict[str, Any]] = []
    for rp in profiles.selected():
        for i, schema in enumerate(drivers_for(rp)):
            cp = compile_profile(rp, schema, namespace=TRIAL_NAMESPACE)
            for obj in (cp.device_class, cp.claim):
                if (obj["kind"], name_of(obj)) not in have:
                    out.append(obj)
                    have.add((obj["kind"], name_of(obj)))
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
            list[str] | None, typer.Option("-f", "--filename", metavar="FILE", help="Manifests instead of the embedded demo; repeatable.")
        ] = None,
        profile: Annotated[
            list[str] | None,
            typer.Option("--profile", "-p", metavar="PROFILE", help="Profiles to try (files, directories or bundled names); repeatable."),
        ] = None,
        kubernetes_version: LiveKubernetesVersion = None,
        feature_gates: FeatureGates = None,
        output: Annotated[str, output_option(Format.text, Format.json, Format.yaml, note="A report, not objects: no wide or name.")] = Format.text,
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        demo: Demo = False,
        request_timeout: RequestTimeout = 30.0,
        execute: Annotated[bool, typer.Option("--execute", help="Also run both recipes' workload on every eligible product (local executor).")] = False,
        repeat: Annotated[int, typer.Option("--repeat", min=1, help="Runs per product with --execute.")] = 1,
        report_dir: Annotated[str, typer.Option("--report", metavar="DIR", help="Where --execute writes trial.md and trial.html.")] = "drakit-trial-report",
        store: Annotated[str | None, typer.Option("--store", envvar="DRAKIT_STORE", help="Record store for --execute.")] = None,
    ) -> None:
        """Run the platform trial: inventory, profile eligibility, placements, and why anything waits.

        No -n, -A or -l: the trial places its pods in its own namespace and reports the whole cluster.
        Without -f it reads the configured cluster as kubectl would (--kubeconfig/--context choose
        one), read-only: the placements are predictions. Where no cluster is configured, or with
        --demo, it runs on the embedded demo cluster; --execute runs only on -f or the demo.
        """
        from drakit.profiles.trial import trial_profiles, trial_table
        from drakit.sources import load_profile_files

        features(kubernetes_version or NEWEST_VERSION, feature_gates)  # a bad flag: refused before any cluster
        source = or_demo(Source(files or (), kubeconfig, context, demo, request_timeout))
        if source.live and execute:
            raise UsageError("--execute runs the local executor over an inventory file or the demo (-f or --demo), "
                             "never over a live cluster's devices")
        kubernetes_version = release(source, kubernetes_version, feature_gates)
        feats = features(kubernetes_version, feature_gates)
        snapshot = open_source(source, feats, namespace=None)  # invalid manifests are refused here, exit 1
        paths: list[str] | str = snapshot.provenance.source if source.live else (files or demo_paths())
        profiles = load_profile_files(profile) if profile else trial_profiles()
        table = trial_table(snapshot, profiles)
        # Your own profiles: one pod of each is placed too (the demo's recipes bring their pods).
        workload = profile_pods(profiles, snapshot.objects()) if profile else []
        report: dict[str, Any] = {
            "source": "embedded demo cluster" if source.demo else paths,
            "profilesFrom": list(profile) if profile else list(TRIAL_PROFILES),
            "objects": sum(1 for _ in snapshot.objects()),
            "inventory": inventory_summary(snapshot),
            "profiles": table.to_json(),
            "placements": placements(snapshot, kubernetes_version, workload),
            "passed": table.passed,
        }
        executed = _execute(snapshot, feats, profiles, table, repeat, report_dir=report_dir, store=store) if execute else None
        if executed is not None:
            report["executed"] = executed
            report["passed"] = report["passed"] and executed["passed"]
        if output != Format.text:
            emit(report, output)
        else:
            _print_text(report, table.render_text())
        raise typer.Exit(EXIT_OK if report["passed"] else EXIT_INVALID)


def _execute(snapshot: ClusterSnapshot, feats: Any, profiles: Any, table: Any, repeat: int, *, report_dir: str,
             store: str | None) -> dict[str, Any]:
    """Run the workload per eligible product, record it, write the Markdown and HTML reports."""
    import uuid
    from pathlib import Path

    from drakit.cli.run import open_records
    from drakit.executors.placement import DeviceBook
    from drakit.executors.trial import execute_trial, render_html, render_markdown

    done = execute_trial(table, profiles, DeviceBook(snapshot, feats), open_records(store), repeat=repeat,
                         run_prefix=f"trial-{uuid.uuid4().hex[:6]}")
    out = Path(report_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "trial.md").write_text(render_markdown(done), encoding="utf-8")
    (out / "trial.html").write_text(render_html(done), encoding="utf-8")
    return {"report": [str(out / "trial.md"), str(out / "trial.html")], "passed": done.passed,
            "products": [{"profile": m.profile, "product": m.product, "runs": [r.run.id for r in m.runs],
                          "placed": m.placed, "correct": m.correct, "startupMedianSeconds": m.median("startup"),
                          "runtimeMedianSeconds": m.median("runtime"), "worstError": m.worst_error()}
                         for m in done.measured]}


def _print_text(report: dict[str, Any], profile_table: str) -> None:
    inv = report["inventory"]
    echo = typer.echo
    echo(f"drakit trial — {report['source'] if isinstance(report['source'], str) else ', '.join(report['source'])}")
    echo("")
    echo(f"Inventory: {len(inv['nodes'])} nodes, {sum(d['count'] for d in inv['devices'])} devices, "
         f"classes {', '.join(inv['classes'])}")
    for d in inv["devices"]:
        echo(f"  {d['count']:>3} × {d['product']:<24} {d['memory']:>9}  ({d['driver']})")
    echo(f"Validation: all {report['objects']} objects valid")
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
    if "executed" in report:
        echo("")
        echo("Executed — the workload on every eligible product (startup, runtime, correctness apart):")
        for p in report["executed"]["products"]:
            startup, runtime = p["startupMedianSeconds"], p["runtimeMedianSeconds"]
            echo(f"  {p['profile']:<14} {p['product']:<24} placed {p['placed']}/{len(p['runs'])}  "
                 f"startup {'-' if startup is None else f'{startup:.3f}s'}  "
                 f"runtime {'-' if runtime is None else f'{runtime:.3f}s'}  correct {p['correct']}/{len(p['runs'])}")
        echo(f"  report: {', '.join(report['executed']['report'])}")
    echo("")
    echo("Trial " + ("PASSED" if report["passed"] else "FAILED"))
