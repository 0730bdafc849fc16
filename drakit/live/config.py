"""Which cluster to talk to, decided the way kubectl decides it (no client library here).

kubectl's order (client-go ``clientcmd``): ``--kubeconfig`` if given; else ``$KUBECONFIG``
(a ``:``-separated list merged first-wins); else ``~/.kube/config``; and only when none of
those exists and the process runs in a Pod (``KUBERNETES_SERVICE_HOST`` set), the in-cluster
service-account config.  ``--context`` picks a context; otherwise the file's
``current-context``.  Several files merge as client-go merges them: the first file that names
a cluster, user or context wins, and so does the first ``current-context``.

Files are read through drakit's one bounded reader and YAML decoder (a ``/dev/zero`` or an
alias bomb given as ``--kubeconfig`` is refused in one line, like any other input); relative
certificate and token paths are made absolute against their own file before the merge.
Exec credential plugins and OIDC refresh are the client library's (:mod:`drakit.live.kube`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drakit.live.client import ClusterError, ErrorCode

DEFAULT_TIMEOUT = 30.0
_NAMED = ("clusters", "users", "contexts")
_FILE_FIELDS = {"clusters": ("certificate-authority",), "users": ("client-certificate", "client-key", "tokenFile")}


@dataclass(frozen=True)
class ConnectOptions:
    """What the command line said: ``--kubeconfig``, ``--context``, ``--request-timeout``."""

    kubeconfig: str | None = None
    context: str | None = None
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Target:
    """The resolved choice: kubeconfig files (merged in order) or the in-cluster config."""

    files: tuple[str, ...]
    context: str | None
    in_cluster: bool
    timeout: float

    def describe(self) -> str:
        if self.in_cluster:
            return "in-cluster service account"
        where = os.pathsep.join(self.files)
        return f"context {self.context!r} of {where}" if self.context else where


def resolve(options: ConnectOptions, environ: dict[str, str] | None = None, home: Path | None = None) -> Target:
    """kubectl's choice of config for ``options``; a one-line error when there is none."""
    env = dict(os.environ if environ is None else environ)
    if options.kubeconfig:
        if options.kubeconfig != "-" and not os.path.exists(options.kubeconfig):  # "-": standard input
            raise ClusterError(ErrorCode.INVALID, f"--kubeconfig {options.kubeconfig}: no such file")
        return Target((options.kubeconfig,), options.context, False, options.timeout)
    listed = [p for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        existing = tuple(p for p in listed if os.path.exists(p))
        if existing:
            return Target(existing, options.context, False, options.timeout)
    default = (home or Path.home()) / ".kube" / "config"
    if default.exists():
        return Target((str(default),), options.context, False, options.timeout)
    if env.get("KUBERNETES_SERVICE_HOST") and not options.context:
        return Target((), None, True, options.timeout)
    raise ClusterError(
        ErrorCode.INVALID,
        "no cluster to read: no -f given and no kubeconfig found "
        f"({'$KUBECONFIG, ' if listed else ''}{default} missing, not running in a pod)",
        hint="give -f FILE for manifests, --kubeconfig FILE for a cluster, or --demo",
    )


def load_kubeconfig(files: tuple[str, ...]) -> dict[str, Any]:
    """The merged kubeconfig of ``files`` as one dict (what the client library is given)."""
    from drakit.model.codec import parse_text
    from drakit.sources.read import ReadError, read_one

    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", **{k: [] for k in _NAMED}}
    seen: dict[str, set[str]] = {k: set() for k in _NAMED}
    for path in files:
        try:
            text = read_one(path)
        except ReadError as e:
            raise ClusterError(ErrorCode.INVALID, f"kubeconfig {e}") from None
        docs, problems = parse_text(path, text)
        if problems:
            raise ClusterError(ErrorCode.INVALID, f"kubeconfig {problems[0]}")
        data = docs[0].data if docs else {}
        if not isinstance(data, dict):
            raise ClusterError(ErrorCode.INVALID, f"kubeconfig {path}: not a kubeconfig (want a mapping with contexts)")
        base = os.getcwd() if path == "-" else os.path.dirname(os.path.abspath(path))
        for key in _NAMED:
            entries = data.get(key) or []
            if not isinstance(entries, list):
                raise ClusterError(ErrorCode.INVALID, f"kubeconfig {path}: {key}: want a list")
            for entry in entries:
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    raise ClusterError(ErrorCode.INVALID, f"kubeconfig {path}: {key}: each entry needs a name")
                if entry["name"] in seen[key]:
                    continue
                seen[key].add(entry["name"])
                merged[key].append(_absolute(key, entry, base))
        if "current-context" not in merged and data.get("current-context"):
            merged["current-context"] = data["current-context"]
        if "preferences" not in merged and isinstance(data.get("preferences"), dict):
            merged["preferences"] = data["preferences"]
    return merged


def _absolute(key: str, entry: dict[str, Any], base: str) -> dict[str, Any]:
    inner_key = key[:-1]  # clusters -> cluster, users -> user
    inner = entry.get(inner_key)
    fields = _FILE_FIELDS.get(key, ())
    if not isinstance(inner, dict) or not any(isinstance(inner.get(f), str) for f in fields):
        return entry
    fixed = {f: os.path.join(base, v) if isinstance(v := inner.get(f), str) and v and not os.path.isabs(v) else inner.get(f)
             for f in fields if f in inner}
    return {**entry, inner_key: {**inner, **fixed}}
