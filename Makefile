# Two commands on a fresh machine: `make serve` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HASH := $(shell cksum pyproject.toml | cut -d' ' -f1)
SERVE_STAMP := $(VENV)/.serve-$(HASH)
TEST_STAMP := $(VENV)/.test-$(HASH)
ARGS ?=

.PHONY: serve test check bench setup browser postgresql wrk clean

$(BIN)/python:
	@echo "make: creating $(VENV) with $(PYTHON)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip

# What serving needs, and no more (no pytest, no browser): flask, pyjwt, faker, jsonschema, requests, waitress.
$(SERVE_STAMP): pyproject.toml | $(BIN)/python
	@echo "make: installing ptas-sandbox into $(VENV) (first run only: about a minute)"
	@$(BIN)/python -m pip install -q -e .
	@rm -f $(VENV)/.serve-*
	@touch $@

# Everything the tests need: the harness, Playwright, schemathesis and the linters.
$(TEST_STAMP): pyproject.toml | $(BIN)/python
	@echo "make: installing ptas-sandbox with its test extras into $(VENV) (first run only)"
	@$(BIN)/python -m pip install -q -e '.[test]'
	@rm -f $(VENV)/.test-* $(VENV)/.serve-*
	@touch $@ $(SERVE_STAMP)

setup: $(TEST_STAMP)

# Debian's Chromium for the browser tests (Playwright drives the system browser; nothing is downloaded).
browser:
	@test -x /usr/bin/chromium || { \
	  echo "make: installing Debian's chromium for the browser tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Debian's PostgreSQL for the store's second engine: the tests start a throw-away cluster of their own.
postgresql:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || { \
	  echo "make: installing Debian's postgresql for the PostgreSQL store tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null; }

# Debian's wrk, the benchmarks' load generator: a Python client would spend as much CPU as the server it loads.
wrk:
	@command -v wrk >/dev/null 2>&1 || { \
	  echo "make: installing Debian's wrk for the benchmarks"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq wrk >/dev/null; }

# The tests whose outcome depends on the store: run a second time on PostgreSQL (PTAS_TEST_STORE).
STORE_TESTS := tests/core tests/limits tests/webhooks tests/partners tests/users tests/tokens tests/accounts \
	tests/account_types tests/transactions tests/dataimports tests/control tests/scenarios tests/reports tests/echo

serve: $(SERVE_STAMP)
	$(BIN)/ptas serve $(ARGS)

# Static checks that run with every `make test`.
check: $(TEST_STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/lint-imports --no-logo --no-cache
	$(BIN)/mypy

test: $(TEST_STAMP) browser postgresql check
	$(BIN)/python -m pytest $(ARGS)
	PTAS_TEST_STORE=postgresql $(BIN)/python -m pytest -q $(STORE_TESTS) $(ARGS)

bench: $(TEST_STAMP) postgresql wrk
	$(BIN)/python -m bench $(ARGS)

clean:
	rm -rf $(VENV) .ptas .pytest_cache build src/*.egg-info
