"""Whether a worker is alive: then a sitemap request never applies the change log itself.

A request that finds a change waiting longer than ``max_staleness`` applies some of it
(``reader.Reader.state``), so a site without a worker still converges. With a worker
running, that help only hurts: under read load every crawler request would compete with
the worker for its lock and its CPU, and the change log would be applied by whichever
request won, in small batches, while reads slowed (issue 29: writes 10 s late, reads at
a fifth of their rate). So each worker holds a mark for as long as it lives, which the
operating system or the database drops the moment it dies, and a reader asks for it:

- PostgreSQL: a session-level shared advisory lock, held on a connection of the
  worker's own. A reader tries the same lock exclusively, in a statement of its own
  (autocommit): it is refused while any worker holds the shared one. A killed worker's
  connection closes and the lock goes with it (``models.get_engine`` makes the backend
  notice a dead client within seconds, even mid-statement).
- SQLite (a database in a file): a shared ``flock`` on a file beside the database
  (``sitemap-server.sqlite-worker``), held on an open file for the worker's life; a
  reader's exclusive try on a descriptor of its own is refused while any worker, in
  this process or another, holds it. The kernel releases it when the process dies.
"""

from __future__ import annotations

import fcntl
import logging
import os
import zlib
from typing import IO, Any

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

from ..models import sqlite_file

log = logging.getLogger(__name__)

# The advisory lock that stands for "a worker is alive" (apart from the maintainer's).
PRESENCE_KEY = zlib.crc32(b"sitemap_server.worker_alive")
LOCK_FILE_SUFFIX = "-worker"


def _lock_file(engine: Engine) -> str | None:
    database = sqlite_file(engine)
    return None if database is None else database + LOCK_FILE_SUFFIX


class Presence:
    """A worker's mark that it is alive (``hold`` each pass; ``release`` on stopping, or
    after its connection failed, to take it again on the next ``hold``)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._connection: Connection | None = None
        self._file: IO[Any] | None = None

    def hold(self) -> None:
        if self.engine.dialect.name == "postgresql":
            if self._connection is None:
                connection = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
                connection.execute(
                    text("SELECT pg_advisory_lock_shared(:key)"), {"key": PRESENCE_KEY}
                )
                self._connection = connection
            return
        path = _lock_file(self.engine)
        if path is not None and self._file is None:
            handle = open(path, "a+b")  # noqa: SIM115 (held open for the worker's life)
            try:
                fcntl.flock(handle, fcntl.LOCK_SH)
            except OSError:
                handle.close()
                raise
            self._file = handle

    def release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.invalidate()  # the lock goes with the connection
                connection.close()
            except Exception:  # an outage: the connection is gone already
                log.debug("closing the worker's presence connection", exc_info=True)
        handle, self._file = self._file, None
        if handle is not None:
            handle.close()


def worker_alive(engine: Engine) -> bool:
    """Whether some worker holds its mark now (one statement on PostgreSQL, one system
    call on SQLite). False for a database in memory, which no other process reaches."""
    if engine.dialect.name == "postgresql":
        autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        with autocommit.connect() as connection:
            free = connection.scalar(
                text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": PRESENCE_KEY}
            )
        return not free
    path = _lock_file(engine)
    if path is None or not os.path.exists(path):
        return False
    with open(path, "rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False
