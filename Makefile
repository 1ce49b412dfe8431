# Kandev developer commands.
#
#   make install   create .venv (first python3 >= 3.11 found) and install kandev + test extras
#   make run       install, (re)build the web client when its sources changed, then `kandev serve`
#   make test      install, then run the whole test suite in TEST_WORKERS processes (PYTEST_ARGS="..." to pass
#                  options; naming a test file runs it in one process)
#   make lint      ruff check, then mypy (the config in pyproject.toml: strict for domain, mcp_bridge, schema)
#   make schema    print the GraphQL schema into schema.graphql and regenerate the web client's types
#   make bench     run the benchmarks (prints JSON)
#   make ci        what CI runs: real PostgreSQL + Redis, then the suite twice (see .ci/run)

SHELL := /bin/bash
.DEFAULT_GOAL := test

VENV := .venv
VENV_PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PYTHON_CANDIDATES := python3.13 python3.12 python3.11 python3
PYTEST_ARGS ?=
# Test processes (pytest-xdist), each module in one of them (tests/support/parallel.py). 3 on the 2-core CI
# machine: a third of the time a test waits on a worker, an agent or a browser, and a third process fills it
# (measured: the embedded pass in 10:56 with 3, 14:06 with 2). Modules go out in collection order, so the many
# quick unit tests at the end even out the finish.
TEST_WORKERS ?= 3
KANDEV_ARGS ?=
FRONTEND ?= frontend
# The web client is rebuilt only when one of these is newer than its build.
WEB_CLIENT := $(FRONTEND)/dist/index.html
WEB_SOURCES = $(shell find $(FRONTEND)/src $(FRONTEND)/public -type f 2>/dev/null) \
	$(wildcard $(FRONTEND)/index.html $(FRONTEND)/package.json $(FRONTEND)/package-lock.json \
	$(FRONTEND)/vite.config.* $(FRONTEND)/tsconfig*.json $(FRONTEND)/codegen.ts schema.graphql)

# First interpreter that actually runs and is >= 3.11 (pyenv shims exist for versions that
# are not selected and fail when run, so each candidate is executed, not just looked up).
# Recursive (=) on purpose: only evaluated when the venv has to be created.
PYTHON = $(shell for p in $(PYTHON_CANDIDATES); do \
	if "$$p" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1; then \
	echo "$$p"; break; fi; done)

.PHONY: install run test lint bench ci schema

install: $(STAMP)

$(VENV_PY):
	@py="$(PYTHON)"; \
	if [ -z "$$py" ]; then echo "error: no python >= 3.11 found (tried: $(PYTHON_CANDIDATES))" >&2; exit 1; fi; \
	echo "creating $(VENV) with $$py ($$($$py -c 'import sys; print(sys.version.split()[0])'))"; \
	"$$py" -m venv $(VENV)

$(STAMP): pyproject.toml | $(VENV_PY)
	$(VENV_PY) -m pip install --quiet --upgrade pip
	$(VENV_PY) -m pip install --quiet -e '.[test]'
	@touch $@

run: install $(if $(wildcard $(FRONTEND)/package.json),$(WEB_CLIENT))
	exec $(VENV)/bin/kandev serve $(KANDEV_ARGS)

# Dependencies are installed again only when the lock file is newer than what npm last installed.
$(WEB_CLIENT): $(WEB_SOURCES)
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "warning: $(FRONTEND)/package.json found but npm is not on PATH; serving without building the web client" >&2; \
	else \
		cd $(FRONTEND) && \
		if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then \
			if [ -f package-lock.json ]; then npm ci || npm install; else npm install; fi; \
		fi && npm run build && touch dist/index.html; \
	fi

# In parallel unless PYTEST_ARGS names a test file or test (one process: no start-up cost), sets -n itself or
# turns xdist off (-p no:xdist).
PARALLEL = $(if $(or $(filter %.py -n -n% --numprocesses% %no:xdist,$(PYTEST_ARGS)),$(findstring .py::,$(PYTEST_ARGS))),,\
	-n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder)

# pytest's own exit code is the recipe's exit code: failures (1), errors (2-4) and
# "no tests collected" (5) all fail `make test`.
# The web client is built before the tests start: a `kandev serve` a test starts would otherwise build it in
# the middle of the run, emptying frontend/dist under a browser test's server.
test: install $(if $(wildcard $(FRONTEND)/package.json),$(WEB_CLIENT))
	$(VENV_PY) -m pytest -q $(PARALLEL) $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check kandev tests
	$(VENV)/bin/mypy

# schema.graphql is committed (a test fails when it drifts); so are the client's generated types
# (frontend/src/gql, checked by `npm run check`).
schema: install
	$(VENV_PY) scripts/print_schema.py
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "warning: npm is not on PATH; regenerate frontend/src/gql with: cd $(FRONTEND) && npm run codegen" >&2; \
	else \
		cd $(FRONTEND) && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run codegen; \
	fi

bench: install
	$(VENV_PY) -m bench

ci:
	bash .ci/run
