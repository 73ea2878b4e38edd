"""Cutting a provider's stored entries into pages (``sitemap_pages``), and their dates.

A page holds ``entries_per_page`` entries in (key, part) order, fewer when they would pass
the byte limit (S-310); every page but the last is full, so counts are exact. After a
change the maintainer recuts from the first page whose membership changed
(``recut_pages``); when only dates changed it recomputes the newest date of the pages
concerned (``refresh_page_dates``). Either way it renders the page's entry in the index
(``sitemap_pages.xml``, ``rendering.index_fragment``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, tuple_
from sqlalchemy.orm import Session

from ..models import SitemapEntry, SitemapPage
from .providers import BuildContext, chunks
from .rendering import index_fragment


def overfull_pages(ctx: BuildContext, provider: str, keys: set[int]) -> list[SitemapPage]:
    """The pages holding ``keys`` whose entries now pass the byte limit, in order."""
    found = []
    for page in _pages_holding(ctx.session, provider, keys):
        size = ctx.session.scalar(
            select(func.sum(SitemapEntry.size)).where(
                SitemapEntry.provider == provider, *_within(page)
            )
        )
        if (size or 0) > ctx.page_bytes:
            found.append(page)
    return found


def _pages_holding(session: Session, provider: str, keys: set[int]) -> list[SitemapPage]:
    if not keys:
        return []
    return list(
        session.scalars(
            select(SitemapPage)
            .where(
                SitemapPage.provider == provider,
                or_(
                    *(
                        and_(SitemapPage.first_key <= key, SitemapPage.last_key >= key)
                        for key in sorted(keys)
                    )
                ),
            )
            .order_by(SitemapPage.page)
        )
    )


def _within(page: SitemapPage) -> tuple[Any, Any]:
    position = tuple_(SitemapEntry.key, SitemapEntry.part)
    return (
        position >= tuple_(page.first_key, page.first_part),
        position <= tuple_(page.last_key, page.last_part),
    )


def _position(key: int, part: int) -> Any:
    return tuple_(SitemapEntry.key, SitemapEntry.part) > tuple_(key, part)


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
            select(func.min(SitemapPage.page)).where(
                SitemapPage.provider == provider, SitemapPage.last_key >= from_key
            )
        )
        if holding is None:  # beyond the end: the last page may have room for it
            holding = session.scalar(
                select(func.max(SitemapPage.page)).where(SitemapPage.provider == provider)
            )
        start_page = holding or 1
    cursor: tuple[int, int] | None = None
    if start_page > 1:
        previous = session.get(SitemapPage, (provider, start_page - 1))
        assert previous is not None
        cursor = (previous.last_key, previous.last_part)
    session.execute(
        delete(SitemapPage).where(SitemapPage.provider == provider, SitemapPage.page >= start_page)
    )
    query = (
        select(SitemapEntry.key, SitemapEntry.part, SitemapEntry.lastmod, SitemapEntry.size)
        .where(SitemapEntry.provider == provider)
        .order_by(SitemapEntry.key, SitemapEntry.part)
        .limit(per_page)
    )
    pages: list[dict[str, Any]] = []
    page = start_page
    while True:
        after = query if cursor is None else query.where(_position(*cursor))
        rows = _fitting(session.execute(after).all(), ctx.page_bytes)
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
        cursor = (last.key, last.part)
        page += 1
    for batch in chunks(pages):
        session.execute(insert(SitemapPage), batch)


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
            lastmod = session.scalar(
                select(func.max(SitemapEntry.lastmod)).where(
                    SitemapEntry.provider == provider, *_within(page)
                )
            )
        if lastmod != page.lastmod:
            page.lastmod = lastmod
            page.xml = index_fragment(provider, page.page, lastmod, ctx.zone)
