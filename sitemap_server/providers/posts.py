"""One sitemap per public post type (``post-sitemap.xml``, ``page-sitemap.xml`` …)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from datetime import datetime
from functools import cache
from typing import Any, NamedTuple, cast

from sqlalchemy import ColumnElement, Table, bindparam, case, func, literal, or_, select
from sqlalchemy.orm import Session, lazyload

from ..batches import chunks
from ..content import eligibility, permalinks
from ..content.images import post_images
from ..content.permalinks import is_static_front_page
from ..content.translations import group_members
from ..content.trees import descendants
from ..hookspecs import hookimpl
from ..models import Post, PostType, SitemapEntry, post_terms
from ..models.content import LISTED_STATUSES
from ..sitemaps.changes import ContentChanges
from ..sitemaps.entries import Entry, StoredEntry, alternate_links
from ..sitemaps.newest import dating_post, newest_listed
from ..sitemaps.providers import BuildContext, Provider

log = logging.getLogger(__name__)
# Posts read at a time; the translations of each such chunk are read in one query.
CHUNK = 1000

# The statements every refresh sends, built once with bound parameters (building one
# costs the maintainer more than running it).
_posts = cast(Table, Post.__table__)
_entries = cast(Table, SitemapEntry.__table__)
NEXT_SCHEDULED = select(func.min(_posts.c.published_at)).where(
    _posts.c.type == bindparam("type"),
    _posts.c.status.in_(LISTED_STATUSES),
    _posts.c.published_at > bindparam("now"),
)
TYPES_OF = select(_posts.c.id, _posts.c.type).where(
    _posts.c.id.in_(bindparam("ids", expanding=True))
)
LISTED_TYPES = (
    select(PostType)
    .where(eligibility.criteria(eligibility.post_type_rules()))
    .order_by(PostType.name)
)
LISTED_IN = select(_entries.c.provider, _entries.c.key).where(
    _entries.c.provider.in_(bindparam("providers", expanding=True)),
    _entries.c.key.in_(bindparam("ids", expanding=True)),
)


@hookimpl
def sitemap_providers(session: Session) -> list[Provider]:
    return [PostTypeProvider(t) for t in session.scalars(LISTED_TYPES)]


class PostTypeProvider(Provider):
    kind = "post"

    def __init__(self, post_type: PostType) -> None:
        self.name = post_type.name
        self.label = post_type.label
        self.hierarchical = post_type.hierarchical
        self.archive_path = post_type.archive_path
        # Posts first: the home page and posts page take their dates from them.
        self.order = 10 if post_type.name == "post" else 11
        # S-101 and S-201: a noindexed type lists only posts set to "index", and has no
        # sitemap at all (404) while there are none.
        self.absent_when_empty = post_type.noindex
        self._type = post_type

    def affected_keys(self, ctx: BuildContext, changes: ContentChanges) -> set[int]:
        """The changed posts of this type, or listed here until now (deleted ones too),
        their descendants (their URLs contain the parent's slug), and key 0."""
        types = _types(ctx, changes.posts)
        # A deleted post's type is gone with it: it may have been of this type, listed
        # or scheduled (the next due time), or a post dating the home page.
        gone = changes.posts - types.keys()
        keys = _touched(ctx, changes, self.name, types) | gone
        if keys and self.hierarchical:
            moved = descendants(ctx.session, keys)
            # Their URLs moved, so the members of their translation groups change too
            # (``maintenance.with_translations`` added those of the changed posts).
            keys |= moved | group_members(ctx.session, Post.type, moved)
        if self.name != "post" and (gone or _touched(ctx, changes, "post", types)):
            # The static home page and the posts page are dated by the newest post.
            keys |= {ctx.settings.posts_page_id or 0}
        if keys:
            keys.add(0)  # the home page or archive may take a new date
        return keys

    def next_due(self, ctx: BuildContext) -> datetime | None:
        """The next scheduled post: published, dated in the future."""
        return ctx.session.scalar(NEXT_SCHEDULED, {"type": self.name, "now": ctx.now})

    def due_changes(self, ctx: BuildContext, due_at: datetime) -> ContentChanges:
        """The posts whose time has come, with their authors and terms (as a write of
        those posts would record them)."""
        gone_live = select(Post.id, Post.author_id).where(
            Post.type == self.name,
            Post.status.in_(LISTED_STATUSES),
            Post.published_at >= due_at,
            Post.published_at <= ctx.now,
        )
        changes = ContentChanges()
        for post_id, author_id in ctx.session.execute(gone_live):
            changes.posts.add(post_id)
            if author_id is not None:
                changes.authors.add(author_id)
        for batch in chunks(sorted(changes.posts)):
            terms = select(post_terms.c.term_id).where(post_terms.c.post_id.in_(batch))
            changes.terms.update(ctx.session.scalars(terms))
        return changes

    def _is_home_host(self, ctx: BuildContext) -> bool:
        static = ctx.settings.front_page == "page" and ctx.settings.front_page_id is not None
        return self.name == ("page" if static else "post")

    def entries(self, ctx: BuildContext, keys: set[int] | None) -> Iterator[Entry]:
        criteria = eligibility.post_criteria(ctx.site, self._type, ctx.now)
        batches = [None] if keys is None else list(chunks(sorted(keys)))
        by_category = "category" in permalinks.fields_of(self._type.permalink_pattern)
        for batch in batches:
            where = [criteria] if batch is None else [criteria, Post.id.in_(batch)]
            for some in chunks(_listed(ctx, where, ordered=True), CHUNK):
                if by_category:
                    ctx.links.prefetch_categories([post.id for post in some])
                groups = self._translations(ctx, criteria, some)
                for post in some:
                    alternates = groups.get(post.translation_group or "")
                    yield from self._post_entries(ctx, post, alternates)

    def _listed_url(self, ctx: BuildContext, post: ListedPost, quiet: bool = False) -> str | None:
        """The URL ``post`` (one the criteria let through) is listed under, or None when
        it is not listed: the static front page (listed as the home page itself, S-206),
        or a post a plugin or the URL rules leave out."""
        if is_static_front_page(ctx.settings, post.id):
            return None
        url = ctx.links.post(cast(Post, post))  # it reads only columns a PostRow has
        excluded = next(eligibility.candidate_exclusions(ctx.site, "post", post, url), None)
        if excluded is None:
            return url
        if excluded.rule == eligibility.URL_RULE and not quiet:
            log.warning("post %s left out of the sitemap: %s", post.id, excluded.reason)
        return None

    def _translations(
        self, ctx: BuildContext, criteria: ColumnElement[bool], posts: Iterable[ListedPost]
    ) -> dict[str, list[list[str]]]:
        """The alternates of the translation groups of ``posts`` (``alternate_links``):
        their listed members are found as ``entries`` lists them."""
        groups = {p.translation_group for p in posts if p.translation_group and p.language}
        members: dict[str, dict[str, str]] = {}
        for batch in chunks(sorted(groups)):
            where = [criteria, Post.translation_group.in_(batch), Post.language.is_not(None)]
            for member in _listed(ctx, where):
                url = self._listed_url(ctx, member, quiet=True)
                if url is not None and member.translation_group and member.language:
                    by_language = members.setdefault(member.translation_group, {})
                    by_language[member.language] = url[len(ctx.site_url) :]
        return alternate_links(members, ctx.settings.x_default_language or ctx.settings.language)

    def _post_entries(
        self, ctx: BuildContext, post: ListedPost, alternates: list[list[str]] | None = None
    ) -> Iterator[Entry]:
        settings = ctx.settings
        url = self._listed_url(ctx, post)
        if url is None:
            return
        lastmod = max(d for d in (post.published_at, post.modified_at) if d is not None)
        if post.id == settings.posts_page_id:
            lastmod = newest_listed(ctx.session, "post") or lastmod
        path = url[len(ctx.site_url) :]
        images = self._images(ctx, post, url)
        yield Entry(
            key=post.id,
            part=1,
            path=path,
            lastmod=lastmod,
            images=images,
            alternates=alternates,
            item=post,
        )
        for part in range(2, post.parts + 1):
            yield Entry(
                key=post.id,
                part=part,
                path=permalinks.part_url(path, part),
                lastmod=lastmod,
                item=post,
            )

    def special_entries(self, ctx: BuildContext) -> Iterator[Entry]:
        """The home page (S-206) or the type's archive, dated by the newest post; listed
        only while there is such a post, so that a site without content lists nothing."""
        images: list[str] = []
        if self._is_home_host(ctx):
            newest = newest_listed(ctx.session, "post")
            path = permalinks.home_path()
            static = ctx.settings.front_page == "page" and ctx.settings.front_page_id
            front = ctx.session.get(Post, ctx.settings.front_page_id) if static else None
            if front is not None:  # a static front page: the home page shows its images
                images = self._images(ctx, front, ctx.site_url + path)
        elif self.archive_path and not self.absent_when_empty:  # a noindexed type's archive
            newest = newest_listed(ctx.session, self.name)
            path = self.archive_path
        else:
            return
        if newest is not None:
            yield Entry(key=0, path=path, lastmod=newest, images=images)

    def explain_lastmod(self, ctx: BuildContext, entry: StoredEntry) -> str:
        """A post's own times, or the newest listed post's date for the home page, an
        archive (key 0) and the posts page."""
        if entry.key == 0:
            dated_by = "post" if entry.path == permalinks.home_path() else self.name
            what = "home page" if dated_by == "post" else f"archive of {self.name!r}"
            newest = dating_post(ctx.session, entry.lastmod, [dated_by])
            return f"{what}: the newest lastmod of the listed {dated_by!r} posts{newest}"
        if entry.key == ctx.settings.posts_page_id:
            newest = dating_post(ctx.session, entry.lastmod, ["post"])
            if newest:
                return f"posts page: the newest lastmod of the listed 'post' posts{newest}"
        post = ctx.session.get_one(Post, entry.key)
        source = "the later of the post's modified and published times"
        if post.published_at is not None and post.published_at != post.modified_at:
            latest = "modified" if post.modified_at > post.published_at else "published"
            source += f" (its {latest} time)"
        return source

    def _images(self, ctx: BuildContext, post: ListedPost, url: str) -> list[str]:
        if not (post.featured_image or post.content or post.images):
            return []  # what post_images finds in nothing, without its setup
        return post_images(
            post.featured_image,
            post.content,
            list(post.images or []),
            ctx.site_url,
            url,
            list(ctx.settings.allowed_image_hosts or []),
        )


class PostRow(NamedTuple):
    """The columns of a post that its entries are computed from: what ``entries`` reads
    instead of the ``Post`` (building the object cost a rebuild about 40 µs a post),
    unless a plugin is handed the post itself (``_plugins_see_posts``)."""

    id: int
    type: str
    slug: str
    parent_id: int | None
    author_id: int | None
    path: str | None
    published_at: datetime | None
    modified_at: datetime
    canonical: str | None
    featured_image: str | None
    content: str
    images: list[str]
    parts: int
    language: str | None
    translation_group: str | None

    @property
    def subject_kind(self) -> str:
        """What a log line calls it (``failures.subject``): the post it is."""
        return "post"


ListedPost = Post | PostRow


@cache
def _post_row(dialect: str) -> list[Any]:
    """The columns of a ``PostRow``, ``content`` read only when it may hold an image (the
    one use of it): HTML without an ``<img`` or a ``<source`` tag holds none
    (``content.images``), and much holds neither: it is then neither read into Python nor
    parsed. A tag's name is ASCII in any case, which SQLite's LIKE matches as
    PostgreSQL's ILIKE does."""
    like = Post.content.ilike if dialect == "postgresql" else Post.content.like
    may_hold_images = or_(like("%<img%"), like("%<source%"))
    content = case((may_hold_images, Post.content), else_=literal("")).label("content")
    return [content if name == "content" else getattr(Post, name) for name in PostRow._fields]


def _listed(
    ctx: BuildContext, where: list[ColumnElement[bool]], ordered: bool = False
) -> Iterator[ListedPost]:
    """The posts that meet ``where``, as ``PostRow``, or as ``Post`` when a plugin is
    handed them (in id order when ``ordered``)."""
    if _plugins_see_posts(ctx):
        # Terms are not needed here: don't let the relationship load them for every post.
        query = select(Post).options(lazyload(Post.terms)).where(*where)
        if ordered:
            query = query.order_by(Post.id)
        yield from ctx.session.scalars(query.execution_options(yield_per=CHUNK))
        return
    rows = select(*_post_row(ctx.session.get_bind().dialect.name)).where(*where)
    if ordered:
        rows = rows.order_by(Post.id)
    for row in ctx.session.execute(rows.execution_options(yield_per=CHUNK)):
        yield PostRow._make(row)


def _plugins_see_posts(ctx: BuildContext) -> bool:
    """Whether a plugin is handed the posts entries are made from (``sitemap_exclude``,
    ``sitemap_entry``): they are then the ``Post`` objects, as the hooks say."""
    key = "plugins see posts"
    if key not in ctx.memo:
        hooks = ctx.plugins.hook
        ctx.memo[key] = bool(
            hooks.sitemap_exclude.get_hookimpls() or hooks.sitemap_entry.get_hookimpls()
        )
    return bool(ctx.memo[key])


def _types(ctx: BuildContext, ids: set[int]) -> dict[int, str]:
    """The type of each of the posts ``ids`` that still exists (read once a refresh:
    every post type's provider asks)."""
    key = ("post types of", frozenset(ids))
    if key not in ctx.memo:
        found: dict[int, str] = {}
        for batch in chunks(sorted(ids)):
            rows = ctx.session.execute(TYPES_OF, {"ids": batch})
            found.update({row.id: row.type for row in rows})
        ctx.memo[key] = found
    return ctx.memo[key]


def _touched(
    ctx: BuildContext, changes: ContentChanges, post_type: str, types: dict[int, str]
) -> set[int]:
    """Which of the changed posts are of ``post_type`` (``types``: theirs, from ``_types``)
    or are listed in its sitemap."""
    found = {post_id for post_id, of_type in types.items() if of_type == post_type}
    return found | _listed_in(ctx, changes.posts).get(post_type, set())


def _listed_in(ctx: BuildContext, ids: set[int]) -> dict[str, set[int]]:
    """Which of the posts ``ids`` each post sitemap (and ``post``'s, which dates the home
    page) lists now: read once a refresh, for every post type's provider at once."""
    key = ("listed in", frozenset(ids))
    if key not in ctx.memo:
        found: dict[str, set[int]] = {}
        providers = sorted({*ctx.post_providers, "post"})
        for batch in chunks(sorted(ids)):
            rows = ctx.session.execute(LISTED_IN, {"providers": providers, "ids": batch})
            for provider, post_id in rows:
                found.setdefault(provider, set()).add(post_id)
        ctx.memo[key] = found
    return ctx.memo[key]
