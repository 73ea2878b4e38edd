"""The outbox: changed URLs recorded with the change, turned into notifications later.

``sitemap_changed`` runs inside the writing transaction, so a rolled-back request leaves
no row and a committed one always has its rows, whatever happens to the process next.
The worker ``coalesce``s: once a burst of changes has gone quiet it takes every row of it
and gives the burst to each channel that announces changes (``channels``): one ping per
target, IndexNow submissions of the distinct changed URLs, a plugin's own.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from ..hookspecs import hookimpl
from ..models import Notification, NotificationChange
from ..models.meta import utcnow
from ..models.notifications import PENDING, REBUILT
from ..models.site import effective_site_url, get_settings
from ..sitemaps.changes import UrlChange
from ..sitemaps.providers import chunks
from .channels import Burst, Message
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


def coalesce(session: Session, config: NotifyConfig, ids: tuple[int, int]) -> list[Notification]:
    """Take the outbox rows with ids in ``ids`` (first, last) and make their notifications.

    The rows are deleted as they are read (``DELETE … RETURNING``, the transaction's first
    statement): two workers coalescing at once each take different rows, never the same.
    """
    low, up_to = ids
    changes = 0
    sitemaps: set[str] = set()
    urls: dict[str, None] = {}  # distinct, in the order they changed
    while low <= up_to:
        high = min(low + TAKE_BATCH, up_to + 1)
        taken = session.execute(
            delete(NotificationChange)
            .where(NotificationChange.id >= low, NotificationChange.id < high)
            .returning(NotificationChange.sitemap, NotificationChange.url)
        ).all()
        for sitemap, url in taken:
            changes += 1
            sitemaps.add(sitemap)
            if url is not None:
                urls[url] = None
        low = high
    if not changes:
        return []  # another worker took them first
    site = get_settings(session)
    if site.private:
        log.info("%d change(s) not sent: the site is private", changes)
        return []
    burst = Burst(
        changes, tuple(sorted(sitemaps)), tuple(urls), effective_site_url(site, config.site_url)
    )
    made = [
        _notification(channel.name, message, burst)
        for channel in config.channels
        if channel.announces and channel.enabled
        for message in channel.messages(burst)
    ]
    session.add_all(made)
    session.flush()
    log.info(
        "%d change(s) in %s: %d notification(s) to send",
        changes,
        ", ".join(burst.sitemaps),
        len(made),
    )
    return made


def _notification(channel: str, message: Message, burst: Burst) -> Notification:
    now: datetime = utcnow()
    return Notification(
        created_at=now,
        channel=channel,
        url=message.url,
        payload=message.payload,
        changes=burst.changes,
        sitemaps=list(burst.sitemaps),
        status=PENDING,
        attempts=0,
        due_at=now,
    )
