"""The database unavailable or locked: 503 with ``Retry-After``, never a 500.

A request that cannot get its work done by the database (the server down or restarting,
connections refused or dropped, the pool exhausted, SQLite locked past its busy timeout,
a lock or statement timeout) fails with one of SQLAlchemy's ``OperationalError``,
``InterfaceError`` or ``TimeoutError``, or with a connection it invalidated. Nothing was
changed (the transaction did not commit) and the same request will work once the
database is back, so the answer is 503 with ``Retry-After``: problem details on the API, a
short plain body elsewhere (the sitemaps, whose crawlers retry). The pool replaces dead
connections by itself (``pool_pre_ping``), so recovery needs nobody.

A transaction the database stopped for a conflict with another one (SQLSTATE class 40: a
deadlock, 40P01; a serialization failure, 40001) is no outage: the database is there, and
the same request run again will most likely succeed. pyramid_retry runs an admin API
request again, up to ``sitemap_server.api.attempts`` times (``attempts``); the last attempt
that conflicts answers 409 with problem details, as other conflicts with a concurrent
request do. Everything else runs once (an import, whose body may be 64 MiB, is not kept to
be read again), and a conflict outside the API is a 503 (a crawler comes back later).

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
from pyramid_retry import is_last_attempt, mark_error_retryable
from sqlalchemy import exc as sa_exc

from .errors import logged, problem

log = logging.getLogger(__name__)

# Seconds a client should wait: a restart or a failover usually takes a few.
RETRY_AFTER_SECONDS = 5
UNAVAILABLE = "the database is unavailable or busy; nothing was changed, retry in a few seconds"
CONFLICTED = (
    "this request conflicted with another one made at the same time and the database "
    "stopped it; nothing was changed: retry it"
)
ATTEMPTS = "sitemap_server.api.attempts"


def transaction_conflict(error: BaseException) -> bool:
    """Whether the database stopped the transaction for a conflict with another one
    (SQLSTATE class 40, "transaction rollback"), which running it again may resolve."""
    if not isinstance(error, sa_exc.DBAPIError):
        return False
    sqlstate = getattr(error.orig, "sqlstate", None)
    return isinstance(sqlstate, str) and sqlstate.startswith("40")


def database_unavailable(error: BaseException) -> bool:
    """Whether ``error`` means "the database cannot answer now" rather than a bug."""
    if isinstance(error, sa_exc.TimeoutError):  # no connection free in the pool
        return True
    if transaction_conflict(error):
        return False
    if isinstance(error, sa_exc.DBAPIError):
        return error.connection_invalidated or isinstance(
            error, sa_exc.OperationalError | sa_exc.InterfaceError
        )
    return False


def cause_of(error: BaseException) -> tuple[str, str]:
    """The driver's error under SQLAlchemy's: its class name and first line."""
    cause = getattr(error, "orig", None) or error
    text = str(cause).strip()
    return type(cause).__name__, logged(text.splitlines()[0] if text else "")


def log_unavailable(request: Request, error: BaseException) -> None:
    log.warning(
        "database unavailable on %s %s: %s: %s",
        logged(request.method),
        logged(request.environ.get("PATH_INFO", "")),
        *cause_of(error),
    )


def attempts(request: Request) -> int:
    """How many times pyramid_retry may run ``request`` (its ``retry.activate_hook``): an
    admin API request up to ``sitemap_server.api.attempts`` times, its body kept in memory
    to be read again; an import, a body over the limit (a 413 before it is read) and
    everything but the API once."""
    settings = request.registry.settings
    limit = settings["sitemap_server.api.max_body_bytes"]
    # The raw WSGI path: ``path_info`` decodes it, and a path that is not UTF-8 must
    # reach the view that answers it 400.
    path = request.environ.get("PATH_INFO", "")
    if (
        not path.startswith("/api/")
        or path == "/api/import"
        or (request.content_length or 0) > limit
    ):
        return 1
    request.request_body_tempfile_limit = limit
    return int(settings[ATTEMPTS])


def conflict_response(request: Request, error: BaseException) -> Response:
    """409 for an API request the database stopped for a conflict; unless this was its
    last attempt, the error is marked for pyramid_retry, which drops this answer and runs
    the request again."""
    last = is_last_attempt(request)
    log.info(
        "%s %s conflicted with another transaction%s: %s: %s",
        logged(request.method),
        logged(request.environ.get("PATH_INFO", "")),
        "" if last else ", running it again",
        *cause_of(error),
    )
    if not last:
        mark_error_retryable(error)
    return problem(409, CONFLICTED)


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
            if transaction_conflict(error) and request.path_info.startswith("/api/"):
                if not is_last_attempt(request):
                    mark_error_retryable(error)
                    raise  # pyramid_retry runs the request again
                return conflict_response(request, error)
            if not (database_unavailable(error) or transaction_conflict(error)):
                raise
            log_unavailable(request, error)
            return unavailable_response(request)

    return database_unavailable_tween


def includeme(config: Configurator) -> None:
    config.get_settings()["retry.activate_hook"] = attempts
    config.include("pyramid_retry")  # runs a request again after a transaction conflict
    config.add_tween(
        "sitemap_server.outages.database_unavailable_tween_factory",
        over="pyramid_tm.tm_tween_factory",
    )
