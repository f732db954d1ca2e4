# Two commands on a fresh machine: `make serve` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HASH := $(shell cksum pyproject.toml | cut -d' ' -f1)
SERVE_STAMP := $(VENV)/.serve-$(HASH)
TEST_STAMP := $(VENV)/.test-$(HASH)
ARGS ?=
# Python keeps the project's compiled bytecode (in __pycache__, ignored by git) even where PYTHONDONTWRITEBYTECODE
# asks it not to: the tests start many Pythons (servers, the CLI, four passes), and each would compile the project
# and rewrite the tests again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: serve test test-exact test-postgresql check openapi-lint bench setup browser postgresql wrk clean dist

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

# $(call debian,PACKAGE,CHECK,FOR): install Debian's PACKAGE (FOR says why) unless the command CHECK succeeds.
debian = @$(2) >/dev/null 2>&1 || { \
	  echo "make: installing Debian's $(1) $(3)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(1) >/dev/null; }

# Debian's Chromium for the browser tests (Playwright drives the system browser; nothing is downloaded).
browser:
	$(call debian,chromium,test -x /usr/bin/chromium,for the browser tests)

# Debian's PostgreSQL for the store's second engine: the tests start a throw-away cluster of their own.
postgresql:
	$(call debian,postgresql,ls /usr/lib/postgresql/*/bin/pg_ctl,for the PostgreSQL store tests)

# Debian's wrk, the benchmarks' load generator: a Python client would spend as much CPU as the server it loads.
wrk:
	$(call debian,wrk,command -v wrk,for the benchmarks)

# Spectral (npm) lints /openapi.json with the `spectral:oas` ruleset (.spectral.yaml), as API teams lint theirs;
# installed into .spectral/ once (Debian's npm when there is none), pinned to its major version.
SPECTRAL := .spectral/node_modules/.bin/spectral
$(SPECTRAL):
	$(call debian,npm,command -v npm,for the OpenAPI lint (Spectral))
	@echo "make: installing Spectral into .spectral/ (npm, first run only)"
	@npm install --prefix .spectral --no-audit --no-fund --loglevel=error @stoplight/spectral-cli@6 >/dev/null

openapi-lint: $(TEST_STAMP) $(SPECTRAL)
	@$(BIN)/python -c 'from ptas_sandbox.simulator import create_app; import sys; \
	  sys.stdout.write(create_app({"STATE": ":memory:", "START_SERVICES": False}).test_client() \
	  .get("/openapi.json").get_data(as_text=True))' > .spectral/openapi.json
	$(SPECTRAL) lint --quiet --fail-severity=warn --ruleset .spectral.yaml .spectral/openapi.json

# The tests whose outcome depends on the store: run a second time on PostgreSQL (PTAS_TEST_STORE). In these folders
# and in EXACT_TESTS, a second pass runs only the tests whose fixtures take the store or the request state's
# strategy it changes (tests/conftest.py); the rest would take the same path again. tests/fuzz is in neither: its
# app is its own, and schemathesis draws its cases while collecting, before a pass could leave them out.
STORE_TESTS := tests/core tests/limits tests/webhooks tests/partners tests/users tests/tokens tests/accounts \
	tests/account_types tests/transactions tests/dataimports tests/control tests/scenarios tests/reports tests/echo \
	tests/snapshots
# ... and the folders that exercise the request state's strategy (simulator/requeststate/) again on the store-exact
# strategy, as several workers on one SQLite file run it (`--request-state exact`: tests/conftest.py). Every other
# folder's requests take the same path whatever the strategy under them.
EXACT_TESTS := tests/core tests/limits tests/tokens tests/journal tests/reliability

serve: $(SERVE_STAMP)
	$(BIN)/ptas serve $(ARGS)

# Static checks that run with every `make test`.
check: $(TEST_STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/lint-imports --no-logo --no-cache
	$(BIN)/mypy

# The two slowest directories (each runs whole suites) on SQLite in a pass of their own, beside the rest from the
# start, so both cores work; the PostgreSQL and store-exact passes follow the rest, and the two columns end
# together (the browser's tests went to the rest once the blind rounds made this column the longer).
BESIDE_TESTS := tests/conformance tests/profiles

# The store-exact pass and the PostgreSQL pass, each a target of its own (`make test` runs both).
test-exact: $(TEST_STAMP)
	$(BIN)/python -m pytest -q --request-state exact --basetemp=.pytest_cache/exact-tmp \
	  --junitxml=$(JUNIT)-exact.xml $(EXACT_TESTS) $(ARGS)

test-postgresql: $(TEST_STAMP) postgresql
	PTAS_TEST_STORE=postgresql $(BIN)/python -m pytest -q --basetemp=.pytest_cache/postgresql-tmp \
	  --junitxml=$(JUNIT)-postgresql.xml $(STORE_TESTS) $(ARGS)

# The last line sums up the passes (tests/support/summary.py); a first pass that fails stops before the others.
# The OpenAPI lint runs beside them from the start (npm installs Spectral the first time, on one core at most).
JUNIT := .pytest_cache/junit
PASS = $(MAKE) --no-print-directory -o '$(TEST_STAMP)' -o postgresql
OPENAPI_LINT = $(PASS) openapi-lint
test: $(TEST_STAMP) browser postgresql check
	@rm -f $(JUNIT)-*; mkdir -p .pytest_cache
	@$(OPENAPI_LINT) > $(JUNIT)-lint.log 2>&1 & lint=$$!; \
	  $(BIN)/python -m pytest -q --basetemp=.pytest_cache/beside-tmp --junitxml=$(JUNIT)-beside.xml \
	    $(BESIDE_TESTS) $(ARGS) > $(JUNIT)-beside.log 2>&1 & beside=$$!; \
	  $(BIN)/python -m pytest --junitxml=$(JUNIT)-sqlite.xml $(BESIDE_TESTS:%=--ignore=%) $(ARGS) && { \
	  $(PASS) test-exact > $(JUNIT)-exact.log 2>&1 & exact=$$!; \
	  $(PASS) test-postgresql; pg=$$?; wait $$exact; ex=$$?; \
	  echo "--- the store-exact strategy on SQLite ($(JUNIT)-exact.log):"; \
	  tail -n 25 $(JUNIT)-exact.log; [ $$pg = 0 ] && [ $$ex = 0 ]; }; \
	  rest=$$?; wait $$beside; bs=$$?; echo "--- $(BESIDE_TESTS) on SQLite ($(JUNIT)-beside.log):"; \
	  tail -n 25 $(JUNIT)-beside.log; [ $$rest = 0 ] && [ $$bs = 0 ]; \
	  status=$$?; wait $$lint; linted=$$?; [ $$linted = 0 ] || tail -n 40 $(JUNIT)-lint.log; \
	  $(BIN)/python -m tests.support.summary "every test on SQLite=$(JUNIT)-sqlite.xml+$(JUNIT)-beside.xml" \
	  "the store's tests on PostgreSQL=$(JUNIT)-postgresql.xml" \
	  "the store-exact strategy on SQLite=$(JUNIT)-exact.xml"; \
	  [ $$linted = 0 ] || { echo "make test: the OpenAPI lint failed ($(JUNIT)-lint.log, above)"; exit 1; }; \
	  exit $$status

# A wheel and an sdist in dist/ (PyPA's `build`), for a project of your own without the clone:
# pip install 'dist/ptas_sandbox-VERSION-py3-none-any.whl[conform]'
dist: $(TEST_STAMP)
	@rm -rf dist
	$(BIN)/python -m build --outdir dist .

bench: $(TEST_STAMP) postgresql wrk
	$(BIN)/python -m bench $(ARGS)

clean:
	rm -rf $(VENV) .ptas .pytest_cache .spectral build dist src/*.egg-info
