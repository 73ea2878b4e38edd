"""sitemap-server: XML sitemaps for a Pyramid-managed site."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator

from .context import CONTEXT_KEY, AppContext
from .hookspecs import hookimpl
from .settings import normalize

__all__ = ["hookimpl", "main"]


def main(global_config: dict[str, Any], **settings: Any) -> Any:
    """The WSGI application (``paste.app_factory``): one ``includeme`` per area, nothing else."""
    normalize(settings)
    context = AppContext.from_settings(settings)
    plugins = context.plugins
    with Configurator(settings=settings) as config:
        config.registry[CONTEXT_KEY] = context
        config.include(".models")  # request.dbsession, pyramid_tm
        config.include(".outages")  # the database down or locked: 503, Retry-After
        config.include(".api")  # /api/*: admin REST API, its views, OpenAPI, bearer tokens
        config.include(".sitemaps")  # the sitemaps, their XSL, robots.txt, the human views
        config.include(".notify")  # the worker thread, if switched on
        plugins.hook.sitemap_configure(config=config)
    return config.make_wsgi_app()
