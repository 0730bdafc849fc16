"""The options every verb shares, spelled as kubectl spells them, declared once.

``-f/--filename``, ``-n/--namespace``, ``-A/--all-namespaces``, ``-l/--selector`` and
``-o/--output`` mean what they mean to kubectl, so a user's habits carry over; the feature-gate
and release options are drakit's own.  Each is an ``Annotated`` alias a verb puts on its
parameter, with a metavar so that help shows ``FILE`` rather than typer's ``<list[str]>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any

import typer

from drakit.errors import UsageError
from drakit.features import NEWEST_VERSION, Features

DEFAULT_NAMESPACE = "default"


class Format(StrEnum):
    """``-o``: kubectl's formats (``wide`` adds columns to text, ``name`` prints kind/name only)."""

    text = "text"
    json = "json"
    yaml = "yaml"
    wide = "wide"
    name = "name"


Files = Annotated[
    list[str], typer.Option("-f", "--filename", metavar="FILE", help="Manifest files or folders ('-' for stdin); repeatable.")
]
Namespace = Annotated[
    str | None, typer.Option("-n", "--namespace", metavar="NS", help=f"Namespace of the target (default: {DEFAULT_NAMESPACE}).")
]
AllNamespaces = Annotated[bool, typer.Option("-A", "--all-namespaces", help="Every namespace in the input.")]
LabelSelector = Annotated[
    str | None,
    typer.Option("-l", "--selector", metavar="SELECTOR", help="Label selector, e.g. team=ml,tier!=batch,env in (a,b)."),
]
Kubeconfig = Annotated[
    str | None, typer.Option("--kubeconfig", metavar="FILE", help="Read the cluster of this kubeconfig (without -f).")
]
Context = Annotated[str | None, typer.Option("--context", metavar="NAME", help="kubeconfig context (default: current-context).")]
Demo = Annotated[bool, typer.Option("--demo", help="Answer on the embedded demo cluster instead of -f or a cluster.")]
RequestTimeout = Annotated[
    float, typer.Option("--request-timeout", metavar="SECONDS", help="Give up on an API request after this long.")
]


def output_option(*formats: Format, note: str = "") -> Any:  # a typer OptionInfo
    """``-o/--output`` offering ``formats`` only; any other value is a one-line usage error (exit 2).

    A verb lists just the formats that mean something for it; ``note`` says in the help why
    the others are missing, so ``-o wide`` on a verb without columns is refused, not faked.
    The value is parsed here rather than by click's choice type, whose refusal is a
    multi-line usage block.
    """
    names = [f.value for f in formats]
    listed = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]

    def parse(value: str) -> Format:
        if value not in names:
            why = f" ({note})" if note and value in Format.__members__ else ""
            raise UsageError(f"-o/--output {value!r}: want {listed}{why}")
        return Format(value)

    return typer.Option("-o", "--output", metavar="FORMAT", help=f"{listed}." + (f" {note}" if note else ""), callback=parse)


OutputFormat = Annotated[str, output_option(*Format)]
FeatureGates = Annotated[str | None, typer.Option("--feature-gates", metavar="GATES", help="Name=true,Other=false")]
KubernetesVersion = Annotated[
    str, typer.Option("--kubernetes-version", metavar="VERSION", help="Release whose feature-gate defaults apply.")
]
# The live verbs' form: without the flag, the cluster's own release (``door.release``).
LiveKubernetesVersion = Annotated[
    str | None,
    typer.Option("--kubernetes-version", metavar="VERSION",
                 help="Release whose feature-gate defaults apply (default: the cluster's own, else the newest)."),
]


def features(kubernetes_version: str = NEWEST_VERSION, gates: str | None = None) -> Features:
    return Features.for_version(kubernetes_version).with_gates(gates)


def kube_name(kind: str, api_version: str, name: str) -> str:
    """kubectl's ``-o name``: ``kind.group/name`` (``resourceclaim.resource.k8s.io/foo``), ``pod/foo``."""
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    return f"{kind.lower()}{'.' + group if group else ''}/{name}"


def namespace_scope(namespace: str | None, all_namespaces: bool) -> str | None:
    """The one namespace a verb looks in, or ``None`` for every namespace (``-A``)."""
    if all_namespaces:
        if namespace is not None:
            raise UsageError("-n/--namespace and -A/--all-namespaces exclude each other")
        return None
    return namespace or DEFAULT_NAMESPACE


# --- label selectors ------------------------------------------------------------------------

Requirement = tuple[str, str, frozenset[str]]  # (key, operator, values)


def parse_label_selector(text: str) -> tuple[Requirement, ...]:
    """kubectl's ``-l`` syntax: ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a)``, ``k``, ``!k``.

    A syntax error is a usage error naming the selector, as kubectl's "unable to parse
    requirement" is.
    """
    out: list[Requirement] = []
    for part in _split_top(text):
        p = part.strip()
        if not p:
            raise UsageError(f"label selector {text!r}: empty requirement")
        words = p.split(None, 1)
        if len(words) == 2 and words[1].split(None, 1)[0] in ("in", "notin"):
            key = words[0]
            op, rest = words[1].split(None, 1) if " " in words[1] else (words[1], "")
            rest = rest.strip()
            if not (rest.startswith("(") and rest.endswith(")")):
                raise UsageError(f"label selector {text!r}: {op} needs a list in parentheses, e.g. {key} {op} (a,b)")
            values = frozenset(v.strip() for v in rest[1:-1].split(",") if v.strip())
            out.append((key, op, values))
        elif "!=" in p:
            key, _, value = p.partition("!=")
            out.append((key.strip(), "!=", frozenset([value.strip()])))
        elif "=" in p:
            key, _, value = p.partition("==") if "==" in p else p.partition("=")
            out.append((key.strip(), "=", frozenset([value.strip()])))
        elif p.startswith("!"):
            out.append((p[1:].strip(), "!", frozenset()))
        else:
            out.append((p, "exists", frozenset()))
        if not out[-1][0]:
            raise UsageError(f"label selector {text!r}: requirement {p!r} has no key")
    return tuple(out)


def _split_top(text: str) -> list[str]:
    """Split at commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def labels_match(requirements: tuple[Requirement, ...], labels: Mapping[str, Any]) -> bool:
    for key, op, values in requirements:
        have = labels.get(key)
        ok = {
            "=": have is not None and str(have) in values,
            "!=": have is None or str(have) not in values,
            "in": have is not None and str(have) in values,
            "notin": have is None or str(have) not in values,
            "exists": have is not None,
            "!": have is None,
        }[op]
        if not ok:
            return False
    return True


# --- plain help -----------------------------------------------------------------------------


def plain_help() -> None:
    """Help without typer's ``<str>``/``<list[str]>`` type tags: the metavar, or nothing.

    An option without a metavar shows its name in capitals (``--seed SEED``), not click's
    ``TEXT``.

    typer prints a parameter's Python type next to every option; kubectl-style help shows a
    word for the value (``FILE``, ``NS``) or, for a flag, nothing.  Choices keep their list.
    """
    from typer.core import TyperArgument, TyperOption

    def display(self: Any, ctx: Any) -> str | None:
        if self.metavar is not None:
            return None if isinstance(self, TyperArgument) else str(self.metavar)
        if getattr(self, "is_flag", False):
            return None
        desc = getattr(self, "type_descriptor", None)
        if desc is not None and desc.is_choice:
            return "|".join(str(getattr(c, "value", c)) for c in desc.choices or ())
        return None if isinstance(self, TyperArgument) else str(self.name or "value").upper()

    TyperOption.display_type_rich = display  # type: ignore[method-assign]
    TyperArgument.display_type_rich = display  # type: ignore[method-assign]

    def usage_name(self: Any) -> str:
        # kubectl's usage line: a required argument bare (``MANIFEST``), an optional one in
        # brackets; typer 0.29 wraps required ones in braces (``{manifest}``).
        name = str(self.display_name_raw)
        name = name if self.required else f"[{name}]"
        return name if self.nargs == 1 or name.endswith("...") or name.endswith("...]") else f"{name}..."

    if hasattr(TyperArgument, "_usage_display_name"):
        TyperArgument._usage_display_name = usage_name  # type: ignore[method-assign]
