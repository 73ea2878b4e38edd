"""What a write changed: collected during its transaction, recorded in the change log
(``sitemap_changes``) that the maintainer applies, and handed to the plugins.

``record`` is the one verb for it, whoever writes (the services, a plugin through
``Engine.record``); ``note`` collects what a write is about to change before it changes
it (the author and terms a post leaves), for the ``record`` that follows; ``held_back``
holds every change of a bulk write (an import, the demo) until it ends. What a session
collects lives in one object on it (``Writes``), under one key."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, Table, bindparam, delete, func, insert, select, text
from sqlalchemy.orm import Session

from ..batches import chunks
from ..models import SitemapChange, site_of
from ..models.meta import utcnow


@dataclass
class ContentChanges:
    """Ids of what was created, changed or deleted; ``everything`` for site-wide changes."""

    posts: set[int] = field(default_factory=set)
    authors: set[int] = field(default_factory=set)
    terms: set[int] = field(default_factory=set)
    everything: bool = False
    # Only site-wide answers changed (privacy, title): a new site version, no entry moves.
    site: bool = False
    # Every sitemap is new to search engines: the site stopped being private, or moved.
    whole_site: bool = False
    # Providers to rebuild whole: what they list depends on something else that changed
    # (a plugin's own settings).
    providers: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return (
            self.everything
            or self.site
            or self.whole_site
            or bool(self.posts or self.authors or self.terms or self.providers)
        )

    def merge(self, other: ContentChanges) -> None:
        self.posts |= other.posts
        self.authors |= other.authors
        self.terms |= other.terms
        self.everything |= other.everything
        self.site |= other.site
        self.whole_site |= other.whole_site
        self.providers |= other.providers


@dataclass
class Writes:
    """What one session's writes changed: collected until they are recorded, held back
    during a bulk write, and the number of the last change-log row it wrote."""

    pending: ContentChanges = field(default_factory=ContentChanges)
    held_back: bool = False
    last_change: int | None = None


# Where a session's ``info`` holds its ``Writes``.
WRITES = "sitemap_server.writes"


def writes_of(session: Session) -> Writes:
    """The ``Writes`` of ``session`` (made with its first write)."""
    found: Writes | None = session.info.get(WRITES)
    if found is None:
        found = session.info[WRITES] = Writes()
    return found


def note(
    session: Session,
    *,
    posts: set[int] | set[int | None] | None = None,
    authors: set[int] | set[int | None] | None = None,
    terms: set[int] | set[int | None] | None = None,
    everything: bool = False,
    site: bool = False,
    whole_site: bool = False,
    providers: set[str] | None = None,
) -> None:
    """Collect a change without recording it yet: what a write is about to change before
    it changes it (a post's author and terms before a PATCH moves it); the next
    ``record`` of the session records it too."""
    writes_of(session).pending.merge(
        ContentChanges(
            posts={p for p in posts or () if p is not None},
            authors={a for a in authors or () if a is not None},
            terms={t for t in terms or () if t is not None},
            everything=everything,
            site=site,
            whole_site=whole_site,
            providers=set(providers or ()),
        )
    )


def record(session: Session, **what: Any) -> None:
    """Record what a write changed, in its transaction: ``posts``, ``authors``, ``terms``
    (ids), ``providers`` (names of sitemaps to rebuild whole), ``site`` (site-wide answers
    changed), ``whole_site``, ``everything``; with what was ``note``d before. It goes to
    the change log, which the maintainer applies after commit, and to the plugins'
    ``sitemap_content_changed``, now. In a bulk write (``held_back``), at its end, or
    whenever ``HELD_POSTS`` posts wait: held whole, the changes of a million-post import
    were its largest object (60 MiB of ids)."""
    note(session, **what)
    writes = writes_of(session)
    if writes.held_back and len(writes.pending.posts) < HELD_POSTS:
        return
    changes, writes.pending = writes.pending, ContentChanges()
    if changes:
        log(session, changes)
        site = site_of(session)
        site.plugins.hook.sitemap_content_changed(session=session, changes=changes, site=site)
        session.flush()


@contextmanager
def held_back(session: Session) -> Iterator[None]:
    """Hold back what the block records and record it at once when it ends (or in parts
    of ``HELD_POSTS`` posts): one refresh of many keys is far cheaper than many of one,
    and nobody can see the state in between (an import, the demo are one transaction).
    Nothing is recorded if it fails."""
    writes = writes_of(session)
    writes.held_back = True
    try:
        yield
    finally:
        writes.held_back = False
    record(session)


def holding_back(session: Session) -> bool:
    """Whether ``session`` is in a bulk write (``held_back``)."""
    writes: Writes | None = session.info.get(WRITES)
    return writes is not None and writes.held_back


def last_change(session: Session) -> int | None:
    """The number of the last change-log row ``session`` wrote (None: it wrote none)."""
    writes: Writes | None = session.info.get(WRITES)
    return None if writes is None else writes.last_change


@dataclass(frozen=True)
class UrlChange:
    """One URL of a sitemap that a crawler should look at again."""

    url: str  # absolute
    change: str  # "added", "updated" or "removed" (deleted, or no longer listed)


# The kinds of change-log rows that are flags; "provider" names a provider to rebuild; the
# others name an object (``_objects``).
FLAGS = ("site", "whole_site", "everything")
PROVIDER = "provider"
LOG_BATCH = 10_000
# The posts a bulk write (``held_back``) holds back before it records them.
HELD_POSTS = 50_000
# The change log's statements that every write or pass sends, built once (building one
# costs more than running it).
_log = cast(Table, SitemapChange.__table__)
RECORD = insert(_log).returning(_log.c.id)
CLAIM = (
    delete(_log)
    .where(
        _log.c.id
        <= func.coalesce(
            select(_log.c.id)
            .order_by(_log.c.id)
            .offset(bindparam("skip"))
            .limit(1)
            .scalar_subquery(),
            select(func.max(_log.c.id)).scalar_subquery(),
        )
    )
    .returning(_log.c.kind, _log.c.object_id, _log.c.provider)
)


# When the oldest change still waiting was recorded (None: none waits).
OLDEST_WAITING = (
    select(SitemapChange.recorded_at).order_by(SitemapChange.id).limit(1).scalar_subquery()
)


def _objects(changes: ContentChanges) -> dict[str, set[int]]:
    """The change-log kind of each set of ids in ``changes``."""
    return {"post": changes.posts, "author": changes.authors, "term": changes.terms}


# The change log's sequence: where its numbers are (see ``Waiting.newest_number``).
NEWEST_NUMBER_POSTGRESQL = text(
    "SELECT pg_sequence_last_value(pg_get_serial_sequence('sitemap_changes', 'id')::regclass)"
)
NEWEST_NUMBER_SQLITE = text("SELECT seq FROM sqlite_sequence WHERE name = 'sitemap_changes'")


def log(session: Session, changes: ContentChanges) -> None:
    """Record ``changes`` in the change log, in the writing transaction (one multi-row
    insert per 10,000 rows, made as they are sent: a bulk write's million changes are
    never all rows at once); the number of the last row is kept in the session's
    ``Writes``, for the API to give the client (``Sitemap-Change``)."""
    writes = writes_of(session)
    for batch in chunks(_log_rows(changes, utcnow()), LOG_BATCH):
        numbers = session.scalars(RECORD, batch).all()
        writes.last_change = max([*numbers, writes.last_change or 0])


def _log_rows(changes: ContentChanges, now: datetime) -> Iterator[dict[str, Any]]:
    for flag in FLAGS:
        if getattr(changes, flag):
            yield {"recorded_at": now, "kind": flag, "object_id": None, "provider": None}
    for name in sorted(changes.providers):
        yield {"recorded_at": now, "kind": PROVIDER, "object_id": None, "provider": name}
    for kind, ids in _objects(changes).items():
        for object_id in sorted(ids):
            yield {"recorded_at": now, "kind": kind, "object_id": object_id, "provider": None}


@dataclass(frozen=True)
class Waiting:
    """What waits in the change log: how many changes, recorded when the oldest was."""

    count: int
    oldest: datetime | None

    @classmethod
    def read(cls, session: Session) -> Waiting:
        count, oldest = session.execute(
            select(func.count(), OLDEST_WAITING).select_from(SitemapChange)
        ).one()
        return cls(count, oldest)

    @staticmethod
    def newest_number(session: Session) -> int:
        """The largest change number ever given (0 before the first), applied or not:
        numbers never go back (``SitemapChange``). On PostgreSQL a number taken by a write
        that rolled back counts too; it never names anything else."""
        if session.get_bind().dialect.name == "postgresql":
            newest = session.scalar(NEWEST_NUMBER_POSTGRESQL)
        else:
            newest = session.scalar(NEWEST_NUMBER_SQLITE)
        return int(newest or 0)

    @staticmethod
    def applied(session: Session, change: int) -> bool:
        """Whether change ``change`` and every one recorded before it are applied."""
        return (
            session.scalar(select(SitemapChange.id).where(SitemapChange.id <= change).limit(1))
            is None
        )


def claim(session: Session, limit: int) -> tuple[ContentChanges, int]:
    """Take the oldest ``limit`` rows of the change log (deleted in this transaction, so
    they are gone only if what applies them commits): what they record, and how many."""
    # The ``limit``-th oldest id (or, with fewer rows, the newest) bounds a range: both
    # are scalar subqueries run once, so the plan is one walk of the primary key whatever
    # the statistics say. ``id IN (SELECT … LIMIT n)`` once ran 7 minutes on PostgreSQL
    # under statistics taken in the middle of an import (a join that read the log again
    # for each row), where the range takes 0.2 s.
    taken = session.execute(CLAIM, {"skip": limit - 1}).all()
    return merged(taken), len(taken)


def holds_at_least(session: Session, count: int) -> bool:
    """Whether the change log holds ``count`` rows or more (counting no further)."""
    some = select(SitemapChange.id).limit(count).subquery()
    return session.scalar(select(func.count()).select_from(some)) == count


def clear(session: Session) -> int:
    """Take every row of the change log (a rebuild applies them all); how many."""
    result: CursorResult[Any] = session.execute(delete(SitemapChange))  # type: ignore[assignment]
    return result.rowcount or 0


def merged(rows: Iterable[Any]) -> ContentChanges:
    """One ``ContentChanges`` for change-log rows of (kind, object_id, provider)."""
    changes = ContentChanges()
    targets = _objects(changes)
    for kind, object_id, provider in rows:
        if kind in targets and object_id is not None:
            targets[kind].add(object_id)
        elif kind == PROVIDER and provider is not None:
            changes.providers.add(provider)
        elif kind in FLAGS:
            setattr(changes, kind, True)
    return changes
