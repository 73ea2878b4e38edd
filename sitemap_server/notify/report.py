"""What the notifications are doing: ``GET /api/notifications`` and ``sitemap-server
notifications`` show the same."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..models import Notification, NotificationAttempt, NotificationChange
from ..models.notifications import PENDING
from ..models.site import effective_site_url, get_settings
from .config import NotifyConfig


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def pending(session: Session) -> dict[str, Any]:
    changes, oldest = session.execute(
        select(func.count(), func.min(NotificationChange.created_at))
    ).one()
    waiting, next_at = session.execute(
        select(func.count(), func.min(Notification.due_at)).where(Notification.status == PENDING)
    ).one()
    return {
        "changes": changes,
        "oldest_change_at": iso(oldest),
        "notifications": waiting,
        "next_attempt_at": iso(next_at),
    }


def target_lines(session: Session, config: NotifyConfig) -> list[str]:
    """Where changes are announced and purges sent, in words: each channel's own lines
    (a plugin's background job has none)."""
    site_url = effective_site_url(get_settings(session), config.site_url)
    return [
        line
        for channel in config.channels
        if channel.announces or channel.purges
        for line in channel.target_lines(site_url)
    ]


def status(session: Session, config: NotifyConfig, limit: int = 20) -> dict[str, Any]:
    site = get_settings(session)
    site_url = effective_site_url(site, config.site_url)
    notifications = session.scalars(
        select(Notification).order_by(Notification.id.desc()).limit(limit)
    )
    attempts = session.execute(
        select(NotificationAttempt, Notification.channel, Notification.url)
        .join(Notification, Notification.id == NotificationAttempt.notification_id)
        .order_by(NotificationAttempt.id.desc())
        .limit(limit)
    )
    return {
        "site_private": site.private,
        # Where changes are announced: a plugin's background job (oEmbed) is no target.
        "targets": {
            channel.name: channel.targets(site_url)
            for channel in config.channels
            if channel.announces
        },
        # The caches purged after each applied change.
        "purges": {
            channel.name: channel.targets(site_url) for channel in config.channels if channel.purges
        },
        "settings": {
            "quiet_seconds": config.quiet.total_seconds(),
            "max_delay_seconds": config.max_delay.total_seconds(),
            "max_attempts": config.max_attempts,
        },
        "pending": pending(session),
        "notifications": [notification_dict(n) for n in notifications],
        "attempts": [attempt_dict(a, channel, url) for a, channel, url in attempts],
    }


def notification_dict(n: Notification) -> dict[str, Any]:
    urls = (n.payload or {}).get("urlList")
    return {
        "id": n.id,
        "channel": n.channel,
        "url": n.url,
        "url_count": len(urls) if urls is not None else None,
        "changes": n.changes,
        "sitemaps": n.sitemaps,
        "status": n.status,
        "attempts": n.attempts,
        "created_at": iso(n.created_at),
        "next_attempt_at": iso(n.due_at) if n.status == PENDING else None,
        "finished_at": iso(n.finished_at),
        "http_status": n.http_status,
        "error": n.error,
    }


def attempt_dict(a: NotificationAttempt, channel: str, url: str) -> dict[str, Any]:
    return {
        "id": a.id,
        "notification_id": a.notification_id,
        "channel": channel,
        "url": url,
        "at": iso(a.at),
        "outcome": a.outcome,
        "http_status": a.http_status,
        "error": a.error,
        "duration_ms": a.duration_ms,
        "worker": a.worker,
    }
