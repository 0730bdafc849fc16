#!/usr/bin/env bash
# Polyaxon's own parser and converter in a venv of their own: polyaxon 2.18.0 pins
# kubernetes<37, which cannot share an environment with drakit's test dependencies.
# The venv lives in the cache outside the repository, keyed by the pin, so only the first run
# on a machine pays for it.  `--print` prints its python without building anything.
set -euo pipefail
PIN="polyaxon==2.18.0"
CACHE="${DRAKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drakit}"
DIR="$CACHE/${PIN/==/-}"
PY="$DIR/bin/python"
if [ "${1:-}" = "--print" ]; then echo "$PY"; exit 0; fi
if [ -f "$DIR/.stamp" ] && [ "$(cat "$DIR/.stamp")" = "$PIN" ]; then exit 0; fi
rm -rf "$DIR"
python3 -m venv "$DIR"
"$DIR/bin/pip" install -q --disable-pip-version-check "$PIN" "kubernetes<37"
"$PY" -c "import polyaxon.polyaxonfile, polyaxon._k8s.executor.executor" >/dev/null
echo "$PIN" > "$DIR/.stamp"
