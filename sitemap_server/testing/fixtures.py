"""The fixtures: a migrated test database emptied after each test, the application, clients
with and without a token, the clock, the command line."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, MetaData, create_engine, event, insert, inspect, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from .. import migrations
from ..app import make_app, site_of_app
from ..models.meta import Clock, utcnow
from ..services.tokens import create_token
from ..site import Site

TEST_DATABASE_ENV = "SITEMAP_SERVER_TEST_DATABASE_URL"
TEST_PLUGINS_ENV = "SITEMAP_SERVER_TEST_PLUGINS"
# A source checkout (the repository's production.ini, docs/): meaningless in a wheel.
PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
SITE_URL = "http://sitemaps.test"
# The official sitemap XSDs (current and 2009 revisions), shipped with these helpers.
SCHEMAS_DIR = Path(__file__).resolve().parent / "schemas"
# The application reads these to override its settings; in a developer's shell they could
# point the app under test at a real database while the fixtures use the test one.
APP_ENVIRONMENT = (
    "SITEMAP_SERVER_DATABASE_URL",
    "SITEMAP_SERVER_SITE_URL",
    "SITEMAP_SERVER_CONFIG",
)


@pytest.fixture(scope="session", autouse=True)
def _no_app_environment() -> Iterator[None]:
    """The application under test reads only its test settings; the variables are back
    as they were once the session ends."""
    with pytest.MonkeyPatch.context() as patch:
        for name in APP_ENVIRONMENT:
            patch.delenv(name, raising=False)
        yield


def pytest_report_header(config: pytest.Config) -> str:
    url = os.environ.get(TEST_DATABASE_ENV)
    plugins = "installed ones" if installed_plugins_loaded() else "none"
    return f"sitemap-server database: {url or 'SQLite (temporary file)'}; plugins: {plugins}"


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The test database: a new SQLite file, or ``SITEMAP_SERVER_TEST_DATABASE_URL``.
    Under pytest-xdist (``-n``) each worker has its own: on PostgreSQL a database named
    after the given one and the worker, on the same server, dropped at the end."""
    url = os.environ.get(TEST_DATABASE_ENV)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not url or (make_url(url).get_backend_name() == "sqlite" and worker):
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.sqlite'}"
        return
    if not worker:
        yield url
        return
    with database_beside(url, f"{make_url(url).database}_{worker}") as own:
        yield own


@contextmanager
def database_beside(url: str, name: str) -> Iterator[str]:
    """A new, empty PostgreSQL database ``name`` on the server of ``url``: its URL while
    the block runs; dropped afterwards (connections still open to it included)."""
    given = make_url(url)
    server = create_engine(given, isolation_level="AUTOCOMMIT")
    drop = text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    with server.connect() as conn:
        conn.execute(drop)
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield given.set(database=name).render_as_string(hide_password=False)
    finally:
        with server.connect() as conn:
            conn.execute(drop)
        server.dispose()


@pytest.fixture(scope="session")
def ini_file(tmp_path_factory: pytest.TempPathFactory, database_url: str) -> Path:
    """An ini file for the test database, for code that reads one (Alembic, the CLI)."""
    path = tmp_path_factory.mktemp("config") / "test.ini"
    path.write_text(
        "[app:main]\n"
        "use = egg:sitemap-server\n"
        f"sqlalchemy.url = {database_url.replace('%', '%%')}\n"
        f"sitemap_server.site_url = {SITE_URL}\n"
        f"sitemap_server.load_entrypoints = {str(installed_plugins_loaded()).lower()}\n"
        "\n[loggers]\nkeys = root\n[handlers]\nkeys = console\n[formatters]\nkeys = generic\n"
        "[logger_root]\nlevel = WARN\nhandlers = console\n"
        "[handler_console]\nclass = StreamHandler\nargs = (sys.stderr,)\nlevel = NOTSET\n"
        "formatter = generic\n[formatter_generic]\nformat = %(levelname)s %(name)s %(message)s\n"
    )
    return path


def _drop_everything(engine: Engine) -> None:
    reflected = MetaData()
    reflected.reflect(engine)
    with engine.begin() as conn:
        reflected.drop_all(conn)
        conn.execute(text("DROP TABLE IF EXISTS alembic_version"))


def installed_plugins_loaded() -> bool:
    """False when ``SITEMAP_SERVER_TEST_PLUGINS=none``: the application under test then
    loads no installed plugin, as if none were installed (S-501: the core works alone)."""
    return os.environ.get(TEST_PLUGINS_ENV, "installed") != "none"


@pytest.fixture(scope="session")
def app_settings(database_url: str) -> dict[str, Any]:
    return {
        "sqlalchemy.url": database_url,
        "sitemap_server.site_url": SITE_URL,
        "sitemap_server.api.validate_responses": "true",
        "sitemap_server.load_entrypoints": str(installed_plugins_loaded()).lower(),
        # Every sitemap request applies the change log first: a test reads what it wrote.
        "sitemap_server.max_staleness": "0",
    }


@pytest.fixture(scope="session")
def app_site(app_settings: dict[str, Any]) -> Iterator[Site]:
    """The site of the test settings, shared by the application (``wsgi_app``) and the
    sessions of ``app_session``."""
    site = Site(app_settings)
    yield site
    site.close()


@pytest.fixture(scope="session")
def engine(app_settings: dict[str, Any], ini_file: Path) -> Iterator[Engine]:
    """The test database, migrated from scratch once per test session: the tests' own
    connections (arranging rows, emptying the tables), apart from the application's pool,
    as another process's would be."""
    # The tables of every installed plugin, whichever the application under test loads:
    # one database serves applications with and without them.
    every_plugin = Site({**app_settings, "sitemap_server.load_entrypoints": "true"})
    engine = every_plugin.database
    try:
        _drop_everything(engine)
        with engine.begin() as conn:
            migrations.upgrade(ini_file, every_plugin.plugins, connection=conn)
        yield engine
    finally:
        every_plugin.close()


@pytest.fixture(scope="session")
def _migrated_rows(engine: Engine) -> dict[str, list[dict[str, Any]]]:
    """What the migrations put in each table (built-in types, the settings row)."""
    reflected = MetaData()
    reflected.reflect(engine)
    with engine.connect() as conn:
        return {
            table.name: [dict(row._mapping) for row in conn.execute(select(table))]
            for table in reflected.sorted_tables
            if table.name != "alembic_version"
        }


_reflected: dict[tuple[str, frozenset[str]], list[Any]] = {}


def _tables(engine: Engine) -> list[Any]:
    """The database's tables, parents first, reflected again only when the set changes
    (reflecting costs 30 ms a time on PostgreSQL: a minute over the suite)."""
    names = frozenset(inspect(engine).get_table_names())
    key = (str(engine.url), names)
    if key not in _reflected:
        reflected = MetaData()
        reflected.reflect(engine)
        _reflected[key] = [t for t in reflected.sorted_tables if t.name != "alembic_version"]
    return _reflected[key]


def reset_database(engine: Engine, seed: dict[str, list[dict[str, Any]]]) -> None:
    """Every table as ``seed`` has it, sequences from 1 again. DELETE rather than
    TRUNCATE: on tables this small it is several times faster on PostgreSQL."""
    tables = _tables(engine)
    with engine.begin() as conn:
        for table in reversed(tables):
            conn.execute(table.delete())
        if engine.dialect.name == "postgresql":
            sequences = conn.scalars(
                text("SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema()")
            )
            for sequence in list(sequences):
                conn.execute(text(f'ALTER SEQUENCE "{sequence}" RESTART'))
        else:  # the AUTOINCREMENT tables' counters (models.content.NEVER_REUSED)
            conn.execute(text("DELETE FROM sqlite_sequence"))
        for table in tables:
            if seed.get(table.name):
                conn.execute(insert(table), seed[table.name])


@pytest.fixture
def clean_database(
    engine: Engine, _migrated_rows: dict[str, list[dict[str, Any]]]
) -> Iterator[Engine]:
    """The migrated database, put back as the migrations left it after the test."""
    yield engine
    reset_database(engine, _migrated_rows)


@pytest.fixture(scope="session")
def wsgi_app(engine: Engine, app_site: Site) -> Any:
    """The application of the test site (``app_site``)."""
    return make_app(app_site)


@pytest.fixture
def app_session(clean_database: Engine, app_site: Site) -> Iterator[Session]:
    """A session as the application and the CLI make them: it carries the site (its
    URL, its plugins), so writes through the services refresh every sitemap."""
    with app_site.sessions() as session:
        yield session


@pytest.fixture
def dbsession(clean_database: Engine) -> Iterator[Session]:
    """A plain session, of no site, for arranging data and checking rows; commit what
    you arrange."""
    session = Session(clean_database)
    yield session
    session.rollback()
    session.close()


def forget_rendered(app: Any) -> None:
    """Drop what an application process remembers between requests.

    Content versions start again at 1 whenever the database is reset, so a document one
    test rendered must not be served to the next (in production versions never go back).
    """
    site = site_of_app(app)
    site.render_cache.clear()
    site.reader.forget()


def apply_changes(app: Any) -> int:
    """What the maintainer does: apply ``app``'s change log to the sitemaps now (``app``:
    the application or a WebTest client of it); how many changes were applied."""
    return site_of_app(app).engine.apply()


def run_worker(app: Any, force: bool = True) -> list[dict[str, Any]]:
    """One pass of the worker, as ``sitemap-server worker --once`` makes it, for ``app``
    (the application or a WebTest client of it): the change log applied, and what is
    queued sent (with ``force``, now: no quiet period, no backoff). The attempts made."""
    from ..notify.worker import Worker

    worker = Worker(site_of_app(app))
    try:
        return worker.run_once(force=force)
    finally:
        worker.close()


def client(app: Any, token: str | None = None) -> Any:
    """``app`` through WebTest, as a new process would answer (nothing rendered before),
    signed in with ``token`` when one is given."""
    from webtest import TestApp

    forget_rendered(app)
    found = TestApp(app)
    if token is not None:
        found.authorization = ("Bearer", token)
    return found


@pytest.fixture(scope="session")
def app_with(engine: Engine, app_settings: dict[str, Any]) -> Iterator[Callable[..., Any]]:
    """The application with settings of its own: ``app_with(**{"sitemap_server.x": …})``,
    built once per set of settings for the whole test session (wrap it with ``client``)."""
    built: dict[tuple[tuple[str, Any], ...], Any] = {}

    def make(**overrides: Any) -> Any:
        key = tuple(sorted(overrides.items()))
        if key not in built:
            built[key] = make_app(Site({**app_settings, **overrides}))
        return built[key]

    yield make
    for app in built.values():
        site_of_app(app).close()


@pytest.fixture
def app_for(
    app_settings: dict[str, Any], api_token: str, clean_database: Engine
) -> Iterator[Callable[..., Any]]:
    """Another instance of the application on the test database, with settings of its
    own, closed when the test ends (``app_with`` keeps its instances, and their database
    connections, for the whole session): ``app_for(**settings)`` is a WebTest client of
    it, ``app_for(signed_in=True)`` one with the test's API token."""
    made: list[Any] = []

    def make(signed_in: bool = False, **overrides: Any) -> Any:
        app = make_app(Site({**app_settings, **overrides}))
        made.append(app)
        return client(app, api_token if signed_in else None)

    yield make
    for app in made:
        site_of_app(app).close()


@pytest.fixture
def testapp(wsgi_app: Any, clean_database: Engine) -> Any:
    """The application through WebTest, without credentials."""
    return client(wsgi_app)


@pytest.fixture
def api_token(clean_database: Engine) -> str:
    session = Session(clean_database)
    try:
        token = create_token(session, "tests")
        session.commit()
    finally:
        session.close()
    return token


@pytest.fixture
def api(wsgi_app: Any, api_token: str) -> Any:
    """The application through WebTest, signed in with a bearer token."""
    return client(wsgi_app, api_token)


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """The commands configure logging from the ini file: the test run's is put back."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def cli(
    ini_file: Path,
    clean_database: Engine,
    capsys: pytest.CaptureFixture[str],
    restore_logging: None,
) -> Callable[..., tuple[int, str, str]]:
    """``cli("token", "list")`` runs ``sitemap-server`` on the test database: its exit
    status, standard output and standard error."""
    from ..cli import main as command

    def run(*args: Any) -> tuple[int, str, str]:
        status = command(["--config", str(ini_file), *map(str, args)])
        out, err = capsys.readouterr()
        return status, out, err

    return run


class MovableClock:
    """The application's clock, moved by a test instead of sleeping."""

    def now(self) -> datetime:
        return utcnow()

    def advance(self, **delta: float) -> datetime:
        if Clock.frozen is not None:
            Clock.frozen += timedelta(**delta)
        else:
            Clock.offset += timedelta(**delta)
        return utcnow()

    def freeze(self, when: datetime) -> datetime:
        """Stop the clock at ``when`` (aware), until ``advance`` or ``freeze`` moves it:
        what a test asserts at an edge then holds however slowly the machine runs."""
        Clock.frozen = when
        return when


@pytest.fixture
def clock() -> Iterator[MovableClock]:
    """``clock.advance(hours=1)`` moves the application's time (in this process) forward;
    ``clock.freeze(moment)`` stops it there."""
    yield MovableClock()
    Clock.offset = timedelta(0)
    Clock.frozen = None


@pytest.fixture
def db_snapshot(clean_database: Engine) -> Callable[[], dict[str, list[tuple[Any, ...]]]]:
    """Call it before and after a request: equal results mean the request changed nothing."""

    def snapshot() -> dict[str, list[tuple[Any, ...]]]:
        with clean_database.connect() as conn:
            return {
                table.name: sorted((tuple(row) for row in conn.execute(select(table))), key=repr)
                for table in _tables(clean_database)
            }

    return snapshot


@pytest.fixture
def entry_work(
    api: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[list[tuple[str, int]], list[tuple[str, int]]]]:
    """Two lists that fill as the maintainer works, for what a write costs it: the
    (provider, key) of each entry rendered, and of each row written to ``sitemap_entries``."""
    from ..sitemaps.rendering import EntryRenderer

    rendered: list[tuple[str, int]] = []
    written: list[tuple[str, int]] = []
    render = EntryRenderer.render

    def counted(self: EntryRenderer, entry: Any) -> tuple[str, int]:
        rendered.append((self.provider.name, entry.key))
        return render(self, entry)

    def inserted(
        _conn: Any, _cursor: Any, statement: str, _parameters: Any, context: Any, _many: bool
    ) -> None:
        if statement.startswith("INSERT INTO sitemap_entries"):
            written.extend((row["provider"], row["key"]) for row in context.compiled_parameters)

    monkeypatch.setattr(EntryRenderer, "render", counted)
    engine = site_of_app(api).database
    event.listen(engine, "before_cursor_execute", inserted)
    yield rendered, written
    event.remove(engine, "before_cursor_execute", inserted)
