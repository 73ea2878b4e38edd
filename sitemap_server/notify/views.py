"""The IndexNow key file: ``/{key}.txt`` holds the key, proving the site owns it."""

from __future__ import annotations

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response


def includeme(config: Configurator) -> None:
    key = config.get_settings().get("sitemap_server.indexnow.key")
    if not key:
        return

    def key_file(request: Request) -> Response:
        return Response(key, content_type="text/plain", charset="utf-8")

    config.add_route("indexnow.key", f"/{key}.txt")
    config.add_view(key_file, route_name="indexnow.key", request_method=("GET", "HEAD"))
