"""``drakit lint``: findings with fix hints (double allocation, unknown/unguarded keys, near misses,
unused classes, requests no device can satisfy)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from drakit.cli.console import EXIT_INVALID, EXIT_OK, Output, emit
from drakit.cli.door import refuse_invalid_documents
from drakit.errors import InvalidInput
from drakit.features import NEWEST_VERSION, Features
from drakit.model.load import Document


def _documents(paths: list[str]) -> list[Any]:
    import yaml

    from drakit.profiles.source import DuplicateKey, parse_documents

    files: list[tuple[str, str]] = []
    for p in paths:
        if p == "-":
            files.append((sys.stdin.read(), "-"))
            continue
        path = Path(p)
        if path.is_dir():
            files += [(f.read_text(encoding="utf-8"), str(f)) for f in sorted(path.rglob("*.y*ml"))]
        elif path.exists():
            files.append((path.read_text(encoding="utf-8"), str(path)))
        else:
            raise InvalidInput(f"{p}: no such file or directory")
    docs = []
    for text, name in files:
        try:
            docs += parse_documents(text, name)
        except (yaml.YAMLError, DuplicateKey) as e:
            raise InvalidInput(f"{name}: {e}") from None
    return docs


def register(app: typer.Typer) -> None:
    @app.command("lint")
    def lint_cmd(
        filename: Annotated[list[str], typer.Option("-f", "--filename", help="Files, directories or -; repeatable.")],
        output: Annotated[Output, typer.Option("-o", "--output")] = Output.text,
        strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too.")] = False,
        kubernetes_version: Annotated[
            str, typer.Option("--kubernetes-version", help="Release whose feature defaults apply.")
        ] = NEWEST_VERSION,
        feature_gates: Annotated[str | None, typer.Option("--feature-gates", help="Name=true,Other=false")] = None,
    ) -> None:
        """Find costly mistakes the API server accepts; every finding has a fix hint."""
        from drakit.profiles import compile_profile, drivers_for, parse_profiles
        from drakit.profiles.lint import lint_documents
        from drakit.profiles.loader import example_texts

        features = Features.for_version(kubernetes_version).with_gates(feature_gates)
        docs = _documents(filename)
        # Validation at the door: lint answers on objects the API server would accept.
        refuse_invalid_documents(
            (Document(d.file, d.index, d.lines.get((), None), d.value) for d in docs if isinstance(d.value, dict)),
            features,
        )
        # Profiles among the inputs: the classes they compile to count as used.
        profile_docs = [d for d in docs if isinstance(d.value, dict) and str(d.value.get("apiVersion", "")).startswith("drakit.dev/")]
        classes: list[str] = []
        if profile_docs:
            import yaml

            texts = [(yaml.safe_dump(d.value), d.file) for d in profile_docs]
            pset = parse_profiles(texts, example_texts())
            for rp in pset.selected():
                try:
                    classes += [compile_profile(rp, s).class_name for s in drivers_for(rp)]
                except Exception:  # a profile that cannot compile is reported by `profile compile`
                    continue
        findings = lint_documents([d for d in docs if d not in profile_docs], profile_classes=classes)
        if output == Output.text:
            for f in findings:
                print(f.line())
            errors = sum(1 for f in findings if f.severity == "error")
            print(f"{len(findings)} finding(s): {errors} error(s), {len(findings) - errors} warning(s)")
        else:
            emit({"findings": [f.to_json() for f in findings]}, output)
        failed = any(f.severity == "error" or strict for f in findings)
        raise typer.Exit(EXIT_INVALID if failed else EXIT_OK)
