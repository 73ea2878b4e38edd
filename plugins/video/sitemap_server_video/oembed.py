"""Metadata of hosted videos (YouTube, Vimeo) from the host's oEmbed endpoint.

Everything about it is here: its settings, and ``OEmbed``, a notification channel of
the core's worker (``sitemap_channels``). Saving a post queues one fetch per video page
(``send_later``) in the saving transaction, so a rolled-back save fetches nothing and a
committed one loses nothing, whatever happens to the process next. The worker sends it
after commit, retries a host that fails with backoff, records each attempt (``GET
/api/notifications``), and hands the answer to ``received``: in one transaction it fills
the fields nobody has set on every video of that page, and the sitemaps follow. The admin
request that saved the post never waits on the network and never fails because of it.
Endpoints come from the settings (``sitemap_server_video.oembed.youtube`` / ``.vimeo``);
with none set, nothing is queued (tests point them at a local server).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from sqlalchemy import select
from sqlalchemy.orm import Session

from sitemap_server.plugin import (
    MAX_TITLE_LENGTH,
    MAX_URL_LENGTH,
    Channel,
    Invalid,
    Message,
    OutgoingRequest,
    Setting,
    clean_text,
    clean_url,
    hookimpl,
    http_url,
    optional,
    parse_datetime,
    positive_float,
    send_later,
    site_of,
    utcnow,
)

from .changes import videos_changed
from .models import Video

CHANNEL = "video.oembed"
ENDPOINT = "sitemap_server_video.oembed.{host}"
TIMEOUT = "sitemap_server_video.oembed.timeout"
HOSTS = ("youtube", "vimeo")
MAX_ERROR = 500
# An answer is a small JSON object; a host that sends more is not answering oEmbed.
MAX_ANSWER_BYTES = 1024 * 1024
# The largest number an integer column (duration, width, height) holds.
MAX_NUMBER = 2**31 - 1
# URLs longer than this cannot be listed (S-404); cut here, clean_url refuses them.
MAX_URL_TEXT = MAX_URL_LENGTH + 1
# session.info: this transaction fetches nothing (it seeds the demo, which must work
# without internet: ``demo.describe_videos`` fills the fields instead).
NO_FETCH = "sitemap_server_video.no_fetch"


def host_of(video: Video) -> str | None:
    key = video.embed_key or ""
    host = key.partition(":")[0]
    return host if host in HOSTS and video.page_url else None


@hookimpl
def sitemap_settings() -> list[Setting]:
    return [
        *(
            Setting(
                ENDPOINT.format(host=host),
                "",
                optional(http_url),
                doc=f"The oEmbed endpoint asked for the metadata of {host} videos; empty: "
                "none is asked.",
            )
            for host in HOSTS
        ),
        Setting(
            TIMEOUT,
            "5",
            positive_float,
            doc="Seconds to connect to an oEmbed endpoint, and to read its answer.",
        ),
    ]


@hookimpl
def sitemap_channels(settings: Mapping[str, Any]) -> list[Channel]:
    endpoints = {host: settings[ENDPOINT.format(host=host)] for host in HOSTS}
    return [OEmbed({host: url for host, url in endpoints.items() if url}, settings[TIMEOUT])]


class OEmbed(Channel):
    """One message per video page: a GET of ``endpoint?url=PAGE&format=json``."""

    name = CHANNEL
    announces = False  # a background job: sent whether or not the site is private

    def __init__(self, endpoints: dict[str, str], timeout: float) -> None:
        self.endpoints = endpoints
        self.timeout = timeout

    @property
    def enabled(self) -> bool:
        return bool(self.endpoints)

    def message(self, video: Video) -> Message | None:
        """The fetch of ``video``'s metadata (None: its host has no endpoint)."""
        host = host_of(video)
        endpoint = self.endpoints.get(host) if host else None
        if endpoint is None or video.page_url is None:
            return None
        query = urlencode({"url": video.page_url, "format": "json"})
        return Message(f"{endpoint}?{query}", {"page_url": video.page_url, "videos": [video.id]})

    def request(self, message: Message, site_url: str) -> OutgoingRequest:
        return OutgoingRequest(message.url, answer_bytes=MAX_ANSWER_BYTES, timeout=self.timeout)

    def received(self, session: Session, message: Message, answer: bytes) -> None:
        try:
            found = json.loads(answer)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"the answer is not JSON: {type(exc).__name__}") from None
        if not isinstance(found, dict):
            raise ValueError("the answer is not a JSON object")
        fields = found_fields(found)
        posts = set()
        for video in _waiting(session, message):
            fill(video, fields)
            posts.add(video.post_id)
        if posts:
            videos_changed(session, *posts)  # the posts were not saved: detect nothing

    def failed(self, session: Session, message: Message, error: str, final: bool) -> None:
        endpoint = message.url.partition("?")[0]
        for video in _waiting(session, message):
            video.fetch_error = _error(f"{endpoint}: {error}")

    def describe(self, number: int, message: Message) -> str:
        page = (message.payload or {}).get("page_url")
        return f"oEmbed fetch {number} of {page} from {message.url.partition('?')[0]}"

    def targets(self, site_url: str) -> dict[str, str] | None:
        return dict(self.endpoints) or None


def _waiting(session: Session, message: Message) -> list[Video]:
    """The message's videos still of its page and without metadata, locked: a video
    deleted meanwhile stays deleted, what was set by hand meanwhile is kept."""
    payload = message.payload or {}
    return list(
        session.scalars(
            select(Video)
            .where(
                Video.id.in_(payload.get("videos", [])),
                Video.page_url == payload.get("page_url"),
                Video.fetched_at.is_(None),
            )
            .order_by(Video.id)
            .with_for_update()
        )
    )


def fetch_later(session: Session, videos: list[Video]) -> None:
    """Queue the fetch of ``videos``' metadata in the saving transaction: one message per
    page, a waiting one taking the videos of this save too."""
    if not videos or session.info.get(NO_FETCH):
        return
    channel = site_of(session).notify.channel(CHANNEL)
    if not isinstance(channel, OEmbed) or not channel.enabled:
        return
    for video in videos:
        message = channel.message(video)
        if message is None:
            continue
        row = send_later(session, CHANNEL, message)
        waiting = dict(row.payload or {})
        if video.id not in waiting.get("videos", []):
            # A message still waiting for the same page (a retry, another post's video).
            row.payload = {**waiting, "videos": [*waiting.get("videos", []), video.id]}


def _error(text: str) -> str:
    """A ``fetch_error`` the database takes (valid text, at most ``MAX_ERROR``)."""
    return clean_text(text)[:MAX_ERROR]


def found_fields(answer: dict[str, Any]) -> dict[str, Any]:
    """The video's fields an oEmbed answer gives (which fields a host sends varies), each
    fit for its column and for a document: text cleaned (``sanitize.clean_text``) and cut
    to its column, URLs in normal form (``sanitize.clean_url``), numbers in range."""

    def text(name: str, limit: int) -> str | None:
        value = answer.get(name)
        if not isinstance(value, str):
            return None
        return clean_text(value).strip()[:limit].strip() or None

    def number(name: str) -> int | None:
        value = answer.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            return None
        try:
            number = int(float(value))
        except (ValueError, OverflowError):  # "abc", NaN; inf
            return None
        return number if 0 < number <= MAX_NUMBER else None

    return {
        "title": text("title", MAX_TITLE_LENGTH),
        "thumbnail_url": clean_url(text("thumbnail_url", MAX_URL_TEXT)),
        "uploader": text("author_name", 255),
        "uploader_url": clean_url(text("author_url", MAX_URL_TEXT)),
        "host_description": text("description", 10_000),
        "duration": number("duration"),
        "width": number("width"),
        "height": number("height"),
        "published_at": _date(text("upload_date", 40)),
    }


def fill(video: Video, found: dict[str, Any]) -> None:
    """Fields nobody has set, from ``found_fields`` of an answer; the video is fetched."""
    for name, value in found.items():
        if value is not None and getattr(video, name) is None:
            setattr(video, name, value)
    video.fetched_at = utcnow()
    video.fetch_error = None
    video.modified_at = utcnow()


def _date(value: str | None) -> datetime | None:
    """Vimeo's ``upload_date`` ("2013-10-15 14:08:29", in UTC), in the range every stored
    date-time is held to (``parse_datetime``), or None."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
        return parse_datetime(
            parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC), "upload_date"
        )
    except (ValueError, Invalid):  # "last week"; year 1 with an offset east of UTC
        return None
