"""Database engine, sessions and ``request.dbsession`` (the Pyramid starter project's shape).

Views never commit: ``pyramid_tm`` commits the request's transaction when the view returns a
2xx/3xx response and aborts it otherwise, so a rejected request changes nothing.
"""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import zope.sqlalchemy
from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import engine_from_config, event, make_url, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, configure_mappers, sessionmaker

from .auth import ApiToken
from .content import (
    Author,
    ImportedObject,
    ObjectUrl,
    Post,
    PostStatus,
    PostType,
    Robots,
    Taxonomy,
    Term,
    post_terms,
)
from .meta import SITE_KEY, Base, metadata, site_of
from .notifications import Notification, NotificationAttempt, NotificationChange
from .site import SiteSettings
from .sitemaps import (
    SITE,
    ChangeFeed,
    FinishedDocument,
    FinishedSequence,
    ListedUrl,
    SitemapChange,
    SitemapEntry,
    SitemapPage,
    SitemapVersion,
)
from .wordpress import WordPressSync

if TYPE_CHECKING:
    from ..site import Site

__all__ = [
    "SITE",
    "ApiToken",
    "Author",
    "Base",
    "ChangeFeed",
    "FinishedDocument",
    "FinishedSequence",
    "ImportedObject",
    "ListedUrl",
    "Notification",
    "NotificationAttempt",
    "NotificationChange",
    "ObjectUrl",
    "Post",
    "PostStatus",
    "PostType",
    "Robots",
    "SiteSettings",
    "SitemapChange",
    "SitemapEntry",
    "SitemapPage",
    "SitemapVersion",
    "Taxonomy",
    "Term",
    "WordPressSync",
    "get_engine",
    "get_session_factory",
    "get_tm_session",
    "hold_lock",
    "metadata",
    "post_terms",
    "site_of",
    "take_write_lock",
    "update_planner_statistics",
]

configure_mappers()


# PostgreSQL: how soon a backend notices that its client is gone. A process killed in
# the middle of a statement (a worker mid-pass) leaves its backend running that statement,
# holding its locks (the maintainer's among them), until it next writes to the dead
# socket: minutes. ``client_connection_check_interval`` (PostgreSQL 14) has the backend
# look every 2 s, even while it waits for a lock; TCP keepalives find a client whose
# machine vanished in about 20 s. A server that does not answer at all is given up after
# ``connect_timeout`` seconds (then 503, or a command's plain message), not waited for.
POSTGRES_CONNECT_ARGS: dict[str, Any] = {
    "connect_timeout": 10,
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 2,
}
CLIENT_CHECK = "-c client_connection_check_interval=2000"


def get_engine(settings: dict[str, Any], prefix: str = "sqlalchemy.") -> Engine:
    options: dict[str, Any] = {}
    url = str(settings.get(prefix + "url", ""))
    if url.startswith("postgresql"):
        # What the URL sets itself (?keepalives_idle=…, ?options=…) is kept.
        given = make_url(url).query
        connect_args = {k: v for k, v in POSTGRES_CONNECT_ARGS.items() if k not in given}
        if "options" not in given:
            connect_args["options"] = CLIENT_CHECK
        options["connect_args"] = connect_args
    engine = engine_from_config(
        settings, prefix, echo=settings.get("sitemap_server.sql_echo", False), **options
    )
    if engine.dialect.name == "sqlite":
        database = sqlite_file(engine)
        if database is not None:
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        busy_ms = int(settings.get("sitemap_server.sqlite.busy_timeout_ms", 5000))
        _configure_sqlite(engine, busy_ms)
    return engine


def sqlite_file(engine: Engine) -> str | None:
    """The file of a SQLite database; None for one in memory or named by a URI."""
    database = engine.url.database
    if database and database != ":memory:" and not database.startswith("file:"):
        return database
    return None


def _configure_sqlite(engine: Engine, busy_timeout_ms: int) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        # WAL lets readers (crawlers) run while a writer (the admin API) commits.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        # Durable at checkpoints, and much faster than FULL; the usual choice with WAL.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()


def take_write_lock(session: Session, wait: bool = True) -> bool:
    """On SQLite, take the database's write lock now, before reading what will change;
    without ``wait``, only if no one holds it at this moment. Whether it is held (always
    True on PostgreSQL, which locks the rows themselves: ``FOR UPDATE``).

    SQLite has one writer at a time and no row locks, and pysqlite opens a transaction
    only at the first write: without this, a request could read a row, another could
    delete it, and the first would then update nothing. A write that matches no row takes
    the lock all the same."""
    if session.get_bind().dialect.name != "sqlite":
        return True
    lock = text("UPDATE site_settings SET id = id WHERE 1 = 0")
    if wait:
        session.execute(lock)
        return True
    connection = session.connection()
    busy_timeout = int(connection.exec_driver_sql("PRAGMA busy_timeout").scalar() or 0)
    connection.exec_driver_sql("PRAGMA busy_timeout = 0")
    try:
        session.execute(lock)
    except OperationalError as error:
        code = getattr(error.orig, "sqlite_errorcode", 0)
        if code & 0xFF != sqlite3.SQLITE_BUSY:  # the primary code of an extended one
            raise
        return False
    finally:
        connection.exec_driver_sql(f"PRAGMA busy_timeout = {busy_timeout}")
    return True


def update_planner_statistics(session: Session, table: str | None = None) -> None:
    """After a bulk change (an import, a rebuild): fresh statistics for the query planner.

    SQLite has none until ``ANALYZE`` runs, and without them it may answer "the newest
    listed post of this author" by scanning every stored entry instead of the author's
    posts (170 ms instead of 0.4 ms at a million posts). PostgreSQL analyzes by itself,
    but only some time after a bulk load.
    """
    if session.get_bind().dialect.name == "sqlite":
        session.execute(text("PRAGMA analysis_limit = 1000"))  # sample, don't read it all
    session.execute(text(f"ANALYZE {table}" if table else "ANALYZE"))


# The first key of every advisory lock ``hold_lock`` takes. Two-key advisory locks are a
# key space of their own, apart from the one-key locks of the maintainer.
NAMED_LOCKS = 0x5173


def hold_lock(session: Session, name: str) -> None:
    """Hold the lock ``name`` until the transaction ends, waiting for it if another
    transaction holds it: a PostgreSQL advisory lock, or SQLite's write lock (one writer
    at a time holds every such lock at once). For a check that must see every write made
    under the same name before it, and whose own write the next one must see."""
    if session.get_bind().dialect.name != "postgresql":
        take_write_lock(session)
        return
    key = zlib.crc32(name.encode()) - 2**31  # the signed 32 bits PostgreSQL takes
    session.execute(
        text("SELECT pg_advisory_xact_lock(:space, :key)"), {"space": NAMED_LOCKS, "key": key}
    )


# session.info: the transaction manager a session was joined to (``get_tm_session``).
TRANSACTION_MANAGER = "transaction_manager"


def get_session_factory(engine: Engine, site: Site | None = None) -> sessionmaker[Session]:
    """Sessions that carry ``site`` (``site_of``): only ``site.Site`` makes these. Without
    one, sessions that can read and write rows but not run the write path."""
    info: dict[str, Any] = {} if site is None else {SITE_KEY: site}
    factory = sessionmaker(bind=engine, info=info)
    event.listen(factory, "loaded_as_persistent", _hold_site_wide)
    return factory


# Rows that a request or a maintainer pass reads again and again (the settings, the post
# types and taxonomies): held for the session's life. The identity map holds objects
# weakly, so one no longer referenced was dropped and read again from the database (a
# PATCH read the settings and its post type twice each). Held, they are still expired at
# commit like any other.
SITE_WIDE = (SiteSettings, PostType, Taxonomy)


def _hold_site_wide(session: Session, instance: Any) -> None:
    if isinstance(instance, SITE_WIDE):
        session.info.setdefault("held", set()).add(instance)


def get_tm_session(session_factory: sessionmaker[Session], transaction_manager: Any) -> Session:
    """A session joined to ``transaction_manager``: committed or aborted with it."""
    dbsession = session_factory()
    zope.sqlalchemy.register(dbsession, transaction_manager=transaction_manager)
    dbsession.info[TRANSACTION_MANAGER] = transaction_manager
    return dbsession


def mark_written(session: Session) -> None:
    """``session`` wrote through Core statements (bulk inserts, cheaper than the ORM's):
    zope.sqlalchemy sees only the ORM's writes, and would roll back a transaction of Core
    writes alone as one that wrote nothing."""
    manager = session.info.get(TRANSACTION_MANAGER)
    if manager is not None:
        zope.sqlalchemy.mark_changed(session, transaction_manager=manager)


def includeme(config: Configurator) -> None:
    """Adds ``request.dbsession`` and ``request.tm`` (pyramid_tm) to every request."""
    settings = config.get_settings()
    settings["tm.manager_hook"] = "pyramid_tm.explicit_manager"
    # Abort on any 4xx/5xx response, not only on an exception: a rejected request is
    # rolled back even when an exception view turned the error into a response.
    settings.setdefault("tm.commit_veto", "pyramid_tm.default_commit_veto")
    config.include("pyramid_tm")

    site: Site = config.registry[SITE_KEY]
    session_factory = site.sessions

    def dbsession(request: Request) -> Session:
        # Tests may hand in their own session through the environ.
        session = request.environ.get("app.dbsession")
        if session is None:
            session = get_tm_session(session_factory, request.tm)
        return session

    config.add_request_method(dbsession, reify=True)
