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
	$(VENV)/bin/drakit trial

lint: venv
	$(VENV)/bin/ruff check drakit tests benchmarks
	$(VENV)/bin/mypy

# --- the upstream oracle (see oracle/README.md) -------------------------------------------

# --- the real control plane (see cluster/README.md) ---------------------------------------

test: venv
	$(PY) -m pytest -q
