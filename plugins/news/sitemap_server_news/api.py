"""Admin endpoints: news settings, and the news fields of a post or a term; same bearer
tokens, validation and problem details as the core."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request

from sitemap_server.plugin import api_view, body, path_param

from . import services
from .models import NewsPost, NewsSettings, NewsTerm


def settings_dict(settings: NewsSettings) -> dict[str, Any]:
    return {
        "post_types": list(settings.post_types or []),
        "publication_name": settings.publication_name,
        "language": settings.language,
    }


def post_news_dict(post_id: int, news: NewsPost | None) -> dict[str, Any]:
    return {
        "post": post_id,
        "language": news.language if news else None,
        "not_news": news.not_news if news else False,
        "keywords": news.keywords if news else None,
        "genres": list(news.genres or []) if news else [],
    }


def term_news_dict(term_id: int, news: NewsTerm | None) -> dict[str, Any]:
    return {"term": term_id, "exclude": news.exclude if news else False}


@api_view(route_name="news.settings", request_method="GET")
def get_settings(request: Request) -> dict[str, Any]:
    return settings_dict(services.get_settings(request.dbsession))


@api_view(route_name="news.settings", request_method="PATCH")
def update_settings(request: Request) -> dict[str, Any]:
    return settings_dict(services.update_settings(request.dbsession, body(request)))


@api_view(route_name="news.post", request_method="GET")
def get_post_news(request: Request) -> dict[str, Any]:
    post, news = services.get_post_news(request.dbsession, path_param(request, "id"))
    return post_news_dict(post.id, news)


@api_view(route_name="news.post", request_method="PATCH")
def update_post_news(request: Request) -> dict[str, Any]:
    post_id = path_param(request, "id")
    return post_news_dict(
        post_id, services.update_post_news(request.dbsession, post_id, body(request))
    )


@api_view(route_name="news.term", request_method="GET")
def get_term_news(request: Request) -> dict[str, Any]:
    term, news = services.get_term_news(request.dbsession, path_param(request, "id"))
    return term_news_dict(term.id, news)


@api_view(route_name="news.term", request_method="PATCH")
def update_term_news(request: Request) -> dict[str, Any]:
    term_id = path_param(request, "id")
    return term_news_dict(
        term_id, services.update_term_news(request.dbsession, term_id, body(request))
    )


def includeme(config: Configurator) -> None:
    # Paths as openapi.yaml names them: the core then answers other methods with a 405.
    config.add_route("news.settings", "/api/news/settings")
    config.add_route("news.post", "/api/posts/{id}/news")
    config.add_route("news.term", "/api/terms/{id}/news")
    config.scan(".api")
