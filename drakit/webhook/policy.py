"""The injector as admission policies: nothing to run on clusters that serve them (GA in 1.36).

Per profile, a ``MutatingAdmissionPolicy`` and its binding (``admissionregistration.k8s.io/v1``)
add the same claims :mod:`drakit.webhook.mutate` adds.  The claims go in with an
``ApplyConfiguration``: ``spec.resourceClaims`` and ``resources.claims`` are lists keyed by
``name``, so server-side-apply merging makes a reinvocation a no-op.  Tolerations are an atomic
list, which an apply configuration may not touch, so they are JSONPatch ``add`` operations,
guarded to add each one once.

A mutating policy cannot refuse anything, so one ``ValidatingAdmissionPolicy`` (which runs after
every mutation) carries the denials: an unknown profile, a stale profile digest, the same
vendor's device-plugin resource next to the claim, and a bare Pod that would slip past Kueue.
What CEL cannot do (converting legacy requests, the claim-conflict message, workloads whose
CRD schema the API server types) stays with the webhook.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from drakit.profiles.compile import PROFILE_LABEL, cel_string
from drakit.webhook.mutate import (
    BYPASSES_KUEUE,
    CLAIM_CONFLICT,
    CONTAINER_ANNOTATION,
    DIGEST_ANNOTATION,
    DIGEST_MISMATCH,
    DOUBLE_ALLOCATION,
    HIDE_GPUS_ENV,
    INJECTED_ANNOTATION,
    NO_CONTAINER,
    NVIDIA_DRIVER,
    UNKNOWN_PROFILE,
    Injector,
    Rule,
    source_text,
)

API = "admissionregistration.k8s.io/v1"
PREFIX = "drakit-"
GUARD_NAME = "drakit-profiles"
# Namespaces never touched: the control plane's own, and wherever the webhook itself runs.
SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease")

# Where each built-in kind keeps its pod spec, as the CEL field path below ``object``.
_SHAPES: dict[str, tuple[str, tuple[tuple[str, str, str], ...]]] = {
    # name: (pod spec path, rules (group, version, resource))
    "pods": ("spec", (("", "v1", "pods"),)),
    "templates": ("spec.template.spec", (
        ("batch", "v1", "jobs"), ("apps", "v1", "deployments"), ("apps", "v1", "statefulsets"),
        ("apps", "v1", "replicasets"), ("apps", "v1", "daemonsets"),
    )),
    "cronjobs": ("spec.jobTemplate.spec.template.spec", (("batch", "v1", "cronjobs"),)),
}


def _q(s: str) -> str:
    return cel_string(s)


def _namespace_selector(exclude: Sequence[str]) -> dict[str, Any]:
    return {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": list(exclude)}]}


def _rules(shape: str, operations: Sequence[str]) -> list[dict[str, Any]]:
    by_group: dict[str, list[str]] = {}
    for group, _, resource in _SHAPES[shape][1]:
        by_group.setdefault(group, []).append(resource)
    return [{"apiGroups": [g], "apiVersions": ["v1"], "operations": list(operations), "resources": rs}
            for g, rs in by_group.items()]


def _nested(path: str, inner: str) -> str:
    """``Object{spec: Object.spec{template: Object.spec.template{...inner...}}}`` for ``path``."""
    parts = path.split(".")
    text = inner
    for i in range(len(parts), 0, -1):
        typ = "Object." + ".".join(parts[:i])
        text = f"{parts[i - 1]}: {typ}{{{text}}}"
    return text


def _apply_configuration(rule: Rule, pod: str) -> str:
    f = rule.fragment
    entry = ", ".join(f"{k}: {_q(v)}" for k, v in f.resource_claim().items())
    t = f"Object.{pod}"
    spec = (f"resourceClaims: [{t}.resourceClaims{{{entry}}}], "
            f"containers: [{t}.containers{{name: variables.target, resources: {t}.containers.resources{{"
            f"claims: [{t}.containers.resources.claims{{name: {_q(f.claim_name)}}}]}}}}]")
    body = _nested(pod, spec)
    return f"Object{{metadata: Object.metadata{{annotations: {{{_q(INJECTED_ANNOTATION)}: {_q(rule.profile)}}}}}, {body}}}"


def _tolerations_patch(rule: Rule, pod: str) -> str | None:
    tols = [dict(t) for t in rule.fragment.tolerations]
    if not tols:
        return None
    ptr = "/" + pod.replace(".", "/") + "/tolerations"
    typ = f"Object.{pod}.tolerations"

    def value(t: dict[str, Any]) -> str:
        return f"{typ}{{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in t.items()) + "}"

    def same(t: dict[str, Any]) -> str:
        return " && ".join(f"(has(x.{k}) && x.{k} == {json.dumps(v)})" for k, v in t.items())

    have = f"has(object.{pod}.tolerations)"
    items = []
    for t in tols:
        items.append(f"({have} && object.{pod}.tolerations.exists(x, {same(t)})) ? [] : "
                     f"({have} ? [JSONPatch{{op: 'add', path: '{ptr}/-', value: {value(t)}}}] : [])")
    absent = f"{have} ? [] : [JSONPatch{{op: 'add', path: '{ptr}', value: [{', '.join(value(t) for t in tols)}]}}]"
    return " + ".join(f"({part})" for part in (absent, *items))


def _unhide_gpus_patch(pod: str) -> str:
    """Remove the target container's ``NVIDIA_VISIBLE_DEVICES=none`` (see mutate._drop_hidden_gpus)."""
    c = f"object.{pod}.containers[variables.ci]"
    at = f"{c}.env.map(e, e.name + '=' + (has(e.value) ? e.value : '')).indexOf({_q(HIDE_GPUS_ENV + '=none')})"
    ptr = "/" + pod.replace(".", "/") + "/containers/"
    return (f"variables.ci >= 0 && has({c}.env) && {at} >= 0 ? "
            f"[JSONPatch{{op: 'remove', path: '{ptr}' + string(variables.ci) + '/env/' + string({at})}}] : []")


def _same_source(var: str, rule: Rule) -> str:
    (key, value), = ((k, v) for k, v in rule.fragment.resource_claim().items() if k != "name")
    return f"has({var}.{key}) && {var}.{key} == {_q(value)}"


def mutating_policy(rule: Rule, shape: str, injector: Injector) -> list[dict[str, Any]]:
    """The policy and binding injecting ``rule`` into the kinds of ``shape``."""
    pod = _SHAPES[shape][0]
    name = f"{PREFIX}{rule.profile}-{shape}"
    target = (f"has(object.metadata.annotations) && {_q(CONTAINER_ANNOTATION)} in object.metadata.annotations ? "
              f"object.metadata.annotations[{_q(CONTAINER_ANNOTATION)}] : object.{pod}.containers[0].name")
    ours = (f"oldObject != null && has(oldObject.metadata.annotations) && "
            f"oldObject.metadata.annotations[?{_q(INJECTED_ANNOTATION)}].orValue('') == {_q(rule.profile)}")
    mutations: list[dict[str, Any]] = [
        {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": _apply_configuration(rule, pod)}}
    ]
    if rule.driver == NVIDIA_DRIVER:
        mutations.insert(0, {"patchType": "JSONPatch", "jsonPatch": {"expression": _unhide_gpus_patch(pod)}})
    tol = _tolerations_patch(rule, pod)
    if tol:
        mutations.append({"patchType": "JSONPatch", "jsonPatch": {"expression": tol}})
    spec: dict[str, Any] = {
        "failurePolicy": "Fail",
        "reinvocationPolicy": "IfNeeded",
        "matchConstraints": {
            "matchPolicy": "Equivalent",
            "namespaceSelector": _namespace_selector(SYSTEM_NAMESPACES),
            "objectSelector": {"matchLabels": {PROFILE_LABEL: rule.profile}},
            "resourceRules": _rules(shape, ("CREATE", "UPDATE")),
        },
        "matchConditions": [
            # CREATE injects; UPDATE only keeps what an earlier CREATE injected.
            {"name": "create-or-ours", "expression": f"request.operation == 'CREATE' || ({ours})"},
            # The digest guard (the validating policy) refuses a stale preset; do not mutate it.
            # A claim of the same name from another source: the guard names the conflict.
            {"name": "no-conflicting-claim", "expression":
                f"!has(object.{pod}.resourceClaims) || !object.{pod}.resourceClaims.exists(x, x.name == "
                f"{_q(rule.fragment.claim_name)} && !({_same_source('x', rule)}))"},
            {"name": "digest-current", "expression":
                f"!has(object.metadata.annotations) || object.metadata.annotations[?{_q(DIGEST_ANNOTATION)}]"
                f".orValue({_q(rule.digest)}) == {_q(rule.digest)}"},
            # A container annotation naming no container: the guard refuses it (an apply
            # configuration would add a container of that name instead).
            {"name": "target-exists", "expression":
                f"!has(object.metadata.annotations) || !({_q(CONTAINER_ANNOTATION)} in object.metadata.annotations) || "
                f"object.{pod}.containers.exists(c, c.name == object.metadata.annotations[{_q(CONTAINER_ANNOTATION)}])"},
        ],
        "variables": [{"name": "target", "expression": target},
                      {"name": "ci", "expression": f"object.{pod}.containers.map(c, c.name).indexOf(variables.target)"}],
        "mutations": mutations,
    }
    labels = {PROFILE_LABEL: rule.profile, "app.kubernetes.io/managed-by": "drakit"}
    return [
        {"apiVersion": API, "kind": "MutatingAdmissionPolicy", "metadata": {"name": name, "labels": labels}, "spec": spec},
        {"apiVersion": API, "kind": "MutatingAdmissionPolicyBinding", "metadata": {"name": name, "labels": labels},
         "spec": {"policyName": name}},
    ]


def _map_literal(values: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{_q(k)}: {json.dumps(v)}" for k, v in sorted(values.items())) + "}"


def guard_policy(injector: Injector) -> list[dict[str, Any]]:
    """The denials, for every served profile at once (after all mutations have run)."""
    rules = injector.rules
    known = sorted(rules)
    label = f"object.metadata.labels[{_q(PROFILE_LABEL)}]"
    pod_spec = ("object.kind == 'Pod' ? object.spec : object.kind == 'CronJob' ? "
                "object.spec.jobTemplate.spec.template.spec : object.spec.template.spec")
    legacy = _map_literal({n: list(r.legacy_resources()) for n, r in rules.items()})
    claim = _map_literal({n: r.fragment.claim_name for n, r in rules.items()})
    digests = _map_literal({n: r.digest for n, r in rules.items()})
    queued = [n for n, r in rules.items() if r.queue]
    sources = _map_literal({n: source_text(r.fragment.resource_claim()) for n, r in rules.items()})
    uses_legacy = ("(has(c.resources.limits) && c.resources.limits.exists(k, k in variables.legacy)) || "
                   "(has(c.resources.requests) && c.resources.requests.exists(k, k in variables.legacy))")
    validations: list[dict[str, Any]] = [
        {"expression": f"{label} in {json.dumps(known)}",
         "messageExpression": f"'drakit ({UNKNOWN_PROFILE}): {PROFILE_LABEL}=' + {label} + ': no such profile (served: {', '.join(known) or 'none'})"
                              "; fix the label, or serve the profile (drakit admission policy PROFILE...)'",
         "reason": "Forbidden"},
        {"expression": f"!({label} in variables.digests) || !has(object.metadata.annotations) || "
                       f"object.metadata.annotations[?{_q(DIGEST_ANNOTATION)}].orValue(variables.digests[{label}]) == "
                       f"variables.digests[{label}]",
         "messageExpression": f"'drakit ({DIGEST_MISMATCH}): {DIGEST_ANNOTATION} is ' + object.metadata.annotations[{_q(DIGEST_ANNOTATION)}] + "
                              f"' but profile ' + {label} + ' is now ' + variables.digests[{label}] + "
                              "'; regenerate the preset or manifest from the profile the cluster serves'",
         "reason": "Forbidden"},
        {"expression": f"!({label} in variables.legacy_of) || !variables.pod.containers.exists(c, has(c.resources) && "
                       f"has(c.resources.claims) && c.resources.claims.exists(x, x.name == variables.claim_of[{label}]) && "
                       f"({uses_legacy}))",
         "messageExpression": f"'drakit ({DOUBLE_ALLOCATION}): a container asks for ' + variables.legacy.join(', ') + ' from the device plugin and "
                              f"profile ' + {label} + ' claims the same devices: the pod would be allocated the same GPUs "
                              "twice; remove the device-plugin resource (the claim replaces it)'",
         "reason": "Forbidden"},
    ]
    validations.append({
        "expression": f"!({label} in variables.claim_of) || !has(variables.pod.resourceClaims) || "
                      f"variables.pod.resourceClaims.all(x, x.name != variables.claim_of[{label}] || "
                      "(has(x.resourceClaimTemplateName) ? 'template ' + x.resourceClaimTemplateName : "
                      "'claim ' + (has(x.resourceClaimName) ? x.resourceClaimName : '')) == "
                      f"string(variables.source_of[{label}]))",
        "messageExpression": f"'drakit ({CLAIM_CONFLICT}): resourceClaims already has ' + string(variables.claim_of[{label}]) + "
                             f"' with another source, profile ' + {label} + ' references ' + "
                             f"string(variables.source_of[{label}]) + '; rename the existing claim or drop the profile label'",
        "reason": "Forbidden"})
    named = f"object.metadata.annotations[{_q(CONTAINER_ANNOTATION)}]"
    validations.append({
        "expression": f"!has(object.metadata.annotations) || !({_q(CONTAINER_ANNOTATION)} in object.metadata.annotations) || "
                      f"variables.pod.containers.exists(c, c.name == {named})",
        "messageExpression": f"'drakit ({NO_CONTAINER}): {CONTAINER_ANNOTATION}=' + {named} + ': the pod spec has no such "
                             "container (have ' + variables.pod.containers.map(c, c.name).join(', ') + ')'",
        "reason": "Forbidden"})
    if queued and not injector.kueue_pods:
        validations.append({
            "expression": f"object.kind != 'Pod' || !({label} in {json.dumps(sorted(queued))}) || "
                          f"(has(variables.pod.resourceClaims) && variables.pod.resourceClaims.exists(x, x.name == variables.claim_of[{label}]))",
            "messageExpression": f"'drakit ({BYPASSES_KUEUE}): profile ' + {label} + ' routes to a Kueue queue, which counts "
                                 "devices from the workload\\'s pod template, not from Pods; submit a Job with the label, "
                                 "or enable Kueue\\'s pod integration'",
            "reason": "Forbidden"})
    spec = {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "matchPolicy": "Equivalent",
            "namespaceSelector": _namespace_selector(SYSTEM_NAMESPACES),
            "objectSelector": {"matchExpressions": [{"key": PROFILE_LABEL, "operator": "Exists"}]},
            "resourceRules": [r for shape in _SHAPES for r in _rules(shape, ("CREATE",))],
        },
        "variables": [
            {"name": "pod", "expression": pod_spec},
            {"name": "legacy_of", "expression": legacy},
            {"name": "claim_of", "expression": claim},
            {"name": "digests", "expression": digests},
            {"name": "source_of", "expression": sources},
            {"name": "legacy", "expression": f"{label} in variables.legacy_of ? variables.legacy_of[{label}] : []"},
        ],
        "validations": validations,
    }
    labels = {"app.kubernetes.io/managed-by": "drakit"}
    return [
        {"apiVersion": API, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": GUARD_NAME, "labels": labels},
         "spec": spec},
        {"apiVersion": API, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": GUARD_NAME, "labels": labels},
         "spec": {"policyName": GUARD_NAME, "validationActions": ["Deny"]}},
    ]


def admission_policies(injector: Injector) -> list[dict[str, Any]]:
    """Every object ``drakit admission policy`` emits, in apply order (the guard first)."""
    out = guard_policy(injector)
    for rule in injector.rules.values():
        for shape in _SHAPES:
            if shape == "pods" and rule.queue and not injector.kueue_pods:
                continue  # Kueue would not count it: the guard refuses such a Pod instead
            out += mutating_policy(rule, shape, injector)
    return out
