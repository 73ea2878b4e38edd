"""``/api/sync``: the WordPress the worker follows, and each WordPress synced (issue 35)."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request

from ..wordpress import sync
from .views import api_view


@api_view(route_name="api.sync", request_method="GET")
def get_sync(request: Request) -> dict[str, Any]:
    """What ``sitemap-server sync-wordpress --status`` prints, and what the worker is set
    to follow (``sitemap_server.wordpress.url``)."""
    settings = request.site.settings
    return {
        "follows": settings["sitemap_server.wordpress.url"] or None,
        "poll_seconds": settings["sitemap_server.wordpress.poll_seconds"],
        "syncs": sync.status(request.dbsession),
    }
