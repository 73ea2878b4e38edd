"""Telling search engines about changes (S-601, S-602): an outbox and what was sent.

``notification_changes`` is the outbox: one row per changed URL (or per sitemap rebuilt
as a whole), written in the transaction that made the change, so a rolled-back request
leaves none and a committed one never loses its row. The worker turns a burst of them
into ``notifications`` (one ping per target, IndexNow batches of changed URLs) and logs
every try in ``notification_attempts``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .meta import Base, BigId, UTCDateTime

# What a ``notification_changes`` row says about its URL.
ADDED, UPDATED, REMOVED, REBUILT = "added", "updated", "removed", "rebuilt"

# ``notifications.status``
PENDING, SENT, FAILED, CANCELLED = "pending", "sent", "failed", "cancelled"


class NotificationChange(Base):
    __tablename__ = "notification_changes"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # The provider whose sitemap changed ("*": the whole site, e.g. it stopped being private).
    sitemap: Mapped[str] = mapped_column(String(64))
    # The absolute URL; None when the sitemap was rebuilt without comparing its URLs.
    url: Mapped[str | None] = mapped_column(Text)
    change: Mapped[str] = mapped_column(String(16))


class Notification(Base):
    """One message to send through a channel (``notify.channels``): a ping of one target,
    one IndexNow batch, a plugin's request (the video plugin's oEmbed fetches)."""

    __tablename__ = "notifications"
    __table_args__ = (
        # The worker's question: what is pending and due, oldest first.
        Index("ix_notifications_status_due_at", "status", "due_at"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    channel: Mapped[str] = mapped_column(String(16))
    # Where it goes: the ping URL (template filled in), the IndexNow endpoint …
    url: Mapped[str] = mapped_column(Text)
    # What the channel needs to send it. IndexNow: {"host": …, "urlList": […]}; the key
    # is added when it is sent.
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # How many changes the burst held, and which sitemaps they were in (0 and none for a
    # message a plugin queued itself, ``channels.send_later``).
    changes: Mapped[int] = mapped_column(Integer, default=0)
    sitemaps: Mapped[list[str]] = mapped_column(JSON, default=list)
    status: Mapped[str] = mapped_column(String(16), default=PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    due_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # Claimed by a worker until then; a worker that died mid-send lets it lapse.
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    claimed_by: Mapped[str | None] = mapped_column(String(128))
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    http_status: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)


class NotificationAttempt(Base):
    __tablename__ = "notification_attempts"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    notification_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("notifications.id", ondelete="CASCADE"), index=True
    )
    at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    # "sent", "retry" (will be tried again), "failed" (given up), "cancelled"
    outcome: Mapped[str] = mapped_column(String(16))
    http_status: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str | None] = mapped_column(String(128))
