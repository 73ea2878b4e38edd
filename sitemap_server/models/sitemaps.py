"""What the sitemaps serve, kept up to date by the maintainer (the read path only reads it).

``sitemap_changes`` is the change log: a write records in it what it changed (a post, an
author, a term, the site's settings) in its own transaction, and the maintainer
(``sitemaps/maintenance.apply_pending``) applies the log to the tables below in batches,
deleting the rows in the transaction that applies them.

``sitemap_entries`` holds exactly the listed URLs of every provider, in their stable order
(``key``, then ``part``). ``sitemap_pages`` cuts each provider's entries into pages and
keeps each page's newest ``lastmod``, so the index and any page cost the same at a million
posts. ``sitemap_versions`` counts changes per provider; ETags, Last-Modified and caches
derive from it, and since it lives in the database every server process agrees (S-803).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Index, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .content import MAX_URL_LENGTH
from .meta import Base, BigId, UTCDateTime

# The version row that changes with site-wide settings (URL, privacy, page size).
SITE = "*"


class SitemapEntry(Base):
    __tablename__ = "sitemap_entries"
    __table_args__ = (
        # The newest entry of a provider: the date of its home page or archive.
        Index("ix_sitemap_entries_provider_lastmod", "provider", "lastmod"),
        # Whether a URL is listed by any sitemap (the change feed's journal asks).
        Index("ix_sitemap_entries_path", "path"),
        # Clustered by its key on SQLite: a page is one contiguous range of the table.
        {"sqlite_with_rowid": False},
    )

    provider: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    part: Mapped[int] = mapped_column(Integer, primary_key=True, default=1)
    # Site-relative path ("/2024/05/hello/"); the site URL is prepended when rendering.
    path: Mapped[str] = mapped_column(String(MAX_URL_LENGTH))
    lastmod: Mapped[datetime | None] = mapped_column(UTCDateTime)
    images: Mapped[list[str]] = mapped_column(JSON, default=list)
    extra: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # Its translations' URLs, itself included ([hreflang, path], then x-default; S-405).
    alternates: Mapped[list[list[str]] | None] = mapped_column(JSON)
    # The bytes of its <url> element in a page: pages are cut by it too (S-310).
    size: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Its <url> element, rendered when it was stored (``sitemaps/rendering.py``), the
    # site URL marked, not written.
    xml: Mapped[str | None] = mapped_column(Text)


class SitemapPage(Base):
    __tablename__ = "sitemap_pages"

    provider: Mapped[str] = mapped_column(String(64), primary_key=True)
    page: Mapped[int] = mapped_column(Integer, primary_key=True)
    first_key: Mapped[int] = mapped_column(BigInteger)
    first_part: Mapped[int] = mapped_column(Integer)
    last_key: Mapped[int] = mapped_column(BigInteger)
    last_part: Mapped[int] = mapped_column(Integer)
    entries: Mapped[int] = mapped_column(Integer)
    lastmod: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Its <sitemap> element in the index, rendered when the page was cut or dated
    # (``sitemaps/rendering.py``), the site URL marked, not written.
    xml: Mapped[str | None] = mapped_column(Text)


class SitemapVersion(Base):
    __tablename__ = "sitemap_versions"

    provider: Mapped[str] = mapped_column(String(64), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, default=0)
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # When this provider's entries next change by the passing of time alone (a scheduled
    # post going live); the first request after it brings the entries up to date.
    due_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The template its stored fragments were rendered with (``rendering.render_key``):
    # another one, and the provider is rebuilt whole before a page of it is served.
    rendered_with: Mapped[str | None] = mapped_column(String(64))
    # The output settings of ``rendered_with`` (``Site.output_settings``), as they
    # read: a start with others rebuilds the provider and says what changed.
    built_with: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class ListedUrl(Base):
    """A URL the sitemaps list, or listed and no longer do (a tombstone), at its place in
    the change feed: the number of its last change (``sitemaps/journal.py``, S-705)."""

    __tablename__ = "listed_urls"
    __table_args__ = (
        # The tombstones past their time (``journal.forget_tombstones``).
        Index("ix_listed_urls_removed_changed_at", "removed", "changed_at"),
    )

    # Site-relative, as ``sitemap_entries.path``.
    path: Mapped[str] = mapped_column(String(MAX_URL_LENGTH), primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, unique=True)
    # The number it was listed at (again, after a removal): a reader who started after it
    # hears "updated" of a later change, one who started before, "added".
    added_seq: Mapped[int] = mapped_column(BigInteger)
    # Its newest lastmod in any sitemap (as listed last, for a tombstone).
    lastmod: Mapped[datetime | None] = mapped_column(UTCDateTime)
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    removed: Mapped[bool] = mapped_column(Boolean, default=False)


class ChangeFeed(Base):
    """The change feed's one row: its name, its last number, the number up to which
    tombstones were forgotten, and whether the journal holds a private site (nothing)."""

    __tablename__ = "change_feed"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, default=1)
    # Random, made with the table: a database made again (or another one) is another feed,
    # and a reader's cursor of the old one is refused, not misread.
    feed_id: Mapped[str] = mapped_column(String(32))
    last_seq: Mapped[int] = mapped_column(BigInteger, default=0)
    horizon: Mapped[int] = mapped_column(BigInteger, default=0)
    private: Mapped[bool] = mapped_column(Boolean, default=False)


class SitemapChange(Base):
    """One thing a write changed, waiting to be applied to the sitemaps."""

    __tablename__ = "sitemap_changes"
    # Numbers never go back, even when the log has been emptied (SQLite would otherwise
    # start again from the largest id left): a client's Sitemap-Change keeps its meaning.
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # "post", "author", "term" (with ``object_id``), "provider" (with ``provider``: rebuild
    # that sitemap), or "site", "whole_site", "everything".
    kind: Mapped[str] = mapped_column(String(16))
    object_id: Mapped[int | None] = mapped_column(BigInteger)
    provider: Mapped[str | None] = mapped_column(String(64))


class FinishedDocument(Base):
    """A document as it is sent (gzipped), stored by the maintainer when a change made it
    (``sitemaps/finished.py``): a process that has not rendered that version reads it,
    one row, instead of rendering it from the page's entries."""

    __tablename__ = "finished_documents"

    # A digest of what names the rendering (``finished.digest``): the document, the site
    # URL, the site's version and the settings it was made with.
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    # The document (``post-sitemap2``, ``sitemap_index``): its rows are replaced together.
    name: Mapped[str] = mapped_column(String(255), index=True)
    # The sitemap it is a page of; none for the index.
    provider: Mapped[str | None] = mapped_column(String(64), index=True)
    etag: Mapped[str] = mapped_column(String(255))
    last_modified: Mapped[datetime | None] = mapped_column(UTCDateTime)
    size: Mapped[int] = mapped_column(BigInteger)
    gzipped: Mapped[bytes] = mapped_column(LargeBinary)
    # The version of each sitemap it shows when it was stored: it stays what they show
    # at any later version until a change replaces it (``finished.load``).
    versions: Mapped[dict[str, int]] = mapped_column(JSON, default=dict, server_default="{}")
    # The number of the write that stored it (``FinishedSequence.stored``): each process
    # reads the rows stored since it last looked (``finished.Recent``).
    stored: Mapped[int] = mapped_column(BigInteger, index=True, default=0, server_default="0")


class FinishedSequence(Base):
    """One row: the number of the last write of finished documents, and of the last one
    that deleted rows it did not replace. A write takes the next number by updating the
    row, so writes are numbered in the order they commit (the row is locked until then):
    a process that has seen the rows up to a number has seen every row stored before it,
    and knows from ``dropped`` whether any of those it keeps is gone since."""

    __tablename__ = "finished_sequence"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    stored: Mapped[int] = mapped_column(BigInteger, default=0)
    dropped: Mapped[int] = mapped_column(BigInteger, default=0)
