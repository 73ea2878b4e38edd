"""How the read path reaches the database: outside ``pyramid_tm``, in as few round trips
as possible.

A warm request needs the content versions and the age of the oldest change waiting in the
change log: a process keeps them and reads them again only when the database says they
may have changed (``watch.py``), or else reads them in one query on an autocommit
connection (no ``BEGIN``/``COMMIT`` around it). Only when a document has to be rendered is
a read-only snapshot opened, and the versions are read again inside it, so the ETag and
the cache key a rendering is stored under name exactly the content it shows.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sqlalchemy import event, select
from sqlalchemy.engine import Connection

from ..models import SITE, SitemapVersion, sqlite_file
from ..models.meta import utcnow
from ..models.site import effective_site_url, get_settings, site_zone
from ..outages import cause_of
from . import maintenance
from .changes import OLDEST_WAITING
from .failures import OUTAGE
from .presence import worker_alive
from .providers import Provider
from .rendering import render_key, settings_key
from .watch import PostgresWatch, SQLiteWatch

if TYPE_CHECKING:
    from ..site import Site
    from .finished import Recent

VERSIONS = select(
    SitemapVersion.provider,
    SitemapVersion.version,
    SitemapVersion.changed_at,
    SitemapVersion.due_at,
    SitemapVersion.rendered_with,
    OLDEST_WAITING.label("waiting_since"),
)
# Changes a request applies at most before it answers anyway: about half a second at
# 100,000 posts on SQLite (bench/maintainer_bench.py), whatever waits (an import
# through the API leaves one per post).
READER_CHANGES = 500

log = logging.getLogger(__name__)

Versions = dict[str, tuple[int, datetime]]


@dataclass(frozen=True)
class SiteSnapshot:
    """What changes only with the site version: settings and the set of providers."""

    private: bool
    site_url: str
    providers: list[Provider]
    # The site's title (its settings'), which the documents carry for their views.
    title: str = ""
    # The site's time zone: dates in the sitemaps carry its offset.
    zone: tzinfo = UTC
    # The output settings' name (``rendering.settings_key``): fragments made with others
    # are rebuilt before they are served.
    output_key: str = ""
    # The path of each stylesheet → its asset: the core's, ``sitemap_xsl``'s and those
    # the providers carry (``Provider.xsl_asset``).
    stylesheets: dict[str, str] = field(default_factory=dict)

    def provider(self, name: str) -> Provider | None:
        return next((p for p in self.providers if p.name == name), None)

    @property
    def name(self) -> str:
        """What the pages for people call the site: its title, or its host when it has
        none."""
        return self.title.strip() or urlsplit(self.site_url).netloc


class ReadState:
    """The content versions one request saw, and the site as of those versions."""

    def __init__(self, versions: Versions, site: SiteSnapshot) -> None:
        self.versions = versions
        self.site = site

    def version_of(self, *names: str) -> tuple[tuple[str, int, str], ...]:
        """Number and time of the last change of each provider. The time is part of it
        because numbers start again from 0 when the database is recreated (or restored),
        and a version seen before must never name different content."""
        found = []
        for name in (SITE, *names):
            number, changed_at = self.versions.get(name, (0, None))
            found.append((name, number, changed_at.isoformat() if changed_at else ""))
        return tuple(found)

    def changed_at(self, *names: str) -> datetime | None:
        dates = [self.versions[n][1] for n in (SITE, *names) if n in self.versions]
        return max(dates) if dates else None


class Reader:
    """One per application: the engine, and the site snapshot of the last site version."""

    def __init__(self, site: Site) -> None:
        engine = site.database
        max_staleness: float = site.settings["sitemap_server.max_staleness"]
        self.site = site
        self.max_staleness = timedelta(seconds=max_staleness)
        self.engine = engine
        self.autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        # The versions, when no watch vouches for them. pysqlite opens no transaction for
        # a SELECT: switching its connection to autocommit and back (on every checkout)
        # would cost 7 % of a cached answer for nothing.
        self.versions_engine = engine if engine.dialect.name == "sqlite" else self.autocommit
        self.snapshot_of: tuple[Any, SiteSnapshot] | None = None
        watch = site.settings["sitemap_server.versions_watch"]
        recent = site.recent_documents
        self.watch = _watch(engine, max_staleness, recent) if watch else None
        # Until when (time.monotonic) a worker was last seen alive.
        self._worker_seen_until = 0.0
        if self.watch is not None:
            event.listen(engine, "engine_disposed", lambda _engine: self.close())

    def forget(self) -> None:
        """Read everything again (the tests reset the database between them)."""
        self.snapshot_of = None
        self._worker_seen_until = 0.0
        if self.site.recent_documents is not None:
            self.site.recent_documents.forget()
        if self.watch is not None:
            self.watch.forget()

    def prime_watch(self) -> None:
        """Connect the watch and compile its query (at start-up; nothing is applied)."""
        if self.watch is not None:
            self.watch.rows()

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()

    def state(self, conn: Connection | None = None, fresh: bool = False) -> ReadState:
        """The versions, on ``conn`` (a snapshot), or from the watch or an autocommit
        connection (after applying the change log when a change has waited longer than
        ``max_staleness``, and making any change that has come due). ``fresh``: from the
        database, never the watch (a request with ``Cache-Control: no-cache``, such as a
        purged cache's fetch, sees every commit before it)."""
        if conn is not None:
            return self._state(conn.execute(VERSIONS).all())
        rows = self.watch.rows() if self.watch is not None and not fresh else None
        if rows is None:
            with self.versions_engine.connect() as own:
                rows = own.execute(VERSIONS).all()
        state = self._state(rows)
        waiting, due = self._waiting(rows), self._due(rows, state)
        # Every answer must show every write before it (the tests), or the answer may be
        # late by up to ``max_staleness`` and this request need not wait for anyone.
        exact = not self.max_staleness
        worked = False
        if waiting and (exact or not self._worker_alive()):
            # Changes have waited too long and no worker runs: apply the oldest (a bounded
            # number; the next requests do the rest). Never by waiting for SQLite's write
            # lock, unless every answer must show every write before it. With a worker
            # alive the request leaves the log to it: helping would only compete with it.
            worked = self._contained(
                lambda: self.site.engine.apply_some(READER_CHANGES, wait=exact)
            )
        if due:
            # A scheduled change has come due, or a provider was never built: do it
            # before answering, so that no answer is stale (unless a maintainer is at
            # it this moment and answers may be late: then it is done by that one, or by
            # the next request).
            def bring_due() -> None:
                with self.site.sessions() as session, session.begin():
                    self.site.engine.catch_up(session, wait=exact)

            worked = self._contained(bring_due) or worked
        if worked:
            with self.versions_engine.connect() as own:
                state = self._state(own.execute(VERSIONS).all())
        return state

    def _worker_alive(self) -> bool:
        """Whether a worker is alive (``presence``), asked at most once per
        ``max_staleness`` while it is."""
        now = time.monotonic()
        if now < self._worker_seen_until:
            return True
        if worker_alive(self.engine):
            self._worker_seen_until = now + self.max_staleness.total_seconds()
            return True
        return False

    @staticmethod
    def _contained(work: Callable[[], Any]) -> bool:
        """Run maintenance ``work`` for a request: True when it ran. If it fails, the
        request is answered with what is stored: a reader never fails for the
        maintainer's sake. An outage (SQLite's disk full or its lock taken, a lock
        timeout) gets one line; if the database cannot even be read, the read itself
        answers 503. Anything else is a bug, logged with its traceback."""
        try:
            work()
        except OUTAGE as error:
            log.warning(
                "applying the change log before answering failed (%s: %s); answering with "
                "what is stored",
                *cause_of(error),
            )
            return False
        except Exception:
            log.exception(
                "applying the change log before answering failed; answering with what is stored"
            )
            return False
        return True

    def _state(self, rows: Any) -> ReadState:
        versions = {row.provider: (row.version, row.changed_at) for row in rows}
        return ReadState(versions, self.site_snapshot(versions.get(SITE)))

    def _waiting(self, rows: Any) -> bool:
        """Whether a change has waited in the change log longer than ``max_staleness``."""
        since = rows[0].waiting_since if rows else None
        return since is not None and since <= utcnow() - self.max_staleness

    @staticmethod
    def _due(rows: Any, state: ReadState) -> bool:
        """Whether the stored sitemaps miss a change that has come due, or a provider has
        no version at all (never built), or fragments of another template."""
        now = utcnow()
        if any(row.due_at is not None and row.due_at <= now for row in rows):
            return True
        rendered = {row.provider: row.rendered_with for row in rows}
        return any(
            rendered.get(provider.name) != render_key(provider.template, state.site.output_key)
            for provider in state.site.providers
        )

    def site_snapshot(self, site_version: Any) -> SiteSnapshot:
        cached = self.snapshot_of
        if cached is not None and cached[0] == site_version:
            return cached[1]
        # Read after the version, so never older than it: at worst newer, and then the
        # next request sees the newer version and reads again.
        with self.site.sessions() as session:
            settings = get_settings(session)
            providers = self.site.engine.providers(session)
            snapshot = SiteSnapshot(
                private=settings.private,
                site_url=effective_site_url(settings, self.site.site_url),
                providers=providers,
                title=settings.title or "",
                zone=site_zone(settings.timezone),
                output_key=settings_key(maintenance.output_of(session)),
                stylesheets={
                    **self.site.xsl_files,
                    **{p.xsl: p.xsl_asset for p in providers if p.xsl_asset is not None},
                },
            )
        self.snapshot_of = (site_version, snapshot)
        return snapshot

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A read-only transaction that sees one committed state of the database."""
        if self.engine.dialect.name == "sqlite":
            # pysqlite opens no transaction for a SELECT; an explicit BEGIN on an
            # autocommit connection does (WAL: readers never wait for the writer).
            with self.autocommit.connect() as conn:
                conn.exec_driver_sql("BEGIN")
                try:
                    yield conn
                finally:
                    conn.exec_driver_sql("ROLLBACK")
        else:
            repeatable = self.engine.execution_options(
                isolation_level="REPEATABLE READ", postgresql_readonly=True
            )
            with repeatable.connect() as conn, conn.begin():
                yield conn


def _watch(
    engine: Any, max_staleness: float, recent: Recent | None
) -> SQLiteWatch | PostgresWatch | None:
    """How this process keeps the versions between requests (``watch.py``): SQLite's commit
    count, exact, for a database in a file; PostgreSQL's notifications when an answer may
    be late by ``max_staleness`` (read again at least twice in that time, and with them
    the finished documents stored since, into ``recent``); else none."""
    if engine.dialect.name == "sqlite":
        return SQLiteWatch(engine, VERSIONS) if sqlite_file(engine) is not None else None
    if engine.dialect.name == "postgresql" and max_staleness > 0:
        return PostgresWatch(
            engine, VERSIONS, refresh=max_staleness / 2, also=recent.read if recent else None
        )
    return None
