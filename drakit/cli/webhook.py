"""``drakit webhook serve | manifests`` and ``drakit admission policy``: claims injected at admission.

Two forms from one source (``drakit.webhook.mutate``): an HTTPS AdmissionReview endpoint for
clusters before 1.36 and for what CEL cannot do (converting legacy requests, CRD workloads), and
admission policies that the API server runs itself (1.36+, nothing to deploy).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from drakit.cli.console import emit
from drakit.cli.options import Format, output_option
from drakit.cli.profile import DriverOpt
from drakit.errors import InvalidInput, UsageError

webhook_app = typer.Typer(help="The claim-injecting admission webhook: serve it, or emit its manifests.",
                          no_args_is_help=True)
admission_app = typer.Typer(help="Admission policies that inject profile claims (no server to run).",
                            no_args_is_help=True)

Profiles = Annotated[list[str] | None, typer.Argument(metavar="[PROFILE...]",
                                                      help="Profile files, directories or bundled names (default: every bundled profile).")]
LegacyOpt = Annotated[str, typer.Option("--legacy", metavar="deny|convert",
                                        help="A container also asking for the vendor's device-plugin resource "
                                             "(nvidia.com/gpu): deny it (default) or drop that request.")]
KueuePods = Annotated[bool, typer.Option("--kueue-pods", help="Kueue's pod integration is on: inject into bare Pods "
                                                             "even for profiles that route to a queue.")]
Output = Annotated[str, output_option(Format.yaml, Format.json, note="the output is manifests")]


def _injector(profiles: list[str] | None, driver: str | None, legacy: str, kueue_pods: bool) -> tuple[Any, list[Any]]:
    from drakit.profiles import compile_profile, drivers_for
    from drakit.sources import load_profile_files
    from drakit.webhook.mutate import Injector

    if legacy not in ("deny", "convert"):
        raise UsageError(f"--legacy {legacy!r}: want deny or convert")
    mode: Literal["deny", "convert"] = "convert" if legacy == "convert" else "deny"
    resolved = load_profile_files(profiles or []).selected()
    compiled = []
    for rp in resolved:
        schemas = drivers_for(rp, driver)
        if len(schemas) != 1:
            raise InvalidInput(f"profile {rp.name}: compiles for {len(schemas)} drivers; name one with --driver")
        compiled.append(compile_profile(rp, schemas[0]))
    return Injector.of(compiled, legacy=mode, kueue_pods=kueue_pods), resolved


def _write(docs: list[dict[str, Any]], output: str) -> None:
    from drakit.profiles.render import to_yaml

    if output == Format.json:
        emit({"apiVersion": "v1", "kind": "List", "items": docs}, output)
    else:
        sys.stdout.write(to_yaml(docs))


@webhook_app.command("serve")
def serve_cmd(
    profiles: Profiles = None,
    tls_cert: Annotated[str, typer.Option("--tls-cert", metavar="FILE", help="PEM serving certificate.")] = "",
    tls_key: Annotated[str, typer.Option("--tls-key", metavar="FILE", help="PEM private key.")] = "",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="HTTPS port.")] = 8443,
    host: Annotated[str, typer.Option("--host", metavar="ADDR", help="Address to listen on.")] = "0.0.0.0",
    workers: Annotated[int, typer.Option("--workers", min=1, max=64,
                                         help="Server processes sharing the port (one per core the server may use; "
                                              "in a cluster, scale replicas instead).")] = 1,
    driver: DriverOpt = None,
    legacy: LegacyOpt = "deny",
    kueue_pods: KueuePods = False,
) -> None:
    """Serve AdmissionReview v1 on POST /mutate over HTTPS until interrupted (GET /healthz lists the profiles)."""
    if not tls_cert or not tls_key:
        raise UsageError("the API server only calls webhooks over HTTPS: give --tls-cert FILE and --tls-key FILE")
    for opt, path in (("--tls-cert", tls_cert), ("--tls-key", tls_key)):
        if not Path(path).is_file():
            raise InvalidInput(f"{opt} {path}: no such file")
    injector, _ = _injector(profiles, driver, legacy, kueue_pods)
    try:
        from drakit.webhook.server import serve
    except ImportError as e:
        raise InvalidInput(f"drakit webhook serve needs the webhook extra (pip install 'drakit[webhook]'): {e}") from None
    import ssl

    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(tls_cert, tls_key)
    except (ssl.SSLError, OSError) as e:
        raise InvalidInput(f"--tls-cert {tls_cert} / --tls-key {tls_key}: not a usable certificate and key: {e}") from None
    print(f"drakit webhook: serving {', '.join(sorted(injector.rules))} on https://{host}:{port}/mutate"
          + (f" ({workers} workers)" if workers > 1 else ""), file=sys.stderr)
    serve(injector, cert=tls_cert, key=tls_key, host=host, port=port, workers=workers)


@webhook_app.command("manifests")
def manifests_cmd(
    profiles: Profiles = None,
    ca_file: Annotated[str, typer.Option("--ca-file", metavar="FILE", help="PEM CA that signed the serving certificate (the caBundle).")] = "",
    namespace: Annotated[str, typer.Option("--namespace", "-n", metavar="NS", help="Namespace of the webhook (never injected).")] = "drakit-system",
    image: Annotated[str, typer.Option("--image", metavar="IMAGE", help="Image with drakit[webhook] installed.")] = "drakit:0.1.0",
    url: Annotated[str | None, typer.Option("--url", metavar="URL", help="Register by URL (a server outside the cluster): "
                                                                          "emit only the MutatingWebhookConfiguration.")] = None,
    failure_policy: Annotated[str, typer.Option("--failure-policy", metavar="Fail|Ignore",
                                                help="For CREATE (UPDATE always Ignore): Fail blocks labelled workloads while "
                                                     "the webhook is down, Ignore admits them without devices.")] = "Fail",
    driver: DriverOpt = None,
    legacy: LegacyOpt = "deny",
    kueue_pods: KueuePods = False,
    output: Output = Format.yaml,
) -> None:
    """Emit the MutatingWebhookConfiguration (with caBundle), Service, Deployment, ServiceAccount and profiles."""
    from drakit.webhook.install import manifests

    if not ca_file:
        raise UsageError("the registration needs the CA bundle the API server verifies the webhook with: give --ca-file FILE")
    if failure_policy not in ("Fail", "Ignore"):
        raise UsageError(f"--failure-policy {failure_policy!r}: want Fail or Ignore")
    if url is not None and not url.startswith("https://"):
        raise UsageError(f"--url {url}: the API server calls webhooks over https:// only")
    from drakit.sources.read import ReadError, read_path

    try:
        ca = read_path(ca_file).encode()
    except ReadError as e:
        raise InvalidInput(f"--ca-file {e}") from None
    if b"-----BEGIN CERTIFICATE-----" not in ca:
        raise InvalidInput(f"--ca-file {ca_file}: not a PEM certificate")
    _, resolved = _injector(profiles, driver, legacy, kueue_pods)
    serve_args = [*(["--driver", driver] if driver else []), *(["--legacy", legacy] if legacy != "deny" else []),
                  *(["--kueue-pods"] if kueue_pods else [])]
    docs = manifests(resolved, ca_bundle=ca, namespace=namespace, image=image, url=url,
                     failure_policy="Ignore" if failure_policy == "Ignore" else "Fail", serve_args=serve_args)
    _write(docs, output)


@admission_app.command("policy")
def policy_cmd(
    profiles: Profiles = None,
    driver: DriverOpt = None,
    kueue_pods: KueuePods = False,
    output: Output = Format.yaml,
) -> None:
    """Emit a MutatingAdmissionPolicy + binding per profile and kind family, and one ValidatingAdmissionPolicy
    with the denials (admissionregistration.k8s.io/v1; Kubernetes 1.36+)."""
    from drakit.webhook.policy import admission_policies

    injector, _ = _injector(profiles, driver, "deny", kueue_pods)
    _write(admission_policies(injector), output)


def register(app: typer.Typer) -> None:
    app.add_typer(webhook_app, name="webhook")
    app.add_typer(admission_app, name="admission")
