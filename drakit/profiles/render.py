"""YAML output that stays readable: CEL with single quotes is written double-quoted, no line wrapping."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

from drakit.model.codec import KubeDumper, reads_back


class _Dumper(KubeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # PyYAML would single-quote 'memory' in ... and double every inner quote; double quotes read better.
    style = '"' if "'" in value and '"' not in value and "\n" not in value else None
    if "\n" in value:
        style = "|"
    elif not reads_back(value):
        style = "'" if style is None else style  # kubectl would read a bare y, N or 1e3 as a bool or number
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def to_yaml(docs: Iterable[dict[str, Any]]) -> str:
    return yaml.dump_all(list(docs), Dumper=_Dumper, sort_keys=False, width=10_000, allow_unicode=True)

