#!/usr/bin/env bash
# Build the add-ons the integration tests start beside the control plane, each pinned to an
# explicit release (the module proxy's version list is unreliable; never `@latest`):
#
#   kueue  sigs.k8s.io/kueue/cmd/kueue  (+ its CRDs from config/components/crd/bases)
#   kwok   sigs.k8s.io/kwok/cmd/kwok    (pods that run and finish without a kubelet)
#
# `go install pkg@version` builds each with its own go.mod (neither has replace directives).
# Output goes to a per-user cache outside the repository, keyed by the version; a stamp makes a
# second run instant.
#
#   cluster/addons.sh [kueue|kwok]...     build (or reuse) and print each bin directory
#   cluster/addons.sh --print NAME        only print NAME's directory
set -euo pipefail

KUEUE_VERSION=v0.19.2
KWOK_VERSION=v0.8.0

cache_root="${DRAKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drakit}"

dir_of() {
  case "$1" in
    kueue) echo "$cache_root/kueue-$KUEUE_VERSION" ;;
    kwok) echo "$cache_root/kwok-$KWOK_VERSION" ;;
    *) echo "unknown add-on: $1 (known: kueue, kwok)" >&2; exit 2 ;;
  esac
}

if [[ "${1:-}" == "--print" ]]; then
  dir_of "${2:?--print needs an add-on name}"
  exit 0
fi

build() {
  local name="$1" module version out
  case "$name" in
    kueue) module=sigs.k8s.io/kueue; version=$KUEUE_VERSION ;;
    kwok) module=sigs.k8s.io/kwok; version=$KWOK_VERSION ;;
  esac
  out="$(dir_of "$name")"
  local stamp_value
  stamp_value="$module@$version $(go env GOVERSION) $(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
  if [[ -f "$out/.stamp" && "$(cat "$out/.stamp")" == "$stamp_value" && -x "$out/bin/$name" ]]; then
    echo "$out"
    return
  fi
  mkdir -p "$out"
  local staging
  staging="$(mktemp -d "$out/build.XXXXXX")"
  local start elapsed
  start=$(date +%s)
  echo "building $module $version into $out (one-time)" >&2
  CGO_ENABLED=0 GOBIN="$staging" GOFLAGS=-trimpath go install -ldflags "-s -w" "$module/cmd/$name@$version"
  elapsed=$(( $(date +%s) - start ))
  rm -rf "$out/bin" && mkdir -p "$out/bin" && mv "$staging/$name" "$out/bin/$name"
  if [[ "$name" == kueue ]]; then
    # The CRDs ship in the module itself; copy them beside the binary so tests never read the
    # module cache.
    local src
    src="$(go mod download -json "$module@$version" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')"
    rm -rf "$out/crd" && mkdir -p "$out/crd"
    cp "$src"/config/components/crd/bases/*.yaml "$out/crd/"
    chmod u+w "$out/crd/"*.yaml
  fi
  rm -rf "$staging"
  printf '%s %s go %s cores %s build_seconds %s\n' "$module" "$version" "$(go env GOVERSION)" \
    "$(nproc)" "$elapsed" > "$out/build-info.txt"
  echo "$stamp_value" > "$out/.stamp"
  echo "built $name in ${elapsed}s" >&2
  echo "$out"
}

names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(kueue kwok)
for n in "${names[@]}"; do dir_of "$n" >/dev/null; build "$n"; done
