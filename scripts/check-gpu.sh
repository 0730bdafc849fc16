#!/usr/bin/env bash
# check-gpu.sh — the NVML path end to end: discover → validate → one local run whose command runs
# record-env (NVML's UUIDs cross-checked against the claim's devices) and the shipped workload.
#
#   scripts/check-gpu.sh [OUT_DIR]                                   on a machine with an NVIDIA GPU
#   scripts/check-gpu.sh --replay RECORDING [--expect SLICE] [OUT_DIR]   every step, NVML replayed
#
# With --replay every step runs on an NVML recording (`discover --record`, or the golden files in
# tests/golden/nvml/), so the only step left to a GPU machine is the real NVML read; --expect
# compares the discovered slice with the one the recording must map to.  Every step runs (a step
# whose input is missing is skipped), a summary follows, and the exit status is 1 if any step failed.
# Needs drakit with the nvml and store extras and numpy (pip install -e '.[nvml,store]' numpy);
# PYTHON (default python3) is the interpreter drakit is installed in, DRAKIT overrides the command,
# NODE the node and pool name (default: this host's name).
set -uo pipefail

replay="" expect=""
while [ $# -gt 0 ]; do
  case "$1" in
    --replay) replay="$2"; shift 2 ;;
    --expect) expect="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
out="${1:-$(mktemp -d -t drakit-check-gpu.XXXXXX)}"
mkdir -p "$out"
python="${PYTHON:-python3}"
drakit="${DRAKIT:-$python -m drakit.cli.main}"
node="${NODE:-$(hostname)}"
store="sqlite:///$out/records.db"
run_id="check-gpu-$$"
nvml=()  # how record-env reads NVML: for real, or the recording
[ -n "$replay" ] && nvml=(--replay "$replay")

results=()
step() {  # step NAME COMMAND...: run it, show its output, keep PASS/FAIL for the summary
  local name="$1"; shift
  printf '\n== %s\n' "$name"
  if "$@"; then results+=("PASS  $name"); else results+=("FAIL  $name (exit $?)"); fi
}
skip() { printf '\n== %s\nskipped: %s\n' "$1" "$2"; results+=("SKIP  $1: $2"); }

if [ -z "$replay" ]; then
  if command -v nvidia-smi >/dev/null; then
    step "nvidia-smi: the GPUs as this driver lists them" \
      nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version,pci.bus_id,mig.mode.current --format=csv
  else
    skip "nvidia-smi" "not installed (NVML may still be there)"
  fi
  step "discover: the ResourceSlice the NVIDIA DRA driver would publish, from NVML" \
    sh -c "$drakit discover --node '$node' > '$out/slice.yaml' && cat '$out/slice.yaml'"
  step "record: NVML's answers kept in $out/nvml.recording.json replay to the very same slice" \
    sh -c "$drakit discover --node '$node' --record '$out/nvml.recording.json' > '$out/slice.recorded.yaml' \
           && cmp '$out/slice.yaml' '$out/slice.recorded.yaml' && echo identical"
else
  step "discover: the ResourceSlice the NVIDIA DRA driver would publish, from the recording $replay" \
    sh -c "$drakit discover --node '$node' --replay '$replay' > '$out/slice.yaml' && cat '$out/slice.yaml'"
  if [ -n "$expect" ]; then
    step "expect: the slice is the one $expect says" "$python" -c '
import sys, yaml
got, want = (yaml.safe_load(open(p)) for p in sys.argv[1:])
print("identical" if got == want else "DIFFERENT"); sys.exit(got != want)' "$out/slice.yaml" "$expect"
  fi
fi

if [ -s "$out/slice.yaml" ]; then
  step "validate: the API server's rules on that slice" $drakit validate -f "$out/slice.yaml"
  # Which kind of device the slice holds: profiles ask for whole GPUs; a MIG-enabled GPU publishes only its MIG devices.
  gpus=$("$python" -c 'import sys, yaml
s = yaml.safe_load(open(sys.argv[1]))
print(sum(d["attributes"]["type"]["string"] == "gpu" for d in s["spec"]["devices"]))' "$out/slice.yaml" 2>/dev/null || echo 0)
else
  skip "validate" "no slice was discovered"; gpus=0
fi

# One GPU of any product and driver: the check is about the NVML path, not a workload's contract.
cat > "$out/check-gpu.profile.yaml" <<'EOF'
apiVersion: drakit.dev/v1alpha1
kind: Profile
metadata:
  name: check-gpu
  description: One NVIDIA GPU of any kind.
spec:
  vendor: nvidia
  count: 1
EOF
inventory=()  # live: `run` reads NVML itself; replayed: the discovered slice is the declared inventory
[ -n "$replay" ] && inventory=(-f "$out/slice.yaml")
if [ "$gpus" -gt 0 ]; then
  step "run: one GPU by profile; inside it record-env cross-checks NVML's UUIDs, then the workload's correctness check" \
    $drakit run --profile "$out/check-gpu.profile.yaml" "${inventory[@]}" --run-id "$run_id" --store "$store" -- \
      sh -c "$drakit record-env ${nvml[*]} && $python -m drakit.demo.workload evaluate"
  step "the record: claim, devices, environment and result as stored" $drakit runs show "$run_id" --store "$store"
  cat > "$out/check_record.py" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
env = r.get("environment") or {}
frameworks, result = env.get("frameworks", {}), r.get("result") or {}
claimed = sorted(d["uuid"] for d in r["devices"])
seen = sorted(g.get("uuid", "") for g in env.get("nvml", []))
checks = {
    "finished": r["state"] == "finished",
    "exit status 0": result.get("exitStatus") == 0,
    "the workload's correctness check passed": result.get("correctness", {}).get("passed") == 1.0,
    "no unusable metric lines": result.get("problemCount") == 0,
    "cross-check match": frameworks.get("drakit.crossCheck") == "match",
    "the claim's UUIDs are the GPUs NVML shows the command": bool(claimed) and set(claimed) <= set(seen),
}
print(f"claimed {claimed}; NVML shows {seen}; " + frameworks.get("drakit.crossCheck.message", ""))
for name, ok in checks.items():
    print(("  ok   " if ok else "  FAIL ") + name)
sys.exit(not all(checks.values()))
EOF
  step "the record agrees: finished, exit 0, correct, cross-check match, the claim's UUIDs are the GPUs NVML showed" \
    sh -c "$drakit runs show '$run_id' --store '$store' -o json > '$out/record.json' && '$python' '$out/check_record.py' '$out/record.json'"
  step "mismatch: a claim naming a GPU this machine does not have is caught (exit 1, MISMATCH)" \
    sh -c "out=\$(DRAKIT_CLAIM_DEVICES=GPU-00000000-0000-0000-0000-000000000000 $drakit record-env ${nvml[*]} 2>&1); \
           rc=\$?; echo \"\$out\"; [ \$rc -eq 1 ] && echo \"\$out\" | grep -q MISMATCH"
else
  skip "run" "the slice has no whole GPU (a MIG-enabled GPU publishes only MIG devices, and profiles ask for GPUs)"
fi

printf '\n== summary (everything is in %s)\n' "$out"
failed=0
for line in "${results[@]}"; do
  printf '%s\n' "$line"
  case "$line" in FAIL*) failed=1 ;; esac
done
[ "$failed" -eq 0 ] && echo "check-gpu: OK" || echo "check-gpu: FAILED"
exit "$failed"
