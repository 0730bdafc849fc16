"""The hostile-input corpus: classes of input a new user (or a fuzzer) feeds drakit.

Each entry writes one input into a folder and returns its path.  The classes, not the
examples, are the point: alias expansion, nesting, endless and binary streams, encodings,
keys, numbers outside what JSON or int64 carry, wrong types at every position of a valid
bundle, values that type-check but make no sense (negative and huge counts, bad quantities,
versions, selectors), and scenarios with NaN, infinities and huge sizes.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CLAIM = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "train", "namespace": "ml"},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.example.com", "count": 1,
        "selectors": [{"cel": {"expression": "device.attributes['gpu.example.com'].model == 'a'"}}]}}],
        "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/model"}]}},
}
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}}}
SLICE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
    "spec": {"driver": "gpu.example.com", "nodeName": "n1",
             "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
             "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a"}, "v": {"version": "1.2.3"}},
                          "capacity": {"memory": {"value": "16Gi"}}}]},
}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train", "namespace": "ml"},
       "spec": {"containers": [{"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "train"}]}}
BASE = [CLASS, NODE, SLICE, CLAIM, POD]

SCENARIO = {
    "apiVersion": "drakit.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "s"},
    "spec": {"seed": 7, "kubernetesVersion": "1.37", "deviceClasses": ["gpu.nvidia.com"],
             "nodes": [{"count": 2, "template": "h100-8x", "namePrefix": "h-"}],
             "workloads": [{"name": "w", "recipe": "inference", "count": 2, "interval": 60, "duration": 600,
                            "resources": {"cpu": "2", "memory": "8Gi"},
                            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}]},
}
SCENARIO_TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                     "metadata": {"name": "one-gpu", "namespace": "default"},
                     "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                         "deviceClassName": "gpu.nvidia.com"}}]}}}}


ALL = None


@dataclass(frozen=True)
class Case:
    """One hostile input: ``make(folder) -> path``.

    ``refused_by``: the commands that must refuse it with a one-line error naming the input
    (``ALL``: every command).  Every command must answer every case without a traceback,
    within the time and memory bounds, with a documented exit code.
    """

    id: str
    make: Callable[[Path], str]
    refused_by: frozenset[str] | None = ALL


def _text(name: str, text: str | bytes) -> Callable[[Path], str]:
    def make(folder: Path) -> str:
        p = folder / name
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
        return str(p)

    return make


def _docs(name: str, docs: list[Any]) -> Callable[[Path], str]:
    """Dumped when the case runs, not when the corpus is built: every test process (each xdist
    worker) builds the whole corpus at collection, and the big documents cost seconds to dump."""

    text: list[str] = []

    def make(folder: Path) -> str:
        if not text:
            text.append(yaml.safe_dump_all(docs, sort_keys=False))
        return _text(name, text[0])(folder)

    return make


def _bomb(levels: int = 9, width: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        refs = ", ".join([f"*a{i - 1}"] * width)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n" + "\n".join("  " + x for x in lines) + "\n"


def _mapping_bomb() -> str:
    """Billion laughs built from mappings inside a ResourceClaim's opaque config."""
    lines = ["x0: &x0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}"]
    for i in range(1, 10):
        lines.append(f"x{i}: &x{i} {{a: *x{i - 1}, b: *x{i - 1}, c: *x{i - 1}, d: *x{i - 1}, e: *x{i - 1}, "
                     f"f: *x{i - 1}, g: *x{i - 1}, h: *x{i - 1}}}")
    body = "\n".join("          " + x for x in lines)
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
            "    config:\n    - opaque:\n        driver: gpu.example.com\n        parameters:\n" + body + "\n")


def _with(doc: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    cur: Any = out
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return out


def _paths(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if path:
        yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))


def _wrong_type(value: Any) -> Any:
    """A value of another JSON type than ``value``'s."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, int | float):
        return "seven"
    if isinstance(value, str):
        return [7]  # not a bare number: quantities accept JSON numbers as the API server does
    if isinstance(value, list):
        return {"not": "a list"}
    return ["not", "an", "object"]


def wrong_type_cases() -> list[Case]:
    """Every position of every base document, replaced by a value of a wrong type."""
    out: list[Case] = []
    for doc in BASE:
        for path, value in _paths(doc):
            if path[0] in ("apiVersion", "kind"):
                continue
            bad = _with(doc, path, _wrong_type(value))
            rest = [d for d in BASE if d is not doc]
            ident = f"type-{doc['kind']}-{'.'.join(map(str, path))}"
            out.append(Case(ident, _docs("bundle.yaml", [*rest, bad])))
    return out


# (id, document, path, value, who must refuse it): "door" = every command (strict decoding refuses
# it), "validate" = API-server validation does (validate and trial), "" = only a sane answer.
SEMANTIC: list[tuple[str, dict[str, Any], tuple[str | int, ...], Any, str]] = [
    ("count-negative", CLAIM, ("spec", "devices", "requests", 0, "exactly", "count"), -1, "validate"),
    ("count-zero", CLAIM, ("spec", "devices", "requests", 0, "exactly", "count"), 0, ""),
    ("count-int64-max", CLAIM, ("spec", "devices", "requests", 0, "exactly", "count"), 2**63 - 1, ""),
    ("count-beyond-int64", CLAIM, ("spec", "devices", "requests", 0, "exactly", "count"), 2**64 + 1, "door"),
    ("count-float", CLAIM, ("spec", "devices", "requests", 0, "exactly", "count"), 1.5, "door"),
    ("allocation-mode", CLAIM, ("spec", "devices", "requests", 0, "exactly", "allocationMode"), "Some", "validate"),
    ("constraint-unknown-request", CLAIM, ("spec", "devices", "constraints", 0, "requests"), ["nope"], "validate"),
    ("selector-syntax", CLAIM, ("spec", "devices", "requests", 0, "exactly", "selectors", 0, "cel", "expression"),
     "device.attributes[[[(", "validate"),
    # error recovery: every error reported up to cel-go's limits, deep nesting after the first
    ("selector-syntax-many", CLAIM, ("spec", "devices", "requests", 0, "exactly", "selectors", 0, "cel", "expression"),
     "1 " + "+ * " * 150, "validate"),
    ("selector-syntax-deep", CLAIM, ("spec", "devices", "requests", 0, "exactly", "selectors", 0, "cel", "expression"),
     ")" + "(" * 300 + "1", "validate"),
    ("selector-not-bool", CLAIM, ("spec", "devices", "requests", 0, "exactly", "selectors", 0, "cel", "expression"),
     "1 + 1", "validate"),
    ("selector-huge", CLAIM, ("spec", "devices", "requests", 0, "exactly", "selectors", 0, "cel", "expression"),
     " && ".join(["true"] * 20000), ""),
    ("request-name-empty", CLAIM, ("spec", "devices", "requests", 0, "name"), "", "validate"),
    ("request-name-escape", CLAIM, ("spec", "devices", "requests", 0, "name"), "\x1b[31mred", "validate"),
    ("quantity-word", SLICE, ("spec", "devices", 0, "capacity", "memory", "value"), "lots", "door"),
    ("quantity-huge-exponent", SLICE, ("spec", "devices", 0, "capacity", "memory", "value"), "1e1000000000", ""),
    ("quantity-huge-suffix", SLICE, ("spec", "devices", 0, "capacity", "memory", "value"),
     "9" * 400 + "Ei", ""),
    ("version-bad", SLICE, ("spec", "devices", 0, "attributes", "v", "version"), "not.a.version", "validate"),
    ("generation-negative", SLICE, ("spec", "pool", "generation"), -5, ""),
    ("slice-count-huge", SLICE, ("spec", "pool", "resourceSliceCount"), 2**62, ""),
    ("devices-many-names", SLICE, ("spec", "devices"), [{"name": "d"}] * 5, "validate"),
    ("api-version-future", CLAIM, ("apiVersion",), "resource.k8s.io/v2", "door"),
    ("api-version-alpha", CLAIM, ("apiVersion",), "resource.k8s.io/v1alpha3", "door"),
    ("kind-unknown-core", POD, ("kind",), "Pdo", "door"),
    ("name-too-long", CLAIM, ("metadata", "name"), "x" * 100_000, "validate"),
]


VALIDATING = frozenset({"validate", "trial", "allocate", "explain", "match", "lint", "simulate", "profile-eligible",
                        "describe", "describe-class", "get-devices", "profile-apply-to"})
"""Commands that validate their input at the door (cel eval does not: its input is one device, not objects)."""


def semantic_cases() -> list[Case]:
    out: list[Case] = []
    for ident, doc, path, value, who in SEMANTIC:
        rest = [d for d in BASE if d is not doc]
        refused = ALL if who == "door" else VALIDATING if who == "validate" else frozenset()
        out.append(Case(f"value-{ident}", _text("bundle.json", json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": [*rest, _with(doc, path, value)]})), refused))
    return out


def _renamed(doc: dict[str, Any], path: tuple[str | int, ...], new: str) -> dict[str, Any]:
    """``doc`` with the key at ``path`` spelled ``new`` instead (same value, same place)."""
    out = copy.deepcopy(doc)
    parent: Any = out
    for p in path[:-1]:
        parent = parent[p]
    parent[new] = parent.pop(path[-1])
    return out


SNAKE_CASE: list[tuple[str, dict[str, Any], tuple[str | int, ...], str]] = [
    ("pool", SLICE, ("spec", "pool", "resourceSliceCount"), "resource_slice_count"),
    ("slice-node", SLICE, ("spec", "nodeName"), "node_name"),
    ("request", CLAIM, ("spec", "devices", "requests", 0, "exactly", "deviceClassName"), "device_class_name"),
    ("pod", POD, ("spec", "resourceClaims"), "resource_claims"),
]


def snake_case_cases() -> list[Case]:
    """Field names as drakit's models spell them in Python: unknown fields for the API server
    (kubectl's strict decoding), so every command refuses them at the door."""
    return [Case(f"snake-case-{ident}", _text("bundle.json", json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": [*(d for d in BASE if d is not doc), _renamed(doc, path, new)]})))
        for ident, doc, path, new in SNAKE_CASE]


def _scenario(name: str, path: tuple[str | int, ...], value: Any) -> Case:
    text = yaml.safe_dump_all([_with(SCENARIO, path, value), SCENARIO_TEMPLATE])
    text = text.replace("__NAN__", ".nan").replace("__INF__", ".inf")
    nonfinite = value in ("__NAN__", "__INF__")  # not JSON: every reader refuses it
    return Case(f"scenario-{name}", _text("scenario.yaml", text), ALL if nonfinite else frozenset({"simulate"}))


SCENARIO_CASES = [
    _scenario("nan-duration", ("spec", "workloads", 0, "duration"), "__NAN__"),
    _scenario("inf-replicas", ("spec", "workloads", 0, "count"), "__INF__"),
    _scenario("nan-count", ("spec", "nodes", 0, "count"), "__NAN__"),
    _scenario("huge-nodes", ("spec", "nodes", 0, "count"), 10**12),
    _scenario("huge-replicas", ("spec", "workloads", 0, "count"), 10**15),
    _scenario("negative-replicas", ("spec", "workloads", 0, "count"), -3),
    _scenario("bad-version", ("spec", "kubernetesVersion"), "1.99"),
    _scenario("bad-template", ("spec", "nodes", 0, "template"), "../../etc/passwd"),
    _scenario("wrong-type-workloads", ("spec", "workloads"), "all of them"),
]


def stream_cases() -> list[Case]:
    """Encodings, binary and framing: the reader's classes."""
    return [
        Case("alias-bomb-sequences", _text("bomb.yaml", _bomb())),
        Case("alias-bomb-mappings", _text("bomb.yaml", _mapping_bomb())),
        Case("alias-recursive", _text("loop.yaml", "apiVersion: v1\nkind: Pod\nmetadata: &m\n  name: x\n  labels: *m\n")),
        Case("alias-undefined", _text("alias.yaml", "a: *nope\n")),
        Case("deep-flow-yaml", _text("deep.yaml", "a: " + "[" * 5000 + "]" * 5000 + "\n")),
        Case("deep-block-yaml", _text("deep.yaml", "".join(" " * i + "a:\n" for i in range(400)) + " " * 400 + "b: 1\n")),
        Case("deep-sequence-yaml", _text("deep.yaml", "- " * 300 + "x\n")),
        Case("deep-json", _text("deep.json", "[" * 100_000 + "]" * 100_000)),
        Case("deep-json-object", _text("deep.json", '{"a":' * 3000 + "1" + "}" * 3000)),
        Case("binary", _text("bin.yaml", bytes(range(256)) * 64)),
        Case("nul-bytes", _text("nul.yaml", b"apiVersion: v1\x00\nkind: Pod\n")),
        Case("utf16", _text("u16.yaml", "apiVersion: v1\nkind: Pod\n".encode("utf-16"))),
        Case("latin1", _text("l1.yaml", "metadata:\n  name: caf\xe9\n".encode("latin-1"))),
        Case("control-chars", _text("ctl.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: \"\\e[2J\x07\"}\n")),
        Case("duplicate-key", _text("dup.yaml", yaml.safe_dump(CLAIM) + "kind: Pod\n")),
        Case("duplicate-key-json", _text("dup.json", json.dumps(CLAIM)[:-1] + ', "kind": "Pod"}')),
        Case("duplicate-key-bool-alias", _text("dup.yaml", "y: 1\ntrue: 2\n")),
        Case("nan-json", _text("nan.json", json.dumps({**CLAIM, "x": float("nan")}))),
        Case("inf-yaml", _text("inf.yaml", yaml.safe_dump(CLAIM).replace("count: 1", "count: .inf"))),
        Case("yaml-1.1-bool-name", _text("bool.yaml", yaml.safe_dump(CLAIM).replace("name: gpu\n", "name: y\n"))),
        Case("big-int-yaml", _text("big.yaml", yaml.safe_dump(CLAIM).replace("count: 1", "count: 99999999999999999999"))),
        Case("non-scalar-key", _text("key.yaml", "? [a, b]\n: c\n")),
        Case("unknown-tag", _text("tag.yaml", "apiVersion: !Ref v1\nkind: !!python/object:os.system Pod\n"
                                  "metadata: !!map {name: !!binary Zm9v}\nspec: !!int nope\n")),
        Case("scalar-document", _text("scalar.yaml", "just a string\n")),
        Case("list-document", _text("list.yaml", "- 1\n- 2\n")),
        Case("json-array", _text("array.json", json.dumps(BASE))),
        Case("json-garbage", _text("bad.json", '{"apiVersion": "v1", "kind": ')),
        Case("list-items-not-list", _text("l.yaml", "apiVersion: v1\nkind: List\nitems: 3\n")),
        Case("list-items-scalars", _text("l.yaml", "apiVersion: v1\nkind: List\nitems: [1, two, null]\n")),
        Case("many-documents", _text("many.yaml", "---\nkind: Nope\n" * 5000)),
        Case("many-empty-documents", _text("empty.yaml", "---\n" * 20_000)),
        Case("long-line", _text("long.yaml", "a: " + "x" * 5_000_000 + "\n")),
        Case("missing-kind", _text("nokind.yaml", "apiVersion: v1\nmetadata: {name: x}\n")),
        Case("tabs", _text("tabs.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n")),
        Case("empty-file", _text("empty.yaml", "")),
        Case("oversized-sparse", _sparse),
        Case("missing-file", lambda folder: str(folder / "nope.yaml")),
        Case("symlink-loop", _symlink_loop),
        Case("dangling-symlink", _dangling),
        Case("directory-with-loop", _dir_with_loop, VALIDATING),  # the one readable claim has an invalid name
        Case("fifo-without-writer", _fifo),
        Case("dev-zero", lambda folder: "/dev/zero"),
        Case("directory-as-device", lambda folder: str(folder)),
    ]


def _sparse(folder: Path) -> str:
    p = folder / "big.yaml"
    with open(p, "wb") as fh:
        fh.truncate(100 * 1000 * 1000)
    return str(p)


def _symlink_loop(folder: Path) -> str:
    a, b = folder / "a.yaml", folder / "b.yaml"
    os.symlink(b, a)
    os.symlink(a, b)
    return str(a)


def _dangling(folder: Path) -> str:
    p = folder / "dangling.yaml"
    os.symlink(folder / "gone.yaml", p)
    return str(p)


def _dir_with_loop(folder: Path) -> str:
    d = folder / "manifests"
    d.mkdir()
    (d / "claim.yaml").write_text(yaml.safe_dump(_with(CLAIM, ("spec", "devices", "requests", 0, "name"), "BAD")))
    os.symlink(d, d / "again")
    os.symlink(d / "x.yaml", d / "y.yaml")
    os.symlink(d / "y.yaml", d / "x.yaml")
    os.mkfifo(d / "pipe.yaml")
    return str(d)


def _fifo(folder: Path) -> str:
    p = folder / "pipe.yaml"
    os.mkfifo(p)
    return str(p)


def all_cases() -> list[Case]:
    return [*stream_cases(), *semantic_cases(), *SCENARIO_CASES, *wrong_type_cases()]


# --------------------------------------------------------------------------- more kinds and classes

TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "ml"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2}}]}}}}
TAINT = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "drain"},
         "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"},
                  "taint": {"key": "example.com/maintenance", "value": "soon", "effect": "NoSchedule"}}}
EVENT = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "ml"},
         "involvedObject": {"kind": "Pod", "name": "train", "namespace": "ml"},
         "reason": "FailedScheduling", "message": "0/1 nodes are available", "type": "Warning", "count": 3}
EXTRA: list[dict[str, Any]] = [TEMPLATE, TAINT, EVENT]
PROFILE = yaml.safe_load((Path(__file__).resolve().parents[2] / "drakit" / "profiles" / "examples"
                          / "training-48g.yaml").read_text())
DEVICE = {"name": "gpu-0", "driver": "gpu.example.com",
          "attributes": {"model": {"string": "a"}, "v": {"version": "1.2.3"}, "n": {"int": 3}, "ok": {"bool": True}},
          "capacity": {"memory": {"value": "16Gi"}}}

SANE: frozenset[str] = frozenset()
# The verbs that read profile files: a broken profile is refused by each of them.
PROFILE_VERBS: frozenset[str] = frozenset({"profile-compile", "profile-polyaxon", "admission-policy", "run-kubernetes"})
"""Valid to the API server too (``1e1000000000`` is a Quantity): only a sane answer is required."""

CLUSTER_VERBS = frozenset({"validate", "allocate", "explain", "match", "lint", "trial", "simulate", "profile-eligible",
                           "describe", "describe-class", "get-devices"})
"""Commands whose input is a bundle of manifests (simulate takes manifests mixed into a scenario)."""


def _positions(doc: dict[str, Any], kind: str) -> Iterator[tuple[str, tuple[str | int, ...], Any]]:
    for path, value in _paths(doc):
        if path[0] in ("apiVersion", "kind"):
            continue
        yield f"{kind}-{'.'.join(map(str, path))}", path, value


def more_type_cases() -> list[Case]:
    """Wrong types at every position of the kinds BASE lacks, of profiles, scenarios and device files."""
    out: list[Case] = []
    for doc in EXTRA:
        for ident, path, value in _positions(doc, str(doc["kind"])):
            out.append(Case(f"type-{ident}", _docs("bundle.yaml", [*BASE, _with(doc, path, _wrong_type(value))])))
    for ident, path, value in _positions(PROFILE, "Profile"):
        out.append(Case(f"type-{ident}", _docs("profile.yaml", [_with(PROFILE, path, _wrong_type(value))]),
                        PROFILE_VERBS))
    for ident, path, value in _positions(SCENARIO, "Scenario"):
        out.append(Case(f"type-{ident}", _docs("scenario.yaml", [_with(SCENARIO, path, _wrong_type(value)),
                                                                 SCENARIO_TEMPLATE]),
                        frozenset({"simulate"})))
    for ident, path, value in _positions(DEVICE, "Device"):
        out.append(Case(f"type-{ident}", _docs("device.yaml", [_with(DEVICE, path, _wrong_type(value))]),
                        frozenset({"cel-eval-device"})))
    return out


def _many_empty_files(folder: Path) -> str:
    d = folder / "empties"
    d.mkdir()
    for i in range(10_000):
        (d / f"{i:05}.yaml").touch()
    return str(d)


_CLAIM_YAML = yaml.safe_dump(CLAIM, sort_keys=False)
_BUNDLE_YAML = yaml.safe_dump_all(BASE, sort_keys=False)


def framing_cases() -> list[Case]:
    """Top-level shapes, encodings and sizes a reader must refuse by name."""
    count = ("spec", "devices", "requests", 0, "exactly", "count")
    version = ("spec", "devices", 0, "attributes", "v", "version")
    quantity = ("spec", "devices", 0, "capacity", "memory", "value")

    def bundle(name: str, doc: dict[str, Any], path: tuple[str | int, ...], value: Any) -> Callable[[Path], str]:
        return _docs(name, [*(d for d in BASE if d is not doc), _with(doc, path, value)])

    return [
        Case("null-document", _text("null.yaml", "null\n")),
        Case("null-documents", _text("null.yaml", "--- null\n--- ~\n---\n")),
        Case("only-comments", _text("c.yaml", "# nothing here\n---\n# nor here\n")),
        Case("top-level-list-yaml", _text("list.yaml", yaml.safe_dump(BASE))),
        Case("top-level-number-json", _text("n.json", "42")),
        Case("top-level-string-json", _text("s.json", '"ResourceClaim"')),
        Case("json-trailing-garbage", _text("t.json", json.dumps(CLAIM) + " }}garbage")),
        Case("json-two-objects", _text("t.json", json.dumps(CLAIM) + json.dumps(CLAIM))),
        Case("bom-invalid-claim", _text("bom.yaml", "\ufeff" + yaml.safe_dump(_with(CLAIM, count, -1)))),
        Case("crlf-invalid-claim", _text("crlf.yaml", yaml.safe_dump(_with(CLAIM, count, -1)).replace("\n", "\r\n"))),
        Case("cr-only", _text("cr.yaml", _CLAIM_YAML.replace("\n", "\r")), SANE),  # a YAML line break
        Case("tabs-indent-spec", _text("tabs.yaml", _CLAIM_YAML.replace("  ", "\t"))),
        Case("unicode-name", bundle("u.yaml", CLAIM, ("metadata", "name"), "tr\u00e4in-\u202e\u0000x"), CLUSTER_VERBS),
        Case("rtl-request-name", bundle("u.yaml", CLAIM, ("spec", "devices", "requests", 0, "name"), "g\u202epu"), CLUSTER_VERBS),
        Case("control-char-class-name", bundle("c.yaml", CLASS, ("metadata", "name"), "gpu\x07\x1b[2J"), CLUSTER_VERBS),
        Case("surrogate-json", _text("s.json", json.dumps(CLAIM).replace('"train"', '"\\ud800"', 1))),
        Case("quantity-exponent-1e1000000000", bundle("q.yaml", SLICE, quantity, "1e1000000000"), SANE),
        Case("quantity-negative-exponent", bundle("q.yaml", SLICE, quantity, "1e-1000000000"), SANE),
        Case("quantity-5000-digits", bundle("q.yaml", SLICE, quantity, "9" * 5000), SANE),
        Case("quantity-number-huge", bundle("q.yaml", SLICE, quantity, 10**400), SANE),
        Case("version-5000-digits", bundle("v.yaml", SLICE, version, "1." + "9" * 5000 + ".0"), CLUSTER_VERBS),
        Case("version-5000-digit-prerelease", bundle("v.yaml", SLICE, version, "1.2.3-" + "9" * 5000), CLUSTER_VERBS),
        Case("int-attribute-huge", bundle("i.yaml", SLICE, ("spec", "devices", 0, "attributes", "v"),
                                          {"int": 10**4000})),
        Case("count-5000-digits", _text("c.yaml", _BUNDLE_YAML.replace("count: 1", "count: " + "9" * 5000))),
        Case("count-5000-digits-json", _text("c.json", json.dumps(CLAIM).replace('"count": 1', '"count": ' + "9" * 5000))),
        Case("generation-float-inf", _text("g.yaml", _BUNDLE_YAML.replace("generation: 1", "generation: .inf"))),
        Case("devices-huge-list", bundle("d.yaml", SLICE, ("spec", "devices"),
                                         [{"name": f"d{i}"} for i in range(2_000)]), CLUSTER_VERBS),
        Case("requests-huge-list", bundle("r.yaml", CLAIM, ("spec", "devices", "requests"),
                                          [{"name": f"r{i}", "exactly": {"deviceClassName": "gpu.example.com"}}
                                           for i in range(2_000)]), CLUSTER_VERBS),
        Case("directory-10000-empty-files", _many_empty_files),
        Case("merge-key-bomb", _text("merge.yaml", "a0: &a0 {x: 1}\n" + "".join(
            f"a{i}: &a{i} {{<<: [{', '.join([f'*a{i - 1}'] * 9)}], k{i}: 1}}\n" for i in range(1, 12)))),
        Case("merge-key-into-claim", _text("merge.yaml", "base: &b {name: train, namespace: ml}\n" + _CLAIM_YAML
                                           .replace("metadata:\n", "metadata:\n  <<: *b\n", 1))),
        Case("key-one-megabyte", _text("key.yaml", _CLAIM_YAML + "x" * 1_000_000 + ": 1\n")),
        Case("labels-20000", bundle("l.yaml", NODE, ("metadata", "labels"), {f"k{i}": "v" for i in range(20_000)}),
             SANE),  # labels have no count limit
        Case("nul-in-key", _text("k.json", json.dumps(CLAIM).replace('"metadata"', '"meta\\u0000data"'))),
        Case("utf32-bom", _text("u32.yaml", _CLAIM_YAML.encode("utf-32"))),
        Case("invalid-utf8-continuation", _text("u8.yaml", _CLAIM_YAML.encode() + b"x: \xc3\x28\n")),
        Case("json-comments", _text("c.json", "// a comment\n" + json.dumps(CLAIM))),
        Case("yaml-directive-1.1", _text("d.yaml", "%YAML 1.1\n%TAG ! tag:evil,2000:\n--- !x\n" + _CLAIM_YAML),
             SANE),
        Case("yaml-directive-9.9", _text("d.yaml", "%YAML 9.9\n---\n" + _CLAIM_YAML), SANE),
        Case("blank-lines-only", _text("b.yaml", "\n\n   \n\t\n")),
        Case("anchor-on-key", _text("a.yaml", "&k kind: *k\napiVersion: v1\n")),
        Case("document-end-markers", _text("e.yaml", "...\n" * 1000 + _CLAIM_YAML + "...\n")),
        Case("zero-width-kind", _text("z.yaml", _CLAIM_YAML.replace("kind: ResourceClaim", "kind: Resource\u200bClaim"))),
    ]


# Profiles whose values type-check but make no sense: (id, path, value, refused by profile compile).
PROFILE_VALUES: list[tuple[str, tuple[str, ...], Any, bool]] = [
    ("count-negative", ("spec", "count"), -1, True),
    ("count-zero", ("spec", "count"), 0, True),
    ("count-beyond-int64", ("spec", "count"), 2**63, True),
    ("count-million", ("spec", "count"), 10**6, True),
    ("count-float", ("spec", "count"), 1.5, True),
    ("memory-huge-exponent", ("spec", "memory", "min"), "1e1000000000", True),
    ("memory-5000-digits", ("spec", "memory", "min"), "9" * 5000 + "Gi", False),
    ("memory-negative", ("spec", "memory", "min"), "-48Gi", True),
    ("memory-nan", ("spec", "memory", "min"), "NaN", True),
    ("name-bidi-nul", ("metadata", "name"), "tr\u202eaining\x00", True),
    ("name-10000", ("metadata", "name"), "x" * 10_000, True),
    ("extends-itself", ("extends",), "training-48g", True),
    ("extends-unknown", ("extends",), "nope", True),
    ("colocate-escape", ("spec", "colocate"), "\x1b[2J", True),
]


def profile_value_cases() -> list[Case]:
    return [Case(f"profile-{ident}", _docs("profile.yaml", [_with(PROFILE, path, value)]),
                 PROFILE_VERBS if refused else SANE)
            for ident, path, value, refused in PROFILE_VALUES]


def all_more_cases() -> list[Case]:
    return [*more_type_cases(), *framing_cases(), *profile_value_cases()]


# --------------------------------------------------------------------------- views (describe, get devices)

_RESULT = {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}
_ONE_NODE = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}


def _allocated(**status: Any) -> dict[str, Any]:
    return {**CLAIM, "status": {"allocation": {"devices": {"results": [_RESULT]}, "nodeSelector": _ONE_NODE},
                                "reservedFor": [{"resource": "pods", "name": "train", "uid": "u1"}], **status}}


def _pod_event(i: int, **fields: Any) -> dict[str, Any]:
    return {**EVENT, "metadata": {"name": f"e{i}", "namespace": "ml"}, **fields}


def view_cases() -> list[Case]:
    """Valid bundles whose joins a view makes are odd: answered, never a crash (``SANE``)."""
    gone = {**_RESULT, "device": "gpu-9", "pool": "nowhere"}
    many_terms = {"nodeSelectorTerms": [{"matchExpressions": [{"key": f"k{i}", "operator": "Exists"}]} for i in range(50)]}
    prepare = "Failed to prepare dynamic resources: prepare dynamic resources: " + "DRA driver \x1b[2J is not registered "
    return [
        Case("view-allocated-device-not-published", _docs("b.yaml", [*BASE[:3], {**_allocated(), "status": {
            "allocation": {"devices": {"results": [gone]}}}}, POD]), SANE),
        Case("view-reserved-for-other-resources", _docs("b.yaml", [*BASE[:3], _allocated(reservedFor=[
            {"resource": "jobs", "apiGroup": "batch", "name": "j", "uid": "u2"}]), POD]), SANE),
        Case("view-fifty-node-selector-terms", _docs("b.yaml", [*BASE[:3], {**_allocated(), "status": {
            "allocation": {"devices": {"results": [_RESULT]}, "nodeSelector": many_terms}}}, POD]), SANE),
        Case("view-events-without-times-or-source", _docs("b.yaml", [*BASE, *(
            _pod_event(i, reason="FailedPrepareDynamicResources", message=prepare * 50) for i in range(3))]), SANE),
        Case("view-five-thousand-events", _docs("b.yaml", [*BASE, *(
            _pod_event(i, lastTimestamp=f"2026-12-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z", count=2**31 - 1)
            for i in range(5_000))]), SANE),
        Case("view-bound-pod-prepare-failed", _docs("b.yaml", [*BASE[:3], _allocated(),
                                                             _with(POD, ("spec", "nodeName"), "n1"),
                                                             _pod_event(0, reason="FailedPrepareDynamicResources",
                                                                        message=prepare)]), SANE),
    ]
