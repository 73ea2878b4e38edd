"""The admin REST API (S-701 … S-704) under ``/api/``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response

from ..errors import problem
from ..models import SITE_KEY
from ..sitemaps.changes import last_change
from .auth import BearerTokenSecurityPolicy

# Route name -> pattern (the paths of openapi.yaml). The methods each path takes are the
# OpenAPI document's, which also answers 405s (problems.py) for plugins' routes too.
ROUTES: dict[str, str] = {
    "api.posts": "/api/posts",
    "api.post": "/api/posts/{id}",
    "api.post_types": "/api/post-types",
    "api.post_type": "/api/post-types/{name}",
    "api.taxonomies": "/api/taxonomies",
    "api.taxonomy": "/api/taxonomies/{name}",
    "api.authors": "/api/authors",
    "api.author": "/api/authors/{id}",
    "api.terms": "/api/terms",
    "api.term": "/api/terms/{id}",
    "api.settings": "/api/settings",
    "api.import": "/api/import",
    "api.notifications": "/api/notifications",
    "api.notifications_flush": "/api/notifications/flush",
    "api.plugins": "/api/plugins",
    "api.explain": "/api/explain",
    "api.sitemaps_status": "/api/sitemaps/status",
    "api.changes": "/api/changes",
    "api.sync": "/api/sync",
}


def body_limit_tween_factory(handler: Callable[[Request], Response], registry: Any) -> Any:
    """413 before the body is read, so an oversized request costs nothing."""
    settings = registry.settings
    default_limit = settings["sitemap_server.api.max_body_bytes"]
    import_limit = settings["sitemap_server.api.max_import_bytes"]

    def body_limit_tween(request: Request) -> Response:
        if request.path_info.startswith("/api/") and request.content_length:
            limit = import_limit if request.path_info == "/api/import" else default_limit
            if request.content_length > limit:
                return problem(413, f"the body is larger than {limit} bytes")
        if request.path_info.startswith("/api/") and request.path_info != "/api/import":
            # Bodies this small stay in memory; WebOb would spool those over 10 kB to a
            # temporary file that nothing closes.
            request.request_body_tempfile_limit = default_limit
        return handler(request)

    return body_limit_tween


def change_header_tween_factory(handler: Callable[[Request], Response], registry: Any) -> Any:
    """A write that recorded a change answers with its number (``Sitemap-Change``), which
    ``GET /api/sitemaps/status?change=`` says is served yet or not."""

    def change_header_tween(request: Request) -> Response:
        response = handler(request)
        session = request.__dict__.get("dbsession")  # only if the request used one
        if session is not None and response.status_code < 400:
            change = last_change(session)
            if change is not None:
                response.headers["Sitemap-Change"] = str(change)
        return response

    return change_header_tween


def response_validation_tween_factory(handler: Callable[[Request], Response], registry: Any) -> Any:
    """Tests turn this on: every API response must match the OpenAPI document (which is
    checked against the OpenAPI 3.1 specification when the application starts)."""

    openapi = registry[SITE_KEY].openapi

    def response_validation_tween(request: Request) -> Response:
        response = handler(request)
        route = request.matched_route
        if route is not None and route.pattern in openapi.spec["paths"]:
            problems = openapi.response_problems(request, response)
            if problems:
                raise AssertionError(f"{request.method} {request.path}: {problems}")
        return response

    return response_validation_tween


def includeme(config: Configurator) -> None:
    settings = config.get_settings()
    config.set_security_policy(BearerTokenSecurityPolicy())
    config.include(".openapi")  # the openapi=True view option
    config.include(".problems")  # errors as application/problem+json

    # The core's document with the paths and schemas of the plugins (sitemap_openapi).
    openapi = config.registry[SITE_KEY].openapi
    if settings["sitemap_server.api.validate_responses"]:
        openapi.check_document()
    for name, pattern in ROUTES.items():
        config.add_route(name, pattern)
    config.add_route("api.openapi", "/api/openapi.json")
    config.add_route("api.docs", "/api/docs")
    config.include(".docs")  # Swagger UI's files

    config.add_tween("sitemap_server.api.body_limit_tween_factory")
    config.add_tween("sitemap_server.api.change_header_tween_factory")
    if settings["sitemap_server.api.validate_responses"]:
        config.add_tween("sitemap_server.api.response_validation_tween_factory")
    config.scan()  # the admin API's @view_config views (nothing else is decorated)
