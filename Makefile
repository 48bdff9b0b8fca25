# Two commands a newcomer needs: `make serve` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# `make serve` installs the package and what serving needs; `make test` adds the test extras (a
# superset, so it brings the serve stamp up to date too). Either reinstalls when pyproject.toml
# changes; neither reinstalls what the other already installed.
SERVE_STAMP := $(VENV)/.serve-stamp
TEST_STAMP  := $(VENV)/.test-stamp
DB     ?= $(or $(COMPLIANCE_DB),compliance.db)
SHELL  := /bin/bash

.PHONY: setup serve test check lint bench openapi events migration clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Python 3.11+ is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(SERVE_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[oscal]"
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@ $(SERVE_STAMP)

# The browser tests drive Debian's chromium through Playwright (no browser download): installed
# here when missing (as root, as CI runs; otherwise through sudo).
CHROMIUM := /usr/bin/chromium
APT      := $(if $(filter 0,$(shell id -u)),,sudo) env DEBIAN_FRONTEND=noninteractive apt-get

$(CHROMIUM):
	$(APT) install -y -q chromium || ($(APT) update -q && $(APT) install -y -q chromium)

setup: $(TEST_STAMP) $(CHROMIUM)

serve: $(SERVE_STAMP)
	$(BIN)/compliance serve --db $(DB) --host 127.0.0.1 --port 3333

# $(call phase,NAME,COMMAND) runs COMMAND and notes NAME, passed or FAILED, and how long it took;
# the recipe goes on either way, so every phase runs, and $(summary) prints the notes and fails
# if any phase did.
PHASES = $(VENV)/.phases-$@
define phase
@echo "=== $(1)"; start=$${EPOCHREALTIME//[!0-9]/}; \
	if $(2); then result=passed; else result=FAILED; fi; \
	us=$$(( $${EPOCHREALTIME//[!0-9]/} - start )); \
	printf '%-7s %-7s %4d.%ds\n' '$(1)' $$result $$((us / 1000000)) $$((us / 100000 % 10)) >> $(PHASES)
endef
define summary
@echo; echo "phase   result  time"; cat $(PHASES); ! grep -q FAILED $(PHASES)
endef


# The suite runs on every core (pytest-xdist), a test file per worker: module-scoped platforms
# stay in one process, and each worker migrates its own PostgreSQL schema. The workers take the
# files in the order tests/conftest.py gives them (longest first), not xdist's by test count.
test: setup
	@rm -f $(PHASES)
	$(call phase,lint,$(BIN)/ruff check .)
	$(call phase,format,$(BIN)/ruff format --check .)
	$(call phase,mypy,$(BIN)/mypy)
	$(call phase,tests,$(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder)
	$(summary)

# Between edits: the same lint, format and type checks (mypy is incremental: seconds after its
# first run), and the tests that start no server (not marked slow) on the memory store only;
# `make test` runs everything on every store.
CHECK_TESTS ?= tests
check: setup
	@rm -f $(PHASES)
	$(call phase,lint,$(BIN)/ruff check .)
	$(call phase,format,$(BIN)/ruff format --check .)
	$(call phase,mypy,$(BIN)/mypy)
	$(call phase,tests,$(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder -m 'not slow' -k 'not sqlite and not postgresql' $(CHECK_TESTS))
	$(summary)

lint: setup
	@rm -f $(PHASES)
	$(call phase,lint,$(BIN)/ruff check .)
	$(call phase,format,$(BIN)/ruff format --check .)
	$(call phase,mypy,$(BIN)/mypy)
	$(summary)

bench: setup
	@command -v wrk >/dev/null || (apt-get install -y wrk >/dev/null 2>&1 || echo "wrk not installed: the HTTP bench uses its Python load generator")
	$(BIN)/python -m bench

openapi: setup
	$(BIN)/compliance openapi > docs/openapi.json

events: setup
	$(BIN)/python -m compliance_core.events_doc > docs/events.md

# The next migration of each SQL store, from the areas' declarations (docs/migrations.md); needs
# PostgreSQL for a scratch schema ($$COMPLIANCE_POSTGRES_URL, else the local server the tests use).
migration: setup
	$(BIN)/python -m compliance_store.schema $(NAME)

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .hypothesis
