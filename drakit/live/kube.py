"""The real API server behind :class:`drakit.live.client.ClusterClient`.

The only module that imports the ``kubernetes`` package, and only for what it does well:
loading kubeconfig (contexts, exec credential plugins, OIDC refresh, client certificates) and
in-cluster config, and its urllib3 connection pool.  Requests and responses bypass its
generated models: lists arrive as raw JSON and become wire dicts directly (its pydantic
models cost 12x the time and 2.7x the memory on 1,000 slices; docs/live.md has the
measurement).  Every failure passes through :meth:`KubeClient._call`, which turns transport
errors and non-2xx statuses into one :class:`ClusterError` each.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    SSLError,
)

from drakit.live.client import (
    FIELD_MANAGER,
    RESOURCE_V1,
    RESOURCES,
    ClusterError,
    ErrorCode,
    Obj,
    Page,
    Resource,
    ServerInfo,
    WatchEvent,
    parse_conflicts,
    resource_of,
    with_kind,
)
from drakit.live.config import ConnectOptions, Target, load_kubeconfig, resolve

_VERBS = {"GET": "get", "POST": "create", "PATCH": "patch", "PUT": "update", "DELETE": "delete"}


class KubeClient:
    """A ClusterClient on one kubeconfig context (or the in-cluster config)."""

    def __init__(self, target: Target) -> None:
        import yaml
        from kubernetes.client import ApiClient, Configuration
        from kubernetes.config import ConfigException, load_incluster_config
        from kubernetes.config.kube_config import _get_kube_config_loader

        config = Configuration()
        try:
            if target.in_cluster:
                load_incluster_config(client_configuration=config)
            else:
                loader = _get_kube_config_loader(
                    config_dict=load_kubeconfig(target.files), active_context=target.context, persist_config=False
                )
                loader.load_and_set(config)
                target = replace(target, context=str(loader.current_context["name"]))  # named in errors
        except ClusterError:
            raise
        except (ConfigException, OSError, ValueError, KeyError, TypeError, AttributeError, yaml.YAMLError) as e:
            raise ClusterError(ErrorCode.INVALID, f"{target.describe()}: {_one_line(str(e))}") from None
        self.target = target
        # One retry on a refused connection, none on reads: a verb answers or fails fast.
        config.retries = urllib3.Retry(total=1, connect=1, read=0, status=0, redirect=0)
        self.config = config
        self.server = str(config.host)
        self._api = ApiClient(config)
        self._pool = self._api.rest_client.pool_manager

    @classmethod
    def connect(cls, options: ConnectOptions) -> KubeClient:
        return cls(resolve(options))

    def close(self) -> None:
        self._api.close()

    # -- the protocol --------------------------------------------------------------------

    def server_info(self) -> ServerInfo:
        version = self._json("GET", "/version", what=("get", "version", None))
        served: set[str] = {r.kind for r in RESOURCES.values() if r.api_version == "v1"}
        try:
            group = self._json("GET", f"/apis/{RESOURCE_V1}", what=("get", RESOURCE_V1, None))
        except ClusterError as e:
            if e.code is not ErrorCode.NOT_FOUND:
                raise
            group = None
        if group is not None:
            names = {str(r.get("kind")) for r in group.get("resources") or [] if "/" not in str(r.get("name"))}
            served |= {k for k, r in RESOURCES.items() if r.api_version == RESOURCE_V1 and k in names}
        return ServerInfo(str(version.get("gitVersion") or ""), group is not None, frozenset(served))

    def list(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 500,
        continue_token: str = "",
    ) -> Page:
        r = resource_of(kind)
        query = _query(labelSelector=label_selector, fieldSelector=field_selector, limit=limit or "",
                       **{"continue": continue_token})
        body = self._json("GET", r.path(namespace), query, what=("list", r.plural, namespace))
        meta = body.get("metadata") or {}
        items = tuple(_strip(with_kind(o, r)) for o in body.get("items") or ())
        return Page(items, str(meta.get("resourceVersion") or ""), str(meta.get("continue") or ""))

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        r = resource_of(kind)
        try:
            return with_kind(self._json("GET", r.path(namespace, name), what=("get", r.plural, namespace)), r)
        except ClusterError as e:
            if e.code is ErrorCode.NOT_FOUND:
                return None
            raise

    def watch(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        resource_version: str = "",
        allow_bookmarks: bool = True,
        timeout_seconds: int = 300,
        label_selector: str = "",
    ) -> Iterator[WatchEvent]:
        r = resource_of(kind)
        query = _query(watch="1", resourceVersion=resource_version, labelSelector=label_selector,
                       allowWatchBookmarks="true" if allow_bookmarks else "", timeoutSeconds=timeout_seconds)
        # The server ends the stream after timeoutSeconds; the read timeout only catches a dead peer.
        response = self._call("GET", r.path(namespace), query, what=("watch", r.plural, namespace),
                              stream=True, read_timeout=timeout_seconds + self.target.timeout)
        return self._events(response, r, namespace)

    def apply(self, obj: Obj, *, field_manager: str = FIELD_MANAGER, dry_run: bool = False, force: bool = False) -> Obj:
        r, name, ns = _target(obj)
        query = _query(fieldManager=field_manager, force="true" if force else "false", dryRun="All" if dry_run else "")
        return self._json("PATCH", r.path(ns, name), query, body=obj, content_type="application/apply-patch+yaml",
                          what=("patch", r.plural, ns))

    def create(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        r, _, ns = _target(obj)
        query = _query(fieldManager=FIELD_MANAGER, dryRun="All" if dry_run else "")
        return self._json("POST", r.path(ns), query, body=obj, what=("create", r.plural, ns))

    def patch_status(self, kind: str, name: str, namespace: str | None, patch: Obj) -> Obj:
        r = resource_of(kind)
        return self._json("PATCH", r.path(namespace, name) + "/status", (), body=patch,
                          content_type="application/merge-patch+json", what=("patch", f"{r.plural}/status", namespace))

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        r = resource_of(kind)
        # Background: a Job's pods go with it (the API's default for batch/v1 Jobs orphans them).
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        try:
            self._call("DELETE", r.path(namespace, name), body=body, what=("delete", r.plural, namespace))
        except ClusterError as e:
            if e.code is not ErrorCode.NOT_FOUND:
                raise

    # -- the one place errors are translated -----------------------------------------------

    def _json(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]] = (),
        *,
        body: Obj | None = None,
        content_type: str = "application/json",
        what: tuple[str, str, str | None],
    ) -> Obj:
        response = self._call(method, path, query, body=body, content_type=content_type, what=what)
        try:
            data = json.loads(response.data)
        except ValueError:
            raise ClusterError(ErrorCode.SERVER, f"{self.server}{path}: the answer is not JSON") from None
        if not isinstance(data, dict):
            raise ClusterError(ErrorCode.SERVER, f"{self.server}{path}: the answer is not a JSON object")
        return data

    def _call(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]] = (),
        *,
        body: Obj | None = None,
        content_type: str = "application/json",
        what: tuple[str, str, str | None],
        stream: bool = False,
        read_timeout: float | None = None,
    ) -> Any:
        url = self.server + path + (f"?{urlencode(query)}" if query else "")
        headers = {"Accept": "application/json", "User-Agent": "drakit"}
        try:
            settings: dict[str, Any] = dict(self.config.auth_settings())  # refreshes exec/OIDC tokens when due
        except Exception as e:  # the library's refresh hooks raise whatever their plugin or provider did
            raise ClusterError(ErrorCode.UNAUTHORIZED, f"cannot refresh the credentials of {self.target.describe()}: "
                               f"{_one_line(str(e))}") from None
        for auth in settings.values():
            headers[auth["key"]] = str(auth["value"])
        if body is not None:
            headers["Content-Type"] = content_type
        timeout = urllib3.Timeout(connect=self.target.timeout, read=read_timeout or self.target.timeout)
        try:
            response = self._pool.request(
                method, url, body=json.dumps(body).encode() if body is not None else None, headers=headers,
                timeout=timeout, preload_content=not stream,
            )
        except MaxRetryError as e:
            raise self._transport(e.reason or e) from None
        except (SSLError, NewConnectionError, ConnectTimeoutError, ReadTimeoutError, ProtocolError, OSError) as e:
            raise self._transport(e) from None
        if response.status >= 400:
            data = response.data if not stream else response.read()
            raise self._status(response.status, data, method, what)
        return response

    def _transport(self, e: BaseException) -> ClusterError:
        text = _one_line(str(e))
        # urllib3's NewConnectionError subclasses ConnectTimeoutError: a refusal is no timeout.
        timed_out = isinstance(e, ConnectTimeoutError | ReadTimeoutError) and not isinstance(e, NewConnectionError)
        if timed_out or "timed out" in text:
            return ClusterError(ErrorCode.TIMEOUT, f"the API server at {self.server} did not answer within "
                                f"{self.target.timeout:g}s", hint="retry, or raise --request-timeout")
        if isinstance(e, SSLError) or "SSL" in type(e).__name__ or "CERTIFICATE" in text.upper():
            reason = text.split("] ", 1)[-1] if "] " in text else text
            return ClusterError(ErrorCode.TLS, f"TLS with the API server at {self.server} failed: {_tls_reason(reason)}",
                                hint=f"check the certificate-authority of {self.target.describe()}")
        why = "connection refused" if "refused" in text.lower() else text
        return ClusterError(ErrorCode.UNREACHABLE, f"cannot reach the API server at {self.server}: {why}",
                            hint=f"is the cluster of {self.target.describe()} running?")

    def _status(self, status: int, data: bytes, method: str, what: tuple[str, str, str | None]) -> ClusterError:
        try:
            body = json.loads(data)
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        message = _one_line(str(body.get("message") or data[:200].decode(errors="replace") or f"HTTP {status}"))
        verb, resource, namespace = what
        where = f" in namespace {namespace}" if namespace else (" cluster-wide" if resource in _NAMESPACED_PLURALS else "")
        if status == 401:
            return ClusterError(ErrorCode.UNAUTHORIZED, f"the API server at {self.server} rejected the credentials of "
                                f"{self.target.describe()} (401 Unauthorized: expired or invalid)", status=status,
                                hint="log in again or renew the token")
        if status == 403:
            return ClusterError(ErrorCode.FORBIDDEN, f"forbidden: may not {verb} {resource}{where} ({message})",
                                status=status, hint="grant it (drakit rbac prints the roles drakit needs)")
        if status == 404:
            return ClusterError(ErrorCode.NOT_FOUND, message, status=status)
        if status == 409:
            return ClusterError(ErrorCode.CONFLICT, message, status=status, conflicts=parse_conflicts(body))
        if status == 410:
            return ClusterError(ErrorCode.GONE, message, status=status)
        if status in (400, 422):
            return ClusterError(ErrorCode.INVALID, message, status=status)
        if status == 504 or (status == 500 and "timeout" in message.lower()):
            return ClusterError(ErrorCode.TIMEOUT, f"{method} {resource}: the API server timed out ({message})",
                                status=status)
        return ClusterError(ErrorCode.SERVER, f"{method} {resource}: HTTP {status}: {message}", status=status)

    # -- watch stream ------------------------------------------------------------------------

    def _events(self, response: Any, r: Resource, namespace: str | None) -> Iterator[WatchEvent]:
        buffer = b""
        try:
            for chunk in response.stream(None):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield _event(line, r)
            if buffer.strip():
                yield _event(buffer, r)
        except (ReadTimeoutError, ProtocolError, OSError) as e:
            if not isinstance(e, ReadTimeoutError):
                raise self._transport(e) from None
            raise ClusterError(ErrorCode.TIMEOUT, f"watch {r.plural}: the stream from {self.server} went silent") from None
        finally:
            response.release_conn()


_NAMESPACED_PLURALS = frozenset(r.plural for r in RESOURCES.values() if r.namespaced)


def _event(line: bytes, r: Resource) -> WatchEvent:
    data = json.loads(line)
    obj = data.get("object") or {}
    kind = str(data.get("type") or "")
    return WatchEvent(kind, obj if kind in ("ERROR", "BOOKMARK") else _strip(with_kind(obj, r)))


def _strip(obj: Obj) -> Obj:
    """The object as ``kubectl get -o yaml`` shows it: no managedFields (they double a slice's size)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        del meta["managedFields"]
    return obj


def _target(obj: Obj) -> tuple[Resource, str, str | None]:
    r = resource_of(str(obj.get("kind") or ""))
    meta = obj.get("metadata") or {}
    ns = str(meta.get("namespace") or "default") if r.namespaced else None
    return r, str(meta.get("name") or ""), ns


def _query(**params: Any) -> list[tuple[str, str]]:
    return [(k, str(v)) for k, v in params.items() if v not in ("", None)]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _tls_reason(text: str) -> str:
    for known in ("certificate verify failed", "wrong version number", "hostname mismatch", "self-signed certificate"):
        if known in text:
            return text[text.index(known):].split(" (_ssl")[0]
    return text
