# Two commands a newcomer needs: `make serve` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DB     ?= $(or $(COMPLIANCE_DB),compliance.db)

.PHONY: setup serve test lint bench openapi clean

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Python 3.11+ is required")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

setup: $(STAMP)

serve: setup
	$(BIN)/compliance serve --db $(DB) --host 127.0.0.1 --port 3333

test: setup lint
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: setup
	@command -v wrk >/dev/null || (apt-get install -y wrk >/dev/null 2>&1 || echo "wrk not installed: the HTTP bench uses its Python load generator")
	$(BIN)/python -m bench

openapi: setup
	$(BIN)/compliance openapi > docs/openapi.json

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .hypothesis
