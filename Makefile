# Two commands on a fresh machine: `make serve` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat setup.cfg setup.py pyproject.toml | cksum | cut -d' ' -f1)
ARGS ?=

.PHONY: serve test bench setup browser clean

$(STAMP): setup.cfg setup.py pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $@

setup: $(STAMP)

# Debian's Chromium for the browser tests (Playwright drives the system browser; nothing is downloaded).
browser:
	@test -x /usr/bin/chromium || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

serve: $(STAMP)
	$(BIN)/ptas serve $(ARGS)

test: $(STAMP) browser
	$(BIN)/python -m pytest $(ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench $(ARGS)

clean:
	rm -rf $(VENV) .ptas .pytest_cache build *.egg-info
