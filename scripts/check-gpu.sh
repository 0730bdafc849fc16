#!/usr/bin/env bash
# check-gpu.sh — the NVML path on a machine with an NVIDIA GPU: discover → validate → one local run
# with record-env's UUID cross-check.  Needs drakit installed with the nvml and store extras
# (pip install -e '.[nvml,store]') and numpy.  Prints each step; exits non-zero at the first failure.
#
#   scripts/check-gpu.sh [OUT_DIR]      (default: a new temporary directory)
set -euo pipefail

out="${1:-$(mktemp -d -t drakit-check-gpu.XXXXXX)}"
mkdir -p "$out"
drakit="${DRAKIT:-drakit}"
store="sqlite:///$out/records.db"
step() { printf '\n== %s\n' "$*"; }

step "NVML as this driver sees it"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version,pci.bus_id --format=csv || true

step "discover: the ResourceSlice the NVIDIA DRA driver would publish (recording kept in $out/nvml.recording.json)"
$drakit discover --node "$(hostname)" --record "$out/nvml.recording.json" > "$out/slice.yaml"
cat "$out/slice.yaml"

step "validate: the API server's rules on that slice"
$drakit validate -f "$out/slice.yaml"

step "replay: the recording gives the same slice byte for byte"
$drakit discover --node "$(hostname)" --replay "$out/nvml.recording.json" > "$out/slice.replayed.yaml"
cmp "$out/slice.yaml" "$out/slice.replayed.yaml" && echo "identical"

step "run: one GPU by profile, the workload, and record-env cross-checking UUIDs inside the run"
# evaluation asks for one GPU (any product); the child checks that what NVML shows it is what the claim holds.
$drakit run --profile evaluation --run-id "check-gpu-$$" --store "$store" -- \
  sh -c "$drakit record-env && python3 -m drakit.demo.workload evaluate"

step "the record"
$drakit runs show "check-gpu-$$" --store "$store"
$drakit runs show "check-gpu-$$" --store "$store" -o json | python3 -c '
import json, sys
r = json.load(sys.stdin)
check = r["environment"]["frameworks"]["drakit.crossCheck"]
claimed = [d["uuid"] for d in r["devices"]]
seen = [g["uuid"] for g in r["environment"]["nvml"]]
print(f"cross-check: {check}; claimed {claimed}; NVML shows {seen}")
sys.exit(0 if check == "match" and r["result"]["exitStatus"] == 0 else 1)'
step "OK — everything above is in $out"
