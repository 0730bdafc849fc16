"""A throw-away Kubernetes control plane on loopback: etcd, kube-apiserver, kube-scheduler and
kube-controller-manager, started from the binaries ``cluster/build.sh`` puts in the cache.

Hand-written rather than using kind/k3d/envtest because there is no container runtime here and
envtest runs neither the scheduler nor the controller manager — and those two are exactly what
the integration tests compare drakit against. There is no kubelet: tests create Node objects.

Everything listens on 127.0.0.1 with ports picked at start; all state (etcd data, keys, tokens,
kubeconfigs, logs) lives in one temporary directory.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
COMPONENTS = ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager")

# Every DRA gate the tests exercise, all set to true.  Gates the binary does not know are
# dropped at start (see ControlPlane._known_gates) so the same list works for 1.36 and 1.37.
DRA_FEATURE_GATES = (
    "DynamicResourceAllocation",
    "DRAAdminAccess",
    "DRAPrioritizedList",
    "DRADeviceTaints",
    "DRADeviceTaintRules",
    "DRAPartitionableDevices",
    "DRAConsumableCapacity",
    "DRADeviceBindingConditions",
    "DRAResourceClaimDeviceStatus",
    "DRAExtendedResource",
    "DRAListTypeAttributes",
)

# resource.k8s.io/v1 serves DeviceClass, ResourceSlice, ResourceClaim(Template) and, from 1.37,
# DeviceTaintRule; the older alpha/beta versions are not needed by the tests.
_RUNTIME_CONFIG = "resource.k8s.io/v1=true"


class ControlPlaneError(RuntimeError):
    """The control plane could not be started; the message carries the component log tails."""


def k8s_version() -> str:
    """The Kubernetes version pinned in cluster/go.mod (the cache key)."""
    for line in (REPO_ROOT / "cluster" / "go.mod").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "k8s.io/kubernetes":
            return parts[1].removeprefix("v")
    raise ControlPlaneError("cluster/go.mod does not require k8s.io/kubernetes")


def cache_root() -> Path:
    """``$DRAKIT_CACHE``, else ``$XDG_CACHE_HOME/drakit`` or ``~/.cache/drakit``: the Makefile's rule."""
    cache = os.environ.get("DRAKIT_CACHE")
    if cache:
        return Path(cache)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "drakit"


def bin_dir() -> Path:
    """Where ``make cluster`` puts the binaries; ``DRAKIT_K8S_BIN`` overrides it."""
    override = os.environ.get("DRAKIT_K8S_BIN")
    if override:
        return Path(override)
    return cache_root() / f"k8s-{k8s_version()}" / "bin"


def missing_binaries(directory: Path) -> list[str]:
    return [c for c in COMPONENTS if not os.access(directory / c, os.X_OK)]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@dataclass
class ControlPlane:
    """The running processes plus what a client needs to reach the API server."""

    bin: Path
    workdir: Path
    ports: dict[str, int] = field(default_factory=dict)
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    gates: tuple[str, ...] = ()
    # Extra command-line flags per component (e.g. the benchmark's client QPS); empty for tests.
    extra_args: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.ports['apiserver']}"

    @property
    def ca_file(self) -> Path:
        return self.workdir / "pki" / "ca.crt"

    @property
    def admin_token(self) -> str:
        return self.tokens["admin"]

    def write_kubeconfig(self, path: Path, *, token: str | None = None, server: str | None = None,
                         ca_file: Path | None = None) -> Path:
        """A kubeconfig for ``token`` (default: the admin's), as a user of the plane would have it."""
        self._write_kubeconfig(path, token or self.admin_token, server=server, ca_file=ca_file)
        return path

    def log_file(self, component: str) -> Path:
        return self.workdir / "logs" / f"{component}.log"

    def log_tails(self, lines: int = 40) -> str:
        parts = []
        for c in COMPONENTS:
            parts.append(f"----- {c} (last {lines} lines of {self.log_file(c).name}) -----")
            parts.append(_tail(self.log_file(c), lines))
        return "\n".join(parts)

    # ----------------------------------------------------------------------------- start/stop

    def start(self, timeout: float = 180.0) -> None:
        """Start all four components and wait until each reports healthy."""
        (self.workdir / "logs").mkdir(parents=True, exist_ok=True)
        self.ports = {
            n: _free_port() for n in ("etcd", "etcd-peer", "apiserver", "scheduler", "controller-manager")
        }
        self._make_credentials()
        self.gates = self._known_gates()
        deadline = time.monotonic() + timeout
        try:
            self._start_etcd()
            self._wait_http("etcd", f"http://127.0.0.1:{self.ports['etcd']}/health", deadline)
            self._start_apiserver()
            self._wait_http("kube-apiserver", f"{self.server}/readyz", deadline, token=self.admin_token)
            self._start_scheduler()
            self._start_controller_manager()
            self._wait_http(
                "kube-scheduler",
                f"https://127.0.0.1:{self.ports['scheduler']}/healthz",
                deadline,
                insecure=True,
            )
            self._wait_http(
                "kube-controller-manager",
                f"https://127.0.0.1:{self.ports['controller-manager']}/healthz",
                deadline,
                insecure=True,
            )
        except Exception as exc:
            tails = self.log_tails()
            self.stop()
            raise ControlPlaneError(f"control plane did not start: {exc}\n{tails}") from None

    def stop(self) -> None:
        """Stop one at a time in reverse start order: the API server shuts down cleanly only
        while etcd is still there (otherwise it hangs until killed)."""
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
        self.procs.clear()

    def dead_components(self) -> dict[str, int]:
        return {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}

    # ----------------------------------------------------------------------------- internals

    def _make_credentials(self) -> None:
        """A CA, the API server's serving certificate, service-account keys and bearer tokens."""
        pki = self.workdir / "pki"
        pki.mkdir(parents=True, exist_ok=True)
        _openssl("genrsa", "-out", "ca.key", "2048", cwd=pki)
        _openssl(
            "req", "-x509", "-new", "-nodes", "-key", "ca.key", "-days", "2",
            "-subj", "/CN=drakit-test-ca", "-out", "ca.crt", cwd=pki,
        )  # fmt: skip
        _openssl("genrsa", "-out", "apiserver.key", "2048", cwd=pki)
        _openssl(
            "req", "-new", "-key", "apiserver.key", "-subj", "/CN=kube-apiserver",
            "-out", "apiserver.csr", cwd=pki,
        )  # fmt: skip
        (pki / "san.ext").write_text(
            "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default\n"
            "extendedKeyUsage=serverAuth\n"
        )
        _openssl(
            "x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "apiserver.crt", cwd=pki,
        )  # fmt: skip
        _openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
        _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)

        self.tokens = {
            "admin": secrets.token_hex(16),
            "scheduler": secrets.token_hex(16),
            "controller-manager": secrets.token_hex(16),
        }
        # token,user,uid,"group1,group2" — the admin is a cluster superuser via system:masters;
        # the components use the identities the bootstrap RBAC policy grants their permissions to.
        (pki / "tokens.csv").write_text(
            f'{self.tokens["admin"]},drakit-admin,drakit-admin,"system:masters"\n'
            f"{self.tokens['scheduler']},system:kube-scheduler,system:kube-scheduler\n"
            f"{self.tokens['controller-manager']},system:kube-controller-manager,system:kube-controller-manager\n"
        )
        for who in ("scheduler", "controller-manager"):
            self._write_kubeconfig(self.workdir / f"{who}.kubeconfig", self.tokens[who])

    def _write_kubeconfig(self, path: Path, token: str, *, server: str | None = None, ca_file: Path | None = None) -> None:
        # JSON is valid YAML, so no YAML dependency here.
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "drakit",
                    "cluster": {"server": server or self.server, "certificate-authority": str(ca_file or self.ca_file)},
                }
            ],
            "users": [{"name": "component", "user": {"token": token}}],
            "contexts": [{"name": "drakit", "context": {"cluster": "drakit", "user": "component"}}],
            "current-context": "drakit",
        }
        path.write_text(json.dumps(config, indent=2))

    def _known_gates(self) -> tuple[str, ...]:
        """The DRA gates this kube-apiserver build accepts.

        ``--version`` parses and checks ``--feature-gates`` first, so asking with the full
        list and dropping whatever it calls unrecognized leaves exactly the gates that exist
        in this release (GA gates included; ``--help`` lists only alpha and beta ones).
        """
        gates = list(DRA_FEATURE_GATES)
        while gates:
            flag = "--feature-gates=" + ",".join(f"{g}=true" for g in gates)
            probe = subprocess.run(
                [str(self.bin / "kube-apiserver"), flag, "--version"],
                capture_output=True,
                text=True,
                timeout=60,
            )
            if probe.returncode == 0:
                break
            unknown = re.search(r"unrecognized feature gate: (\w+)", probe.stderr)
            if not unknown or unknown.group(1) not in gates:
                raise ControlPlaneError(f"kube-apiserver rejects {flag}: {probe.stderr.strip()[-500:]}")
            gates.remove(unknown.group(1))
        return tuple(gates)

    def _gate_flag(self) -> str:
        return "--feature-gates=" + ",".join(f"{g}=true" for g in self.gates)

    def start_apiserver(self, name: str, *, extra: tuple[str, ...] = (), timeout: float = 120.0) -> str:
        """Another kube-apiserver named ``name`` on the same etcd, started with the usual flags
        and then ``extra`` (later flags win); returns its URL.  For tests that need a server
        configured otherwise (an API group off, no watch cache) beside the session's."""
        port = _free_port()
        self._spawn(name, [*self._apiserver_args(port, self.workdir / name), *extra], binary="kube-apiserver")
        url = f"https://127.0.0.1:{port}"
        try:
            self._wait_http(name, f"{url}/readyz", time.monotonic() + timeout, token=self.admin_token)
        except ControlPlaneError:
            self.stop_apiserver(name)
            raise ControlPlaneError(f"{name} did not start:\n{_tail(self.log_file(name), 40)}") from None
        return url

    def stop_apiserver(self, name: str) -> None:
        """Stop an apiserver :meth:`start_apiserver` started (the session's components stay)."""
        proc = self.procs.pop(name)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    def _spawn(self, name: str, args: list[str], *, binary: str | None = None) -> None:
        args = [*args, *self.extra_args.get(name, ())]
        log = self.log_file(name).open("ab")
        try:
            self.procs[name] = subprocess.Popen(
                [str(self.bin / (binary or name)), *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.workdir,
                start_new_session=True,
            )
        finally:
            log.close()

    def _start_etcd(self) -> None:
        client = f"http://127.0.0.1:{self.ports['etcd']}"
        peer = f"http://127.0.0.1:{self.ports['etcd-peer']}"
        self._spawn(
            "etcd",
            [
                "--name=drakit",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=drakit={peer}",
                "--unsafe-no-fsync=true",  # a throw-away cluster: durability is not wanted, speed is
                "--log-level=warn",
            ],
        )

    def _start_apiserver(self) -> None:
        self._spawn("kube-apiserver", self._apiserver_args(self.ports["apiserver"], self.workdir / "apiserver"))

    def _apiserver_args(self, port: int, cert_dir: Path) -> list[str]:
        pki = self.workdir / "pki"
        return [
            f"--etcd-servers=http://127.0.0.1:{self.ports['etcd']}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={cert_dir}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--token-auth-file={pki / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-cluster-ip-range=10.96.0.0/24",
            # 127.0.0.1 may not be written into the kubernetes Service's endpoints.
            "--endpoint-reconciler-type=none",
            "--enable-priority-and-fairness=false",
            "--profiling=false",
            self._gate_flag(),
            f"--runtime-config={_RUNTIME_CONFIG}",
            "--v=1",
        ]

    def _start_scheduler(self) -> None:
        kubeconfig = self.workdir / "scheduler.kubeconfig"
        self._spawn(
            "kube-scheduler",
            [
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                # No front proxy: do not look up request-header CAs that will never exist.
                "--authentication-skip-lookup=true",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.ports['scheduler']}",
                f"--cert-dir={self.workdir / 'scheduler'}",
                "--leader-elect=false",
                self._gate_flag(),
                "--v=2",
            ],
        )

    def _start_controller_manager(self) -> None:
        kubeconfig = self.workdir / "controller-manager.kubeconfig"
        pki = self.workdir / "pki"
        self._spawn(
            "kube-controller-manager",
            [
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                # No front proxy: do not look up request-header CAs that will never exist.
                "--authentication-skip-lookup=true",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.ports['controller-manager']}",
                f"--cert-dir={self.workdir / 'controller-manager'}",
                "--leader-elect=false",
                "--use-service-account-credentials=true",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={pki / 'ca.crt'}",
                # No kubelet posts heartbeats, so node lifecycle would taint every node unreachable.
                "--controllers=*,-node-lifecycle-controller",
                self._gate_flag(),
                "--v=2",
            ],
        )

    def _wait_http(
        self,
        name: str,
        url: str,
        deadline: float,
        *,
        token: str | None = None,
        insecure: bool = False,
    ) -> None:
        """Poll ``url`` until it answers 200; fail early when the process has exited."""
        if insecure:
            # The components' self-signed serving certs; only /healthz is read from them.
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx = ssl.create_default_context(cafile=str(self.ca_file))
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        last = ""
        while time.monotonic() < deadline:
            dead = self.dead_components()
            if dead:
                raise ControlPlaneError(f"{', '.join(dead)} exited with {dead}")
            try:
                req = urllib.request.Request(url, headers=headers)
                with urllib.request.urlopen(
                    req, timeout=5, context=ctx if url.startswith("https") else None
                ) as r:
                    if r.status == 200:
                        return
                    last = f"HTTP {r.status}"
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code}: {e.read()[:200]!r}"
            except (OSError, urllib.error.URLError) as e:
                last = str(e)
            time.sleep(0.5)
        raise ControlPlaneError(f"{name} not healthy at {url}: {last}")


def start_control_plane(
    workdir: Path, *, binaries: Path | None = None, extra_args: dict[str, tuple[str, ...]] | None = None
) -> ControlPlane:
    plane = ControlPlane(bin=binaries or bin_dir(), workdir=workdir, extra_args=dict(extra_args or {}))
    plane.start()
    return plane
