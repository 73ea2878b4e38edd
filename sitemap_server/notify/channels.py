"""A notification channel: one kind of message the worker sends over HTTP.

Pings (``notify.ping``) and IndexNow submissions (``notify.indexnow``) are the core's two
channels; a plugin adds one by returning it from the ``sitemap_channels`` hook, with its
settings declared through ``sitemap_settings`` in the same module. The worker does the
rest for every channel alike: the outbox row written in the transaction of the change,
the claim, the send after commit, the retries with backoff, the attempts recorded and
listed by ``GET /api/notifications``.

A channel says:

- ``messages``: what a burst of sitemap changes becomes (a ping per target, IndexNow
  batches of the changed URLs); a channel that ``announces`` nothing (a plugin's
  background job, such as the video plugin's oEmbed fetches) is fed by ``send_later``
  from the plugin's own writes instead;
- ``request``: the HTTP request for a stored message, made when it is sent, from what is
  configured then (IndexNow adds its key);
- ``judge``: what an answer means: sent, retry later, or give up;
- ``received`` and ``failed``: what to do in the database with an answer the channel
  reads (``OutgoingRequest.answer_bytes``), or with a failed attempt;
- ``targets``: where it sends, for ``GET /api/notifications`` and the command line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..models import Notification
from ..models.meta import utcnow
from ..models.notifications import FAILED, PENDING, SENT

RETRY = "retry"
# notifications.channel is a String(16).
MAX_NAME_LENGTH = 16


@dataclass(frozen=True)
class Burst:
    """Sitemap changes that came together, once they went quiet."""

    # How many changes, and the names of the sitemaps they were in (sorted).
    changes: int
    sitemaps: tuple[str, ...]
    # The distinct absolute URLs that were added, updated or removed, in order of change
    # (none for a sitemap rebuilt as a whole). Read from the database as it is iterated
    # (each iteration reads again): a burst may hold a million, so go through them, never
    # keep them all.
    urls: Iterable[str]
    # The site's URL now (the one stored through the API, else the ini file's).
    site_url: str


@dataclass(frozen=True)
class Message:
    """One message, kept in the outbox until it is sent or given up."""

    # Where it goes: shown by ``GET /api/notifications``.
    url: str
    # What the channel needs to send it (JSON; stored with the message).
    payload: dict[str, Any] | None = None


@dataclass(frozen=True)
class OutgoingRequest:
    """An HTTP request: ``method`` when it is set (a purge's ``PURGE``), else a POST of
    ``json`` when it is set, else a GET; with ``headers`` besides the worker's."""

    url: str
    json: dict[str, Any] | None = None
    params: dict[str, str] | None = None
    method: str | None = None
    headers: dict[str, str] | None = None
    # The most of the answer's body the channel reads (``received``); 0: none. A longer
    # answer is given up.
    answer_bytes: int = 0
    # Seconds to connect and to read; None: ``sitemap_server.notify.timeout_seconds``.
    timeout: float | None = None


@dataclass(frozen=True)
class Result:
    """What became of one attempt."""

    outcome: str  # SENT, RETRY or FAILED (or CANCELLED, decided by the worker)
    http_status: int | None = None
    error: str | None = None
    # What the server asked for in Retry-After (429, 503), in seconds.
    retry_after: float | None = None
    duration_ms: int = 0
    # The answer's body, when the request asked for it (``answer_bytes``).
    answer: bytes | None = None


class Channel:
    """The base of every channel; a channel overrides what it needs."""

    # Stored with each message (at most 16 characters), unique across plugins.
    name: str = ""
    # Its messages tell search engines about the site: made from bursts of sitemap
    # changes, and cancelled while the site is private. False: a plugin's background
    # job, fed by ``send_later`` and sent whatever the site's privacy.
    announces: bool = True
    # Its messages purge a cache in front (``notify.purge``): made at once from the tags
    # of the documents each pass of the maintainer changed (``purge_messages``), in its
    # transaction, and sent whatever the site's privacy.
    purges: bool = False
    # The most tags one of its purge messages holds: a purge that waits untried takes
    # the tags of the next passes while they fit (``notify.purge``).
    tags_per_request: int = 100

    @property
    def enabled(self) -> bool:
        """Configured to send anything; a message of a channel that is not is cancelled."""
        return True

    def messages(self, burst: Burst) -> Iterable[Message]:
        """What ``burst`` becomes (nothing, by default); each message is stored as soon as
        it is made, so a generator keeps the worker's memory small."""
        return []

    def purge_messages(self, tags: list[str]) -> Iterable[Message]:
        """What a purge of ``tags`` becomes (asked only if it ``purges``)."""
        return []

    def request(self, message: Message, site_url: str) -> OutgoingRequest:
        """The request that sends ``message``: by default a GET of its URL, or a POST of
        its payload as JSON."""
        return OutgoingRequest(message.url, message.payload)

    def judge(self, status: int, reason: str | None = None) -> Result:
        """What an answer with HTTP ``status`` means: by default 2xx sent, 429 and 5xx
        retry later, anything else given up (asking again would get the same answer)."""
        if 200 <= status < 300:
            return Result(SENT, status)
        if status == 429:
            return Result(RETRY, status, "HTTP 429: too many requests")
        if status >= 500:
            return Result(RETRY, status, f"HTTP {status} {reason or ''}".rstrip())
        return Result(FAILED, status, f"HTTP {status} {reason or ''}".rstrip())

    def received(self, session: Session, message: Message, answer: bytes) -> None:
        """A sent message's answer (read when ``OutgoingRequest.answer_bytes`` asks for it),
        in the transaction that records the attempt. Raise ``ValueError`` to give the message up
        with that reason (an answer that makes no sense will not make more next time);
        any other failure to store it gives it up too, with the changes rolled back."""

    def failed(self, session: Session, message: Message, error: str, final: bool) -> None:
        """An attempt failed with ``error``; ``final``: the message is given up (or
        cancelled), else it is retried later. In the transaction that records it."""

    def describe(self, number: int, message: Message) -> str:
        """The message in a line of the log."""
        return f"{self.name} {number} to {message.url}"

    def targets(self, site_url: str) -> Any:
        """Where it announces changes, as JSON, for ``GET /api/notifications`` and
        ``sitemap-server notifications`` (None: nowhere); asked only if it ``announces``."""
        return None

    def target_lines(self, site_url: str) -> list[str]:
        """``targets`` in words, a line each, for ``sitemap-server notifications``."""
        found = self.targets(site_url)
        if not found:
            return []
        if isinstance(found, dict):
            return [f"{self.name} " + ", ".join(f"{key} {value}" for key, value in found.items())]
        return [
            f"{self.name} {target}" for target in (found if isinstance(found, list) else [found])
        ]


def send_later(session: Session, channel: str, message: Message) -> Notification:
    """Queue ``message`` for ``channel`` in the transaction of ``session``: the worker sends
    it after commit, and only if that transaction commits.

    A message of the channel to the same URL that is waiting and not being sent is not
    queued twice: that one is returned (a plugin may add to its ``payload``, assigning a
    new dict). ``session.delete`` the returned row to take it back."""
    now: datetime = utcnow()
    waiting = session.scalar(
        select(Notification)
        .where(
            Notification.channel == channel,
            Notification.url == message.url,
            Notification.status == PENDING,
            Notification.lease_until.is_(None),
        )
        .order_by(Notification.id)
        .limit(1)
    )
    if waiting is not None:
        return waiting
    row = Notification(
        created_at=now,
        channel=channel,
        url=message.url,
        payload=message.payload,
        changes=0,
        sitemaps=[],
        status=PENDING,
        attempts=0,
        due_at=now,
    )
    session.add(row)
    return row
