"""A URL that is not UTF-8 is a 400, before anything reads it.

WebOb decodes the path and the query string as UTF-8 the first time they are used, and
raises UnicodeDecodeError wherever that is: in a tween, in a view, in an exception view's
``path_info`` predicate (a 500 with no problem details, or none at all). The tween here
runs first and refuses such a request itself. Text the URL holds once decoded (NUL and
other characters XML cannot carry) is checked with the rest of the request (``openapi``).

Query strings are split on ``&`` only (``SplitOnAmpersand``): WebOb also splits on ``;``,
which turned ``?url=/a;b`` into ``url=/a`` and an unknown parameter ``b`` (found by
schemathesis); the WHATWG URL standard and Python's own ``parse_qsl`` since 3.10 use
``&`` alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response
from pyramid.tweens import INGRESS
from webob.multidict import GetDict

from ..errors import problem


class SplitOnAmpersand(Request):
    """The application's request: ``GET`` holds the query string split on ``&`` alone."""

    @property
    def GET(self) -> GetDict:
        source = self.environ.get("QUERY_STRING", "")
        cached = self.environ.get("sitemap_server.query")
        if cached is not None and cached[1] == source:
            return cached[0]
        # WSGI hands the bytes over as latin-1 text; they are UTF-8 (or a UnicodeError,
        # which decoding_tween answers with a 400).
        pairs = parse_qsl(source, keep_blank_values=True, encoding="latin-1")
        query = GetDict([(_utf8(k), _utf8(v)) for k, v in pairs], self.environ)
        self.environ["sitemap_server.query"] = (query, source)
        return query


def _utf8(latin1: str) -> str:
    return latin1.encode("latin-1").decode("utf-8")


def decoding_tween_factory(handler: Callable[[Request], Response], registry: Any) -> Any:
    def decoding_tween(request: Request) -> Response:
        try:
            path = request.path_info
        except UnicodeError:
            detail = "the path is not UTF-8 once percent-decoded"
            if request.environ.get("PATH_INFO", "").startswith("/api/"):
                return problem(400, detail)
            return Response(detail + "\n", status=400, content_type="text/plain")
        if path.startswith("/api/"):
            try:
                request.GET  # noqa: B018 - decodes the query string
            except UnicodeError:
                return problem(400, "the query string is not UTF-8 once percent-decoded")
        return handler(request)

    return decoding_tween


# The tweens that read the path before the view (over both of those that exist).
PATH_READERS = (
    "sitemap_server.api.body_limit_tween_factory",
    "sitemap_server.api.response_validation_tween_factory",
)


def includeme(config: Configurator) -> None:
    config.set_request_factory(SplitOnAmpersand)
    config.add_tween(
        "sitemap_server.api.decoding.decoding_tween_factory", under=INGRESS, over=PATH_READERS
    )
