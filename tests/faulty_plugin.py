"""A plugin with bugs, for tests/functional/test_contained_failures.py.

Registered by dotted name (``sitemap_server.extra_plugins = faulty_plugin``). Its provider,
``/faulty-sitemap.xml``, lists every published post at ``/faulty/{slug}/`` and raises for
a post whose slug contains ``provider-boom``, and, asked where an entry's date comes from,
for one whose slug contains ``explain-boom``; its ``sitemap_entry`` filter raises for an
entry whose path contains ``entry-boom``; its ``sitemap_changed`` listener raises for the
sitemaps named in ``FAILING_LISTENER`` (empty unless a test fills it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import select

from sitemap_server import hookimpl
from sitemap_server.models import Post
from sitemap_server.sitemaps.changes import ContentChanges
from sitemap_server.sitemaps.entries import Entry, StoredEntry
from sitemap_server.sitemaps.providers import BuildContext, Provider

NAME = "faulty"
FAILING_LISTENER: set[str] = set()


class FaultyProvider(Provider):
    name = NAME
    kind = "faulty"
    order = 90

    def affected_keys(self, ctx: BuildContext, changes: ContentChanges) -> set[int] | None:
        return set(changes.posts)

    def entries(self, ctx: BuildContext, keys: set[int] | None) -> Iterator[Entry]:
        query = select(Post).where(Post.status == "publish").order_by(Post.id)
        if keys is not None:
            query = query.where(Post.id.in_(sorted(keys)))
        for post in ctx.session.scalars(query):
            if "provider-boom" in post.slug:
                raise ValueError(f"the faulty provider cannot list {post.slug!r}")
            yield Entry(key=post.id, path=f"/faulty/{post.slug}/", lastmod=post.modified_at)

    def explain_lastmod(self, ctx: BuildContext, entry: StoredEntry) -> str:
        if "explain-boom" in entry.path:
            raise RuntimeError(f"the faulty provider cannot explain {entry.path}")
        return super().explain_lastmod(ctx, entry)


@hookimpl
def sitemap_providers(session: Any) -> list[Provider]:
    return [FaultyProvider()]


@hookimpl
def sitemap_entry(kind: str, entry: Entry) -> Entry:
    if "entry-boom" in entry.path:
        raise RuntimeError(f"the faulty filter fails on {entry.path}")
    return entry


@hookimpl
def sitemap_changed(session: Any, sitemap: str, urls: Any) -> None:
    if sitemap in FAILING_LISTENER:
        raise RuntimeError(f"the faulty listener fails for the {sitemap} sitemap")
