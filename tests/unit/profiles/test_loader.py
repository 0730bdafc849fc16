"""Bad profiles are rejected with file, line and field; extends and the four merge strategies."""

from __future__ import annotations

import pytest

from drakit.errors import InvalidInput
from drakit.profiles import parse_profiles
from drakit.profiles.loader import example_texts


def _errors(files: dict[str, str]) -> str:
    with pytest.raises(InvalidInput) as exc:
        parse_profiles([(text, name) for name, text in files.items()])
    return str(exc.value)


BASE = "apiVersion: drakit.dev/v1alpha1\nkind: Profile\n"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  memmory: {min: 48Gi}\n",
                     "p.yaml:6: Profile \"a\" is invalid: spec.memmory: Forbidden: unknown field (did you mean \"memory\"?)",
                     id="unknown-field"),
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  vendor: nvidia\n  memory:\n    min: 48Gi\n    max: 24Gi\n",
                     'p.yaml:9: Profile "a" is invalid: spec.memory.max: Invalid value: "24Gi": must not be less than '
                     "spec.memory.min (48Gi)", id="max-below-min"),
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  driver: gpu.acme.com\n",
                     'p.yaml:6: Profile "a" is invalid: spec.driver: Unsupported value: "gpu.acme.com": supported values:',
                     id="unknown-driver"),
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  memory: {min: 48}\n",
                     "p.yaml:6: Profile \"a\" is invalid: spec.memory.min: Invalid value: 48: Input should be a valid string", id="memory-int-not-string"),
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  memory: {min: '48'}\n",
                     'p.yaml:6: Profile "a" is invalid: spec.memory.min: Invalid value: "48": memory "48" needs an explicit unit',
                     id="memory-without-unit"),
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  minComputeCapability: 8.0\n",
                     "p.yaml:6: Profile \"a\" is invalid: spec.minComputeCapability: Invalid value: 8.0: write versions as quoted strings",
                     id="float-version"),
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  count: '2'\n",
                     'p.yaml:6: Profile "a" is invalid: spec.count: Invalid value: "2": Input should be a valid integer',
                     id="string-count"),
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  count: 1\n  count: 2\n",
                     "p.yaml:7: Profile \"<unnamed>\" is invalid: spec.count: Duplicate value", id="duplicate-key"),
        pytest.param(BASE + "metadata:\n  name: A_b\n", 'p.yaml:4: Profile "A_b" is invalid: metadata.name: Invalid value: "A_b": must be a DNS label',
                     id="bad-name"),
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  claim: per-node\n",
                     "spec.claim: Unsupported value: \"per-node\": supported values: 'per-pod' or 'shared'", id="bad-claim-mode"),
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  alternatives:\n    options:\n    - name: x\n    - name: x\n",
                     'p.yaml:9: Profile "a" is invalid: spec.alternatives.options[1].name: Duplicate value: "x"', id="duplicate-alternative"),
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  products: {allow: [A], exclude: [A]}\n",
                     "spec.products.exclude: Invalid value: [\"A\"]: names both allowed and excluded", id="allow-and-exclude"),
        pytest.param(BASE + "metadata:\n  name: a\nspec:\n  adminAccess: true\n  alternatives:\n    options: [{name: x}]\n",
                     'p.yaml:6: Profile "a" is invalid: spec.adminAccess: Forbidden: firstAvailable', id="admin-with-alternatives"),
        pytest.param("apiVersion: drakit.dev/v1\nkind: Profile\nmetadata:\n  name: a\n",
                     'p.yaml:1: Profile "a" is invalid: apiVersion: Unsupported value: "drakit.dev/v1"', id="wrong-api-version"),
        pytest.param(BASE + "metadata:\n  name: a\nextends: nope\n",
                     'p.yaml:5: Profile "a" is invalid: extends: Not found: "nope": no profile named', id="extends-unknown"),
    ],
)
def test_bad_profile_is_rejected_with_file_line_field(text: str, want: str) -> None:
    assert want in _errors({"p.yaml": text})


def test_extends_cycle_names_the_cycle_and_the_line() -> None:
    a = BASE + "metadata:\n  name: a\nextends: [b]\n"
    b = BASE + "metadata:\n  name: b\nextends:\n- c\n"
    c = BASE + "metadata:\n  name: c\nextends: a\n"
    msg = _errors({"a.yaml": a, "b.yaml": b, "c.yaml": c})
    assert 'c.yaml:5: Profile "c" is invalid: extends: Invalid value: "a": extends cycle: a -> b -> c -> a' in msg
    assert 'b.yaml:6: Profile "b" is invalid: extends[0]: Invalid value: "c": extends cycle: c -> a -> b -> c' in msg


def test_self_extension_is_a_cycle() -> None:
    assert "extends cycle: a -> a" in _errors({"a.yaml": BASE + "metadata:\n  name: a\nextends: a\n"})


def test_inherited_contradiction_is_reported_where_it_was_written() -> None:
    parent = BASE + "metadata:\n  name: parent\nspec:\n  memory:\n    min: 48Gi\n"
    child = BASE + "metadata:\n  name: child\nextends: parent\nspec:\n  memory:\n    max: 24Gi\n"
    msg = _errors({"parent.yaml": parent, "child.yaml": child})
    assert 'child.yaml:8: Profile "child" is invalid: spec.memory.max: Invalid value: "24Gi": must not be less than spec.memory.min (48Gi)' in msg


PARENT = BASE + """metadata:
  name: parent
spec:
  vendor: nvidia
  count: 2
  memory: {min: 48Gi, max: 96Gi}
  pod:
    priorityClassName: base
    tolerations: [{key: a, operator: Exists}]
"""


def _child(strategy: str) -> str:
    return BASE + f"""metadata:
  name: child
extends: parent
mergeStrategy: {strategy}
spec:
  count: 4
  memory: {{min: 80GB}}
  pod:
    tolerations: [{{key: b, operator: Exists}}]
"""


@pytest.mark.parametrize(
    ("strategy", "count", "memory", "priority", "tolerations"),
    [
        pytest.param("post_merge", 4, {"min": "80GB", "max": "96Gi"}, "base", ["b"], id="post_merge-child-wins-deep"),
        pytest.param("pre_merge", 2, {"min": "48Gi", "max": "96Gi"}, "base", ["a"], id="pre_merge-parent-wins-deep"),
        pytest.param("replace", 4, {"min": "80GB"}, None, ["b"], id="replace-whole-fields"),
        pytest.param("isnull", 2, {"min": "48Gi", "max": "96Gi"}, "base", ["a"], id="isnull-fills-only-empty"),
    ],
)
def test_merge_strategies(strategy: str, count: int, memory: dict[str, str], priority: str | None, tolerations: list[str]) -> None:
    pset = parse_profiles([(PARENT, "parent.yaml"), (_child(strategy), "child.yaml")])
    spec = pset.get("child").profile.spec
    assert spec.count == count
    assert spec.memory is not None and spec.memory.model_dump(exclude_none=True) == memory
    assert spec.pod is not None and spec.pod.priority_class_name == priority
    assert [t.key for t in spec.pod.tolerations or []] == tolerations
    assert spec.vendor == "nvidia"
    assert pset.get("child").chain == ("child", "parent")


def test_default_strategy_is_post_merge() -> None:
    text = _child("post_merge").replace("mergeStrategy: post_merge\n", "")
    spec = parse_profiles([(PARENT, "parent.yaml"), (text, "child.yaml")]).get("child").profile.spec
    assert spec.count == 4 and spec.memory is not None and spec.memory.max == "96Gi"


def test_provenance_points_to_the_parent_for_inherited_fields() -> None:
    rp = parse_profiles([(PARENT, "parent.yaml"), (_child("post_merge"), "child.yaml")]).get("child")
    assert str(rp.loc(("spec", "memory", "max"))) == "parent.yaml:8"
    assert str(rp.loc(("spec", "memory", "min"))) == "child.yaml:9"


def test_bundled_examples_load_and_extend_the_base() -> None:
    pset = parse_profiles([], example_texts(), select=["training-48g", "evaluation"])
    training = pset.get("training-48g")
    assert training.chain == ("training-48g", "nvidia-base")
    assert training.profile.spec.vendor == "nvidia" and training.profile.spec.memory is not None
    assert [p.name for p in pset.selected()] == ["training-48g", "evaluation"]
