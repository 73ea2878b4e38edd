"""The plugin's one table: the videos of a post (one post, many videos)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from sitemap_server.plugin import MAX_TITLE_LENGTH, MAX_URL_LENGTH, Base, UTCDateTime

# Where a video row came from: the admin API, or found in the post's content on save.
MANUAL = "manual"
DETECTED = "detected"
# session.info: posts whose videos (not the post itself) a transaction changed. Detection
# adds nothing to them, so a deleted detected video stays away until the post is saved.
VIDEO_WRITES = "sitemap_server_video.video_writes"


class Video(Base):
    __tablename__ = "videos"
    __table_args__ = (Index("ix_videos_post_id_id", "post_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    post_id: Mapped[int] = mapped_column(ForeignKey("posts.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(10), default=MANUAL)
    # A detected video's identity in its post ("youtube:abc", "vimeo:123", the file URL),
    # so that saving the post again keeps its row (and the metadata fetched for it).
    embed_key: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    title: Mapped[str | None] = mapped_column(String(MAX_TITLE_LENGTH))
    description: Mapped[str | None] = mapped_column(Text)
    caption: Mapped[str | None] = mapped_column(Text)
    # The description the video's host gives (oEmbed); the fallback after the caption.
    host_description: Mapped[str | None] = mapped_column(Text)
    content_url: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    player_url: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    thumbnail_url: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    published_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    duration: Mapped[int | None] = mapped_column(Integer)
    view_count: Mapped[int | None] = mapped_column(BigInteger)
    width: Mapped[int | None] = mapped_column(Integer)
    height: Mapped[int | None] = mapped_column(Integer)
    family_friendly: Mapped[bool] = mapped_column(Boolean, default=True)
    uploader: Mapped[str | None] = mapped_column(String(255))
    uploader_url: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    # The video's public page (the YouTube watch URL, say): the last description fallback.
    page_url: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    # Set on every change (API, detection, oEmbed): the URL's lastmod follows it.
    modified_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # oEmbed: when the host's metadata was fetched, or why it could not be.
    fetched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    fetch_error: Mapped[str | None] = mapped_column(String(500))
