"""Cutting a provider's stored entries into pages (``sitemap_pages``), and their dates.

A page holds ``entries_per_page`` entries in (key, part) order, fewer when they would pass
the byte limit (S-310); every page but the last is full, so counts are exact. After a
change the maintainer recuts from the first page whose membership changed
(``recut_pages``); when only dates changed it recomputes the newest date of the pages
concerned (``refresh_page_dates``). Either way it renders the page's entry in the index
(``sitemap_pages.xml``, ``rendering.index_fragment``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, delete, func, or_, select, tuple_
from sqlalchemy.orm import Session

from ..models import SitemapEntry, SitemapPage
from .providers import BuildContext
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
    """Cut the provider's entries into pages again, from the page holding ``from_key``."""
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
    cursor = (-1, 0)
    if start_page > 1:
        previous = session.get(SitemapPage, (provider, start_page - 1))
        assert previous is not None
        cursor = (previous.last_key, previous.last_part)
    session.execute(
        delete(SitemapPage).where(SitemapPage.provider == provider, SitemapPage.page >= start_page)
    )
    in_provider = SitemapEntry.provider == provider
    ordered = (SitemapEntry.key, SitemapEntry.part)
    page = start_page
    while True:
        after_cursor = _position(*cursor)
        first = session.execute(
            select(*ordered).where(in_provider, after_cursor).order_by(*ordered).limit(1)
        ).first()
        if first is None:
            return
        last = session.execute(
            select(*ordered)
            .where(in_provider, after_cursor)
            .order_by(*ordered)
            .limit(1)
            .offset(per_page - 1)
        ).first()
        if last is None:
            last = session.execute(
                select(*ordered)
                .where(in_provider)
                .order_by(SitemapEntry.key.desc(), SitemapEntry.part.desc())
                .limit(1)
            ).first()
        assert last is not None
        count, newest, size = session.execute(
            select(func.count(), func.max(SitemapEntry.lastmod), func.sum(SitemapEntry.size)).where(
                in_provider, after_cursor, ~_position(last.key, last.part)
            )
        ).one()
        if size > ctx.page_bytes:
            last = _last_that_fits(session, provider, cursor, last, ctx.page_bytes) or first
            count, newest = session.execute(
                select(func.count(), func.max(SitemapEntry.lastmod)).where(
                    in_provider, after_cursor, ~_position(last.key, last.part)
                )
            ).one()
        session.add(
            SitemapPage(
                provider=provider,
                page=page,
                first_key=first.key,
                first_part=first.part,
                last_key=last.key,
                last_part=last.part,
                entries=count,
                lastmod=newest,
                xml=index_fragment(provider, page, newest, ctx.zone),
            )
        )
        session.flush()
        cursor = (last.key, last.part)
        page += 1


def _last_that_fits(
    session: Session, provider: str, cursor: tuple[int, int], last: Any, budget: int
) -> Any:
    """The last entry after ``cursor`` (up to ``last``) whose running size fits ``budget``."""
    ordered = (SitemapEntry.key, SitemapEntry.part)
    running = (
        select(*ordered, func.sum(SitemapEntry.size).over(order_by=ordered).label("running"))
        .where(
            SitemapEntry.provider == provider,
            _position(*cursor),
            ~_position(last.key, last.part),
        )
        .subquery()
    )
    return session.execute(
        select(running.c.key, running.c.part)
        .where(running.c.running <= budget)
        .order_by(running.c.key.desc(), running.c.part.desc())
        .limit(1)
    ).first()


def refresh_page_dates(ctx: BuildContext, provider: str, keys: set[int]) -> None:
    """Recompute the newest ``lastmod`` of the pages holding ``keys``."""
    if not keys:
        return
    if len(keys) > 200:  # many scattered dates: cheaper to recut than to look up each
        recut_pages(ctx, provider, from_key=min(keys))
        return
    session = ctx.session
    for page in _pages_holding(session, provider, keys):
        page.lastmod = session.scalar(
            select(func.max(SitemapEntry.lastmod)).where(
                SitemapEntry.provider == provider, *_within(page)
            )
        )
        page.xml = index_fragment(provider, page.page, page.lastmod, ctx.zone)
