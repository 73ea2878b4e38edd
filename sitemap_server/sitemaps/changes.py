"""What a write changed: collected during its transaction, handed to the hooks, and
recorded in the change log (``sitemap_changes``) that the maintainer applies."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, Table, bindparam, delete, func, insert, select, text
from sqlalchemy.orm import Session

from ..models import SitemapChange, site_of
from ..models.meta import utcnow

PENDING = "sitemap_server.pending_changes"


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


def record(
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
    """Note a change; it is handed to ``sitemap_content_changed`` at the next service flush."""
    pending: ContentChanges = session.info.setdefault(PENDING, ContentChanges())
    pending.merge(
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


def take(session: Session) -> ContentChanges:
    return session.info.pop(PENDING, None) or ContentChanges()


def changed(session: Session, **what: Any) -> None:
    """Record what a write changed (``record``) and run ``sitemap_content_changed`` now
    (``dispatch_changes``): what every write does, through the services or the engine."""
    record(session, **what)
    dispatch_changes(session)


# session.info: set while a bulk write (an import, the demo) holds its changes back.
DEFER_CHANGES = "sitemap_server.defer_changes"


def dispatch_changes(session: Session) -> None:
    """Hand what changed to ``sitemap_content_changed``, in this same transaction.

    While ``session.info[DEFER_CHANGES]`` is set (a bulk import), changes accumulate and
    are handed over once, when the caller dispatches after clearing it.
    """
    if session.info.get(DEFER_CHANGES):
        return
    changes = take(session)
    if changes:
        site_of(session).plugins.hook.sitemap_content_changed(session=session, changes=changes)
        session.flush()


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

# session.info: the number of the last change-log row this session recorded.
LAST_CHANGE = "sitemap_server.last_change"


def log(session: Session, changes: ContentChanges) -> None:
    """Record ``changes`` in the change log, in the writing transaction (one multi-row
    insert per 10,000 rows); the number of the last row is kept in ``session.info``
    (``LAST_CHANGE``), for the API to give the client (``Sitemap-Change``)."""
    now = utcnow()
    rows: list[dict[str, Any]] = [
        {"recorded_at": now, "kind": flag, "object_id": None, "provider": None}
        for flag in FLAGS
        if getattr(changes, flag)
    ]
    rows.extend(
        {"recorded_at": now, "kind": PROVIDER, "object_id": None, "provider": name}
        for name in sorted(changes.providers)
    )
    for kind, ids in _objects(changes).items():
        rows.extend(
            {"recorded_at": now, "kind": kind, "object_id": i, "provider": None}
            for i in sorted(ids)
        )
    for start in range(0, len(rows), LOG_BATCH):
        numbers = session.scalars(RECORD, rows[start : start + LOG_BATCH]).all()
        session.info[LAST_CHANGE] = max([*numbers, session.info.get(LAST_CHANGE, 0)])


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
