"""Every admin API error as RFC 9457 problem details (``application/problem+json``)."""

from __future__ import annotations

import logging

from pyramid.config import Configurator
from pyramid.exceptions import PredicateMismatch
from pyramid.httpexceptions import HTTPException
from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy import exc as sa_exc
from sqlalchemy.orm.exc import ObjectDeletedError, StaleDataError

from ..errors import ServiceError, logged, problem
from ..outages import (
    conflict_response,
    database_unavailable,
    log_unavailable,
    transaction_conflict,
    unavailable_response,
)
from .openapi import RequestInvalid

log = logging.getLogger(__name__)


def service_error_view(exc: ServiceError, request: Request) -> Response:
    return problem(exc.status, exc.detail, exc.errors)


def request_invalid_view(exc: RequestInvalid, request: Request) -> Response:
    return problem(exc.status, exc.detail, exc.errors)


HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def not_allowed_view(exc: PredicateMismatch, request: Request) -> Response:
    # A route matched but no view took this method: 405, not Pyramid's default 404.
    route = request.matched_route
    item = request.site.openapi.spec["paths"].get(route.pattern if route else "", {})
    allowed = sorted(method.upper() for method in item if method in HTTP_METHODS)
    if not allowed:
        return problem(404, f"{request.path} does not exist")
    return problem(
        405,
        f"{request.method} is not allowed on {request.path}; use {', '.join(allowed)}",
        headers={"Allow": ", ".join(allowed)},
    )


def http_exception_view(exc: HTTPException, request: Request) -> Response:
    if exc.code is not None and exc.code < 400:
        return exc
    detail = exc.detail if isinstance(exc.detail, str) else None
    if exc.code == 404:
        detail = f"{request.path} does not exist"
    return problem(exc.code or 500, detail)


def concurrent_change_view(exc: Exception, request: Request) -> Response:
    """A row this request changes was deleted or changed by another request since it was
    read (StaleDataError, ObjectDeletedError): nothing was changed, the client may retry."""
    log.info("concurrent change on %s %s: %s", request.method, logged(request.path), logged(exc))
    return problem(
        409,
        "this was changed or deleted by another request at the same time; fetch it again and retry",
    )


def unexpected_error_view(exc: Exception, request: Request) -> Response:
    log.exception("unexpected error on %s %s", logged(request.method), logged(request.path))
    return problem(500, "an unexpected error happened; it has been logged")


def database_error_view(exc: Exception, request: Request) -> Response:
    """503 with Retry-After while the database is down or locked; a conflict with another
    transaction (a deadlock) is run again, or a 409 on its last attempt (``outages``)."""
    if transaction_conflict(exc):
        return conflict_response(request, exc)
    if not database_unavailable(exc):
        return unexpected_error_view(exc, request)
    log_unavailable(request, exc)
    return unavailable_response(request)


def forbidden_view(exc: HTTPException, request: Request) -> Response:
    # Every endpoint needs the same permission, so "forbidden" always means "not signed in".
    if request.authorization is None:
        detail, challenge = "send a bearer token: Authorization: Bearer <token>", "Bearer"
    else:
        detail, challenge = "the token is wrong or revoked", 'Bearer error="invalid_token"'
    return problem(401, detail, headers={"WWW-Authenticate": challenge})


def includeme(config: Configurator) -> None:
    config.add_exception_view(service_error_view, context=ServiceError)
    config.add_exception_view(request_invalid_view, context=RequestInvalid)
    config.add_forbidden_view(forbidden_view, path_info=r"^/api/")
    config.add_exception_view(not_allowed_view, context=PredicateMismatch, path_info=r"^/api/")
    config.add_exception_view(http_exception_view, context=HTTPException, path_info=r"^/api/")
    for context in (StaleDataError, ObjectDeletedError):
        config.add_exception_view(concurrent_change_view, context=context, path_info=r"^/api/")
    for database_error in (sa_exc.DBAPIError, sa_exc.TimeoutError):
        config.add_exception_view(database_error_view, context=database_error, path_info=r"^/api/")
    config.add_exception_view(unexpected_error_view, context=Exception, path_info=r"^/api/")
