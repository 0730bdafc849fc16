"""Runs inside the Polyaxon venv (tests/polyaxon/env.sh), never in drakit's: Polyaxon's own parser
and converter on the presets drakit generates.

stdin: a JSON list of cases ``{"id", "operation", "preset"}``.  stdout: a JSON list of
``{"id", "error"}`` or ``{"id", "queue", "pods": [pod template, ...]}``, one per case, where the
pods are every pod template in the converted ``polyaxon.com/v1`` resource as plain JSON.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any

import yaml
from kubernetes.client import ApiClient
from polyaxon import settings
from polyaxon._k8s.executor.executor import Executor
from polyaxon._schemas.agent import AgentConfig
from polyaxon.polyaxonfile import check_polyaxonfile

RUN_UUID = "8aac02e8a62a4f4ab0a4ffc2ff6b2ca5"


def _pods(node: Any, out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        spec = node.get("spec")
        if "metadata" in node and isinstance(spec, dict) and isinstance(spec.get("containers"), list):
            out.append(node)
        else:
            for v in node.values():
                _pods(v, out)
    elif isinstance(node, list):
        for v in node:
            _pods(v, out)
    return out


def run(case: dict[str, Any], workdir: str) -> dict[str, Any]:
    files = []
    for i, doc in enumerate((case["operation"], case["preset"])):
        path = os.path.join(workdir, f"{case['id']}-{i}.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(doc, f)
        files.append(path)
    try:
        op = check_polyaxonfile(polyaxonfile=files, is_cli=False, verbose=False)
        converted = Executor().make_and_convert(owner_name="owner", project_name="project", run_uuid=RUN_UUID,
                                                run_name="run", content=op.to_json())
    except Exception as e:  # Polyaxon's refusal is the answer under test
        cause = e.__cause__ or e
        return {"id": case["id"], "error": f"{type(e).__name__}: {e} ({type(cause).__name__}: {cause})"}
    plain = ApiClient().sanitize_for_serialization(converted)
    return {"id": case["id"], "queue": op.queue, "pods": _pods(plain, [])}


def main() -> None:
    settings.AGENT_CONFIG = AgentConfig.from_dict({
        "namespace": "polyaxon",
        "artifactsStore": {"name": "store", "kind": "volume_claim",
                           "schema": {"volumeClaim": "artifacts", "mountPath": "/artifacts"}},
        "connections": [],
    })
    cases = json.load(sys.stdin)
    with tempfile.TemporaryDirectory() as d:
        json.dump([run(c, d) for c in cases], sys.stdout)


if __name__ == "__main__":
    main()
