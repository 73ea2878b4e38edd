"""Site settings (SPEC S-106): one row, edited through ``/api/settings``."""

from __future__ import annotations

from datetime import UTC, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import JSON, Boolean, CheckConstraint, ForeignKey, Integer, String, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from .content import MAX_LANGUAGE_TAG, MAX_URL_LENGTH
from .meta import Base, site_of

DEFAULT_ENTRIES_PER_PAGE = 1000
# Protocol limit: a sitemap file holds at most 50,000 URLs.
MAX_ENTRIES_PER_PAGE = 50_000
# Yoast's "exclude posts" list, kept by hand: a change of it records each id added or
# removed as a changed post in the request's own transaction (one multi-row insert of the
# change log up to 10,000 rows), and its body stays far under the API's 2 MiB limit.
MAX_EXCLUDED_POSTS = 10_000


class SiteSettings(Base):
    __tablename__ = "site_settings"
    __table_args__ = (
        CheckConstraint("id = 1", name="single_row"),
        CheckConstraint(
            f"entries_per_page BETWEEN 1 AND {MAX_ENTRIES_PER_PAGE}", name="entries_per_page"
        ),
        CheckConstraint("front_page IN ('posts', 'page')", name="front_page"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, default=1)
    # None: use the ini setting sitemap_server.site_url.
    site_url: Mapped[str | None] = mapped_column(String(MAX_URL_LENGTH))
    title: Mapped[str] = mapped_column(String(255), default="")
    language: Mapped[str] = mapped_column(String(35), default="en")
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    private: Mapped[bool] = mapped_column(Boolean, default=False)
    entries_per_page: Mapped[int] = mapped_column(Integer, default=DEFAULT_ENTRIES_PER_PAGE)
    front_page: Mapped[str] = mapped_column(String(8), default="posts")
    front_page_id: Mapped[int | None] = mapped_column(ForeignKey("posts.id", ondelete="SET NULL"))
    posts_page_id: Mapped[int | None] = mapped_column(ForeignKey("posts.id", ondelete="SET NULL"))
    allowed_image_hosts: Mapped[list[str]] = mapped_column(JSON, default=list)
    # Yoast's switch for the author sitemap: off, author-sitemap.xml is not a sitemap at
    # all (404, not in the index), as a post type without one.
    author_sitemap: Mapped[bool] = mapped_column(Boolean, default=True)
    # The languages the site is written in (none named: any); the one whose member of a
    # translation group is its x-default (None: the site's language).
    languages: Mapped[list[str]] = mapped_column(JSON, default=list)
    x_default_language: Mapped[str | None] = mapped_column(String(MAX_LANGUAGE_TAG))


class ExcludedPost(Base):
    """One of the site's excluded posts (``excluded_post_ids``, Yoast's "exclude posts"):
    never listed (S-201), whatever its type or fields.

    A table rather than a list in ``site_settings``, so that the rule is one SQL criterion
    (``content/eligibility.py``) however long the list. No foreign key: as in Yoast, an id
    with no post yet is kept and applies to the post made with it (an import's explicit
    id). Deleting a post removes its id from the list (``services.posts.delete_post``):
    ids are never given twice, but an import may give one again explicitly.
    """

    __tablename__ = "excluded_posts"

    post_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)


# Reading them: every part of the application that needs the settings or the site URL.


def site_zone(name: str | None) -> tzinfo:
    """The site's time zone (``SiteSettings.timezone``); UTC for a name this machine does
    not know."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def zone_of(session: Any) -> tzinfo:
    """The time zone of the site in ``session`` (a Session or a Connection); a Session
    that holds the settings already (a write's ``Links``) sends no query."""
    if isinstance(session, Session):
        return site_zone(get_settings(session).timezone)
    return site_zone(session.scalar(select(SiteSettings.timezone).where(SiteSettings.id == 1)))


def get_settings(session: Session) -> SiteSettings:
    # The row is created by the first migration and can never be deleted.
    return session.get_one(SiteSettings, 1)


def excluded_post_ids(session: Session) -> list[int]:
    """The site's excluded posts, in id order."""
    return list(session.scalars(select(ExcludedPost.post_id).order_by(ExcludedPost.post_id)))


def effective_site_url(settings: SiteSettings, configured: str) -> str:
    """The site URL stored through the API, else the one in the server's configuration."""
    return (settings.site_url or configured).rstrip("/")


def configured_site_url(session: Session) -> str:
    """The ini file's ``sitemap_server.site_url``, as ``session`` was made with it."""
    return site_of(session).site_url


def site_url_of(session: Session) -> str:
    """The site's URL, without a trailing slash: the one stored through the API, else
    the ini file's."""
    return effective_site_url(get_settings(session), configured_site_url(session))
