"""Fixtures of the video plugin's tests; the core's (``testapp``, ``api``, ``clean_database``
…) come from ``sitemap_server.testing``, enabled below. The plugin is installed, so the
core's application already includes it through its entry point."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from webtest import TestApp

# The core's fixtures (testapp, api, clean_database …): opt-in, as for any plugin's suite.
# Its helpers are imported by the tests, or inside fixtures, not here: pytest rewrites the
# plugin's asserts only if it is the first to import it.
pytest_plugins = ["sitemap_server.testing"]


@dataclass
class OEmbedServer:
    """A local stand-in for YouTube's and Vimeo's oEmbed endpoints, on 127.0.0.1.

    ``answers`` maps a video page URL to the JSON to send (or an int: that HTTP status;
    bytes: that body, as it is);
    unknown URLs get 404. An answer may also be a callable (called with the page URL, in
    the server's thread, it returns one of those) or ``("sleep", seconds, answer)``: a slow
    host. ``requests`` lists the page URLs asked for.
    """

    url: str
    answers: dict[str, Any] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def _oembed_httpd() -> Iterator[OEmbedServer]:
    server_state: OEmbedServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            page = query.get("url", [""])[0]
            server_state.requests.append(page)
            answer = server_state.answers.get(page, 404)
            if callable(answer):
                answer = answer(page)
            if isinstance(answer, tuple) and answer[:1] == ("sleep",):
                _, seconds, answer = answer
                time.sleep(seconds)  # a slow host; the client may have given up meanwhile
            try:
                if isinstance(answer, int):
                    self.send_response(answer)
                    self.end_headers()
                    return
                body = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: Any) -> None:
            pass

    from sitemap_server.testing import http_server

    with http_server(Handler) as url:
        server_state = OEmbedServer(url=url)
        yield server_state


@pytest.fixture
def oembed_server(_oembed_httpd) -> OEmbedServer:
    """The local oEmbed server, with no answers and no requests yet."""
    _oembed_httpd.answers.clear()
    _oembed_httpd.requests.clear()
    return _oembed_httpd


@pytest.fixture
def oembed_app(app_with, _oembed_httpd):
    """The application, with its oEmbed endpoints pointing at the local server."""
    return app_with(
        **{
            "sitemap_server_video.oembed.youtube": f"{_oembed_httpd.url}/youtube",
            "sitemap_server_video.oembed.vimeo": f"{_oembed_httpd.url}/vimeo",
            "sitemap_server_video.oembed.timeout": "2",
        }
    )


@pytest.fixture
def oembed_api(clean_database, oembed_app, oembed_server, api_token) -> TestApp:
    """The admin API of an application that fetches metadata from ``oembed_server``."""
    from sitemap_server.testing import client

    return client(oembed_app, api_token)
