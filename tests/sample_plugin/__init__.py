"""A plugin that implements every hook once, for tests/functional/test_hooks.py.

It is an ordinary module registered by dotted name through the setting
``sitemap_server.extra_plugins = sample_plugin`` (``tests`` is on pytest's ``pythonpath``),
exactly as a deployment would register an unpackaged plugin. Each hook does one small,
observable thing; the calls some hooks receive are recorded in the lists below, which the
tests empty before each test.

It is written as a third party would write one, against the door alone
(``sitemap_server.plugin``; ``tests/unit/test_plugin_door.py`` holds it to that): its
sitemap carries its stylesheet, reads the listed posts rather than deciding again which
posts are listed, is refreshed after them though it comes first in the index, and its
demo content records its change with the one verb (``engine_of(session).record``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from sitemap_server.plugin import (
    BuildContext,
    Burst,
    Channel,
    ContentChanges,
    Entry,
    ListedPosts,
    Message,
    Post,
    Provider,
    Setting,
    UrlChange,
    api_view,
    engine_of,
    hookimpl,
    http_url,
    optional,
)

WEBHOOK_URL = "sample_plugin.webhook_url"
WEBHOOK = "sample.webhook"
NAMESPACE_PREFIX = "sample"
NAMESPACE = "https://sitemap-server.test/schemas/sample/1.0"
XSL_PATH = "/sample-sitemap.xsl"
XSL_ASSET = "sample_plugin:sample-sitemap.xsl"
# A stylesheet no provider carries (``sitemap_xsl``): the same file, at another path.
EXTRA_XSL_PATH = "/sample-extra.xsl"
VERSIONS = Path(__file__).resolve().parent / "versions"
FAIL_TITLE = "Raise in sitemap_content_changed"
# The title the demo's first post is given: it is then a bookmark.
DEMO_BOOKMARK = "Bookmark: the sample plugin's demo"

# (kind, type name of the item or None, path) for every sitemap_entry call.
ENTRY_CALLS: list[tuple[str, str | None, str]] = []
# One dict per sitemap_content_changed call.
CHANGE_CALLS: list[dict[str, Any]] = []
# (sitemap, {url: change} or None, in a transaction) for every sitemap_changed call.
SITEMAP_CALLS: list[tuple[str, dict[str, str] | None, bool]] = []
# (tags, in a transaction) for every sitemap_documents_changed call.
DOCUMENT_CALLS: list[tuple[list[str], bool]] = []
# (posts and pages already there, in a transaction) for every sitemap_seed_demo call.
SEED_CALLS: list[tuple[int, bool]] = []


def reset() -> None:
    ENTRY_CALLS.clear()
    CHANGE_CALLS.clear()
    SITEMAP_CALLS.clear()
    DOCUMENT_CALLS.clear()
    SEED_CALLS.clear()


class BookmarkProvider(Provider):
    """``bookmarks-sitemap.xml``: the listed posts whose title starts with "Bookmark", at
    ``/bookmarks/{slug}/``. First in the index, refreshed after the post types (it reads
    what they list: the exclusion rules and every plugin's vetoes are theirs)."""

    name = "bookmarks"
    kind = "bookmark"
    order = 1
    depends_on = ("post",)
    xsl = XSL_PATH
    xsl_asset = XSL_ASSET

    def affected_keys(self, ctx: BuildContext, changes: ContentChanges) -> set[int]:
        return set(changes.posts)

    def entries(self, ctx: BuildContext, keys: set[int] | None) -> Iterator[Entry]:
        query = (
            ListedPosts.query(ctx, Post, types=["post"])
            .join(Post, Post.id == ListedPosts.post_id)
            .where(Post.title.startswith("Bookmark"))
            .order_by(ListedPosts.post_id)
        )
        if keys is not None:
            query = query.where(ListedPosts.post_id.in_(sorted(keys)))
        for row in ctx.session.execute(query):
            yield Entry(
                key=row.post_id,
                path=f"/bookmarks/{row.Post.slug}/",
                lastmod=row.lastmod,
                item=row.Post,
            )


@hookimpl
def sitemap_providers(session: Session) -> list[Provider]:
    return [BookmarkProvider()]


def ping_view(request: Request) -> Response:
    return Response("pong", content_type="text/plain", charset="UTF-8")


@api_view(route_name="sample_plugin.api", request_method="GET")
def sample_api_view(request: Request) -> dict[str, Any]:
    greeting = request.openapi.parameters.query.get("greeting", "hello")
    return {"plugin": "sample", "greeting": greeting}


@hookimpl
def sitemap_configure(config: Configurator) -> None:
    config.add_route("sample_plugin.ping", "/sample-plugin/ping")
    config.add_view(ping_view, route_name="sample_plugin.ping", request_method="GET")
    # Documented by sitemap_openapi below, so its requests are validated like the core's.
    config.add_route("sample_plugin.api", "/api/sample")
    config.scan(__name__, ignore=".misspelt")


@hookimpl
def sitemap_xsl() -> dict[str, str]:
    return {EXTRA_XSL_PATH: XSL_ASSET}


@hookimpl
def sitemap_namespaces() -> dict[str, str]:
    return {NAMESPACE_PREFIX: NAMESPACE}


@hookimpl
def sitemap_exclusion_criteria(kind: str) -> list[ColumnElement[bool]]:
    """Posts whose slug starts with "secret-" are unlisted everywhere."""
    if kind == "post":
        return [~Post.slug.startswith("secret-")]
    return []


@hookimpl
def sitemap_exclude(kind: str, item: Any) -> bool | None:
    """A post whose title, or an author or term whose name, contains "[hide]"."""
    text = item.title if kind == "post" else getattr(item, "name", "")
    return True if "[hide]" in text else None


@hookimpl
def sitemap_entry(kind: str, entry: Entry, item: Any) -> Entry | None:
    """Drop ``…/drop-me/…``; rewrite ``…/rewrite-me/…`` to ``…/rewritten/…``."""
    ENTRY_CALLS.append((kind, type(item).__name__ if item is not None else None, entry.path))
    if "/drop-me/" in entry.path:
        return None
    if "/rewrite-me/" in entry.path:
        return replace(entry, path=entry.path.replace("/rewrite-me/", "/rewritten/"))
    return entry


@hookimpl
def sitemap_content_changed(session: Session, changes: ContentChanges) -> None:
    """Record the call; a post titled ``FAIL_TITLE`` makes the hook (so the write) fail."""
    titles = {
        post_id: getattr(session.get(Post, post_id), "title", None) for post_id in changes.posts
    }
    CHANGE_CALLS.append(
        {
            "posts": set(changes.posts),
            "authors": set(changes.authors),
            "terms": set(changes.terms),
            "everything": changes.everything,
            "site": changes.site,
            "in_transaction": session.in_transaction(),
            "titles": titles,
        }
    )
    if FAIL_TITLE in titles.values():
        raise RuntimeError("sample plugin refuses this change")


@hookimpl
def sitemap_changed(session: Session, sitemap: str, urls: list[UrlChange] | None) -> None:
    """Record which URLs of which sitemap changed."""
    changed = None if urls is None else {u.url: u.change for u in urls}
    SITEMAP_CALLS.append((sitemap, changed, session.in_transaction()))


@hookimpl
def sitemap_documents_changed(session: Session, tags: list[str]) -> None:
    """Record the tags of the documents each pass changed."""
    DOCUMENT_CALLS.append((tags, session.in_transaction()))


@hookimpl
def sitemap_seed_demo(session: Session) -> None:
    """Record the call; make the demo's first post a bookmark, and record that change
    with the one verb (the seeding holds it back and records it with the demo's)."""
    SEED_CALLS.append(
        (session.scalar(select(func.count()).select_from(Post)) or 0, session.in_transaction())
    )
    post = session.scalars(select(Post).where(Post.type == "post").order_by(Post.id)).first()
    if post is not None:
        post.title = DEMO_BOOKMARK
        engine_of(session).record(session, posts={post.id})


@hookimpl
def sitemap_migrations() -> list[str]:
    return [str(VERSIONS)]


@hookimpl
def sitemap_openapi() -> dict[str, Any]:
    return {
        "tags": [{"name": "sample", "description": "The sample plugin"}],
        "paths": {
            "/api/sample": {
                "get": {
                    "tags": ["sample"],
                    "operationId": "getSample",
                    "summary": "A greeting from the sample plugin",
                    "parameters": [
                        {
                            "name": "greeting",
                            "in": "query",
                            "schema": {"type": "string", "minLength": 1, "maxLength": 10},
                        }
                    ],
                    "responses": {
                        "200": {
                            "description": "The greeting",
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/SampleGreeting"}
                                }
                            },
                        },
                        "default": {"$ref": "#/components/responses/Problem"},
                    },
                }
            }
        },
        "components": {
            "schemas": {
                "SampleGreeting": {
                    "type": "object",
                    "required": ["plugin", "greeting"],
                    "properties": {"plugin": {"type": "string"}, "greeting": {"type": "string"}},
                }
            }
        },
    }


# A third notification channel: its setting and the channel, in this one place -------------


@hookimpl
def sitemap_settings() -> list[Setting]:
    return [
        Setting(
            WEBHOOK_URL,
            "",
            optional(http_url),
            doc="Where the webhook channel POSTs each burst of changes; empty: nowhere.",
        )
    ]


class Webhook(Channel):
    """One POST per burst: which sitemaps changed, and the changed URLs."""

    name = WEBHOOK

    def __init__(self, url: str) -> None:
        self.url = url

    @property
    def enabled(self) -> bool:
        return bool(self.url)

    def messages(self, burst: Burst) -> list[Message]:
        return [Message(self.url, {"sitemaps": list(burst.sitemaps), "urls": list(burst.urls)})]

    def targets(self, site_url: str) -> str | None:
        return self.url or None


@hookimpl
def sitemap_channels(settings: dict[str, Any]) -> list[Channel]:
    return [Webhook(settings[WEBHOOK_URL])]
