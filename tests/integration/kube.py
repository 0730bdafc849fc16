"""A small client for the integration tests, on top of the official ``kubernetes`` package.

Tests speak in manifest dicts (the v1 wire form drakit itself consumes), so this wraps the
generic ``DynamicClient`` instead of the typed per-group APIs: apply a dict, read back a dict,
dry-run a create and get the API server's field errors, wait for a condition, list events.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, TypeVar

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import NotFoundError

from tests.integration.controlplane import ControlPlane

T = TypeVar("T")
_DECODE_FIELD = re.compile(r'(unknown field|duplicate field) "([^"]+)"')
FIELD_MANAGER = "drakit-tests"


@dataclass(frozen=True)
class Rejection:
    """A create the API server refused: HTTP code, reason and the field paths it named."""

    code: int
    reason: str
    message: str
    causes: tuple[tuple[str, str, str], ...]  # (field, reason, message)

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(f for f, _, _ in self.causes if f)


class Cluster:
    """What the ``cluster`` fixture yields."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        config = k8s.Configuration()
        config.host = plane.server
        config.ssl_ca_cert = str(plane.ca_file)
        config.api_key = {"authorization": plane.admin_token}
        config.api_key_prefix = {"authorization": "Bearer"}
        self.api_client = k8s.ApiClient(config)
        self.core = k8s.CoreV1Api(self.api_client)
        self.dynamic = DynamicClient(self.api_client)

    # ------------------------------------------------------------------------------- objects

    def _resource(self, manifest: Mapping[str, Any]) -> Any:
        return self.dynamic.resources.get(api_version=manifest["apiVersion"], kind=manifest["kind"])

    def _namespace_of(self, resource: Any, manifest: Mapping[str, Any], namespace: str | None) -> str | None:
        if not resource.namespaced:
            return None
        return manifest.get("metadata", {}).get("namespace") or namespace

    def apply(self, manifest: Mapping[str, Any], namespace: str | None = None) -> dict[str, Any]:
        """Server-side apply (create or update) a manifest dict; returns the stored object."""
        resource = self._resource(manifest)
        ns = self._namespace_of(resource, manifest, namespace)
        body = dict(manifest)
        result = self.dynamic.server_side_apply(
            resource,
            body=body,
            name=manifest["metadata"]["name"],
            namespace=ns,
            field_manager=FIELD_MANAGER,
            force_conflicts=True,
        )
        return dict(result.to_dict())

    def apply_all(
        self, manifests: Sequence[Mapping[str, Any]], namespace: str | None = None
    ) -> list[dict[str, Any]]:
        return [self.apply(m, namespace) for m in manifests]

    def create(
        self, manifest: Mapping[str, Any], namespace: str | None = None, *, dry_run: bool = False
    ) -> dict[str, Any]:
        """Plain create (server-side dry-run with ``dry_run``); raises ApiException on rejection."""
        resource = self._resource(manifest)
        ns = self._namespace_of(resource, manifest, namespace)
        # Strict: unknown or duplicate fields are errors, as kubectl's default validation makes them.
        kwargs: dict[str, Any] = {
            "field_manager": FIELD_MANAGER,
            "query_params": [("fieldValidation", "Strict")],
        }
        if dry_run:
            kwargs["dry_run"] = "All"
        result = self.dynamic.create(resource, body=dict(manifest), namespace=ns, **kwargs)
        return dict(result.to_dict())

    def dry_run_create(self, manifest: Mapping[str, Any], namespace: str | None = None) -> Rejection | None:
        """None when the API server would accept ``manifest``, else what it said."""
        try:
            self.create(manifest, namespace, dry_run=True)
        except ApiException as exc:
            return _rejection(exc)
        return None

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        resource = self.dynamic.resources.get(api_version=api_version, kind=kind)
        try:
            obj = resource.get(name=name, namespace=namespace if resource.namespaced else None)
        except NotFoundError:
            return None
        return dict(obj.to_dict())

    def list_objects(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        field_selector: str | None = None,
        label_selector: str | None = None,
    ) -> list[dict[str, Any]]:
        resource = self.dynamic.resources.get(api_version=api_version, kind=kind)
        kwargs: dict[str, Any] = {}
        if field_selector:
            kwargs["field_selector"] = field_selector
        if label_selector:
            kwargs["label_selector"] = label_selector
        result = resource.get(namespace=namespace if resource.namespaced else None, **kwargs)
        return [dict(item) for item in result.to_dict().get("items", [])]

    def delete(self, manifest: Mapping[str, Any], namespace: str | None = None) -> None:
        resource = self._resource(manifest)
        ns = self._namespace_of(resource, manifest, namespace)
        with suppress(NotFoundError):
            resource.delete(name=manifest["metadata"]["name"], namespace=ns)

    # ------------------------------------------------------------------------------- helpers

    def wait_for(
        self,
        what: str,
        probe: Callable[[], T | None],
        *,
        timeout: float = 60.0,
        interval: float = 0.25,
    ) -> T:
        """Poll ``probe`` until it returns something truthy; fail with ``what`` otherwise.

        Also fails early when a control-plane component has died, because then nothing
        will ever change and the log tails say why.
        """
        deadline = time.monotonic() + timeout
        last: T | None = None
        while time.monotonic() < deadline:
            last = probe()
            if last:
                return last
            dead = self.plane.dead_components()
            if dead:
                raise AssertionError(f"while waiting for {what}: components died: {dead}")
            time.sleep(interval)
        raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last value: {last!r}")

    def events_for(self, obj: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Core v1 events about ``obj`` (the scheduler writes events.k8s.io, which is the same data)."""
        meta = obj["metadata"]
        selector = f"involvedObject.uid={meta['uid']}"
        items = self.core.list_namespaced_event(
            meta.get("namespace") or "default", field_selector=selector
        ).items
        events = [self.api_client.sanitize_for_serialization(e) for e in items]
        return sorted(
            events, key=lambda e: (e.get("firstTimestamp") or e.get("eventTime") or "", e["metadata"]["name"])
        )

    def add_node(
        self,
        name: str,
        labels: Mapping[str, str] | None = None,
        *,
        cpu: str = "16",
        memory: str = "64Gi",
        pods: str = "110",
    ) -> dict[str, Any]:
        """A schedulable Node without a kubelet: Ready, with allocatable resources and no taints.

        The TaintNodesByCondition admission plugin adds ``node.kubernetes.io/not-ready`` on
        create, and only the (disabled) node lifecycle controller would remove it, so the
        taint is cleared here; status is written through the status subresource because
        create ignores it.
        """
        all_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **(labels or {})}
        node = k8s.V1Node(metadata=k8s.V1ObjectMeta(name=name, labels=all_labels), spec=k8s.V1NodeSpec())
        self.core.create_node(node)
        self.core.patch_node(name, {"spec": {"taints": None}})
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        resources = {"cpu": cpu, "memory": memory, "pods": pods}
        status = {
            "status": {
                "capacity": resources,
                "allocatable": resources,
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "KubeletReady",
                        "message": "drakit test node (no kubelet)",
                        "lastHeartbeatTime": now,
                        "lastTransitionTime": now,
                    }
                ],
            }
        }
        self.core.patch_node_status(name, status)
        node_dict: dict[str, Any] = self.api_client.sanitize_for_serialization(self.core.read_node(name))
        return node_dict

    @contextmanager
    def namespace(self, prefix: str = "t", labels: Mapping[str, str] | None = None) -> Iterator[str]:
        """A fresh namespace, ready for pods (its ``default`` ServiceAccount exists), deleted afterwards."""
        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        meta = k8s.V1ObjectMeta(name=name, labels=dict(labels or {}))
        self.core.create_namespace(k8s.V1Namespace(metadata=meta))
        try:
            self.wait_for(
                f"ServiceAccount {name}/default",
                lambda: self.get("v1", "ServiceAccount", "default", name),
                timeout=60,
            )
            yield name
        finally:
            with suppress(ApiException):
                self.core.delete_namespace(name)

    def close(self) -> None:
        self.api_client.close()


def _rejection(exc: Exception) -> Rejection:
    body = getattr(exc, "body", None)
    status = getattr(exc, "status", 0) or 0
    try:
        data = json.loads(body) if body else {}
    except ValueError:
        data = {"message": str(body)}
    causes = tuple(
        (c.get("field", ""), c.get("reason", ""), c.get("message", ""))
        for c in (data.get("details") or {}).get("causes") or []
    )
    if not causes:
        # Strict decoding errors (HTTP 400) carry no causes; the field paths are in the message.
        message = str(data.get("message", ""))
        causes = tuple(
            (m.group(2), "FieldValue" + m.group(1).title().replace(" ", ""), m.group(0))
            for m in _DECODE_FIELD.finditer(message)
        )
    return Rejection(
        code=int(data.get("code") or status),
        reason=str(data.get("reason", "")),
        message=str(data.get("message", "")),
        causes=causes,
    )
