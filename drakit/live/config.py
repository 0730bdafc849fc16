"""Which cluster to talk to, decided the way kubectl decides it (no client library here).

kubectl's order (client-go ``clientcmd``): ``--kubeconfig`` if given; else ``$KUBECONFIG``
(a ``:``-separated list merged first-wins); else ``~/.kube/config``; and only when none of
those exists and the process runs in a Pod (``KUBERNETES_SERVICE_HOST`` set), the in-cluster
service-account config.  ``--context`` picks a context; otherwise the file's
``current-context``.  Exec credential plugins and OIDC refresh are the client library's
(:mod:`drakit.live.kube` loads the file with it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from drakit.live.client import ClusterError, ErrorCode

DEFAULT_TIMEOUT = 30.0


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
        if not os.path.exists(options.kubeconfig):
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
