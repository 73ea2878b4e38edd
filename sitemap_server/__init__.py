"""sitemap-server: XML sitemaps for a Pyramid-managed site."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator

from .settings import normalize


def main(global_config: dict[str, Any], **settings: Any) -> Any:
    """The WSGI application (``paste.app_factory``): include and scan, nothing else."""
    normalize(settings)
    with Configurator(settings=settings) as config:
        config.include(".models")  # request.dbsession, pyramid_tm
        config.include(".api")  # /api/*: admin REST API, OpenAPI document, bearer tokens
        config.scan()
    return config.make_wsgi_app()
