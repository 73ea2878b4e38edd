"""What ``sitemap-server sync-wordpress`` knows of each WordPress it follows (issue 35)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .content import MAX_URL_LENGTH
from .meta import Base, UTCDateTime


class WordPressSync(Base):
    """One WordPress a sync reads (``source``: its home URL, as the imported objects name
    it): where each kind of post was read up to (``cursors``: post type -> the last date
    of change read, UTC, ISO 8601), and how the last run went."""

    __tablename__ = "wordpress_syncs"

    source: Mapped[str] = mapped_column(String(MAX_URL_LENGTH), primary_key=True)
    cursors: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # Post type -> {"gap": how many more posts WordPress showed than this site had from
    # it, "at": when its ids were last listed}: a run lists them again only when the gap
    # moved (a post deleted, or one this site lacks) or the listing is an hour old.
    listings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    succeeded_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The last run's: what it read and did, by kind; the requests it made; its error.
    counts: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    requests: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    # While a run is at work: until when it holds the WordPress (renewed with each batch;
    # a run killed frees it when that time has passed).
    running_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
