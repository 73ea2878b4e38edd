"""The outbox: changed URLs recorded with the change, turned into notifications later.

``sitemap_changed`` runs inside the writing transaction, so a rolled-back request leaves
no row and a committed one always has its rows, whatever happens to the process next.
The worker ``coalesce``s: once a burst of changes has gone quiet it takes every row of it
and gives the burst to each channel that announces changes (``channels``): one ping per
target, IndexNow submissions of the distinct changed URLs, a plugin's own.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Column, Integer, MetaData, Table, Text, delete, func, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ..batches import chunks
from ..hookspecs import hookimpl
from ..models import Notification, NotificationChange
from ..models.meta import utcnow
from ..models.notifications import PENDING, REBUILT
from ..models.site import effective_site_url, get_settings
from ..sitemaps.changes import UrlChange
from .channels import Burst, Channel, Message
from .config import NotifyConfig

log = logging.getLogger(__name__)

# Outbox rows taken per statement while coalescing (bounds the worker's memory per step).
TAKE_BATCH = 10_000


@hookimpl
def sitemap_changed(session: Session, sitemap: str, urls: list[UrlChange] | None) -> None:
    config = NotifyConfig.from_session(session)
    if config is None or not config.enabled:
        return  # nobody to tell: keep no outbox that nothing would ever empty
    if get_settings(session).private:
        return  # S-602: nothing is sent while the site is private
    now = utcnow()
    if urls is None:
        rows = [{"created_at": now, "sitemap": sitemap, "url": None, "change": REBUILT}]
    else:
        rows = [
            {"created_at": now, "sitemap": sitemap, "url": u.url, "change": u.change} for u in urls
        ]
    for batch in chunks(rows):
        session.execute(insert(NotificationChange), batch)


def burst_ready(
    session: Session, config: NotifyConfig, force: bool = False
) -> tuple[int, int] | None:
    """The ids of the first and last outbox rows of a burst ready to send, if there is one.

    Ready: nothing has changed for ``quiet`` (the burst is over), or its first change is
    ``max_delay`` old (a site that never goes quiet still gets told); ``force`` for now.
    """
    first, last, bottom, top = session.execute(
        select(
            func.min(NotificationChange.created_at),
            func.max(NotificationChange.created_at),
            func.min(NotificationChange.id),
            func.max(NotificationChange.id),
        )
    ).one()
    if top is None:
        return None
    now = utcnow()
    if force or last <= now - config.quiet or first <= now - config.max_delay:
        return int(bottom), int(top)
    return None


# The distinct URLs of the burst being coalesced, in the order they changed: kept by the
# database (a temporary table of the coalescing connection), never all in memory.
BURST_URLS = Table(
    "burst_urls",
    MetaData(),
    Column("n", Integer, primary_key=True, autoincrement=True),
    Column("url", Text, nullable=False, unique=True),
    prefixes=["TEMPORARY"],
)


@dataclass(frozen=True)
class Made:
    """A notification ``coalesce`` made: its channel, and the URLs it holds (IndexNow)."""

    channel: str
    url_count: int | None


class BurstUrls:
    """``Burst.urls`` of a burst being coalesced: read from ``BURST_URLS`` in batches each
    time it is iterated, so a million changed URLs never sit in the worker's memory."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def __iter__(self) -> Iterator[str]:
        query = select(BURST_URLS.c.url).order_by(BURST_URLS.c.n)
        yield from self.session.execute(query.execution_options(yield_per=TAKE_BATCH)).scalars()


def coalesce(session: Session, config: NotifyConfig, ids: tuple[int, int]) -> list[Made]:
    """Take the outbox rows with ids in ``ids`` (first, last) and make their notifications.

    The rows are deleted as they are read (``DELETE … RETURNING``, the transaction's first
    statement on the outbox): two workers coalescing at once each take different rows,
    never the same.
    Their distinct URLs go to a temporary table, and the channels read them from there:
    the worker holds one batch of rows and one message at a time, whatever the burst.
    """
    connection = session.connection()
    BURST_URLS.drop(connection, checkfirst=True)  # never left behind; in case it is
    BURST_URLS.create(connection)
    made = _coalesce(session, config, ids)
    # Only when all went well: after an error the transaction is rolled back, and the
    # table with it (PostgreSQL would refuse the statement in a failed transaction).
    BURST_URLS.drop(connection)
    return made


def _coalesce(session: Session, config: NotifyConfig, ids: tuple[int, int]) -> list[Made]:
    low, up_to = ids
    changes = 0
    sitemaps: set[str] = set()
    while low <= up_to:
        high = min(low + TAKE_BATCH, up_to + 1)
        taken = session.execute(
            delete(NotificationChange)
            .where(NotificationChange.id >= low, NotificationChange.id < high)
            .returning(NotificationChange.sitemap, NotificationChange.url)
        ).all()
        changes += len(taken)
        sitemaps.update(sitemap for sitemap, _url in taken)
        urls = [{"url": url} for _sitemap, url in taken if url is not None]
        if urls:
            session.execute(_insert_new(session), urls)
        low = high
    if not changes:
        return []  # another worker took them first
    site = get_settings(session)
    if site.private:
        log.info("%d change(s) not sent: the site is private", changes)
        return []
    site_url = effective_site_url(site, config.site_url)
    burst = Burst(changes, tuple(sorted(sitemaps)), BurstUrls(session), site_url)
    made = []
    for channel in config.channels:
        if channel.announces and channel.enabled:
            for message in channel.messages(burst):
                session.execute(insert(Notification), [_notification(channel, message, burst)])
                listed = (message.payload or {}).get("urlList")
                made.append(Made(channel.name, len(listed) if listed is not None else None))
    log.info(
        "%d change(s) in %s: %d notification(s) to send",
        changes,
        ", ".join(burst.sitemaps),
        len(made),
    )
    return made


def _insert_new(session: Session) -> Any:
    """An insert into ``BURST_URLS`` that skips a URL already there."""
    module: Any = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    return module.insert(BURST_URLS).on_conflict_do_nothing(index_elements=["url"])


def _notification(channel: Channel, message: Message, burst: Burst) -> dict[str, Any]:
    now: datetime = utcnow()
    return {
        "created_at": now,
        "channel": channel.name,
        "url": message.url,
        "payload": message.payload,
        "changes": burst.changes,
        "sitemaps": list(burst.sitemaps),
        "status": PENDING,
        "attempts": 0,
        "due_at": now,
    }
