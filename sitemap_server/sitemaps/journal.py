"""The change feed's journal: every URL the sitemaps list, and each they listed and no
longer do (a tombstone), at the number of its last change (S-705, ``GET /api/changes``).

The maintainer keeps it in the transaction in which it changes the entries. A refresh
notes the paths whose entries it added, changed or removed (``touched``), or that it
must look at every path (``everything``: a sitemap rebuilt without comparing, a sitemap
gone, the site made private or public). At the end of the pass (``record``) each such
path's state now (listed by any sitemap, with its newest lastmod; nothing while the site
is private) is compared with its row, and each difference takes the next number. A URL
has one row, so a reader who follows the feed from 0 meets each URL once, at its last
change, and ends with exactly what the sitemaps list; one who follows it from a cursor
meets each URL that changed since, once. The numbers only grow: one maintainer at a
time writes them (it holds the maintainer's lock), and its transaction shows them all
at once.

A tombstone is kept ``sitemap_server.changes.keep_days`` days at least: the passes that
change entries forget the older ones (``forget_tombstones``; a pass that changes none
costs the journal one read of its row). The feed then remembers the last number it
forgot (``horizon``), and a cursor before it is refused (410: read again from 0), since a
removal it should hear of is gone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, delete, exists, func, insert, select, update
from sqlalchemy.orm import Session

from ..batches import chunks
from ..models import ChangeFeed, ListedUrl, SitemapEntry

if TYPE_CHECKING:
    from .providers import BuildContext

# ``BuildContext.memo``: the paths a pass touched; whether it must look at every path.
TOUCHED = "journal.touched"
EVERYTHING = "journal.everything"
# Paths compared in one round of queries.
BATCH = 1000
ADDED, UPDATED, REMOVED = "added", "updated", "removed"

# The state now of some paths: those listed, with their newest date.
_LISTED = (
    select(SitemapEntry.path, func.max(SitemapEntry.lastmod))
    .where(SitemapEntry.path.in_(bindparam("paths", expanding=True)))
    .group_by(SitemapEntry.path)
)
_KNOWN = select(ListedUrl.path, ListedUrl.added_seq, ListedUrl.lastmod, ListedUrl.removed).where(
    ListedUrl.path.in_(bindparam("paths", expanding=True))
)
# Every listed path after ``after`` with its newest date, in order
# (``ix_sitemap_entries_path``).
_LISTED_AFTER = (
    select(SitemapEntry.path, func.max(SitemapEntry.lastmod))
    .where(SitemapEntry.path > bindparam("after"))
    .group_by(SitemapEntry.path)
    .order_by(SitemapEntry.path)
    .limit(BATCH)
)
# Every path the journal tells as listed, after ``after`` (a private site lists none).
_TOLD_AFTER = (
    select(ListedUrl.path)
    .where(ListedUrl.removed.is_(False), ListedUrl.path > bindparam("after"))
    .order_by(ListedUrl.path)
    .limit(BATCH)
)
# Journal rows of URLs no sitemap lists any more (a sitemap gone or rebuilt).
_ORPHANS = (
    select(ListedUrl.path)
    .where(
        ListedUrl.removed.is_(False),
        ListedUrl.path > bindparam("after"),
        ~exists().where(SitemapEntry.path == ListedUrl.path),
    )
    .order_by(ListedUrl.path)
    .limit(BATCH)
)


def touched(ctx: BuildContext, paths: Iterable[str]) -> None:
    """The entries of ``paths`` were added, changed or removed in this pass."""
    ctx.memo.setdefault(TOUCHED, set()).update(paths)


def everything(ctx: BuildContext) -> None:
    """Entries changed that were not compared: the pass looks at every path."""
    ctx.memo[EVERYTHING] = True


def record(ctx: BuildContext) -> None:
    """Bring the journal to what the sitemaps list now, for what this pass touched (at
    the end of the pass, in its transaction); forget tombstones past their time."""
    session = ctx.session
    feed = session.get(ChangeFeed, 1)
    if feed is None:  # made by the migration; a database without it has no feed
        return
    private = bool(ctx.settings.private)
    look_at_all = ctx.memo.pop(EVERYTHING, False) or feed.private != private
    paths = ctx.memo.pop(TOUCHED, set())
    if not look_at_all and not paths:
        return  # a pass that changed no entry: nothing to number, no tombstone made
    seq = feed.last_seq
    if look_at_all:
        for batch, listed in _every_path(session, private):
            seq = _compare(session, batch, listed, seq, ctx.now)
    else:
        for batch in chunks(sorted(paths), BATCH):
            rows = [] if private else session.execute(_LISTED, {"paths": batch}).all()
            listed = {path: lastmod for path, lastmod in rows}
            seq = _compare(session, batch, listed, seq, ctx.now)
    horizon = forget_tombstones(
        session, ctx.now, ctx.site.settings["sitemap_server.changes.keep_days"]
    )
    values: dict[str, Any] = {}
    if seq != feed.last_seq:
        values["last_seq"] = seq
    if private != feed.private:
        values["private"] = private
    if horizon is not None and horizon > feed.horizon:
        values["horizon"] = horizon
    if values:
        session.execute(update(ChangeFeed).where(ChangeFeed.id == 1).values(**values))
    session.expire(feed)


def _every_path(
    session: Session, private: bool
) -> Iterator[tuple[list[str], dict[str, datetime | None]]]:
    """In batches, every path a sitemap lists with its newest date, then every one the
    journal tells as listed that none lists (of a private site: every one it tells)."""
    after = ""
    while not private and (found := session.execute(_LISTED_AFTER, {"after": after}).all()):
        batch = {path: lastmod for path, lastmod in found}
        yield list(batch), batch
        after = found[-1][0]
    after = ""
    while paths := list(session.scalars(_TOLD_AFTER if private else _ORPHANS, {"after": after})):
        yield paths, {}
        after = paths[-1]


def _compare(
    session: Session,
    paths: list[str],
    listed: dict[str, datetime | None],
    seq: int,
    now: datetime,
) -> int:
    """Number each of ``paths`` whose state now (``listed``: those listed, with their
    newest date) differs from its row; the last number given."""
    known = {row.path: row for row in session.execute(_KNOWN, {"paths": paths})}
    rows: list[dict[str, Any]] = []
    for path in paths:  # in order: the batches come sorted
        row = known.get(path)
        if path in listed:
            lastmod = listed[path]
            if row is None or row.removed:
                seq += 1
                rows.append(_row(path, seq, seq, lastmod, now, False))
            elif row.lastmod != lastmod:
                seq += 1
                rows.append(_row(path, seq, row.added_seq, lastmod, now, False))
        elif row is not None and not row.removed:
            seq += 1
            rows.append(_row(path, seq, row.added_seq, row.lastmod, now, True))
    replaced = [row["path"] for row in rows if row["path"] in known]
    if replaced:
        session.execute(delete(ListedUrl).where(ListedUrl.path.in_(replaced)))
    if rows:
        session.execute(insert(ListedUrl), rows)
    return seq


def _row(
    path: str, seq: int, added_seq: int, lastmod: datetime | None, now: datetime, removed: bool
) -> dict[str, Any]:
    return {
        "path": path,
        "seq": seq,
        "added_seq": added_seq,
        "lastmod": lastmod,
        "changed_at": now,
        "removed": removed,
    }


def forget_tombstones(session: Session, now: datetime, keep_days: int) -> int | None:
    """Delete the tombstones older than ``keep_days``: the last number forgotten, or None."""
    old = (ListedUrl.removed.is_(True), ListedUrl.changed_at < now - timedelta(days=keep_days))
    last = session.scalar(select(func.max(ListedUrl.seq)).where(*old))
    if last is None:
        return None
    session.execute(delete(ListedUrl).where(*old))
    return int(last)


# Reading the feed ------------------------------------------------------------------------


class CursorRefused(Exception):
    """A cursor the feed cannot continue from: read it again from 0 (a 410)."""


@dataclass(frozen=True)
class Cursor:
    """Where a reader is: the feed's name (for this site URL) and the last number read."""

    name: str
    seq: int

    def __str__(self) -> str:
        return f"{self.name}.{self.seq}"


def feed_name(feed_id: str, site_url: str) -> str:
    """The feed's name in cursors: another site URL makes every URL another, so its
    readers start again from 0."""
    return hashlib.blake2b(f"{feed_id} {site_url}".encode(), digest_size=6).hexdigest()


def read_changes(
    session: Session, since: str, limit: int, site_url: str
) -> tuple[list[dict[str, Any]], Cursor, bool, bool]:
    """The changes after ``since`` ("0", or a cursor from an earlier answer), ``limit``
    at most: each URL's (``url``, ``change``, ``lastmod``, ``at``), the cursor after
    them, whether more follow, and whether the site is private (the feed then says
    every URL removed). Raises ``CursorRefused`` for a cursor of another feed or site URL,
    before the tombstones' horizon, or past the feed's end."""
    feed = session.get(ChangeFeed, 1)
    if feed is None:
        raise CursorRefused("this database has no change feed (run sitemap-server migrate)")
    name = feed_name(feed.feed_id, site_url)
    after = 0
    if since != "0":
        given, _, number = since.partition(".")
        after = int(number)
        if given != name:
            raise CursorRefused(
                "the cursor is of another feed: the database was made again, or the site "
                "URL changed and with it every URL; read the feed again from since=0"
            )
        if after < feed.horizon:
            raise CursorRefused(
                f"the feed no longer has the removals after {after}: tombstones are kept "
                "sitemap_server.changes.keep_days days; read the feed again from since=0"
            )
        if after > feed.last_seq:
            raise CursorRefused(
                f"the cursor is past the feed's end ({feed.last_seq}): the database was "
                "restored from an earlier copy; read the feed again from since=0"
            )
    rows = list(
        session.scalars(
            select(ListedUrl).where(ListedUrl.seq > after).order_by(ListedUrl.seq).limit(limit + 1)
        )
    )
    more = len(rows) > limit
    rows = rows[:limit]
    changes = [
        {
            "url": site_url + row.path,
            "change": REMOVED if row.removed else ADDED if row.added_seq > after else UPDATED,
            "lastmod": row.lastmod.isoformat() if row.lastmod else None,
            "at": row.changed_at.isoformat(),
        }
        for row in rows
    ]
    cursor = Cursor(name, rows[-1].seq if rows else after)
    return changes, cursor, more, feed.private
