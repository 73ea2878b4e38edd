"""What the sitemaps list, as a plugin's provider may read it: the listed posts.

A plugin whose sitemap lists some of the site's posts again (videos, news) reads them
here rather than deciding again which posts are listed: these are the entries of the
post types' sitemaps, what crawlers are served, so the plugin's sitemap agrees with
them (the exclusion rules, other plugins' vetoes, the front page listed as the home page,
the translations). A provider that reads them says so with ``depends_on = ("post",)``:
it is then refreshed after every post type's sitemap, whatever its place in the index.

The columns are those of the stored entries; the queries are plain SQLAlchemy selects, to
be narrowed with ``where``, ordered and limited, so a plugin pays for what it asks.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, ClassVar, cast

from sqlalchemy import ColumnElement, Select, Table, func, select

from ..content.permalinks import home_path
from ..content.translations import group_members
from ..content.trees import descendants
from ..models import Post, SitemapEntry
from .providers import BuildContext

_entries = cast(Table, SitemapEntry.__table__)


class ListedPosts:
    """The listed posts' columns, for ``where`` and ``order_by``, and the queries."""

    post_id: ClassVar[ColumnElement[int]] = _entries.c.key
    # The name of the post type's sitemap that lists it (``post``, ``page``, …).
    sitemap: ClassVar[ColumnElement[str]] = _entries.c.provider
    path: ClassVar[ColumnElement[str]] = _entries.c.path
    lastmod: ClassVar[ColumnElement[datetime | None]] = _entries.c.lastmod
    images: ClassVar[ColumnElement[list[str]]] = _entries.c.images
    alternates: ClassVar[ColumnElement[list[list[str]] | None]] = _entries.c.alternates

    @classmethod
    def query(
        cls, ctx: BuildContext, *columns: Any, types: Iterable[str] | None = None
    ) -> Select[Any]:
        """The listed posts of the post types ``types`` (all when None), one row each
        (its own URL: a paged post's first part), with ``post_id``, ``sitemap``, ``path``,
        ``lastmod``, ``images``, ``alternates`` and then ``columns`` (joined by the caller, such as
        ``Post`` with ``.join(Post, Post.id == ListedPosts.post_id)``). Unordered."""
        names = ctx.post_providers if types is None else sorted(set(types) & {*ctx.post_providers})
        return select(
            cls.post_id.label("post_id"),
            cls.sitemap.label("sitemap"),
            cls.path,
            cls.lastmod,
            cls.images,
            cls.alternates,
            *columns,
        ).where(cls.sitemap.in_(names), _entries.c.part == 1, _entries.c.key > 0)

    @classmethod
    def home_page(cls, ctx: BuildContext) -> Any:
        """The home page's entry (``sitemap``, ``path``, ``lastmod``), as the sitemap of
        its post type lists it: the newest post's date (S-206), or the static front
        page's; None when it is not listed."""
        return ctx.session.execute(
            select(cls.sitemap.label("sitemap"), cls.path, cls.lastmod).where(
                cls.sitemap.in_(ctx.post_providers),
                _entries.c.key == 0,
                cls.path == home_path(),
            )
        ).first()


def stored_keys(ctx: BuildContext, sitemap: str) -> set[int]:
    """The keys of the entries the sitemap ``sitemap`` holds now (a provider's own, read
    to say which keys a change affects: all of a short sitemap)."""
    return set(ctx.session.scalars(select(_entries.c.key).where(_entries.c.provider == sitemap)))


def oldest_lastmod(ctx: BuildContext, sitemap: str) -> datetime | None:
    """The oldest ``lastmod`` of the entries the sitemap ``sitemap`` holds now (a
    provider's own, read to say when it is next due)."""
    return ctx.session.scalar(
        select(func.min(_entries.c.lastmod)).where(_entries.c.provider == sitemap)
    )


def reached_posts(ctx: BuildContext, posts: set[int]) -> set[int]:
    """The posts whose entries in the post types' sitemaps a change of ``posts`` (a
    ``ContentChanges.posts``: the members of their translation groups are in it) may
    reach, as those sitemaps recompute them: ``posts``, their descendants (a page's URL
    holds its ancestors' slugs) and the translations of those. What a sitemap that lists
    posts again recomputes for a change of posts; read once a refresh, for every such
    sitemap (the video and news plugins' both ask)."""
    key = ("reached posts", frozenset(posts))
    if key not in ctx.memo:
        moved = descendants(ctx.session, posts)
        ctx.memo[key] = posts | moved | group_members(ctx.session, Post.type, moved)
    return set(ctx.memo[key])
