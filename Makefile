# drakit — developer entry points.  `make demo` and `make test` are the README's two commands.
#
# Heavy builds (the Go oracle, the Kubernetes control plane) go to caches outside the
# repository (Go's module and build caches, and $(DRAKIT_CACHE)), so only the first run
# on a machine pays for them.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
export DRAKIT_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/drakit

.PHONY: venv demo test lint

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test]'
	touch $@

venv: $(VENV)/.installed

demo: venv
	$(VENV)/bin/drakit trial --demo --execute --report drakit-trial-report --store sqlite:///$(CURDIR)/drakit-trial-report/records.db
	$(VENV)/bin/drakit runs compare --by product --store sqlite:///$(CURDIR)/drakit-trial-report/records.db \
	  --chart drakit-trial-report/runtime-by-product.html

# mypy's cache beside the other caches outside the repository, so a fresh clone (CI) checks only
# what changed: a cached module whose path or mtime differs is reused when its hash matches.
lint: venv
	$(VENV)/bin/ruff check drakit tests benchmarks
	MYPY_CACHE_DIR=$(DRAKIT_CACHE)/mypy $(VENV)/bin/mypy

# --- the upstream oracle (see oracle/README.md) -------------------------------------------
# dra-oracle: the upstream allocator and CEL (k8s.io/dynamic-resource-allocation, pinned in
# oracle/go.mod) behind drakit's command line.  Rebuilt only when its sources change.
GO ?= go
ORACLE_BIN := oracle/bin/dra-oracle
ORACLE_SRC := $(wildcard oracle/cmd/dra-oracle/*.go) oracle/go.mod oracle/go.sum

.PHONY: oracle differential
oracle: $(ORACLE_BIN)

$(ORACLE_BIN): $(ORACLE_SRC)
	cd oracle && $(GO) build -trimpath -o bin/dra-oracle ./cmd/dra-oracle

# Bulk differential run against the oracle (seeded plain-random scenarios, 2 worker processes,
# one long-lived oracle each); every distinct disagreement is shrunk and written to
# tests/differential/regressions/<hash>.yaml, which tests replay from then on.
N ?= 100000
SEED ?= 20260701
WORKERS ?= 2
differential: $(ORACLE_BIN) venv
	$(PY) -m tests.differential.bulk --cases $(N) --seed $(SEED) --workers $(WORKERS)

# CEL's syntax error recovery runs a parser ANTLR generates from drakit/selectors/grammar/CEL.g4
# (committed; regenerate after editing the grammar).  The ANTLR tool comes from Maven Central.
ANTLR_VERSION := 4.13.2
.PHONY: cel-grammar
cel-grammar:
	mvn -q dependency:copy -Dartifact=org.antlr:antlr4:$(ANTLR_VERSION):jar:complete -DoutputDirectory=.antlr
	cd drakit/selectors/grammar && java -jar ../../../.antlr/antlr4-$(ANTLR_VERSION)-complete.jar \
		-Dlanguage=Python3 -no-listener -no-visitor CEL.g4 && rm -f CELLexer.py *.interp *.tokens

# --- the real control plane (see cluster/README.md) ---------------------------------------

.PHONY: cluster
# etcd, kube-apiserver, kube-scheduler and kube-controller-manager for tests/integration,
# built from the Go module proxy into $(DRAKIT_CACHE)/k8s-<version>/bin, and the add-ons the
# queue tests start beside them (Kueue + its CRDs, kwok) into $(DRAKIT_CACHE)/<name>-<version>;
# both instant when stamped.
cluster:
	cluster/build.sh
	cluster/addons.sh

# Polyaxon 2.18.0's own parser and converter for tests/polyaxon, in a venv of their own (it pins
# kubernetes<37) keyed by the pin in $(DRAKIT_CACHE).  Outside CI a failed build only makes those
# tests skip; under CI it fails here.
.PHONY: polyaxon-env
polyaxon-env:
	tests/polyaxon/env.sh || [ "$${CI:-}" != true ]

# Test workers (pytest-xdist; each takes whole files, long ones first: tests/conftest.py).  Much of
# the suite waits on other processes (control planes, Kueue, PostgreSQL, killed children), so a
# worker more than there are cores still pays.
TEST_WORKERS ?= 3
test: venv lint oracle cluster polyaxon-env
	$(PY) -m pytest -q -n $(TEST_WORKERS)

# Property tests with fresh random examples (`make test` replays the same ones every run; see
# tests/conftest.py).  Failures are kept in .hypothesis/ and replayed first next time.
.PHONY: fuzz
fuzz: venv oracle
	HYPOTHESIS_PROFILE=explore $(PY) -m pytest -q tests/unit tests/oracle
