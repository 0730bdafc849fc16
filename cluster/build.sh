#!/usr/bin/env bash
# Build the control-plane binaries drakit's integration tests run against:
# etcd, kube-apiserver, kube-scheduler and kube-controller-manager, compiled from
# the Go module proxy (see cluster/README.md). Output goes to a per-user cache
# outside the repository, keyed by the Kubernetes version; a stamp file makes a
# second run instant.
#
#   cluster/build.sh            build (or reuse) and print the bin directory
#   cluster/build.sh --print    only print the bin directory
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

k8s_version="$(awk '$1 == "k8s.io/kubernetes" {print $2; exit}' go.mod)"
k8s_version="${k8s_version#v}"
etcd_version="$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2; exit}' go.mod)"
cache_root="${DRAKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drakit}"
out="$cache_root/k8s-$k8s_version"
bin="$out/bin"

if [[ "${1:-}" == "--print" ]]; then
  echo "$bin"
  exit 0
fi

binaries=(etcd kube-apiserver kube-scheduler kube-controller-manager kubectl)

# The stamp covers everything that changes the output: module pins, this script,
# our etcd main and the Go toolchain.
stamp_value="$(cat go.mod go.sum build.sh cmd/etcd/main.go | sha256sum | cut -d' ' -f1) $(go env GOVERSION)"
stamp="$bin/.stamp"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$stamp_value" ]]; then
  ok=1
  for b in "${binaries[@]}"; do [[ -x "$bin/$b" ]] || ok=0; done
  if [[ $ok == 1 ]]; then
    echo "$bin"
    exit 0
  fi
fi

mkdir -p "$out"
staging="$(mktemp -d "$out/build.XXXXXX")"
trap 'rm -rf "$staging"' EXIT

ver_pkg=k8s.io/component-base/version
minor="$(echo "$k8s_version" | cut -d. -f2)"
ldflags="-s -w"
ldflags+=" -X $ver_pkg.gitVersion=v$k8s_version -X $ver_pkg.gitMajor=1 -X $ver_pkg.gitMinor=$minor"
ldflags+=" -X $ver_pkg.gitTreeState=clean -X $ver_pkg.buildDate=1970-01-01T00:00:00Z"
ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=v$k8s_version"

start=$(date +%s)
echo "building Kubernetes v$k8s_version + etcd $etcd_version into $bin (one-time; long on few cores)" >&2
CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$staging/" \
  ./cmd/etcd \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kubectl
elapsed=$(( $(date +%s) - start ))

mkdir -p "$bin"
for b in "${binaries[@]}"; do mv -f "$staging/$b" "$bin/$b"; done
printf 'k8s v%s etcd %s go %s cores %s build_seconds %s\n' \
  "$k8s_version" "$etcd_version" "$(go env GOVERSION)" "$(nproc)" "$elapsed" > "$out/build-info.txt"
echo "$stamp_value" > "$stamp"
echo "built in ${elapsed}s" >&2
echo "$bin"
