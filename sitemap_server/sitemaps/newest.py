"""The newest listed post of an author or a term, brought up to date from the dates a
refresh changed instead of read again from every post the author or term has.

An edit dates its post now, so the newest post of its author and of each of its terms is
that post. Read again, the newest post of the author of 100,000 posts cost 66 ms and of
their category 146 ms, on every write (SQLite, ``bench/maintainer_bench.py --one-author``).

The post providers note each post they refresh: the date of its stored entry before and
after (``note``; None where it was or is not listed). For a group (an author's posts, or
those of a term and its descendants) whose entry is stored with the date ``L``, and ``C``
the newest date after among the noted posts now in the group:

- if no noted post was dated ``L`` before, ``L`` is the date of a post the refresh did not
  touch, which is still in the group with that date: the newest is ``max(L, C)``;
- else, if ``C >= L``, it is ``C``: every other post of the group is dated ``L`` at most;
- else the group is read again (the post that dated it became older, or left).

This holds while a post joins or leaves a group only through a write that the post
providers refresh it for (a post's author or terms). A term of a hierarchical taxonomy
written itself (moved under another parent, deleted, noindexed) may move whole subtrees
of posts between groups, listed or not: the terms provider reads every group of that
taxonomy again in a refresh that names a term none of the refreshed posts has. Anything
else (a post sitemap rebuilt whole, a provider that failed) leaves the dates unknown, and
every group is read again.

``newest_listed`` and ``dating_post`` read the stored entries themselves: the newest listed
post of a sitemap, and which listed post dates an entry (for ``explain``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Select, Table, bindparam, select
from sqlalchemy.orm import Session

from ..models import SitemapEntry
from .entries import StoredEntry
from .providers import BuildContext

# ``BuildContext.memo`` keys: post id -> (date before, date after) of the posts the post
# providers refreshed; set when those are not known; (with a provider's name) key -> date
# of its stored entries, as its refresh read them.
DATES = "newest.dates"
UNKNOWN = "newest.unknown"
STORED = "newest.stored"

_entries = cast(Table, SitemapEntry.__table__)
NEWEST_LISTED = (
    select(_entries.c.lastmod)
    .where(
        _entries.c.provider == bindparam("provider"),
        _entries.c.key > 0,
        _entries.c.lastmod.is_not(None),
    )
    .order_by(_entries.c.lastmod.desc())
    .limit(1)
)


def newest_listed(session: Session, provider: str) -> datetime | None:
    """The newest lastmod of the listed objects of the sitemap ``provider`` (a post type's:
    the date of its archive, and of the home page for posts), from the stored entries
    (``ix_sitemap_entries_provider_lastmod``)."""
    return session.scalar(NEWEST_LISTED, {"provider": provider})


def dating_post(
    session: Session,
    lastmod: datetime | None,
    providers: list[str],
    posts: Select[Any] | None = None,
) -> str:
    """ ": post 12", as ``explain`` names the post that dates an entry: the listed post of
    the sitemaps ``providers`` (among the ids ``posts`` selects, when given) stored with
    ``lastmod``, the lowest id of a tie; "" when there is none."""
    if lastmod is None:
        return ""
    conditions = [
        _entries.c.provider.in_(providers),
        _entries.c.key > 0,
        _entries.c.part == 1,
        _entries.c.lastmod == lastmod,
    ]
    if posts is not None:
        conditions.append(_entries.c.key.in_(posts))
    key = session.scalar(
        select(_entries.c.key).where(*conditions).order_by(_entries.c.key).limit(1)
    )
    return f": post {key}" if key is not None else ""


def note(
    ctx: BuildContext,
    keys: Iterable[int],
    before: dict[tuple[int, int], StoredEntry],
    after: dict[tuple[int, int], StoredEntry],
) -> None:
    """A post provider refreshed ``keys``: ``before`` and ``after`` are its entries by
    (key, part), as stored and as computed now. A post deleted is refreshed by every
    post provider, listed in one of them at most: the dates found are kept."""
    dates: dict[int, tuple[datetime | None, datetime | None]] = ctx.memo.setdefault(DATES, {})
    for key in keys:
        if key == 0:  # a home page or archive, not a post
            continue
        old, new = before.get((key, 1)), after.get((key, 1))
        noted = dates.get(key, (None, None))
        dates[key] = (
            noted[0] if old is None else old.lastmod,
            noted[1] if new is None else new.lastmod,
        )


def forget(ctx: BuildContext) -> None:
    """The posts' dates are not all known in this refresh (a post sitemap rebuilt whole,
    a refresh that failed): every group is read again."""
    ctx.memo[UNKNOWN] = True


def changed_dates(ctx: BuildContext) -> dict[int, tuple[datetime | None, datetime | None]] | None:
    """The noted posts' dates (before, after), or None when they are not known."""
    if ctx.memo.get(UNKNOWN):
        return None
    return cast(dict[int, tuple[datetime | None, datetime | None]], ctx.memo.get(DATES, {}))


def note_stored(
    ctx: BuildContext, provider: str, before: dict[tuple[int, int], StoredEntry]
) -> None:
    """What a refresh of ``provider`` read of its stored entries before recomputing them
    (``before``, as for ``note``): the dates ``kept_up`` starts from, not read twice."""
    ctx.memo[STORED, provider] = {
        key: entry.lastmod for (key, part), entry in before.items() if part == 1
    }


def stored(ctx: BuildContext, provider: str, keys: Iterable[int]) -> dict[int, datetime | None]:
    """The stored dates of those of ``keys`` that ``provider``'s refresh read (none
    outside a refresh: then every group is read again)."""
    found: dict[int, datetime | None] = ctx.memo.get((STORED, provider), {})
    return {key: found[key] for key in keys if key in found}


def kept_up(
    dates: dict[int, tuple[datetime | None, datetime | None]],
    stored: dict[int, datetime | None],
    members: dict[int, set[int]],
) -> dict[int, datetime]:
    """The newest post of each group of ``stored`` (its stored date) that follows from
    ``dates`` (the noted posts') and ``members`` (the noted posts now in each group); the
    groups left out are to be read again."""
    old_dates = {old for old, _new in dates.values() if old is not None}
    found: dict[int, datetime] = {}
    for group, date in stored.items():
        if date is None:
            continue
        news = [new for post in members.get(group, ()) if (new := dates[post][1]) is not None]
        newest = max(news, default=None)
        if date not in old_dates:
            found[group] = date if newest is None else max(date, newest)
        elif newest is not None and newest >= date:
            found[group] = newest
    return found
