"""``drakit version``: the release of drakit and of Kubernetes whose behaviour it reproduces."""

from __future__ import annotations

import platform

import typer

from drakit import __version__
from drakit.cli.console import emit
from drakit.cli.options import Format, OutputFormat
from drakit.features import NEWEST_VERSION


def version_info() -> dict[str, str]:
    return {
        "drakitVersion": __version__,
        "kubernetesVersion": NEWEST_VERSION,
        "apiVersion": "resource.k8s.io/v1",
        "python": platform.python_version(),
    }


def register(app: typer.Typer) -> None:
    @app.command("version")
    def version_cmd(output: OutputFormat = Format.text) -> None:
        """Print drakit's version and the Kubernetes release it follows by default."""
        info = version_info()
        if output in (Format.json, Format.yaml):
            emit(info, output)
        elif output == Format.name:
            typer.echo(f"drakit/{info['drakitVersion']}")
        else:
            typer.echo(f"drakit {info['drakitVersion']} (Kubernetes {info['kubernetesVersion']} defaults, "
                       f"{info['apiVersion']}, Python {info['python']})")
