"""Every write of the news plugin: its settings, and news fields of posts and terms."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from sitemap_server.plugin import (
    Invalid,
    NotFound,
    Post,
    PostType,
    Term,
    engine_of,
    flush,
)

from .models import MAX_LANGUAGE_TAG, NewsPost, NewsSettings, NewsTerm
from .provider import LANGUAGE_TAG, NAME, news_settings


def get_settings(session: Session) -> NewsSettings:
    return news_settings(session)


def update_settings(session: Session, data: dict[str, Any]) -> NewsSettings:
    settings = news_settings(session)

    def what_it_says() -> tuple[Any, ...]:
        return list(settings.post_types or []), settings.publication_name, settings.language

    before = what_it_says()
    if "post_types" in data:
        for name in data["post_types"]:
            if session.get(PostType, name) is None:
                raise Invalid.field("post_types", f"unknown post type {name!r}")
        settings.post_types = list(dict.fromkeys(data["post_types"]))
    if "publication_name" in data:
        settings.publication_name = data["publication_name"]
    if "language" in data:
        settings.language = _language(data["language"], "language")
    flush(session, "news settings")
    if what_it_says() != before:
        # Which posts are news, news:name and news:language: the news sitemap is rebuilt
        # whole, and no other sitemap changes.
        engine_of(session).refresh_provider(session, NAME)
    return settings


def _language(value: str | None, field: str) -> str | None:
    """A BCP 47 tag, stored as given; news:language gets it reduced (``news_language``).
    The OpenAPI document refuses other shapes first (400); this holds every caller to it."""
    if value is None:
        return None
    if len(value) > MAX_LANGUAGE_TAG or not LANGUAGE_TAG.fullmatch(value):
        raise Invalid.field(field, "must be a BCP 47 language tag (en, pt-BR, zh-Hant …)")
    return value


def get_post_news(session: Session, post_id: int) -> tuple[Post, NewsPost | None]:
    post = session.get(Post, post_id)
    if post is None:
        raise NotFound(f"no post {post_id}")
    return post, session.get(NewsPost, post_id)


def update_post_news(session: Session, post_id: int, data: dict[str, Any]) -> NewsPost:
    post, news = get_post_news(session, post_id)
    if news is None:
        news = NewsPost(post_id=post.id, not_news=False, genres=[])
        session.add(news)
    if "language" in data:
        news.language = _language(data["language"], "language")
    if "not_news" in data:
        news.not_news = data["not_news"]
    if "keywords" in data:
        news.keywords = data["keywords"]
    if "genres" in data:
        news.genres = list(dict.fromkeys(data["genres"]))
    flush(session, "post news fields")
    engine_of(session).record(session, posts={post.id})
    return news


def get_term_news(session: Session, term_id: int) -> tuple[Term, NewsTerm | None]:
    term = session.get(Term, term_id)
    if term is None:
        raise NotFound(f"no term {term_id}")
    return term, session.get(NewsTerm, term_id)


def update_term_news(session: Session, term_id: int, data: dict[str, Any]) -> NewsTerm:
    term, news = get_term_news(session, term_id)
    if news is None:
        news = NewsTerm(term_id=term.id, exclude=False)
        session.add(news)
    if "exclude" in data:
        news.exclude = data["exclude"]
    flush(session, "term news fields")
    engine_of(session).record(session, terms={term.id})
    return news
