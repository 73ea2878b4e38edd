"""The sitemaps: what is listed (kept current by every write) and how it is served."""

from __future__ import annotations

from pyramid.config import Configurator


def includeme(config: Configurator) -> None:
    """The sitemaps, their XSL, robots.txt and the human views (``views.py``)."""
    config.include(".views")
