"""``Server-Timing: app;dur=0.42``: how long the application took to answer (W3C Server
Timing), when ``sitemap_server.server_timing`` is on.

The time runs from the outermost tween to the response (every tween, the view, the
transaction's commit); a body sent in pieces (a large sitemap to a client that takes no
gzip) is made as it is sent, after it. Browsers show it in their developer tools, and the
benchmarks read it to tell the server's time from the network's and the client's. Off by
default: it costs two clock reads, and says how busy the origin is to anyone who asks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response
from pyramid.tweens import INGRESS


def server_timing_tween_factory(handler: Callable[[Request], Response], registry: Any) -> Any:
    def server_timing_tween(request: Request) -> Response:
        started = time.perf_counter()
        response = handler(request)
        spent = (time.perf_counter() - started) * 1000
        response.headers.add("Server-Timing", f"app;dur={spent:.3f}")
        return response

    return server_timing_tween


def includeme(config: Configurator) -> None:
    if config.get_settings()["sitemap_server.server_timing"]:
        config.add_tween("sitemap_server.server_timing.server_timing_tween_factory", under=INGRESS)
