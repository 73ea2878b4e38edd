"""``/api/plugins``: what ``sitemap-server plugins`` shows, for the running application."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request

from ..plugins import describe_plugins
from .views import api_view


@api_view(route_name="api.plugins", request_method="GET")
def list_plugins(request: Request) -> dict[str, Any]:
    return {"plugins": describe_plugins(request.site.plugins)}
