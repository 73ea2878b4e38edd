"""Every write to videos: the admin API, detection on save and oEmbed results go here."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sitemap_server.plugin import (
    Invalid,
    Links,
    NotFound,
    Post,
    chunks,
    flush,
    get_or_404,
    parse_datetime,
    site_url_of,
    utcnow,
)

from . import oembed
from .changes import videos_changed
from .detect import Found, find_videos
from .models import DETECTED, MANUAL, VIDEO_WRITES, Video

FIELDS = (
    "title",
    "description",
    "caption",
    "content_url",
    "player_url",
    "thumbnail_url",
    "page_url",
    "published_at",
    "duration",
    "view_count",
    "width",
    "height",
    "family_friendly",
    "uploader",
    "uploader_url",
)


def get_post(session: Session, post_id: int) -> Post:
    post = session.get(Post, post_id)
    if post is None:
        raise NotFound(f"no post {post_id}")
    return post


def get_video(
    session: Session, video_id: int, for_update: bool = False, for_delete: bool = False
) -> Video:
    return get_or_404(session, Video, video_id, "video", for_update, for_delete)


def post_videos(session: Session, post_id: int) -> list[Video]:
    get_post(session, post_id)
    return list(session.scalars(select(Video).where(Video.post_id == post_id).order_by(Video.id)))


def _apply(video: Video, data: dict[str, Any]) -> None:
    for name in FIELDS:
        if name not in data:
            continue
        value = data[name]
        if name == "published_at":
            value = parse_datetime(value, name)
        setattr(video, name, value)
    if not (video.content_url or video.player_url):
        raise Invalid.field("content_url", "a video needs a content_url or a player_url")
    video.modified_at = utcnow()


def create_video(session: Session, post_id: int, data: dict[str, Any]) -> Video:
    post = get_post(session, post_id)
    video = Video(post_id=post.id, source=MANUAL, family_friendly=True)
    _apply(video, data)
    session.add(video)
    flush(session, "video")
    videos_changed(session, post.id)
    return video


def update_video(session: Session, video: Video, data: dict[str, Any]) -> Video:
    _apply(video, data)
    flush(session, "video")
    videos_changed(session, video.post_id)
    return video


def delete_video(session: Session, video: Video) -> None:
    session.delete(video)
    flush(session, "video")
    videos_changed(session, video.post_id)


def sync_detected(session: Session, post_ids: set[int]) -> None:
    """Make the detected videos of ``post_ids`` what their content embeds now.

    Runs inside the writing transaction, before the sitemaps are refreshed. Videos added
    by hand are never touched, and a found video that one of them already names is not
    added again. A detected video found again keeps its row and fetched metadata. Where
    only videos changed (``VIDEO_WRITES``), none is added: a detected video deleted through
    the API stays away until its post is saved again.
    """
    only_videos: set[int] = session.info.pop(VIDEO_WRITES, set())
    if not post_ids:
        return
    site_url = site_url_of(session)
    links = Links(session, site_url)
    to_fetch: list[Video] = []
    for batch in chunks(sorted(post_ids)):
        stored: dict[int, list[Video]] = {}
        for video in session.scalars(
            select(Video).where(Video.post_id.in_(batch)).order_by(Video.id)
        ):
            stored.setdefault(video.post_id, []).append(video)
        # Most posts embed nothing and have no video: only their text is read (whole
        # posts, with their terms, took a ninth of an import).
        # The text to search, "" for a post that embeds nothing but has videos to remove.
        work: dict[int, str] = {}
        for post_id, content in session.execute(
            select(Post.id, Post.content).where(Post.id.in_(batch))
        ):
            text = content or ""
            embeds = _may_embed(text)
            if embeds or post_id in stored:
                work[post_id] = text if embeds else ""
        if not work:
            continue
        for post in session.scalars(select(Post).where(Post.id.in_(sorted(work)))):
            content, own = work[post.id], stored.get(post.id, [])
            found = find_videos(content, links.post(post)) if content else []
            to_fetch += _sync_post(session, post.id, found, own, post.id not in only_videos)
    session.flush()
    oembed.fetch_later(session, to_fetch)


def _sync_post(
    session: Session, post_id: int, found: list[Found], own: list[Video], add: bool = True
) -> list[Video]:
    """Store ``found`` as the post's detected videos; the new ones still to be fetched.

    With ``add`` false (only the post's videos changed), no detected video is added back."""
    detected = {v.embed_key: v for v in own if v.source == DETECTED}
    named = {
        url
        for v in own
        if v.source == MANUAL
        for url in (v.player_url, v.content_url, v.page_url)
        if url
    }
    keep, to_fetch = set(), []
    for item in found:
        if {item.player_url, item.content_url, item.page_url} & named:
            continue  # a video added by hand already names it
        keep.add(item.embed_key)
        video = detected.get(item.embed_key)
        if video is None:
            if not add:
                continue
            video = _detected_video(post_id, item)
            session.add(video)
        if video.fetched_at is None and oembed.host_of(video) is not None:
            to_fetch.append(video)
    for key, video in detected.items():
        if key not in keep:
            session.delete(video)
    return to_fetch


def _may_embed(content: str) -> bool:
    lowered = content.lower()
    return any(marker in lowered for marker in ("youtu", "vimeo", "<video"))


def _detected_video(post_id: int, item: Found) -> Video:
    return Video(
        post_id=post_id,
        source=DETECTED,
        embed_key=item.embed_key,
        player_url=item.player_url,
        content_url=item.content_url,
        thumbnail_url=item.thumbnail_url,
        page_url=item.page_url,
        family_friendly=True,
        modified_at=utcnow(),
    )
