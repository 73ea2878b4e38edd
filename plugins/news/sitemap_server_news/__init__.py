"""sitemap-server-news: news settings, news fields of posts and terms, ``/news-sitemap.xml``.

Installed (``pip install ./plugins/news``), the core finds this module through the
``sitemap_server`` entry-point group; disabled (``sitemap_server.disabled_plugins = news``)
or uninstalled, everything it adds is gone and the core works as before.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from pyramid.config import Configurator
from sqlalchemy.orm import Session

from sitemap_server.plugin import Provider, hookimpl

from . import models  # noqa: F401  (the tables join the core's metadata)
from .provider import NewsProvider

NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"


@hookimpl
def sitemap_providers(session: Session) -> list[Provider]:
    return [NewsProvider()]


@hookimpl
def sitemap_configure(config: Configurator) -> None:
    config.include("sitemap_server_news.api")


@hookimpl
def sitemap_namespaces() -> dict[str, str]:
    return {"news": NEWS_NS}


@hookimpl
def sitemap_migrations() -> list[str]:
    return [str(Path(__file__).resolve().parent / "migrations")]


@hookimpl
def sitemap_openapi() -> dict[str, Any]:
    text = files("sitemap_server_news").joinpath("openapi.yaml").read_text("utf-8")
    return dict(yaml.safe_load(text))
