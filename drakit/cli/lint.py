"""``drakit lint``: findings with fix hints (double allocation, unknown/unguarded keys, near misses,
unused classes, requests no device can satisfy)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, emit
from drakit.cli.door import Source, open_source, refuse_invalid, release
from drakit.cli.options import (
    Context,
    Demo,
    FeatureGates,
    Files,
    Format,
    Kubeconfig,
    LiveKubernetesVersion,
    RequestTimeout,
    output_option,
)
from drakit.errors import InvalidInput
from drakit.features import Features
from drakit.model.load import Bundle


def _documents(paths: list[str]) -> tuple[list[Any], Bundle]:
    """The parsed documents (lint reads profiles and workloads too) and the strictly decoded bundle."""
    from drakit.model.codec import Problem
    from drakit.model.load import decode_documents, source_problem
    from drakit.profiles.source import ParseError, parse_documents
    from drakit.sources import read_inputs, split_lists

    inputs = read_inputs(paths)
    if inputs.errors:
        raise InvalidInput("\n".join(inputs.errors))
    docs = []
    for t in inputs.texts:
        try:
            docs += parse_documents(t.text, t.name)
        except ParseError as e:
            raise InvalidInput(str(e)) from None
    if not docs:
        raise InvalidInput(f"{', '.join(paths)}: no objects found (the input is empty)")
    # Findings presume objects that decode: what strict decoding refuses is refused here too.
    from drakit.profiles.polyaxon import is_polyaxon_document

    manifests = [d.source for d in docs if d.source is not None and not _is_profile(d.value)
                 and not is_polyaxon_document(d.value)]
    problems: list[Problem] = []
    bundle, typed = decode_documents(split_lists(manifests, problems))
    if typed or problems:
        raise InvalidInput([*(source_problem(p) for p in problems), *typed])
    return docs, bundle


def _is_profile(value: Any) -> bool:
    return isinstance(value, dict) and str(value.get("apiVersion", "")).startswith("drakit.dev/")


def register(app: typer.Typer) -> None:
    @app.command("lint")
    def lint_cmd(
        filename: Files = [],  # noqa: B006  (no -f: the cluster)
        output: Annotated[
            str, output_option(Format.text, Format.json, Format.yaml, note="Findings are not objects: no wide or name.")
        ] = Format.text,
        strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too.")] = False,
        kubernetes_version: LiveKubernetesVersion = None,
        feature_gates: FeatureGates = None,
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        demo: Demo = False,
        request_timeout: RequestTimeout = 30.0,
    ) -> None:
        """Find costly mistakes the API server accepts; every finding has a fix hint.

        No -n, -A or -l: findings such as double allocation and unused classes are about the
        whole input, so a namespace or label subset would report mistakes that are not there.
        """
        from drakit.profiles import compile_profile, drivers_for, parse_profiles
        from drakit.profiles.lint import lint_documents
        from drakit.profiles.loader import example_texts
        from drakit.profiles.polyaxon import is_polyaxon_document

        source = Source(filename, kubeconfig, context, demo, request_timeout)
        features = Features.for_version(release(source, kubernetes_version, feature_gates)).with_gates(feature_gates)
        if source.live:  # the cluster's objects, in every namespace: findings are about the whole input
            from drakit.profiles.source import Document

            snapshot = open_source(source, features, namespace=None)
            docs = [Document(o, snapshot.provenance.source, i) for i, o in enumerate(snapshot.objects())]
        else:
            from drakit.demo import demo_paths

            source.check()
            docs, bundle = _documents(list(filename) or demo_paths())
            # Validation at the door: lint answers on objects the API server would accept (converted
            # v1beta1 objects and workloads' pod templates included, as every other verb checks them).
            refuse_invalid((*bundle.entries, *bundle.checked_pods), features)
        # Profiles among the inputs: the classes they compile to count as used.  A QueueCatalog puts
        # the input behind Kueue: what Kueue cannot admit is flagged too.
        drakit_docs = [d for d in docs if isinstance(d.value, dict) and str(d.value.get("apiVersion", "")).startswith("drakit.dev/")]
        catalogs = [d for d in drakit_docs if d.value.get("kind") == "QueueCatalog"]
        profile_docs = [d for d in drakit_docs if d not in catalogs]
        classes: list[str] = []
        pset = None
        compiled: dict[str, Any] = {}  # every known profile (bundled too): what Polyaxon files may name
        polyaxon = any(is_polyaxon_document(d.value) for d in docs)
        if profile_docs or polyaxon:
            import yaml

            texts = [(yaml.safe_dump(d.value), d.file) for d in profile_docs]
            pset = parse_profiles(texts, example_texts())
            given = {rp.name for rp in pset.selected()} if profile_docs else set()
            for rp in pset.profiles.values():
                try:
                    schemas = drivers_for(rp)
                    if rp.name in given:
                        classes += [compile_profile(rp, s).class_name for s in schemas]
                    if polyaxon and schemas:
                        compiled[rp.name] = compile_profile(rp, schemas[0])
                except Exception:  # a profile that cannot compile is reported by `profile compile`
                    continue
        rest = [d for d in docs if d not in drakit_docs]
        findings = lint_documents(rest, profile_classes=classes)
        if polyaxon:
            from drakit.profiles.polyaxon_lint import lint_polyaxon

            findings += [f for d in rest for f in lint_polyaxon(d, compiled)]
        if catalogs:
            from drakit.queues.lint import kueue_findings

            findings += kueue_findings(rest, pset.selected() if pset is not None and profile_docs else [])
        if output == Format.text:
            for f in findings:
                print(f.line())
            errors = sum(1 for f in findings if f.severity == "error")
            print(f"{len(findings)} finding(s): {errors} error(s), {len(findings) - errors} warning(s)")
        else:
            emit({"findings": [f.to_json() for f in findings]}, output)
        failed = any(f.severity == "error" or strict for f in findings)
        raise typer.Exit(EXIT_INVALID if failed else EXIT_OK)
