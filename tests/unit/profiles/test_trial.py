"""The platform trial on the embedded demo inventory."""

from __future__ import annotations

from drakit.demo import cluster_objects
from drakit.profiles.trial import TrialTable, trial_table


def _table() -> TrialTable:
    return trial_table(cluster_objects())


def test_training_excludes_every_24gb_device_and_evaluation_prefers_small() -> None:
    table = _table()
    assert table.passed, table.render_text()
    rows = {(r.profile, r.product): r for r in table.rows}
    train_l4 = rows[("training-48g", "NVIDIA L4")]
    assert not train_l4.eligible and train_l4.reason == "memory 23034Mi < 48Gi" and train_l4.devices == 8
    assert rows[("training-48g", "NVIDIA H100 80GB HBM3")].eligible
    assert (rows[("evaluation", "NVIDIA L4")].preference, rows[("evaluation", "NVIDIA L4")].option) == (1, "small")
    assert (rows[("evaluation", "NVIDIA H100 80GB HBM3")].preference,
            rows[("evaluation", "NVIDIA H100 80GB HBM3")].option) == (2, "large")


def test_checks_fail_when_training_admits_a_small_device() -> None:
    """The checks can fail: selectors that admit everything are caught by the profile's own bounds."""
    objects = cluster_objects()
    for o in objects:
        if o["kind"] == "ResourceSlice" and o["spec"]["nodeName"] == "l4-node-1":
            o["spec"]["devices"][0]["capacity"]["memory"]["value"] = "20Gi"
    table = trial_table(objects, profiles=None)
    assert table.passed  # still fine: 20Gi is excluded
    table = trial_table(objects, profiles=None, evaluate=lambda expression, driver, device: True)
    assert not table.passed
    failed = [c.name for c in table.checks if not c.passed]
    assert failed[0] == "training-48g excludes every device below 48Gi"
    assert "training-48g: compiled CEL says what the profile means" in failed
    assert "evaluation keeps each of its alternatives" in failed  # everything is taken by the first choice


def test_render_and_json() -> None:
    table = _table()
    text = table.render_text()
    assert "training-48g  NVIDIA L4" in text and "[ok] evaluation prefers the smaller devices" in text
    data = table.to_json()
    assert data["passed"] is True and len(data["rows"]) == 4
