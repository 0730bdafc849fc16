"""Catalog loading, compile and warnings: bad input is one line with file:line and the field path."""

from __future__ import annotations

from pathlib import Path

import pytest

from drakit.errors import InvalidInput
from drakit.queues import compile_catalog, load_catalog_text, setup_of
from drakit.queues.lint import catalog_warnings

EXAMPLES = sorted((Path(__file__).parents[3] / "drakit" / "queues" / "examples").glob("*.yaml"))
HEAD = "apiVersion: drakit.dev/v1alpha1\nkind: QueueCatalog\nmetadata: {name: c}\nspec:\n"


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_compile(path: Path) -> None:
    lc = load_catalog_text(path.read_text(), path.name)
    docs = compile_catalog(lc.catalog)
    assert docs[-1]["kind"] == "Configuration" and set(docs[-1]) == {"apiVersion", "kind", "resources"}
    assert {d["kind"] for d in docs[:-1]} <= {"ResourceFlavor", "Cohort", "WorkloadPriorityClass", "ClusterQueue", "LocalQueue"}
    setup_of(lc.catalog)


@pytest.mark.parametrize(
    ("body", "want"),
    [
        pytest.param("  queues: [{name: q, quotaz: []}]\n", "c.yaml:5: QueueCatalog \"c\": spec.queues[0].quotaz: unknown field",
                     id="unknown-field"),
        pytest.param("  cohorts: [{name: a, parent: b}, {name: b, parent: a}]\n  queues: [{name: q}]\n",
                     "spec.cohorts[0].parent: Invalid value: \"b\": cohorts form a cycle: a -> b -> a", id="cohort-cycle"),
        pytest.param("  queues: [{name: q, quotas: [{resource: gpu, nominal: 1}]}]\n",
                     "spec.queues[0].quotas[0].resource: Not found: \"gpu\"", id="quota-for-unknown-resource"),
        pytest.param("  queues: [{name: q}]\n  routing: {default: nope}\n", "spec.routing.default: Not found: \"nope\"",
                     id="default-queue-missing"),
        pytest.param("  queues: [{name: q, quotas: [{resource: cpu, nominal: 1, borrowingLimit: 1}]}]\n",
                     "spec.queues[0].quotas[0].borrowingLimit: Forbidden: borrowingLimit needs a cohort", id="borrowing-without-cohort"),
    ],
)
def test_bad_catalogs_are_one_line_with_the_path(body: str, want: str) -> None:
    with pytest.raises(InvalidInput) as e:
        load_catalog_text(HEAD + body, "c.yaml")
    assert want in str(e.value)
    assert all(line.startswith("c.yaml:") for line in str(e.value).splitlines())


def test_warnings_unused_class_rule_matching_nothing_missing_namespace() -> None:
    text = HEAD + (
        "  resources: [{name: gpu, deviceClasses: [big.gpu.nvidia.com]}]\n"
        "  queues: [{name: q, namespaces: [team-a], quotas: [{resource: gpu, nominal: 2}]}]\n"
        "  routing: {rules: [{match: {namespace: team-b}, queue: q}]}\n")
    lc = load_catalog_text(text, "c.yaml")
    lines = [str(w) for w in catalog_warnings(lc, {"small": ["small.gpu.nvidia.com"]}, ["team-b"])]
    assert any("spec.queues[0].quotas[0].resource: quota for \"gpu\" whose DeviceClasses" in w for w in lines)
    assert any("spec.routing.rules[0].match.namespace: matches nothing: queue \"q\" does not admit" in w for w in lines)
    assert any("spec.queues[0].namespaces[0]: namespace \"team-a\" does not exist" in w for w in lines)
    assert all(w.startswith("c.yaml:") and "\n" not in w for w in lines)


@pytest.mark.parametrize(
    ("obj", "path"),
    [
        pytest.param({"kind": "ClusterQueue", "metadata": {"name": "q"},
                      "spec": {"admissionChecksStrategy": {"admissionChecks": [{"name": "prov"}]}}},
                     "spec.admissionChecksStrategy", id="admission-checks"),
        pytest.param({"kind": "ResourceFlavor", "metadata": {"name": "f"}, "spec": {"topologyName": "rack"}},
                     "spec.topologyName", id="topology-aware"),
        pytest.param({"kind": "Configuration", "metadata": {"name": "c"}, "fairSharing": {}}, "fairSharing",
                     id="fair-sharing-on"),
        pytest.param({"kind": "Configuration", "metadata": {"name": "c"}, "waitForPodsReady": {"timeout": "5m"}},
                     "waitForPodsReady", id="wait-for-pods-ready"),
    ],
)  # fmt: skip
def test_kueue_settings_the_engine_does_not_model_are_refused(obj: dict, path: str) -> None:
    from drakit.queues.admission import NotModelled
    from drakit.queues.kueue import setup_from_objects

    with pytest.raises(NotModelled, match=f": {path}: .* is not modelled"):
        setup_from_objects([obj])


def test_a_queue_weight_without_fair_sharing_switched_on_is_accepted() -> None:
    from drakit.queues.kueue import setup_from_objects

    cq = {"kind": "ClusterQueue", "metadata": {"name": "q"}, "spec": {"fairSharing": {"weight": "2"}}}
    assert [c.name for c in setup_from_objects([cq]).cluster_queues] == ["q"]


def test_partial_admission_is_refused() -> None:
    from drakit.queues.admission import NotModelled
    from drakit.queues.kueue import MIN_PARALLELISM, workload_from_job

    job = {"metadata": {"name": "j", "namespace": "ns", "annotations": {MIN_PARALLELISM: "2"}},
           "spec": {"parallelism": 4, "template": {"spec": {"containers": [{"name": "c"}]}}}}
    with pytest.raises(NotModelled, match="partial admission is not modelled"):
        workload_from_job(job, {})
