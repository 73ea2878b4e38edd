# make run   – set up, migrate, seed the demo site and serve it at http://127.0.0.1:6543
# make test  – set up, lint, type-check, and run the whole suite on SQLite and on PostgreSQL

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PLUGINS := $(wildcard plugins/*/pyproject.toml)
PLUGIN_DIRS := $(patsubst %/pyproject.toml,%,$(PLUGINS))
PLUGIN_TESTS := $(wildcard plugins/*/tests)
# Every core at work (at most 4: each worker has its own database and servers); a test
# file stays on one worker, so the servers and venvs a module builds are built once. Files
# are handed out longest first (tests/conftest.py orders them). The slowest tests are
# named at the end of each stage: where a slow machine's time goes.
PYTEST := $(BIN)/pytest -n auto --maxprocesses 4 --dist loadfile --no-loadscope-reorder \
	--durations=15
# schemathesis's fuzzing passes under pytest-xdist without sending a request: it runs alone.
FUZZ := tests/functional/test_api_fuzz.py

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
# The tests of sitemap-server sync-wordpress read a real WordPress (Debian's wordpress,
# MariaDB, php-fpm and nginx, installed with apt if they are missing; each test starts
# its own in a temporary directory on 127.0.0.1).
# The deployment tests (tests/deploy: wheels installed without extras into a fresh venv,
# production.ini alone in a directory, migrate, serve, uninstall a plugin; the reference
# Varnish deployment of deploy/varnish, with Debian's varnish and varnish-modules
# installed with apt if they are missing) run once, on PostgreSQL.
test-sqlite: install
	scripts/ensure-wordpress
	SITEMAP_SERVER_TEST_PLUGINS=none $(PYTEST) tests --ignore=tests/e2e --ignore=tests/deploy \
		--ignore=$(FUZZ)
	SITEMAP_SERVER_TEST_PLUGINS=none $(BIN)/pytest $(FUZZ)
	scripts/ensure-chromium
	$(PYTEST) $(PLUGIN_TESTS) tests/e2e

test-postgres: install
	scripts/ensure-varnish
	scripts/ensure-wordpress
	scripts/with-postgres sh -c \
		'$(PYTEST) tests --ignore=tests/e2e --ignore=$(FUZZ) $(PLUGIN_TESTS) && $(BIN)/pytest $(FUZZ)'

test-deploy: install
	scripts/ensure-varnish
	scripts/with-postgres $(PYTEST) tests/deploy

test: lint test-sqlite test-postgres

clean:
	rm -rf $(VENV) var build *.egg-info
