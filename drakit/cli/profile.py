"""``drakit profile compile | apply-to | eligible``: capability profiles at the command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from drakit.cli.console import EXIT_OK, EXIT_UNSATISFIABLE, emit
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
    kube_name,
    output_option,
)
from drakit.errors import InvalidInput, UsageError

profile_app = typer.Typer(help="Capability profiles: compile, merge into workloads, check eligibility, apply.",
                          no_args_is_help=True)

ProfileArgs = Annotated[list[str], typer.Argument(metavar="PROFILE", help="Profile files, directories, or names of bundled profiles.")]
PolyaxonModeOpt = Annotated[str | None, typer.Option("--polyaxon-mode", metavar="MODE", help="Polyaxon documents: "
                                                     "label or extended-resource (default: the profile's spec.polyaxon.mode, else label).")]
DriverOpt = Annotated[str | None, typer.Option("--driver", metavar="DRIVER", help="Driver schema, e.g. gpu.nvidia.com or gpu.nvidia.com@v25.8.")]


def _compiled(profiles: list[str], driver: str | None, namespace: str | None) -> list[Any]:
    from drakit.profiles import compile_profile, drivers_for
    from drakit.sources import load_profile_files

    pset = load_profile_files(profiles)
    out = []
    for rp in pset.selected():
        for schema in drivers_for(rp, driver):
            out.append(compile_profile(rp, schema, namespace=namespace))
    return out


@profile_app.command("compile")
def compile_cmd(
    profiles: ProfileArgs,
    driver: DriverOpt = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", metavar="NS", help="Namespace of the claim (template).")
    ] = None,
    output: Annotated[
        str, output_option(Format.yaml, Format.json, Format.name, note="json is a v1 List; no text or wide: the output is manifests.")
    ] = Format.yaml,
) -> None:
    """Emit DeviceClass, ResourceClaimTemplate (or ResourceClaim) and the pod fragment (a PodTemplate).

    No -A or -l: the profiles, not a cluster, are the input; -o name lists what would be created.
    """
    from drakit.profiles.render import to_yaml

    compiled = _compiled(profiles, driver, namespace)
    for cp in compiled:
        for w in cp.warnings:
            print(f"Warning: {w}", file=sys.stderr)
    docs = [m for cp in compiled for m in cp.manifests()]
    if output == Format.json:
        emit({"apiVersion": "v1", "kind": "List", "items": docs}, output)
    elif output == Format.name:
        for d in docs:
            typer.echo(kube_name(str(d.get("kind", "")), str(d.get("apiVersion", "")), str((d.get("metadata") or {}).get("name", ""))))
    else:
        sys.stdout.write(to_yaml(docs))


@profile_app.command("apply-to")
def apply_to_cmd(
    profile: Annotated[str, typer.Option("--profile", "-p", metavar="PROFILE", help="Profile file or bundled profile name.")],
    manifest: Annotated[
        str | None,
        typer.Argument(
            metavar="MANIFEST",
            help="Manifest file (Pod, Job, CronJob, Deployment, JobSet, Kubeflow job, RayJob, Polyaxon operation), or -.",
        ),
    ] = None,
    filename: Annotated[str | None, typer.Option("-f", "--filename", metavar="FILE", help="MANIFEST, kubectl style.")] = None,
    driver: DriverOpt = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", metavar="NS", help="Namespace of the claim (template) to add.")
    ] = None,
    container: Annotated[list[str] | None, typer.Option("--container", "-c", metavar="NAME", help="Container(s) to get the claim; default: the first.")] = None,
    include_objects: Annotated[bool, typer.Option("--include-objects", help="Append the DeviceClass and claim (template).")] = False,
    in_place: Annotated[bool, typer.Option("--in-place", "-i", help="Rewrite MANIFEST instead of printing.")] = False,
    polyaxon_mode: PolyaxonModeOpt = None,
) -> None:
    """Merge the profile's claim and pod settings into workloads; every other byte stays as it was.

    No -o: the output is the manifest itself, in its own format.  No -A or -l: one manifest is the input.
    """
    if manifest is not None and filename is not None:
        raise UsageError("give the manifest once: as an argument or with -f, not both")
    manifest = manifest or filename
    if manifest is None:
        raise UsageError("missing the manifest: drakit profile apply-to MANIFEST -p PROFILE (or -f MANIFEST)")
    from drakit.profiles.apply import apply_fragment, claims_for_workloads
    from drakit.profiles.render import to_yaml

    compiled = _compiled([profile], driver, namespace)
    if len(compiled) != 1:
        raise UsageError(f"--profile {profile} names {len(compiled)} profiles; apply one at a time")
    cp = compiled[0]
    text, syntax = _read(manifest)
    try:
        result = apply_fragment(text, cp.fragment, containers=container or (), source=manifest,
                                polyaxon=_polyaxon_patch(cp, polyaxon_mode))
    except (yaml.YAMLError, RecursionError):  # what the splicer's own messages do not cover
        raise InvalidInput(syntax or f"{manifest}: not YAML") from None
    for note in result.notes:
        print(f"Warning: {note}", file=sys.stderr)
    if not result.changed:
        raise InvalidInput(f"{manifest}: no workload found (Pod, Job, CronJob, Deployment, StatefulSet, ReplicaSet, "
                           "DaemonSet, JobSet, Kubeflow training job, RayJob, RayCluster or Polyaxon operation)")
    out = result.text
    if include_objects:
        claims = claims_for_workloads(cp.claim, result.namespaces, namespace, manifest)
        out += ("" if not out or out.endswith("\n") else "\n") + "---\n" + to_yaml([cp.device_class, *claims])
    if in_place and manifest != "-":
        try:
            Path(manifest).write_text(out, encoding="utf-8")
        except OSError as e:
            raise InvalidInput(f"{manifest}: cannot rewrite in place: {e.strerror}") from None
    else:
        sys.stdout.write(out)


def _polyaxon_mode(cp: Any, option: str | None) -> Any:
    from drakit.profiles.polyaxon import DEFAULT_MODE, MODES

    if option is not None and option not in MODES:
        raise UsageError(f"--polyaxon-mode {option!r}: want {' or '.join(MODES)}")
    return option or (cp.polyaxon.mode if cp.polyaxon and cp.polyaxon.mode else DEFAULT_MODE)


def _polyaxon_patch(cp: Any, option: str | None) -> Any:
    """Pod settings for Polyaxon documents; a refusal is kept for when the manifest holds one (it must
    not stop a plain Job)."""
    from drakit.profiles.apply import PolyaxonPatch
    from drakit.profiles.polyaxon import pod_settings

    mode = _polyaxon_mode(cp, option)
    queue = cp.polyaxon.agent_queue if cp.polyaxon else None
    try:
        return PolyaxonPatch(pod_settings(cp, mode), queue)
    except InvalidInput as e:
        return PolyaxonPatch(None, queue, str(e))


@profile_app.command("polyaxon")
def polyaxon_cmd(
    profile: Annotated[str, typer.Argument(metavar="PROFILE", help="Profile file or bundled profile name.")],
    kind: Annotated[str, typer.Option("--kind", metavar="KIND", help="Run kind: job, service, tfjob, pytorchjob, mpijob, "
                                                                    "xgbjob or paddlejob (a dag is refused).")] = "job",
    replica: Annotated[list[str] | None, typer.Option("--replica", metavar="ROLE", help="Replicas that get devices "
                                                      "(default: all but parameter servers, evaluators and the MPI launcher).")] = None,
    driver: DriverOpt = None,
    polyaxon_mode: PolyaxonModeOpt = None,
    objects: Annotated[bool, typer.Option("--objects", help="Print the cluster objects the preset relies on instead "
                                                           "(DeviceClass with extendedResourceName, or class + claim template).")] = False,
) -> None:
    """Emit a Polyaxon preset (isPreset: true) that Polyaxon 2.x accepts composed with an operation.

    Mode label: pods are labelled and the claims are injected at admission (drakit webhook or drakit
    admission policy).  Mode extended-resource: the preset asks for the profile's DRA extended resource.
    """
    from drakit.profiles.polyaxon import extended_resource_class, preset
    from drakit.profiles.render import to_yaml

    compiled = _compiled([profile], driver, None)
    if len(compiled) != 1:
        raise UsageError(f"PROFILE {profile} names {len(compiled)} profiles; one at a time")
    cp = compiled[0]
    mode = _polyaxon_mode(cp, polyaxon_mode)
    if objects:
        cls = extended_resource_class(cp) if mode == "extended-resource" else cp.device_class
        sys.stdout.write(to_yaml([cls] if mode == "extended-resource" else [cls, cp.claim]))
        return
    doc = preset(cp, mode, kind=kind, replicas=replica or None, agent_queue=cp.polyaxon.agent_queue if cp.polyaxon else None)
    sys.stdout.write(to_yaml([doc]))


@profile_app.command("eligible")
def eligible_cmd(
    profiles: ProfileArgs,
    filename: Files = [],  # noqa: B006  (no -f: the cluster)
    driver: DriverOpt = None,
    output: Annotated[
        str, output_option(Format.text, Format.json, Format.yaml, note="A report per profile, not objects: no wide or name.")
    ] = Format.text,
    kubernetes_version: LiveKubernetesVersion = None,
    feature_gates: FeatureGates = None,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    demo: Demo = False,
    request_timeout: RequestTimeout = 30.0,
) -> None:
    """Per profile: qualifying devices by product and node, excluded devices with the reason.

    No -n, -A or -l: devices live in cluster-scoped ResourceSlices.
    """
    from drakit.cli.door import Source, open_source, release
    from drakit.profiles.eligibility import eligibility

    compiled = _compiled(profiles, driver, None)
    source = Source(filename, kubeconfig, context, demo, request_timeout)
    feats = features(release(source, kubernetes_version, feature_gates), feature_gates)
    snapshot = open_source(source, feats, namespace=None, kinds=("ResourceSlice",))
    results = [eligibility(cp, snapshot.slices) for cp in compiled]
    if output == Format.text:
        print("\n\n".join(r.render_text() for r in results))
    else:
        emit({"profiles": [r.to_json() for r in results]}, output)
    none = [r.profile for r in results if not any(n.fits for n in r.nodes)]
    raise typer.Exit(EXIT_UNSATISFIABLE if none else EXIT_OK)


@profile_app.command("apply")
def apply_cmd(
    profiles: ProfileArgs,
    driver: DriverOpt = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", metavar="NS", help="Namespace of the claim (template).")
    ] = None,
    dry_run: Annotated[
        str | None, typer.Option("--dry-run", metavar="server", help="server: the API server checks and answers, nothing is written.")
    ] = None,
    diff: Annotated[bool, typer.Option("--diff", help="Show what changes against the cluster, as a unified diff.")] = False,
    output: Annotated[
        str, output_option(Format.text, Format.json, Format.yaml, note="One outcome per object: no wide or name.")
    ] = Format.text,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    request_timeout: RequestTimeout = 30.0,
) -> None:
    """Server-side apply each profile's DeviceClass and claim (template) as field manager drakit.

    Never forced: a field another manager owns is reported as a conflict (exit 8) and nothing
    of that object is written.  A second apply of the same profiles writes nothing.
    """
    from drakit.cli.door import Source, live_client
    from drakit.live.apply import Action, apply_objects

    if dry_run not in (None, "server"):
        raise UsageError(f"--dry-run={dry_run}: only --dry-run=server (the API server checks, nothing is written)")
    compiled = _compiled(profiles, driver, namespace or "default")
    objects = list({_object_key(o): o for cp in compiled for o in (cp.device_class, cp.claim)}.values())
    client = live_client(Source((), kubeconfig, context, timeout=request_timeout))
    try:
        results = apply_objects(client, objects, dry_run=dry_run == "server")
    finally:
        client.close()
    if output != Format.text:
        emit({"dryRun": dry_run == "server", "objects": [r.to_json() for r in results]}, output)
    else:
        for r in results:
            if diff and r.diff:
                sys.stdout.write(r.diff)
            print(r.line(dry_run == "server"))
    raise typer.Exit(8 if any(r.action is Action.CONFLICT for r in results) else EXIT_OK)


def _object_key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name"))


def _read(path: str) -> tuple[str, str]:
    """The manifest's text through the one bounded reader, checked by the strict decoder first:
    the splicing composes the text again and must only ever see what kubectl would read.

    Returns the text and the decoder's syntax errors, which are left to the splicer (its
    messages point at the column) unless it fails on them too."""
    from drakit.cli.door import refuse_invalid
    from drakit.features import Features
    from drakit.model.codec import Problem
    from drakit.model.load import decode_documents, source_problem
    from drakit.sources import ReadError, parse_text, read_one, split_lists

    try:
        text = read_one(path)
    except ReadError as e:
        raise InvalidInput(str(e)) from None
    docs, problems = parse_text(path, text)
    # Plain syntax errors are left to the splicer, whose messages point at the column; what
    # only the strict decoder refuses (duplicate keys, aliases, nesting, numbers) stops here.
    refused = [p for p in problems if not p.message.startswith("error parsing YAML") or "nesting depth" in p.message]
    if refused:
        raise InvalidInput("\n".join(str(p) for p in refused))
    if problems:
        return text, "\n".join(str(p) for p in problems)
    from drakit.profiles.polyaxon import is_polyaxon_document

    listed: list[Problem] = []
    bundle, typed = decode_documents(split_lists([d for d in docs if not is_polyaxon_document(d.data)], listed))
    if typed or listed:  # kinds drakit types and the pod templates of workloads must be valid
        raise InvalidInput([*(source_problem(p) for p in listed), *typed])
    # Then validated as every verb's input is: an object the API server would refuse is not
    # rewritten into another one it would refuse too.
    refuse_invalid((*bundle.entries, *bundle.checked_pods), Features.for_version())
    return text, ""


def register(app: typer.Typer) -> None:
    app.add_typer(profile_app, name="profile")
