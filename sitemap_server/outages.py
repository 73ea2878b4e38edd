"""The database unavailable or locked: 503 with ``Retry-After``, never a 500.

A request that cannot get its work done by the database (the server down or restarting,
connections refused or dropped, the pool exhausted, SQLite locked past its busy timeout,
a lock or statement timeout) fails with one of SQLAlchemy's ``OperationalError``,
``InterfaceError`` or ``TimeoutError``, or with a connection it invalidated. Nothing was
changed (the transaction did not commit) and the same request will work once the
database is back, so the answer is 503 with ``Retry-After``: problem details on the API, a
short plain body elsewhere (the sitemaps, whose crawlers retry). The pool replaces dead
connections by itself (``pool_pre_ping``), so recovery needs nobody.

The tween sits over pyramid_tm, so a failed commit is answered the same way; the API's
exception view answers the errors raised inside its views (before its catch-all 500).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy import exc as sa_exc

from .errors import logged, problem

log = logging.getLogger(__name__)

# Seconds a client should wait: a restart or a failover usually takes a few.
RETRY_AFTER_SECONDS = 5
UNAVAILABLE = "the database is unavailable or busy; nothing was changed, retry in a few seconds"


def database_unavailable(error: BaseException) -> bool:
    """Whether ``error`` means "the database cannot answer now" rather than a bug."""
    if isinstance(error, sa_exc.TimeoutError):  # no connection free in the pool
        return True
    if isinstance(error, sa_exc.DBAPIError):
        return error.connection_invalidated or isinstance(
            error, sa_exc.OperationalError | sa_exc.InterfaceError
        )
    return False


def log_unavailable(request: Request, error: BaseException) -> None:
    cause = getattr(error, "orig", None) or error
    first_line = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
    log.warning(
        "database unavailable on %s %s: %s: %s",
        logged(request.method),
        logged(request.path),
        type(cause).__name__,
        logged(first_line),
    )


def unavailable_response(request: Request) -> Response:
    """503 for a request the database could not serve (the API's own view answers its
    requests with problem details)."""
    if request.path_info.startswith("/api/"):
        return problem(503, UNAVAILABLE, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
    response = Response(
        status=503,
        body=(UNAVAILABLE + "\n").encode(),
        content_type="text/plain",
        charset="utf-8",
    )
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response.headers["X-Robots-Tag"] = "noindex, follow"
    response.cache_control.no_store = True
    return response


def database_unavailable_tween_factory(
    handler: Callable[[Request], Response], registry: Any
) -> Callable[[Request], Response]:
    def database_unavailable_tween(request: Request) -> Response:
        try:
            return handler(request)
        except Exception as error:
            if not database_unavailable(error):
                raise
            log_unavailable(request, error)
            return unavailable_response(request)

    return database_unavailable_tween


def includeme(config: Configurator) -> None:
    config.add_tween(
        "sitemap_server.outages.database_unavailable_tween_factory",
        over="pyramid_tm.tm_tween_factory",
    )
