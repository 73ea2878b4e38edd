"""``news-sitemap.xml``: the news of the last 48 hours, newest first, at most 1,000 (S-504).

Like the video plugin, it lists only what a core post sitemap lists (every shared
exclusion rule applies), read from the core's stored entries, then leaves out posts
flagged "not news" and posts in a term excluded from news. Items leave exactly 48 hours
after their date: ``next_due`` tells the engine when the oldest one expires, and the first
request after that moment rebuilds this sitemap before answering.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Subquery, exists, or_, select
from sqlalchemy.orm import lazyload

from sitemap_server.plugin import LANGUAGE_TAG as CORE_LANGUAGE_TAG
from sitemap_server.plugin import (
    BuildContext,
    ContentChanges,
    Entry,
    ListedPosts,
    Post,
    Provider,
    StoredEntry,
    chunks,
    oldest_lastmod,
    post_terms,
    reached_posts,
    stored_keys,
    valid_chars,
    w3c,
)

from .models import NewsPost, NewsSettings, NewsTerm

NAME = "news"
XSL = "/news-sitemap.xsl"
TEMPLATE = "sitemap_server_news:templates/news-url.pt"
WINDOW = timedelta(hours=48)
MAX_ITEMS = 1000
# Keys order the entries newest first: (2^32 - seconds since 1970) * 2^31 + post id (ids
# are below 2^31), the seconds held within [1, 2^32) (1970 to 2106; a date outside shares
# its end's seconds and is ordered by id): a key always fits a signed 64-bit integer, at
# most 2^63 - 1 (migration news_0003 rebuilt the keys stored before).
KEY_SECONDS = 2**32
KEY_IDS = 2**31
# A language tag as site owners write it (BCP 47: en, pt-BR, zh-Hant, sr-Latn-RS), the shape
# the core takes for the site's and the posts' languages. Stored as given; reduced by
# news_language.
LANGUAGE_TAG = re.compile(CORE_LANGUAGE_TAG)
# news:language: an ISO 639 code, except zh-cn (Simplified) and zh-tw (Traditional) for
# Chinese (sitemap-news.xsd and Google's documentation).
ISO_639 = re.compile(r"[a-z]{2,3}")
TRADITIONAL_CHINESE_REGIONS = frozenset({"tw", "hk", "mo"})


def news_language(value: str | None) -> str | None:
    """``value`` (a BCP 47 tag) as news:language takes it: its ISO 639 code (``pt-BR`` →
    ``pt``), and for Chinese ``zh-tw`` when written in Traditional characters (script
    ``Hant``, else region TW, HK or MO), ``zh-cn`` otherwise (``Hans``, CN, SG, bare
    ``zh``). None when it names no language."""
    if not value:
        return None
    primary, *subtags = value.strip().lower().replace("_", "-").split("-")
    if not ISO_639.fullmatch(primary):
        return None
    if primary != "zh":
        return primary
    # Script and region come before any extension or private use (a one-letter subtag).
    named = list(itertools.takewhile(lambda subtag: len(subtag) > 1, subtags))
    script = next((s for s in named if len(s) == 4 and s.isalpha()), None)
    if script is not None:
        return "zh-tw" if script == "hant" else "zh-cn"
    return "zh-tw" if TRADITIONAL_CHINESE_REGIONS & set(named) else "zh-cn"


def news_settings(session: Any) -> NewsSettings:
    return session.get_one(NewsSettings, 1)


class NewsProvider(Provider):
    name = NAME
    kind = "news"
    order = 45
    depends_on = ("post",)  # it reads the listed posts
    xsl = XSL
    xsl_asset = "sitemap_server_news:static/news-sitemap.xsl"
    template = TEMPLATE

    def affected_keys(self, ctx: BuildContext, changes: ContentChanges) -> set[int]:
        """The keys of the items a change reaches, as stored and as they are now (a key
        holds its item's date: an edit moves it): those of the changed posts, of the
        posts whose listed entries move with them (``reached_posts``), and of the posts
        in a changed term that news excludes or did. Nothing for posts that are not news,
        before or after (most writes at a large site).

        All of them when every item may change (the site's title and language), or
        when the change may move the cut at 1,000 items (push one out, or let the
        1,001st in): the stored keys and those of the newest 1,000 now. The engine
        recomputes the keys given and makes a new version only if what a crawler sees
        has changed."""
        if not (changes.posts or changes.terms or changes.site):
            return set()
        stored = stored_keys(ctx, NAME)
        if changes.site or len(changes.posts) > MAX_ITEMS:
            return stored | self._keys(ctx)
        posts = reached_posts(ctx, set(changes.posts))
        terms: set[int] = set()
        for batch in chunks(sorted(changes.terms)):
            terms.update(
                ctx.session.scalars(select(NewsTerm.term_id).where(NewsTerm.term_id.in_(batch)))
            )
        stale = {key for key in stored if key % KEY_IDS in posts}
        if terms:
            stored_posts = sorted({key % KEY_IDS for key in stored})
            in_terms = select(post_terms.c.post_id).where(
                post_terms.c.term_id.in_(sorted(terms)), post_terms.c.post_id.in_(stored_posts)
            )
            moved = set(ctx.session.scalars(in_terms))
            stale |= {key for key in stored if key % KEY_IDS in moved}
        fresh = self._keys(ctx, posts, terms)
        if not stale and not fresh:
            return set()
        after = {key % KEY_IDS for key in (stored - stale) | fresh}
        if len(stored) >= MAX_ITEMS or len(after) > MAX_ITEMS:
            return stored | self._keys(ctx)
        return stale | fresh

    def _news(self, ctx: BuildContext) -> Subquery | None:
        """The news: the newest 1,000 listed posts of the news post types, from the last
        48 hours, neither flagged "not news" nor in a term news excludes (ListedPosts'
        columns); None when no post type is news."""
        types = [t for t in news_settings(ctx.session).post_types or [] if t in ctx.post_providers]
        if not types:
            return None
        not_news = exists().where(NewsPost.post_id == ListedPosts.post_id, NewsPost.not_news)
        excluded_term = exists().where(
            post_terms.c.post_id == ListedPosts.post_id,
            NewsTerm.term_id == post_terms.c.term_id,
            NewsTerm.exclude,
        )
        return (
            ListedPosts.query(ctx, types=types)
            .where(ListedPosts.lastmod > ctx.now - WINDOW, ~not_news, ~excluded_term)
            .order_by(ListedPosts.lastmod.desc(), ListedPosts.post_id.desc())
            .limit(MAX_ITEMS)
            .subquery()
        )

    def _keys(
        self, ctx: BuildContext, posts: set[int] | None = None, terms: set[int] | None = None
    ) -> set[int]:
        """The keys of the items of the news (of ``posts`` or of a post in ``terms``)."""
        news = self._news(ctx)
        if news is None:
            return set()
        query = select(news.c.post_id, news.c.lastmod)
        if posts is not None:
            reached: ColumnElement[bool] = news.c.post_id.in_(sorted(posts))
            if terms:
                in_terms = post_terms.c.term_id.in_(sorted(terms))
                reached = or_(
                    reached, exists().where(post_terms.c.post_id == news.c.post_id, in_terms)
                )
            query = query.where(reached)
        return {order_key(row.lastmod, row.post_id) for row in ctx.session.execute(query)}

    def entries(self, ctx: BuildContext, keys: set[int] | None) -> Iterator[Entry]:
        news_items = self._news(ctx)
        if news_items is None:
            return
        query = select(news_items).order_by(
            news_items.c.lastmod.desc(), news_items.c.post_id.desc()
        )
        if keys is not None:
            of_keys = sorted({key % KEY_IDS for key in keys})
            query = query.where(news_items.c.post_id.in_(of_keys))
        rows = [
            row
            for row in ctx.session.execute(query)
            if keys is None or order_key(row.lastmod, row.post_id) in keys
        ]
        if not rows:
            return
        ids = [row.post_id for row in rows]
        # Terms are not needed here: don't let the relationship load them for every post.
        of_ids = select(Post).options(lazyload(Post.terms)).where(Post.id.in_(ids))
        posts = {post.id: post for post in ctx.session.scalars(of_ids)}
        fields = {
            news.post_id: news
            for news in ctx.session.scalars(select(NewsPost).where(NewsPost.post_id.in_(ids)))
        }
        settings = news_settings(ctx.session)
        name = valid_chars(settings.publication_name or ctx.settings.title or "").strip()
        name = name or ctx.site_url.split("://", 1)[-1]
        default_language = (
            news_language(settings.language) or news_language(ctx.settings.language) or "en"
        )
        for row in rows:
            post, news = posts.get(row.post_id), fields.get(row.post_id)
            if post is None:
                # Deleted since its entry was read (another transaction committed between
                # the two reads): its deletion is in the change log, applied next.
                continue
            extra: dict[str, Any] = {
                "name": name,
                # The post's news language, else the post's own (S-405), else the default.
                "language": (news_language(news.language) if news else None)
                or news_language(post.language)
                or default_language,
                "publication_date": w3c(post.published_at or row.lastmod),
                "title": " ".join(valid_chars(post.title).split()) or name,
            }
            if news is not None and news.genres:
                extra["genres"] = ", ".join(news.genres)
            if news is not None and news.keywords:
                extra["keywords"] = " ".join(valid_chars(news.keywords).split())
            yield Entry(
                key=order_key(row.lastmod, row.post_id),
                path=row.path,
                lastmod=row.lastmod,
                images=list(row.images or []),
                extra=extra,
                alternates=row.alternates,
                item=post,
            )

    def explain_lastmod(self, ctx: BuildContext, entry: StoredEntry) -> str:
        """The date of the post's own entry, which ``entries`` takes as it is."""
        post = ctx.session.get_one(Post, entry.key % KEY_IDS)
        return f"the post's lastmod in the {post.type} sitemap"

    def next_due(self, ctx: BuildContext) -> datetime | None:
        """When the oldest listed item turns 48 hours old."""
        oldest = oldest_lastmod(ctx, NAME)
        return oldest + WINDOW if oldest is not None else None


def order_key(lastmod: datetime, post_id: int) -> int:
    seconds = min(max(int(lastmod.timestamp()), 1), KEY_SECONDS - 1)
    return (KEY_SECONDS - seconds) * KEY_IDS + post_id
