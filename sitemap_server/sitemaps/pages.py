"""Cutting a provider's stored entries into pages (``sitemap_pages``), and their dates.

A page holds ``entries_per_page`` entries in (key, part) order, fewer when they would pass
the byte limit (S-310); every page but the last is full, so counts are exact. After a
change the maintainer recuts from the first page whose membership changed
(``recut_pages``); when only dates changed it recomputes the newest date of the pages
concerned (``refresh_page_dates``). Either way it renders the page's entry in the index
(``sitemap_pages.xml``, ``rendering.index_fragment``).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Integer,
    Row,
    Select,
    Table,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.orm import Session

from ..batches import chunks
from ..documents import SITEMAPS_PER_INDEX
from ..models import SitemapEntry, SitemapPage
from . import touched
from .providers import BuildContext
from .rendering import index_fragment

# The statements of the common case (a few entries changed), built once with bound
# parameters: building one costs the maintainer more than running it.
_ENTRIES = cast(Table, SitemapEntry.__table__)
_PAGES = cast(Table, SitemapPage.__table__)
_position = tuple_(_ENTRIES.c.key, _ENTRIES.c.part)
_key = functools.partial(bindparam, type_=BigInteger)
_part = functools.partial(bindparam, type_=Integer)
# The entries of one page: a range of the primary key (``page_range`` gives the
# parameters). The read path selects a page's fragments with it (``views.ENTRIES``).
IN_PAGE = (
    _ENTRIES.c.provider == bindparam("name"),
    _position >= tuple_(_key("first_key"), _part("first_part")),
    _position <= tuple_(_key("last_key"), _part("last_part")),
)
PAGE_SIZE = select(func.sum(_ENTRIES.c.size)).where(*IN_PAGE)
PAGE_NEWEST = select(func.max(_ENTRIES.c.lastmod)).where(*IN_PAGE)
SET_PAGE_DATE = (
    update(_PAGES)
    .where(_PAGES.c.provider == bindparam("p"), _PAGES.c.page == bindparam("n"))
    .values(lastmod=bindparam("lastmod"), xml=bindparam("xml"))
)
# Pages holding one of some keys are found by a statement built once for each power of
# two of keys from 8 to this many (the last key repeated up to it), more keys in batches
# of this many: building a statement of hundreds of ranges cost a maintainer's pass more
# than all its queries (bench/varnish_bench.py, the worker under py-spy). 256 ranges stay
# well within what SQLite parses (an expression 1,000 deep).
HOLDING_BUILT = 256


def overfull_pages(ctx: BuildContext, provider: str, keys: set[int]) -> list[Row[Any]]:
    """The pages holding ``keys`` whose entries now pass the byte limit, in order."""
    found = []
    for page in _pages_holding(ctx.session, provider, keys):
        size = ctx.session.scalar(PAGE_SIZE, page_range(provider, page))
        if (size or 0) > ctx.page_bytes:
            found.append(page)
    return found


def page_numbers_holding(ctx: BuildContext, provider: str, keys: set[int]) -> list[int]:
    """The numbers of the pages of ``provider`` holding any of ``keys``: up to
    ``HOLDING_BUILT`` keys by their ranges, more by reading every page's bounds once."""
    if len(keys) <= HOLDING_BUILT:
        return [page.page for page in _pages_holding(ctx.session, provider, keys)]
    bounds = ctx.session.execute(
        select(_PAGES.c.page, _PAGES.c.first_key, _PAGES.c.last_key)
        .where(_PAGES.c.provider == provider)
        .order_by(_PAGES.c.page)
    ).all()
    firsts = [row.first_key for row in bounds]
    found = set()
    for key in keys:
        at = bisect.bisect_right(firsts, key) - 1
        if at >= 0 and bounds[at].last_key >= key:
            found.add(bounds[at].page)
    return sorted(found)


def _pages_holding(session: Session, provider: str, keys: set[int]) -> list[Row[Any]]:
    """The pages (rows of ``sitemap_pages``) holding any of ``keys``, in order."""
    found: dict[int, Row[Any]] = {}
    for batch in chunks(sorted(keys), HOLDING_BUILT):
        count = max(8, 1 << (len(batch) - 1).bit_length())
        padded = batch + [batch[-1]] * (count - len(batch))
        parameters = {"provider": provider, **{f"k{n}": key for n, key in enumerate(padded)}}
        found.update((row.page, row) for row in session.execute(_holding(count), parameters))
    return [found[page] for page in sorted(found)]


@functools.cache
def _holding(count: int) -> Select[Any]:
    """The pages holding one of ``count`` keys (bound as ``k0`` …)."""
    ranges = [
        and_(_PAGES.c.first_key <= bindparam(f"k{n}"), _PAGES.c.last_key >= bindparam(f"k{n}"))
        for n in range(count)
    ]
    return (
        select(_PAGES)
        .where(_PAGES.c.provider == bindparam("provider"), or_(*ranges))
        .order_by(_PAGES.c.page)
    )


def page_range(provider: str, page: Any) -> dict[str, Any]:
    """The parameters of ``IN_PAGE`` for ``page`` (a row of ``sitemap_pages``) of
    ``provider``, with its number of entries (``entries``, a LIMIT)."""
    return {
        "name": provider,
        "first_key": page.first_key,
        "first_part": page.first_part,
        "last_key": page.last_key,
        "last_part": page.last_part,
        "entries": page.entries,
    }


# The next entries of a page, after the (key, part) of the previous page's last one.
NEXT_ENTRIES = (
    select(_ENTRIES.c.key, _ENTRIES.c.part, _ENTRIES.c.lastmod, _ENTRIES.c.size)
    .where(
        _ENTRIES.c.provider == bindparam("provider"),
        _position > tuple_(_key("key"), _part("part")),
    )
    .order_by(_ENTRIES.c.key, _ENTRIES.c.part)
    .limit(_part("count"))
)
# Before every (key, part) that can be stored (parts start at 1).
BEFORE_ALL = (-(2**63), 0)


def recut_pages(ctx: BuildContext, provider: str, from_key: int | None) -> None:
    """Cut the provider's entries into pages again, from the page holding ``from_key``.

    One query per page reads the next ``entries_per_page`` entries' positions, dates and
    sizes; the page ends there, or earlier at the last entry that fits the byte limit
    (at least one entry a page). The pages are stored in one statement."""
    session = ctx.session
    per_page = ctx.settings.entries_per_page
    start_page = 1
    if from_key is not None:
        holding = session.scalar(
            select(func.min(_PAGES.c.page)).where(
                _PAGES.c.provider == provider, _PAGES.c.last_key >= from_key
            )
        )
        if holding is None:  # beyond the end: the last page may have room for it
            holding = session.scalar(
                select(func.max(_PAGES.c.page)).where(_PAGES.c.provider == provider)
            )
        start_page = holding or 1
    cursor: tuple[int, int] | None = None
    if start_page > 1:
        previous = session.execute(
            select(_PAGES.c.last_key, _PAGES.c.last_part).where(
                _PAGES.c.provider == provider, _PAGES.c.page == start_page - 1
            )
        ).one()
        cursor = (previous.last_key, previous.last_part)
    old = {
        row.page: row
        for row in session.execute(
            select(*(_PAGES.c[name] for name in _CUT)).where(
                _PAGES.c.provider == provider, _PAGES.c.page >= start_page
            )
        )
    }
    session.execute(
        delete(_PAGES).where(_PAGES.c.provider == provider, _PAGES.c.page >= start_page)
    )
    pages: list[dict[str, Any]] = []
    page = start_page
    key, part = cursor or BEFORE_ALL
    while True:
        parameters = {"provider": provider, "key": key, "part": part, "count": per_page}
        rows = _fitting(session.execute(NEXT_ENTRIES, parameters).all(), ctx.page_bytes)
        if not rows:
            break
        dates = [row.lastmod for row in rows if row.lastmod is not None]
        newest = max(dates) if dates else None
        first, last = rows[0], rows[-1]
        pages.append(
            {
                "provider": provider,
                "page": page,
                "first_key": first.key,
                "first_part": first.part,
                "last_key": last.key,
                "last_part": last.part,
                "entries": len(rows),
                "lastmod": newest,
                "xml": index_fragment(provider, page, newest, ctx.zone),
            }
        )
        key, part = last.key, last.part
        page += 1
    for batch in chunks(pages):
        session.execute(insert(_PAGES), batch)
    _note_recut(ctx, provider, old, pages)


# What a page's cut is (``recut_pages`` compares it): its number, bounds and count; and
# what the index shows of it besides.
_CUT = ("page", "first_key", "first_part", "last_key", "last_part", "entries", "lastmod")


def _note_recut(
    ctx: BuildContext, provider: str, old: dict[int, Any], new: list[dict[str, Any]]
) -> None:
    """Note the pages a recut changed (``touched``): those whose bounds or count differ,
    and those that went; the index when one of them, or a date, did; robots.txt when the
    number of pages changed and it names each one (``sitemap_server.robots.text``) or
    the number of index files changed with it."""
    cut = {page["page"]: tuple(page[name] for name in _CUT) for page in new}
    before = {number: tuple(row) for number, row in old.items()}
    moved = {
        number
        for number in cut.keys() | before.keys()
        if (cut.get(number) or ())[:6] != (before.get(number) or ())[:6]
    }
    touched.pages(ctx, provider, moved)
    if moved or cut != before:
        robots = False
        if len(cut) != len(before):
            total = ctx.session.scalar(select(func.count()).select_from(_PAGES)) or 0
            robots = ctx.site.settings["sitemap_server.robots.text"] or (
                _index_files(total) != _index_files(total - len(cut) + len(before))
            )
        touched.index(ctx, robots=robots)


def _index_files(pages: int) -> int:
    return max(1, -(-pages // SITEMAPS_PER_INDEX))


def _fitting(rows: Sequence[Any], budget: int) -> Sequence[Any]:
    """The first of ``rows`` whose sizes add up to at most ``budget``, at least one."""
    total = 0
    for count, row in enumerate(rows):
        total += row.size
        if total > budget:
            return rows[: max(count, 1)]
    return rows


def refresh_page_dates(
    ctx: BuildContext, provider: str, dated: list[tuple[int, datetime | None, datetime | None]]
) -> None:
    """Date again the pages holding the entries in ``dated`` (key, old date, new date).

    A page's date is its newest entry's. If a new date is at least the page's, it is the
    page's new date; if none of the entries held the page's date, the date stays; only
    an entry that held it and became older makes the page's newest entry a question for
    the database. An edit dates its post now, so most pages need no query."""
    if not dated:
        return
    if len(dated) > 200:  # many scattered dates: cheaper to recut than to look up each
        recut_pages(ctx, provider, from_key=min(key for key, _, _ in dated))
        return
    session = ctx.session
    for page in _pages_holding(session, provider, {key for key, _, _ in dated}):
        within = [(old, new) for key, old, new in dated if page.first_key <= key <= page.last_key]
        newest = max((new for _, new in within if new is not None), default=None)
        if newest is not None and (page.lastmod is None or newest >= page.lastmod):
            lastmod = newest
        elif all(
            old is None or (page.lastmod is not None and old < page.lastmod) for old, _ in within
        ):
            continue  # the entry that dates the page is not among them
        else:
            lastmod = session.scalar(PAGE_NEWEST, page_range(provider, page))
        if lastmod != page.lastmod:
            touched.index(ctx)
            xml = index_fragment(provider, page.page, lastmod, ctx.zone)
            session.execute(
                SET_PAGE_DATE, {"p": provider, "n": page.page, "lastmod": lastmod, "xml": xml}
            )
