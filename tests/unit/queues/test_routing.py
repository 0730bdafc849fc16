"""Routing: first matching rule wins, every field a rule sets must match, a queue never gets a namespace it refuses."""

from __future__ import annotations

import pytest

from drakit.queues import load_catalog_text
from drakit.queues.routing import route

CATALOG = """
apiVersion: drakit.dev/v1alpha1
kind: QueueCatalog
metadata: {name: r}
spec:
  queues:
    - {name: training, namespaces: [team-a]}
    - {name: batch}
    - {name: research, namespaces: [team-b]}
  routing:
    rules:
      - {match: {profile: training-48g, namespace: team-a}, queue: training}
      - {match: {labels: {tier: batch}}, queue: batch}
      - {match: {profile: training-48g}, queue: research}
    default: training
"""


@pytest.mark.parametrize(
    ("profile", "namespace", "labels", "queue", "rule"),
    [
        pytest.param("training-48g", "team-a", {}, "training", 0, id="all-fields-match"),
        pytest.param("training-48g", "team-a", {"tier": "batch"}, "training", 0, id="first-match-wins"),
        pytest.param("inference", "team-a", {"tier": "batch"}, "batch", 1, id="labels"),
        pytest.param("training-48g", "team-b", {}, "research", 2, id="namespace-differs"),
        pytest.param("training-48g", "team-c", {}, None, None, id="research-refuses-namespace-and-default-too"),
        pytest.param(None, "team-a", {}, "training", None, id="default"),
    ],
)
def test_route(profile: str | None, namespace: str, labels: dict[str, str], queue: str | None, rule: int | None) -> None:
    got = route(load_catalog_text(CATALOG, "r.yaml").catalog, profile=profile, namespace=namespace, labels=labels)
    assert (got.queue, got.rule) == (queue, rule)
