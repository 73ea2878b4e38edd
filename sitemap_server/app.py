"""The WSGI application: a ``Site`` handed to Pyramid, one ``includeme`` per area."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.router import Router

from .models import SITE_KEY
from .site import Site


def main(global_config: dict[str, Any], **settings: Any) -> Router:
    """``paste.app_factory`` (``use = egg:sitemap-server``): the application of the site
    the ini file's ``[app:main]`` settings describe."""
    return make_app(Site(settings))


def make_app(site: Site) -> Router:
    """The application serving ``site``: the registry holds the site and nothing else of
    ours (``request.site``); closing the site closes the application's database."""
    with Configurator(settings=dict(site.settings)) as config:
        config.registry[SITE_KEY] = site
        config.add_request_method(site_of_request, "site", reify=True)
        config.include(".server_timing")  # Server-Timing, if switched on
        config.include(".models")  # request.dbsession, pyramid_tm
        config.include(".outages")  # the database down or locked: 503, Retry-After
        config.include(".api")  # /api/*: admin REST API, its views, OpenAPI, bearer tokens
        config.include(".sitemaps")  # the sitemaps, their XSL, robots.txt, the human views
        config.include(".notify")  # the worker thread, if switched on
        site.plugins.hook.sitemap_configure(config=config, site=site)
    return config.make_wsgi_app()


def site_of_request(request: Request) -> Site:
    """``request.site``: the site of the application serving ``request``."""
    site: Site = request.registry[SITE_KEY]
    return site


def site_of_app(app: Any) -> Site:
    """The site of ``app``: an application ``make_app`` returned, or a WebTest client of one."""
    site: Site = getattr(app, "app", app).registry[SITE_KEY]
    return site
