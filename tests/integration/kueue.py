"""Kueue v0.19.2 beside the test control plane: its CRDs installed, its manager started against
the API server with a Configuration file, its webhooks registered by URL on loopback.

Webhooks are **on**, registered by URL with a CA and serving certificate this module makes.
Kueue's Job defaulting webhook is what suspends a queued Job at create time; with the webhooks
off a test would have to create every Job suspended itself, and the very first thing the
agreement check compares (a Job never starts before admission) would be the test's doing, not
Kueue's. The validating webhooks also give the catalog check Kueue's own object validation on
top of the CRD schemas. The webhooks cover the Job and Kueue's own kinds only (the other
frameworks are off) and skip ``kube-system``, as Kueue's install does.

Two paths are fixed in Kueue's code rather than its Configuration: with internal certificate
management off the manager reads its metrics certificate from ``/etc/kueue/metrics/certs``, and
the visibility server (turned off here; the live explain reads Workload status, not the
visibility API) from ``/visibility``. Rather than write into the machine's ``/etc``, the manager
runs chrooted in a directory of its own that holds its binary, configuration, kubeconfig and
certificates (Kueue is a static Go binary and needs nothing else); as root that is a plain
``chroot``, otherwise ``unshare --map-root-user`` provides it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.integration.controlplane import (
    ControlPlane,
    ControlPlaneError,
    _free_port,
    _openssl,
    _tail,
    cache_root,
)
from tests.integration.kube import Cluster

KUEUE_VERSION = "v0.19.2"
KUEUE_API = "kueue.x-k8s.io/v1beta2"
NAMESPACE = "kueue-system"
WEBHOOK_NAME = "drakit-test-kueue"
# What the injection check (``test_kueue_injection.py``) charges: the DeviceClass its profile
# ``kq-two-l4`` compiles to. The manager reads mappings only at start, so the session's fixture
# starts it with this one too.
INJECTION_PROFILE = "kq-two-l4"
INJECTION_RESOURCE = "drakit.dev/l4"
INJECTION_MAPPINGS = ({"name": INJECTION_RESOURCE, "deviceClassNames": [f"{INJECTION_PROFILE}.gpu.nvidia.com"]},)
# Namespaces Kueue's webhooks never see (Kueue's own install excludes the same two).
_EXCLUDED_NAMESPACES = ("kube-system", NAMESPACE)


class KueueError(ControlPlaneError):
    """Kueue could not be installed or started; the message carries its log tail."""


def kueue_dir() -> Path:
    """Where ``cluster/addons.sh`` puts Kueue (``bin/kueue``, ``crd/*.yaml``); ``DRAKIT_KUEUE_DIR``
    overrides it. The same cache-root rule as the control plane's binaries."""
    override = os.environ.get("DRAKIT_KUEUE_DIR")
    if override:
        return Path(override)
    return cache_root() / f"kueue-{KUEUE_VERSION}"


def missing_parts(directory: Path) -> list[str]:
    missing = [] if os.access(directory / "bin" / "kueue", os.X_OK) else ["bin/kueue"]
    if not list((directory / "crd").glob("*.yaml")):
        missing.append("crd/*.yaml")
    return missing


# --------------------------------------------------------------------------------- webhooks

# (webhook name, path, API group, version, resources, operations) — Kueue's own webhook
# manifests (config/components/webhook/manifests.yaml at v0.19.2) restricted to batch/job and
# Kueue's kinds.
_MUTATING: tuple[tuple[str, str, str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("mjob.kb.io", "/mutate-batch-v1-job", "batch", "v1", ("jobs",), ("CREATE",)),
    ("mclusterqueue.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-clusterqueue", "kueue.x-k8s.io", "v1beta2",
     ("clusterqueues",), ("CREATE",)),
    ("mresourceflavor.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-resourceflavor", "kueue.x-k8s.io", "v1beta2",
     ("resourceflavors",), ("CREATE",)),
    ("mworkload.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-workload", "kueue.x-k8s.io", "v1beta2",
     ("workloads",), ("CREATE",)),
)  # fmt: skip
_VALIDATING: tuple[tuple[str, str, str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("vjob.kb.io", "/validate-batch-v1-job", "batch", "v1", ("jobs",), ("CREATE", "UPDATE")),
    ("vclusterqueue.kb.io", "/validate-kueue-x-k8s-io-v1beta2-clusterqueue", "kueue.x-k8s.io", "v1beta2",
     ("clusterqueues",), ("CREATE", "UPDATE")),
    ("vcohort.kb.io", "/validate-kueue-x-k8s-io-v1beta2-cohort", "kueue.x-k8s.io", "v1beta2",
     ("cohorts",), ("CREATE", "UPDATE")),
    ("vresourceflavor.kb.io", "/validate-kueue-x-k8s-io-v1beta2-resourceflavor", "kueue.x-k8s.io", "v1beta2",
     ("resourceflavors",), ("CREATE", "UPDATE")),
    ("vworkload.kb.io", "/validate-kueue-x-k8s-io-v1beta2-workload", "kueue.x-k8s.io", "v1beta2",
     ("workloads", "workloads/status"), ("CREATE", "UPDATE")),
)  # fmt: skip


def webhook_configurations(base_url: str, ca_pem: bytes) -> list[dict[str, Any]]:
    """Kueue's Mutating/ValidatingWebhookConfiguration, pointed at ``base_url`` instead of a Service."""
    bundle = base64.b64encode(ca_pem).decode()

    def hooks(
        table: Sequence[tuple[str, str, str, str, tuple[str, ...], tuple[str, ...]]],
    ) -> list[dict[str, Any]]:
        return [
            {
                "name": name,
                "clientConfig": {"url": base_url + path, "caBundle": bundle},
                "rules": [
                    {
                        "apiGroups": [group],
                        "apiVersions": [version],
                        "resources": list(resources),
                        "operations": list(operations),
                    }
                ],
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "timeoutSeconds": 10,
                "namespaceSelector": {
                    "matchExpressions": [
                        {
                            "key": "kubernetes.io/metadata.name",
                            "operator": "NotIn",
                            "values": list(_EXCLUDED_NAMESPACES),
                        }
                    ]
                },
            }
            for name, path, group, version, resources, operations in table
        ]

    api = "admissionregistration.k8s.io/v1"
    return [
        {"apiVersion": api, "kind": "MutatingWebhookConfiguration", "metadata": {"name": WEBHOOK_NAME},
         "webhooks": hooks(_MUTATING)},
        {"apiVersion": api, "kind": "ValidatingWebhookConfiguration", "metadata": {"name": WEBHOOK_NAME},
         "webhooks": hooks(_VALIDATING)},
    ]  # fmt: skip


# --------------------------------------------------------------------------------- configuration


def configuration(
    *,
    webhook_port: int,
    health_port: int,
    device_class_mappings: Sequence[Mapping[str, Any]],
    client_qps: float = 300.0,
    client_burst: int = 500,
) -> dict[str, Any]:
    """The manager's Configuration (``config.kueue.x-k8s.io/v1beta2``) with paths inside the chroot."""
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": NAMESPACE,
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        # "0" turns the metrics listener off (its certificate is still read at start).
        "metrics": {"bindAddress": "0"},
        "webhook": {"host": "127.0.0.1", "port": webhook_port, "certDir": "/webhook-certs"},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "clientConnection": {"qps": client_qps, "burst": client_burst},
        "manageJobsWithoutQueueName": False,
        "integrations": {"frameworks": ["batch/job"]},
        "resources": {"deviceClassMappings": [dict(m) for m in device_class_mappings]},
        # The visibility API would need an APIService and its own certificate; nothing reads it.
        "featureGates": {"VisibilityOnDemand": False},
    }


def load_crds(directory: Path) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted((directory / "crd").glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def install_crds(cluster: Cluster, crds: Sequence[Mapping[str, Any]], timeout: float = 60.0) -> None:
    """Apply Kueue's CRDs and wait until every one is Established (then discovery knows them)."""
    for crd in crds:
        cluster.apply(crd)
    names = [c["metadata"]["name"] for c in crds]

    def established() -> bool:
        for name in names:
            obj = cluster.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name) or {}
            conditions = (obj.get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
                return False
        return True

    cluster.wait_for("Kueue CRDs Established", established, timeout=timeout)
    cluster.dynamic.resources.invalidate_cache()


# --------------------------------------------------------------------------------- the manager


@dataclass
class KueueManager:
    """The running Kueue manager: its chroot, ports, process and the webhook CA."""

    directory: Path
    plane: ControlPlane
    workdir: Path
    device_class_mappings: tuple[Mapping[str, Any], ...]
    ports: dict[str, int] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    ca_pem: bytes = b""

    @property
    def root(self) -> Path:
        return self.workdir / "root"

    @property
    def log_file(self) -> Path:
        return self.workdir / "kueue.log"

    def log_tail(self, lines: int = 15) -> str:
        return _tail(self.log_file, lines)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 120.0) -> None:
        self.ports = {"webhook": _free_port(), "health": _free_port()}
        self._prepare_root(self.plane.server)
        log = self.log_file.open("ab")
        try:
            self.proc = subprocess.Popen(
                self._command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=self._enter_root if os.geteuid() == 0 else None,
            )
        finally:
            log.close()
        self._wait_ready(time.monotonic() + timeout)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.proc = None

    @property
    def webhook_url(self) -> str:
        return f"https://127.0.0.1:{self.ports['webhook']}"

    # ----------------------------------------------------------------------------- internals

    def _command(self) -> list[str]:
        # Verbosity 2: the scheduler logs each decision ("Workload assumed in the cache") in order.
        args = ["/kueue", "--config=/config.yaml", "--kubeconfig=/kubeconfig", "--zap-log-level=2"]
        if os.geteuid() == 0:
            return args
        return ["unshare", "--user", "--map-root-user", "chroot", str(self.root), *args]

    def _enter_root(self) -> None:  # runs in the child between fork and exec
        os.chroot(self.root)
        os.chdir("/")

    def check_configuration(self, timeout: float = 60.0) -> str:
        """Run Kueue's own start-up on this Configuration against an API server that is not
        there, and return its log: loading, defaulting and validation (``config.Validate``, which
        checks every deviceClassMapping and compiles counter selectors) happen before the first
        API call, which then fails. :func:`configuration_verdict` reads the log.
        """
        self.ports = {"webhook": _free_port(), "health": _free_port()}
        self._prepare_root(f"https://127.0.0.1:{_free_port()}")
        with self.log_file.open("ab") as log:
            subprocess.run(
                self._command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=self._enter_root if os.geteuid() == 0 else None,
                timeout=timeout,
                check=False,
            )
        return self.log_file.read_text(errors="replace")

    def _prepare_root(self, server: str) -> None:
        root = self.root
        for sub in ("tmp", "webhook-certs", "etc/kueue/metrics/certs", "visibility"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        binary = self.directory / "bin" / "kueue"
        try:
            os.link(binary, root / "kueue")
        except OSError:
            shutil.copy2(binary, root / "kueue")
        self._make_certificates(root)
        (root / "config.yaml").write_text(
            json.dumps(
                configuration(
                    webhook_port=self.ports["webhook"],
                    health_port=self.ports["health"],
                    device_class_mappings=self.device_class_mappings,
                ),
                indent=2,
            )
        )
        ca = base64.b64encode(self.plane.ca_file.read_bytes()).decode()
        kubeconfig = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "drakit", "cluster": {"server": server, "certificate-authority-data": ca}}],
            "users": [{"name": "kueue", "user": {"token": self.plane.admin_token}}],
            "contexts": [{"name": "drakit", "context": {"cluster": "drakit", "user": "kueue"}}],
            "current-context": "drakit",
        }
        (root / "kubeconfig").write_text(json.dumps(kubeconfig, indent=2))

    def _make_certificates(self, root: Path) -> None:
        """A CA and one serving certificate for 127.0.0.1, used by the webhook and metrics servers."""
        pki = self.workdir / "pki"
        pki.mkdir(parents=True, exist_ok=True)
        _openssl("genrsa", "-out", "ca.key", "2048", cwd=pki)
        _openssl("req", "-x509", "-new", "-nodes", "-key", "ca.key", "-days", "2",
                 "-subj", "/CN=drakit-test-kueue-ca", "-out", "ca.crt", cwd=pki)  # fmt: skip
        _openssl("genrsa", "-out", "tls.key", "2048", cwd=pki)
        _openssl("req", "-new", "-key", "tls.key", "-subj", "/CN=kueue-webhook", "-out", "tls.csr", cwd=pki)
        (pki / "san.ext").write_text(
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
        )
        _openssl("x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", "2", "-extfile", "san.ext", "-out", "tls.crt", cwd=pki)  # fmt: skip
        self.ca_pem = (pki / "ca.crt").read_bytes()
        for sub in ("webhook-certs", "etc/kueue/metrics/certs", "visibility"):
            for name in ("tls.crt", "tls.key"):
                shutil.copy2(pki / name, root / sub / name)

    def _wait_ready(self, deadline: float) -> None:
        """Kueue's readyz answers once the webhook server listens (its own readiness rule)."""
        url = f"http://127.0.0.1:{self.ports['health']}/readyz"
        last = ""
        while time.monotonic() < deadline:
            if not self.alive():
                code = self.proc.returncode if self.proc else None
                raise KueueError(f"kueue exited with {code}\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    if r.status == 200:
                        return
                    last = f"HTTP {r.status}"
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code}"
            except OSError as e:
                last = str(e)
            time.sleep(0.5)
        raise KueueError(f"kueue not ready at {url}: {last}\n{self.log_tail()}")


_CONFIG_ERRORS = (
    "Unable to load the configuration",
    "conflicting feature gates",
    "Unable to validate the configuration",
)


def configuration_verdict(log: str) -> str:
    """``accepted`` when Kueue got past its configuration to its first API call, else
    ``refused: <message>: <error>`` from its log."""
    for line in log.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("level") == "error" and entry.get("msg") in _CONFIG_ERRORS:
            return f"refused: {entry['msg']}: {entry.get('error', '')}"
        if entry.get("level") == "error" and entry.get("msg") == "Unable to start manager":
            return "accepted"
    return "unknown: " + log[-500:]


def start_kueue(
    cluster: Cluster,
    workdir: Path,
    *,
    device_class_mappings: Sequence[Mapping[str, Any]],
    directory: Path | None = None,
) -> KueueManager:
    """Install the CRDs, start the manager and register its webhooks; stop it on any failure."""
    directory = directory or kueue_dir()
    install_crds(cluster, load_crds(directory))
    if cluster.get("v1", "Namespace", NAMESPACE) is None:
        cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    manager = KueueManager(
        directory=directory,
        plane=cluster.plane,
        workdir=workdir,
        device_class_mappings=tuple(device_class_mappings),
    )
    manager.start()
    try:
        for hook in webhook_configurations(manager.webhook_url, manager.ca_pem):
            cluster.apply(hook)
    except Exception:
        manager.stop()
        raise
    return manager


def stop_kueue(cluster: Cluster, manager: KueueManager) -> None:
    """Unregister the webhooks first: with failurePolicy Fail they would block every Job create."""
    for hook in webhook_configurations(manager.webhook_url, manager.ca_pem):
        cluster.delete(hook)
    manager.stop()
