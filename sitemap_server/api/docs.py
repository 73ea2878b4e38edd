"""The OpenAPI document and an interactive page to try it (Swagger UI).

Swagger UI comes from a Python package (``swagger-ui-bundle-v2``) and is served by this
process under ``/api/docs/assets/``: the page, where an administrator pastes a token,
loads no script from anywhere else (its Content-Security-Policy says so), and does not
keep the token once the tab is closed (``persistAuthorization`` is off).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response
from pyramid.view import view_config
from swagger_ui_bundle import swagger_ui_path

ASSETS = "api/docs/assets"
# What the page runs: Swagger UI on our document, the token kept in memory only.
START = (
    "window.ui = SwaggerUIBundle({url: %s, dom_id: '#swagger-ui', deepLinking: true,"
    " persistAuthorization: false});"
)
DOCS_PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>sitemap-server admin API</title>
  <link rel="stylesheet" href="{assets}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <noscript>This page needs JavaScript. The API is described in
    <a href="{spec_url}">{spec_url}</a>.</noscript>
  <script src="{assets}/swagger-ui-bundle.js"></script>
  <script>{start}</script>
</body>
</html>
"""


def _script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


@view_config(route_name="api.openapi", request_method="GET", renderer="json")
def openapi_document(request: Request) -> dict[str, Any]:
    return request.site.openapi.spec


@view_config(route_name="api.docs", request_method="GET")
def docs_page(request: Request) -> Response:
    spec_url = request.route_path("api.openapi")
    start = START % f'"{spec_url}"'
    assets = request.static_path(f"{swagger_ui_path}/")[:-1]
    html = DOCS_PAGE.format(assets=assets, spec_url=spec_url, start=start)
    response = Response(html, content_type="text/html", charset="utf-8")
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        f"script-src 'self' {_script_hash(start)}; object-src 'none'; base-uri 'none'; "
        "frame-ancestors 'none'"
    )
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def includeme(config: Configurator) -> None:
    config.add_static_view(ASSETS, str(swagger_ui_path), cache_max_age=86400)
