# make run   – set up, migrate, seed the demo site and serve it at http://127.0.0.1:6543
# make test  – set up, lint, type-check, and run the whole suite on SQLite and on PostgreSQL

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PLUGINS := $(wildcard plugins/*/pyproject.toml)
PLUGIN_DIRS := $(patsubst %/pyproject.toml,%,$(PLUGINS))
PLUGIN_TESTS := $(wildcard plugins/*/tests)

.PHONY: install run test lint test-sqlite test-postgres test-deploy clean

$(BIN)/.installed: pyproject.toml $(PLUGINS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]' $(foreach p,$(PLUGIN_DIRS),-e ./$(p))
	touch $@

install: $(BIN)/.installed

run: install
	$(BIN)/sitemap-server --config development.ini migrate
	$(BIN)/sitemap-server --config development.ini seed-demo --if-empty
	$(BIN)/pserve development.ini

lint: install
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

# The core's tests run once with no plugin loaded (SQLite) and once with every installed
# plugin (PostgreSQL): the core must work alone and beside them (S-501).
# The browser tests (tests/e2e: headless Debian Chromium against a real server, which loads
# every installed plugin) run once, with the plugins' tests.
# The deployment tests (tests/deploy: wheels installed without extras into a fresh venv,
# production.ini alone in a directory, migrate, serve, uninstall a plugin) run once, on
# PostgreSQL.
test-sqlite: install
	SITEMAP_SERVER_TEST_PLUGINS=none $(BIN)/pytest tests --ignore=tests/e2e --ignore=tests/deploy
	scripts/ensure-chromium
	$(BIN)/pytest $(PLUGIN_TESTS) tests/e2e

test-postgres: install
	scripts/with-postgres $(BIN)/pytest tests --ignore=tests/e2e $(PLUGIN_TESTS)

test-deploy: install
	scripts/with-postgres $(BIN)/pytest tests/deploy

test: lint test-sqlite test-postgres

clean:
	rm -rf $(VENV) var build *.egg-info
