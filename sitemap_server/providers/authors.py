"""``author-sitemap.xml``: authors with at least one listed post (S-202), unless the site
settings turn the author sitemap off (``author_sitemap``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import cast

from sqlalchemy import Table, bindparam, func, select
from sqlalchemy.orm import Session

from ..batches import chunks
from ..content import eligibility, permalinks
from ..hookspecs import hookimpl
from ..models import Author, Post, SitemapEntry
from ..models.site import get_settings
from ..sitemaps import newest
from ..sitemaps.changes import ContentChanges
from ..sitemaps.entries import Entry, StoredEntry
from ..sitemaps.providers import BuildContext, Provider

_posts = cast(Table, Post.__table__)
# The authors of some posts, and the ``BuildContext.memo`` key that keeps the refreshed
# posts of each author.
AUTHORS_OF = select(_posts.c.id, _posts.c.author_id).where(
    _posts.c.id.in_(bindparam("posts", expanding=True))
)
POSTS_OF = "authors.refreshed_posts_of"


@hookimpl
def sitemap_providers(session: Session) -> list[Provider]:
    # Off, there is no author sitemap at all: not in the index, 404, its stored entries
    # dropped by the rebuild the setting's change records (as for a post type's).
    if not get_settings(session).author_sitemap:
        return []
    return [AuthorProvider()]


class AuthorProvider(Provider):
    name = eligibility.AUTHOR_SITEMAP
    kind = "author"
    order = 20
    depends_on = ("post",)  # dated by their listed posts (``newest.py``)

    def affected_keys(self, ctx: BuildContext, changes: ContentChanges) -> set[int]:
        return set(changes.authors)

    def entries(self, ctx: BuildContext, keys: set[int] | None) -> Iterator[Entry]:
        if not ctx.post_providers:
            return
        # Their newest listed post: what the post sitemaps list is what counts.
        newest_post = func.max(SitemapEntry.lastmod).label("newest")
        query = (
            select(Author, newest_post)
            .join(Post, Post.author_id == Author.id)
            .join(SitemapEntry, eligibility.listed_post_entry(Post.id, ctx.post_providers))
            .where(eligibility.author_criteria(ctx.site))
            .group_by(Author.id)
            .order_by(Author.id)
        )
        batches = [None] if keys is None else list(chunks(sorted(keys)))
        for batch in batches:
            found: list[tuple[Author, datetime | None]]
            if batch is None:
                found = [(author, date) for author, date in ctx.session.execute(query)]
            else:
                known = self._kept_up(ctx, batch)
                rest = [key for key in batch if key not in known]
                found = self._authors(ctx, known)
                if rest:
                    rows = ctx.session.execute(query.where(Author.id.in_(rest)))
                    found += [(author, date) for author, date in rows]
                found.sort(key=lambda row: row[0].id)
            for author, lastmod in found:
                if eligibility.excluded_by_plugins(ctx.site, "author", author):
                    continue
                yield Entry(
                    key=author.id,
                    path=permalinks.author_path(author.slug),
                    lastmod=lastmod,
                    item=author,
                )

    def explain_lastmod(self, ctx: BuildContext, entry: StoredEntry) -> str:
        """The newest of the author's listed posts."""
        of_author = select(Post.id).where(Post.author_id == entry.key)
        post = newest.dating_post(ctx.session, entry.lastmod, ctx.post_providers, of_author)
        return f"the newest lastmod of its listed posts{post}"

    def _kept_up(self, ctx: BuildContext, keys: list[int]) -> dict[int, datetime]:
        """The newest listed post of the authors ``keys`` that follows from their stored
        entries and the dates of the posts refreshed (``sitemaps.newest``)."""
        dates = newest.changed_dates(ctx)
        if dates is None:
            return {}
        stored = newest.stored(ctx, self.name, keys)
        if POSTS_OF not in ctx.memo:  # read once a refresh, whatever the batches
            members: dict[int, set[int]] = {}
            for batch in chunks(sorted(dates)):
                for post_id, author_id in ctx.session.execute(AUTHORS_OF, {"posts": batch}):
                    members.setdefault(author_id, set()).add(post_id)
            ctx.memo[POSTS_OF] = members
        return newest.kept_up(dates, stored, ctx.memo[POSTS_OF])

    def _authors(
        self, ctx: BuildContext, known: dict[int, datetime]
    ) -> list[tuple[Author, datetime | None]]:
        if not known:
            return []
        query = select(Author).where(
            Author.id.in_(sorted(known)), eligibility.author_criteria(ctx.site)
        )
        return [(author, known[author.id]) for author in ctx.session.scalars(query)]
