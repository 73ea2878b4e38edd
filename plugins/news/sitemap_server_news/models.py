"""The news plugin's tables: its settings, and news fields of posts and terms."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from sitemap_server.plugin import MAX_LANGUAGE_TAG, Base


class NewsSettings(Base):
    """One row (id 1), made by the plugin's migration."""

    __tablename__ = "news_settings"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Post types whose posts are news.
    post_types: Mapped[list[str]] = mapped_column(JSON, default=lambda: ["post"])
    # news:name; the site title when empty.
    publication_name: Mapped[str | None] = mapped_column(String(255))
    # news:language of posts that name none; the site's language when empty.
    language: Mapped[str | None] = mapped_column(String(MAX_LANGUAGE_TAG))


class NewsPost(Base):
    __tablename__ = "news_posts"

    post_id: Mapped[int] = mapped_column(
        ForeignKey("posts.id", ondelete="CASCADE"), primary_key=True
    )
    language: Mapped[str | None] = mapped_column(String(MAX_LANGUAGE_TAG))
    not_news: Mapped[bool] = mapped_column(Boolean, default=False)
    keywords: Mapped[str | None] = mapped_column(String(1000))
    genres: Mapped[list[Any]] = mapped_column(JSON, default=list)


class NewsTerm(Base):
    __tablename__ = "news_terms"

    term_id: Mapped[int] = mapped_column(
        ForeignKey("terms.id", ondelete="CASCADE"), primary_key=True
    )
    exclude: Mapped[bool] = mapped_column(Boolean, default=False)
