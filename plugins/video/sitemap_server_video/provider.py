"""``video-sitemap.xml``: one ``<url>`` per listed post with videos (S-503).

A post is listed here exactly when a core post sitemap lists it: the entries are made from
the listed posts (``ListedPosts``), which passed every shared exclusion rule (status,
password, noindex, canonical, private site, plugins' criteria and filters). Everything a
``<video:video>`` says is computed here, at write time, so a page renders as fast as a
core one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from sqlalchemy import exists, select

from sitemap_server.plugin import (
    BuildContext,
    ContentChanges,
    Entry,
    ListedPosts,
    Post,
    Provider,
    StoredEntry,
    Term,
    chunks,
    clean_text,
    clean_url,
    home_path,
    host_of,
    normal_host,
    post_terms,
    reached_posts,
    w3c,
)

from .models import Video

log = logging.getLogger(__name__)

XSL = "/video-sitemap.xsl"
TEMPLATE = "sitemap_server_video:templates/video-url.pt"
# Limits of Google's video schema (sitemap-video.xsd).
MAX_TITLE = 100
MAX_DESCRIPTION = 2048
MAX_DURATION = 28_800
MAX_TAGS = 32
TAG_TAXONOMY = "post_tag"


class VideoProvider(Provider):
    name = "video"
    kind = "video"
    order = 40
    depends_on = ("post",)  # it reads the listed posts
    xsl = XSL
    xsl_asset = "sitemap_server_video:static/video-sitemap.xsl"
    template = TEMPLATE

    def affected_keys(self, ctx: BuildContext, changes: ContentChanges) -> set[int]:
        """Changed posts (their videos are saved with them), and the posts with videos
        in a changed tag (a renamed tag is a changed ``video:tag``). Other terms reach
        no video entry but through their posts' URLs, and a write that moves those
        records the posts (an edit of a post records its category: the category's other
        videos are not recomputed)."""
        # A page's permalink holds its ancestors' slugs: as the post types' providers
        # do, recompute the descendants of the changed posts (their URLs may have moved)
        # and the translations of those (their hreflang alternates moved with them).
        keys = reached_posts(ctx, set(changes.posts))
        has_video = exists().where(Video.post_id == post_terms.c.post_id)
        is_tag = exists().where(Term.id == post_terms.c.term_id, Term.taxonomy == TAG_TAXONOMY)
        for batch in chunks(sorted(changes.terms)):
            tagged = select(post_terms.c.post_id).where(
                post_terms.c.term_id.in_(batch), has_video, is_tag
            )
            keys.update(ctx.session.scalars(tagged))
        return keys

    def entries(self, ctx: BuildContext, keys: set[int] | None) -> Iterator[Entry]:
        if not ctx.post_providers:
            return
        # The post's own entry: its URL, date and translations (hreflang, S-405).
        listed = ListedPosts.query(ctx).where(exists().where(Video.post_id == ListedPosts.post_id))
        site_host = normal_host(urlsplit(ctx.site_url).hostname or "")
        batches = [None] if keys is None else list(chunks(sorted(keys)))
        front = _front_page_row(ctx)
        for batch in batches:
            # Sorted here: ORDER BY made SQLite walk every listed entry in key order
            # instead of looking up the batch's keys (15 ms a write at 100k posts).
            query = listed if batch is None else listed.where(ListedPosts.post_id.in_(batch))
            found: list[Any] = list(ctx.session.execute(query))
            if front is not None and (batch is None or front.post_id in batch):
                found.append(front)
            found.sort(key=lambda row: row.post_id)
            for rows in chunks(found, 500):
                ids = [row.post_id for row in rows]
                videos = _videos(ctx, ids)
                titles = select(Post.id, Post.title).where(Post.id.in_(ids))
                posts = {post_id: title for post_id, title in ctx.session.execute(titles)}
                tags = _tags(ctx, ids)
                for row in rows:
                    own = videos.get(row.post_id, [])
                    if row.post_id not in posts:
                        continue  # deleted since its entry was read: the change log has it
                    title, post_tags = posts[row.post_id], tags.get(row.post_id, [])
                    fields = [video_fields(v, title, post_tags, site_host) for v in own]
                    shown = [f for f in fields if f is not None]
                    if not shown:
                        continue
                    # A video added or edited is a change of this URL, as is the post's.
                    dates = [
                        d for d in (row.lastmod, *(v.modified_at for v in own)) if d is not None
                    ]
                    lastmod = max(dates, default=None)
                    yield Entry(
                        key=row.post_id,
                        path=row.path,
                        lastmod=lastmod,
                        extra={"videos": shown},
                        alternates=row.alternates,
                        item=own,
                    )

    def explain_lastmod(self, ctx: BuildContext, entry: StoredEntry) -> str:
        """The later of the date of the post's own entry and its videos' (as ``entries``
        dates it), and which of them it is."""
        # A static front page's videos are the home page's (``_front_page_row``).
        front = entry.path == home_path()
        if front:
            post = ListedPosts.home_page(ctx)
        else:
            query = ListedPosts.query(ctx).where(ListedPosts.post_id == entry.key)
            post = ctx.session.execute(query).first()
        if post is None:  # no longer listed: the change log has it, applied next
            return super().explain_lastmod(ctx, entry)
        own, videos = ("the home page's", "the front page's") if front else ("the post's", "its")
        source = (
            f"the later of {own} lastmod in the {post.sitemap} sitemap "
            f"and {videos} videos' modified times"
        )
        if post.lastmod == entry.lastmod:
            return f"{source} ({own} lastmod)"
        dating = ctx.session.scalar(
            select(Video.id)
            .where(Video.post_id == entry.key, Video.modified_at == entry.lastmod)
            .order_by(Video.id)
            .limit(1)
        )
        return f"{source} (video {dating}'s modified time)" if dating is not None else source


class _Listed(NamedTuple):
    post_id: int
    path: str
    lastmod: datetime | None
    alternates: list[list[str]] | None = None


def _front_page_row(ctx: BuildContext) -> _Listed | None:
    """A static front page is listed as the home page (key 0 of its type's sitemap, S-206),
    not under its own id: its videos are the home page's."""
    settings = ctx.settings
    if settings.front_page != "page" or settings.front_page_id is None:
        return None
    home = ListedPosts.home_page(ctx)
    has_video = exists().where(Video.post_id == settings.front_page_id)
    if home is None or not ctx.session.scalar(select(has_video)):
        return None
    return _Listed(settings.front_page_id, home.path, home.lastmod)


def _videos(ctx: BuildContext, post_ids: list[int]) -> dict[int, list[Video]]:
    found: dict[int, list[Video]] = {}
    query = select(Video).where(Video.post_id.in_(post_ids)).order_by(Video.post_id, Video.id)
    for video in ctx.session.scalars(query):
        found.setdefault(video.post_id, []).append(video)
    return found


def _tags(ctx: BuildContext, post_ids: list[int]) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {}
    query = (
        select(post_terms.c.post_id, Term.name)
        .join(Term, Term.id == post_terms.c.term_id)
        .where(post_terms.c.post_id.in_(post_ids), Term.taxonomy == TAG_TAXONOMY)
        .order_by(post_terms.c.post_id, Term.name)
    )
    for post_id, name in ctx.session.execute(query):
        found.setdefault(post_id, []).append(name)
    return found


def _clip(text: str, limit: int) -> str:
    text = " ".join(clean_text(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_text(limit: int, *candidates: str | None) -> str:
    """The first candidate that still has text once cleaned (a blank one is no text)."""
    for candidate in candidates:
        text = _clip(candidate or "", limit)
        if text:
            return text
    return ""


def video_fields(
    video: Video, post_title: str, tags: list[str], site_host: str | None
) -> dict[str, Any] | None:
    """What ``<video:video>`` says for ``video``, or None when it cannot be listed (no
    thumbnail, or neither a content nor a player URL: the schema requires them)."""
    # Every URL in normal form (S-404), or none: a video stored before it was checked,
    # or written by hand into the database, cannot break the document either.
    thumbnail = clean_url(video.thumbnail_url)
    content, player = clean_url(video.content_url), clean_url(video.player_url)
    if not thumbnail or not (content or player):
        log.info(
            "video %s of post %s not listed: no thumbnail or no video URL", video.id, video.post_id
        )
        return None
    uploader_url = clean_url(video.uploader_url)
    # S-503: the caption, then a description (the owner's, then the host's), then the
    # video's public URL; the file or player URL when no page URL is known.
    description = _first_text(
        MAX_DESCRIPTION,
        video.caption,
        video.description,
        video.host_description,
        video.page_url,
        video.content_url,
        video.player_url,
    )
    fields: dict[str, Any] = {
        "thumbnail_loc": thumbnail,
        "title": _first_text(MAX_TITLE, video.title, post_title, "Video"),
        "description": description,
        "content_loc": content,
        "player_loc": player,
        "duration": video.duration
        if video.duration and 0 < video.duration <= MAX_DURATION
        else None,
        "view_count": video.view_count,
        "publication_date": w3c(video.published_at),
        "tags": [_clip(tag, 256) for tag in tags[:MAX_TAGS]],
        "family_friendly": "yes" if video.family_friendly else "no",
        "uploader": _clip(video.uploader or "", 255) or None,
        # Google: the uploader's page must be on the same host as the <loc>.
        "uploader_url": uploader_url
        if uploader_url and host_of(uploader_url) == site_host
        else None,
    }
    return {key: value for key, value in fields.items() if value not in (None, [])}
