"""Knowing the stored versions without a query on every request.

Every sitemap request needs the versions (``reader.VERSIONS``): they name the document
(its ETag, its cache key) and say whether a change has waited too long. Read on every
request, they were most of what a cached answer cost. A watch keeps them per process and
reads them again only when the database says they may have changed:

- ``SQLiteWatch``: SQLite counts the commits of other connections (``PRAGMA
  data_version``, per connection). While the count on the watch's own connection stands
  still, nothing in the database has changed and the rows read before still hold. Exact:
  a request sees every commit made before it.
- ``PostgresWatch``: every change of ``sitemap_versions`` notifies ``sitemap_versions``
  (a trigger, migration 0009), and a thread of the process listens on a connection of its
  own and reads the rows again when told, and every ``refresh`` seconds anyway (the oldest
  waiting change is in the rows too, and writes do not notify). A request that comes
  between a commit and the thread's next read (about a millisecond) still sees the
  versions before it: the reader uses it only when ``max_staleness`` allows an answer to
  be that late (not in the tests, which set it to 0). After each read, it reads what else
  the process keeps up to date (``also``: the finished documents stored since its last
  read, ``finished.Recent``), before the requests see the new versions.

``rows()`` answers None when the watch cannot vouch for its rows (not started yet, the
connection lost, the thread behind): the reader then reads them itself, as it always did.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, create_engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool, StaticPool

log = logging.getLogger(__name__)

CHANNEL = "sitemap_versions"
# Seconds between the listening thread's looks at whether it should stop, or read again.
STOP_CHECK = 0.5


class SQLiteWatch:
    """The versions, read again only after another connection has committed."""

    def __init__(self, engine: Engine, versions: Any) -> None:
        # One connection of its own (the pool's are shared by every request), used by one
        # thread at a time.
        self.engine = create_engine(
            engine.url, poolclass=StaticPool, connect_args={"check_same_thread": False}
        )
        self.versions = versions
        self.lock = threading.Lock()
        self.conn: Connection | None = None
        self.cursor: Any = None
        self.seen: int | None = None
        self.rows_read: Sequence[Any] | None = None
        self.pid = os.getpid()

    def rows(self) -> Sequence[Any] | None:
        with self.lock:
            if self.pid != os.getpid():
                # A fork: the parent's connection is not this process's to use.
                self.engine.dispose(close=False)
                self._drop()
                self.pid = os.getpid()
            try:
                if self.conn is None:
                    self.conn = self.engine.connect()
                    driver = self.conn.connection.driver_connection
                    assert driver is not None
                    self.cursor = driver.cursor()
                # Read before the rows: a commit that lands in between changes the count
                # again, and the next request reads them again. (The driver's cursor
                # itself: a couple of microseconds, where a statement through
                # SQLAlchemy costs a hundred.)
                count = self.cursor.execute("PRAGMA data_version").fetchone()[0]
                if count != self.seen or self.rows_read is None:
                    self.rows_read = self.conn.execute(self.versions).all()
                    self.conn.rollback()  # pysqlite began nothing for a SELECT
                    self.seen = count
                return self.rows_read
            except (sqlite3.Error, DBAPIError) as exc:
                # The reader reads the versions itself, and meets the same problem with
                # SQLAlchemy's errors (a 503 when the database cannot answer).
                log.info("the sitemap versions were read without the watch: %s", exc)
                if self.conn is not None:
                    self.conn.invalidate()
                self._drop(close=True)
                return None

    def forget(self) -> None:
        with self.lock:
            self.seen = self.rows_read = None

    def _drop(self, close: bool = False) -> None:
        """Forget the connection (closed with ``close``) and what was read on it."""
        if close and self.conn is not None:
            self.conn.close()
        self.conn = self.cursor = self.seen = self.rows_read = None

    def close(self) -> None:
        with self.lock:
            self._drop(close=True)
        self.engine.dispose()


class PostgresWatch:
    """The versions, read again by a listening thread when PostgreSQL notifies a change."""

    def __init__(
        self,
        engine: Engine,
        versions: Any,
        refresh: float,
        also: Callable[[Connection, Sequence[Any]], None] | None = None,
    ) -> None:
        self.engine = create_engine(
            engine.url,
            poolclass=NullPool,
            isolation_level="AUTOCOMMIT",
            # What pg_stat_activity shows of its connection.
            connect_args={"application_name": "sitemap-server versions watch"},
        )
        self.versions = versions
        self.refresh = refresh
        self.also = also
        self.rows_read: Sequence[Any] | None = None
        self.read_at = 0.0
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.pid: int | None = None  # of the process whose thread listens
        self.read_again = threading.Event()

    def rows(self) -> Sequence[Any] | None:
        if self.pid != os.getpid():
            self._start()  # in the process that serves (a fork has no thread of its own)
        rows, read_at = self.rows_read, self.read_at
        if rows is None or time.monotonic() - read_at > 2 * self.refresh + 1:
            return None  # not read yet, or the thread is stuck or reconnecting
        return rows

    def forget(self) -> None:
        """Until the thread reads them again (within ``STOP_CHECK``), the requests read the
        versions themselves."""
        self.rows_read = None
        self.read_again.set()

    @property
    def listening(self) -> bool:
        return self.thread is not None and self.thread.is_alive() and self.rows_read is not None

    def _start(self) -> None:
        with self.lock:
            if self.pid != os.getpid():
                self.pid = os.getpid()
                self.rows_read = None  # the parent's, as it was at the fork
                self.stopping.set()  # (a fork copies no thread: none to stop but in tests)
                self.stopping = threading.Event()
                self.thread = threading.Thread(
                    target=self._run,
                    args=(self.stopping,),
                    name="sitemap-versions-watch",
                    daemon=True,
                )
                self.thread.start()

    def _run(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            try:
                self._listen(stopping)
            except Exception as exc:  # the requests read the versions themselves meanwhile
                self.rows_read = None
                log.warning("watching the sitemap versions: %s; again in a second", exc)
                stopping.wait(1.0)

    def _listen(self, stopping: threading.Event) -> None:
        with self.engine.connect() as conn:
            # Listening before the first read: no commit falls between the two.
            conn.exec_driver_sql(f"LISTEN {CHANNEL}")
            driver = conn.connection.driver_connection
            assert driver is not None
            while not stopping.is_set():
                self.read_again.clear()  # before the read: a forget() during it counts
                rows = conn.execute(self.versions).all()
                if self.also is not None:
                    self.also(conn, rows)
                self.rows_read, self.read_at = rows, time.monotonic()
                self._wait(driver, stopping)

    def _wait(self, driver: Any, stopping: threading.Event) -> None:
        """Until a notification (the next read covers all that came meanwhile), or
        ``refresh`` seconds, or ``forget`` or ``close``: ``STOP_CHECK`` seconds at most
        between looks at those two."""
        deadline = time.monotonic() + self.refresh
        while not stopping.is_set() and not self.read_again.is_set():
            left = deadline - time.monotonic()
            if left <= 0 or any(driver.notifies(timeout=min(left, STOP_CHECK), stop_after=1)):
                return

    def close(self) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=2 * STOP_CHECK + 1)
        self.engine.dispose()
