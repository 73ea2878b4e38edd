"""Metadata of hosted videos (YouTube, Vimeo) from the host's oEmbed endpoint.

Fetched after the saving transaction commits, on a small pool of background threads, so
the admin request that saved a post never waits on the network and never fails because of
it. A fetch fills only the fields nobody has set, records when it succeeded or why it
failed, and refreshes the sitemaps in a transaction of its own. Endpoints come from the
settings (``sitemap_server_video.oembed.youtube`` / ``.vimeo``); with none set, nothing is
fetched (tests point them at a local server).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import requests
from sqlalchemy import event
from sqlalchemy.orm import Session

from sitemap_server.plugin import (
    MAX_TITLE_LENGTH,
    MAX_URL_LENGTH,
    clean_text,
    clean_url,
    context_of,
    utcnow,
)

from .models import Video

log = logging.getLogger(__name__)

ENDPOINT = "sitemap_server_video.oembed.{host}"
TIMEOUT = "sitemap_server_video.oembed.timeout"
DEFAULT_TIMEOUT = 5.0
HOSTS = ("youtube", "vimeo")
MAX_ERROR = 500
# An answer is a small JSON object; a host that sends more is not answering oEmbed.
MAX_ANSWER_BYTES = 1024 * 1024
# The largest number an integer column (duration, width, height) holds.
MAX_NUMBER = 2**31 - 1
# URLs longer than this cannot be listed (S-404); cut here, clean_url refuses them.
MAX_URL_TEXT = MAX_URL_LENGTH + 1
# session.info: the ids of the videos to fetch once the transaction commits.
QUEUE = "sitemap_server_video.fetch"

_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="video-oembed")
_pending: set[Future[None]] = set()
_lock = threading.Lock()


def host_of(video: Video) -> str | None:
    key = video.embed_key or ""
    host = key.partition(":")[0]
    return host if host in HOSTS and video.page_url else None


def _settings(session: Session) -> Mapping[str, Any]:
    return context_of(session).settings


def fetch_after_commit(session: Session, video_ids: list[int]) -> None:
    """Queue ``video_ids`` for fetching once (and only if) the transaction commits."""
    if not video_ids:
        return
    settings = _settings(session)
    if not any(settings.get(ENDPOINT.format(host=h)) for h in HOSTS):
        return
    queued: list[int] = session.info.setdefault(QUEUE, [])
    if not queued:

        def after_commit(committed: Session) -> None:
            # Detection may run twice in a transaction: each video is asked for once.
            ids = list(dict.fromkeys(committed.info.pop(QUEUE, [])))
            submit(committed.get_bind(), dict(committed.info), ids)

        def after_rollback(rolled_back: Session, previous_transaction: Any) -> None:
            rolled_back.info.pop(QUEUE, None)

        event.listen(session, "after_commit", after_commit, once=True)
        event.listen(session, "after_soft_rollback", after_rollback, once=True)
    queued.extend(video_ids)


def unqueue(session: Session, video_ids: list[int]) -> None:
    """Take ``video_ids`` off what this transaction fetches after it commits."""
    queued: list[int] = session.info.get(QUEUE, [])
    unwanted = set(video_ids)
    queued[:] = [video_id for video_id in queued if video_id not in unwanted]


def submit(bind: Any, info: dict[str, Any], video_ids: list[int]) -> None:
    if not video_ids:
        return
    future = _pool.submit(fetch, bind, info, video_ids)
    with _lock:
        _pending.add(future)
    future.add_done_callback(_done)


def _done(future: Future[None]) -> None:
    with _lock:
        _pending.discard(future)
    if future.exception() is not None:
        log.error("video metadata fetch failed", exc_info=future.exception())


def wait(timeout: float = 30.0) -> bool:
    """Wait until every queued fetch has finished (tests, and a clean shutdown)."""
    with _lock:
        pending = list(_pending)
    for future in pending:
        with contextlib.suppress(Exception):  # logged by _done
            future.result(timeout=timeout)
    with _lock:
        return not _pending


def fetch(bind: Any, info: dict[str, Any], video_ids: list[int]) -> None:
    """Fetch the metadata of ``video_ids``, then store it, one transaction for all.

    No transaction is open while the hosts are asked, and the rows are read again before
    they are filled: what was set in the meantime (by hand, say) is kept, and a video
    deleted in the meantime stays deleted.
    """
    asks: list[tuple[int, str, str]] = []
    with Session(bind=bind, info=info) as session:
        settings = _settings(session)
        timeout = float(settings.get(TIMEOUT) or DEFAULT_TIMEOUT)
        for video_id in video_ids:
            video = session.get(Video, video_id)
            host = host_of(video) if video is not None else None
            endpoint = settings.get(ENDPOINT.format(host=host)) if host else None
            if video is not None and endpoint:
                asks.append((video.id, endpoint, video.page_url or ""))
    answers: dict[int, dict[str, Any] | str] = {}
    for video_id, endpoint, page_url in asks:
        try:
            # Whatever the host sends (a lone surrogate, a number past any column, JSON
            # nested beyond recursion), the video ends up fetched or failed, never between.
            answers[video_id] = found_fields(_ask(endpoint, page_url, timeout))
        except Exception as exc:  # recorded on the video: that is the point
            answers[video_id] = _error(f"{endpoint}: {exc}")
            log.warning("oEmbed for video %s (%s) failed: %s", video_id, page_url, exc)
    if not answers:
        return
    try:
        _store(bind, info, answers)
    except Exception as exc:
        # The answers could not be stored (the database refused a value): the videos are
        # marked failed instead, in a transaction of their own.
        log.exception("oEmbed answers for videos %s could not be stored", sorted(answers))
        _store(bind, info, dict.fromkeys(answers, _error(f"not stored: {exc}")))


def _error(text: str) -> str:
    """A ``fetch_error`` the database takes (valid text, at most ``MAX_ERROR``)."""
    return clean_text(text)[:MAX_ERROR]


def _store(bind: Any, info: dict[str, Any], answers: dict[int, dict[str, Any] | str]) -> None:
    """Record each video's answer (its fields, or why it failed) in one transaction."""
    from .services import videos_changed

    with Session(bind=bind, info=info) as session, session.begin():
        posts: set[int] = set()
        for video_id, answer in answers.items():
            video = session.get(Video, video_id, with_for_update=True)
            if video is None:
                continue
            if isinstance(answer, str):
                video.fetch_error = answer
                continue
            fill(video, answer)
            posts.add(video.post_id)
        if posts:
            videos_changed(session, *posts)  # the posts were not saved: detect nothing


def _ask(endpoint: str, url: str, timeout: float) -> dict[str, Any]:
    params = {"url": url, "format": "json"}
    with requests.get(endpoint, params=params, timeout=timeout, stream=True) as response:
        response.raise_for_status()
        body = response.raw.read(MAX_ANSWER_BYTES + 1, decode_content=True)
    if len(body) > MAX_ANSWER_BYTES:
        raise ValueError(f"the answer is larger than {MAX_ANSWER_BYTES:,} bytes")
    answer = json.loads(body)
    if not isinstance(answer, dict):
        raise ValueError("the answer is not a JSON object")
    return answer


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
    """Vimeo's ``upload_date`` ("2013-10-15 14:08:29", in UTC)."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError):  # "last week"; year 1 with an offset east of UTC
        return None
