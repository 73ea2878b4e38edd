"""The OpenAPI document and an interactive page to try it (Swagger UI)."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from pyramid.response import Response
from pyramid.view import view_config

from .openapi import OPENAPI

SWAGGER_UI_VERSION = "5.17.14"

DOCS_PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>sitemap-server admin API</title>
  <link rel="stylesheet" href="https://unpkg.com/swagger-ui-dist@{version}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <noscript>This page needs JavaScript. The API is described in
    <a href="{spec_url}">{spec_url}</a>.</noscript>
  <script src="https://unpkg.com/swagger-ui-dist@{version}/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({{url: "{spec_url}", dom_id: "#swagger-ui",
      deepLinking: true, persistAuthorization: true}});
  </script>
</body>
</html>
"""


@view_config(route_name="api.openapi", request_method="GET", renderer="json")
def openapi_document(request: Request) -> dict[str, Any]:
    return request.registry[OPENAPI].spec


@view_config(route_name="api.docs", request_method="GET")
def docs_page(request: Request) -> Response:
    html = DOCS_PAGE.format(version=SWAGGER_UI_VERSION, spec_url=request.route_path("api.openapi"))
    return Response(html, content_type="text/html", charset="utf-8")
