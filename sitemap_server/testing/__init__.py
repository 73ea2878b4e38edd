"""pytest plugin shared by the core's and the plugins' test suites (opt-in).

A test suite enables it in its ``conftest.py``::

    pytest_plugins = ["sitemap_server.testing"]

Nothing loads it otherwise: installing sitemap-server adds no fixture to other projects'
pytest runs, and the application never imports it (it needs pytest, a test dependency).

Tests run against a real database: SQLite by default, PostgreSQL when
``SITEMAP_SERVER_TEST_DATABASE_URL`` names one (``make test`` runs the suite once on each).
The schema is made by the Alembic migrations, as in production. Requests really commit
through ``pyramid_tm``; after each test every table is emptied and the rows the migrations
created are put back, so tests never see each other. ``parse_sitemap`` validates against
the official sitemap XSDs, which ship in this package (``schemas/``, see its SOURCES.md).

``fixtures.py`` holds the fixtures (database, application, clients, clock, command line),
``assertions.py`` what tests assert about answers (problem details, sitemap documents,
404s), ``servers.py`` real servers (``pserve production.ini``, a stand-in search engine),
``hostile.py`` the hostile corpus; this module gathers them for pytest.
"""

from __future__ import annotations

# The plugin is this package: pytest finds its fixtures and hooks among these names.
from .assertions import (
    NOT_FOUND_MAX_BYTES,
    PROBLEM_JSON,
    SITEMAP_NS,
    X_ROBOTS_TAG,
    assert_not_found,
    assert_problem,
    fetch_sitemap,
    index_locs,
    parse_sitemap,
    sitemap_schemas,
    url_locs,
    xml_parser,
)
from .fixtures import (
    APP_ENVIRONMENT,
    PROJECT_ROOT,
    SCHEMAS_DIR,
    SITE_URL,
    TEST_DATABASE_ENV,
    TEST_PLUGINS_ENV,
    MovableClock,
    _drop_everything,
    _migrated_rows,
    _no_app_environment,
    _reflected,
    _tables,
    api,
    api_token,
    app_session,
    app_settings,
    app_with,
    apply_changes,
    clean_database,
    cli,
    client,
    clock,
    database_beside,
    database_url,
    db_snapshot,
    dbsession,
    engine,
    forget_rendered,
    ini_file,
    installed_plugins_loaded,
    pytest_report_header,
    reset_database,
    restore_logging,
    run_worker,
    testapp,
    wsgi_app,
)
from .servers import (
    PSERVE,
    SERVER_STARTUP_SECONDS,
    SearchEngine,
    _search_engine_server,
    free_port,
    http_server,
    production_command,
    pserve_production,
    running,
    search_engine,
    serve_production,
    server_environment,
    wait_until,
    worker_process,
)

__all__ = [
    "APP_ENVIRONMENT",
    "NOT_FOUND_MAX_BYTES",
    "PROBLEM_JSON",
    "PROJECT_ROOT",
    "PSERVE",
    "SCHEMAS_DIR",
    "SERVER_STARTUP_SECONDS",
    "SITEMAP_NS",
    "SITE_URL",
    "TEST_DATABASE_ENV",
    "TEST_PLUGINS_ENV",
    "X_ROBOTS_TAG",
    "MovableClock",
    "SearchEngine",
    "_drop_everything",
    "_migrated_rows",
    "_no_app_environment",
    "_reflected",
    "_search_engine_server",
    "_tables",
    "api",
    "api_token",
    "app_session",
    "app_settings",
    "app_with",
    "apply_changes",
    "assert_not_found",
    "assert_problem",
    "clean_database",
    "cli",
    "client",
    "clock",
    "database_beside",
    "database_url",
    "db_snapshot",
    "dbsession",
    "engine",
    "fetch_sitemap",
    "forget_rendered",
    "free_port",
    "http_server",
    "index_locs",
    "ini_file",
    "installed_plugins_loaded",
    "parse_sitemap",
    "production_command",
    "pserve_production",
    "pytest_report_header",
    "reset_database",
    "restore_logging",
    "run_worker",
    "running",
    "search_engine",
    "serve_production",
    "server_environment",
    "sitemap_schemas",
    "testapp",
    "url_locs",
    "wait_until",
    "worker_process",
    "wsgi_app",
    "xml_parser",
]
