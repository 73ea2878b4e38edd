"""``author-sitemap.xml``: authors with at least one listed post (S-202), unless the site
settings turn the author sitemap off (``author_sitemap``)."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..content import eligibility, permalinks
from ..hookspecs import hookimpl
from ..models import Author, Post, SitemapEntry
from ..models.site import get_settings
from ..sitemaps.changes import ContentChanges
from ..sitemaps.entries import Entry
from ..sitemaps.providers import BuildContext, Provider, chunks


@hookimpl
def sitemap_providers(session: Session) -> list[Provider]:
    # Off, there is no author sitemap at all: not in the index, 404, its stored entries
    # dropped by the rebuild the setting's change records (as for a post type's).
    if not get_settings(session).author_sitemap:
        return []
    return [AuthorProvider()]


class AuthorProvider(Provider):
    name = "author"
    kind = "author"
    order = 20

    def affected_keys(self, ctx: BuildContext, changes: ContentChanges) -> set[int]:
        return set(changes.authors)

    def entries(self, ctx: BuildContext, keys: set[int] | None) -> Iterator[Entry]:
        if not ctx.post_providers:
            return
        # Their newest listed post: what the post sitemaps list is what counts.
        newest = func.max(SitemapEntry.lastmod).label("newest")
        query = (
            select(Author, newest)
            .join(Post, Post.author_id == Author.id)
            .join(SitemapEntry, eligibility.listed_post_entry(Post.id, ctx.post_providers))
            .where(eligibility.author_criteria(ctx.plugins))
            .group_by(Author.id)
            .order_by(Author.id)
        )
        batches = [None] if keys is None else list(chunks(sorted(keys)))
        for batch in batches:
            batch_query = query if batch is None else query.where(Author.id.in_(batch))
            for author, lastmod in ctx.session.execute(batch_query):
                if eligibility.excluded_by_plugins(ctx.plugins, "author", author):
                    continue
                yield Entry(
                    key=author.id,
                    path=permalinks.author_path(author.slug),
                    lastmod=lastmod,
                    item=author,
                )
