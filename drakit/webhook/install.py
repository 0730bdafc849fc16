"""What ``drakit webhook manifests`` emits: the registration and, unless it points at a URL, the
Service, Deployment, ServiceAccount and the profiles the server reads.

Choices, each explicit (an omitted field gets the API server's default, which is not always the
safe one for a claim injector):

* two webhooks on one path.  ``inject`` (CREATE) fails closed: a workload that asked for a profile
  and started without devices would run, fail late and hold a queue slot.  It is scoped by the
  ``drakit.dev/profile`` objectSelector so an outage blocks only opted-in workloads.  ``keep``
  (UPDATE) fails open, because pod specs and templates are immutable anyway, and an outage must
  not block unrelated updates (labels, scaling) of those workloads;
* ``sideEffects: None``: admission never creates objects (claim templates are applied ahead by
  ``drakit profile apply``);
* ``timeoutSeconds: 5``, ``reinvocationPolicy: IfNeeded`` (the decision is idempotent),
  ``matchPolicy: Equivalent``, and a namespaceSelector excluding the control plane's namespaces
  and the webhook's own, so the injector can never block its own restart;
* the server needs no API access, so least privilege is a ServiceAccount without a token and no
  Role at all.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any, Literal

from drakit.profiles.compile import PROFILE_LABEL
from drakit.profiles.loader import ResolvedProfile
from drakit.webhook.policy import SYSTEM_NAMESPACES

FailurePolicy = Literal["Fail", "Ignore"]
NAME = "drakit-webhook"
PORT = 8443
MUTATE_PATH = "/mutate"
HEALTH_PATH = "/healthz"

# Kinds whose pod template gets the claims (apply-to's list), by API group.
WORKLOAD_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("", ("pods",)),
    ("batch", ("jobs", "cronjobs")),
    ("apps", ("deployments", "statefulsets", "replicasets", "daemonsets")),
    ("jobset.x-k8s.io", ("jobsets",)),
    ("kubeflow.org", ("pytorchjobs", "tfjobs", "mpijobs", "xgboostjobs", "paddlejobs")),
    ("ray.io", ("rayjobs", "rayclusters")),
)


def _rules(operations: Sequence[str]) -> list[dict[str, Any]]:
    return [{"apiGroups": [g], "apiVersions": ["*"], "operations": list(operations), "resources": list(rs),
             "scope": "Namespaced"} for g, rs in WORKLOAD_RULES]


def webhook_configuration(*, ca_bundle: bytes, namespace: str, url: str | None = None,
                          failure_policy: FailurePolicy = "Fail", name: str = NAME) -> dict[str, Any]:
    """The MutatingWebhookConfiguration; by Service in ``namespace``, or by ``url``."""
    if url:
        client: dict[str, Any] = {"url": url}
    else:
        client = {"service": {"name": name, "namespace": namespace, "path": MUTATE_PATH, "port": 443}}
    client["caBundle"] = base64.b64encode(ca_bundle).decode()
    common: dict[str, Any] = {
        "admissionReviewVersions": ["v1"],
        "clientConfig": client,
        "sideEffects": "None",
        "timeoutSeconds": 5,
        "matchPolicy": "Equivalent",
        "namespaceSelector": {"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [*SYSTEM_NAMESPACES, namespace]}]},
        "objectSelector": {"matchExpressions": [{"key": PROFILE_LABEL, "operator": "Exists"}]},
        "reinvocationPolicy": "IfNeeded",
    }
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": name}},
        "webhooks": [
            {"name": "inject.drakit.dev", "rules": _rules(["CREATE"]), "failurePolicy": failure_policy, **common},
            {"name": "keep.drakit.dev", "rules": _rules(["UPDATE"]), "failurePolicy": "Ignore", **common},
        ],
    }


def _profiles_configmap(profiles: Sequence[ResolvedProfile], namespace: str, name: str) -> dict[str, Any]:
    import yaml

    data = {}
    for rp in profiles:
        doc = rp.profile.to_dict()
        doc.pop("extends", None)  # resolved already: the parents are not shipped
        doc.pop("mergeStrategy", None)
        data[f"{rp.name}.yaml"] = yaml.safe_dump(doc, sort_keys=False)
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{name}-profiles", "namespace": namespace}, "data": data}


def manifests(profiles: Sequence[ResolvedProfile], *, ca_bundle: bytes, namespace: str, image: str,
              url: str | None = None, failure_policy: FailurePolicy = "Fail", serve_args: Sequence[str] = (),
              tls_secret: str = f"{NAME}-tls", name: str = NAME) -> list[dict[str, Any]]:
    """Every object, in apply order; with ``url`` only the registration (the server runs elsewhere)."""
    config = webhook_configuration(ca_bundle=ca_bundle, namespace=namespace, url=url,
                                   failure_policy=failure_policy, name=name)
    if url:
        return [config]
    labels = {"app.kubernetes.io/name": name}
    files = [f"/etc/drakit/profiles/{rp.name}.yaml" for rp in profiles]
    container = {
        "name": "webhook",
        "image": image,
        "args": ["webhook", "serve", *files, "--tls-cert", "/etc/drakit/tls/tls.crt",
                 "--tls-key", "/etc/drakit/tls/tls.key", "--port", str(PORT), *serve_args],
        "ports": [{"name": "https", "containerPort": PORT}],
        "readinessProbe": {"httpGet": {"path": HEALTH_PATH, "port": "https", "scheme": "HTTPS"}, "periodSeconds": 5},
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "tls", "mountPath": "/etc/drakit/tls", "readOnly": True},
                         {"name": "profiles", "mountPath": "/etc/drakit/profiles", "readOnly": True}],
    }
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": name,
                    "automountServiceAccountToken": False,
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [container],
                    "volumes": [{"name": "tls", "secret": {"secretName": tls_secret}},
                                {"name": "profiles", "configMap": {"name": f"{name}-profiles"}}],
                },
            },
        },
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace},
         "automountServiceAccountToken": False},
        _profiles_configmap(profiles, namespace, name),
        deployment,
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace, "labels": labels},
         "spec": {"selector": labels, "ports": [{"name": "https", "port": 443, "targetPort": "https"}]}},
        config,
    ]
