"""sitemap-server: XML sitemaps for a Pyramid-managed site.

The application is ``sitemap_server.app:main`` (``use = egg:sitemap-server``); what it
is made of, ``sitemap_server.site.Site``; what a plugin may import, ``sitemap_server.plugin``.
"""

from __future__ import annotations

from .hookspecs import hookimpl

__all__ = ["hookimpl"]
