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
    """The check trusts published memory: an L4 relabelled with 49Gi is admitted as a 49Gi device
    and the check passes (the inventory is the source of truth), while a profile that admits the
    24 GB devices as published fails it."""
    objects = cluster_objects()
    for o in objects:
        if o["kind"] == "ResourceSlice" and o["spec"]["nodeName"] == "l4-node-1":
            o["spec"]["devices"][0]["capacity"]["memory"]["value"] = "49Gi"
    table = trial_table(objects, profiles=None)
    relabelled = [r for r in table.rows if r.profile == "training-48g" and r.memory == "49Gi"]
    assert [(r.product, r.nodes, r.devices) for r in relabelled] == [("NVIDIA L4", ("l4-node-1",), 1)]
    assert table.passed
    objects = cluster_objects()
    from drakit.profiles import parse_profiles
    from drakit.profiles.loader import example_texts

    loose = ("apiVersion: drakit.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: training-48g\n"
             "spec:\n  vendor: nvidia\n  count: 2\n")
    pset = parse_profiles([(loose, "loose.yaml")], example_texts(), select=["training-48g", "evaluation"])
    table = trial_table(objects, pset)
    assert not table.passed
    assert [c.name for c in table.checks if not c.passed] == ["training excludes every 24 GB-class device"]


def test_render_and_json() -> None:
    table = _table()
    text = table.render_text()
    assert "training-48g  NVIDIA L4" in text and "[ok] evaluation prefers the smaller devices" in text
    data = table.to_json()
    assert data["passed"] is True and len(data["rows"]) == 4
