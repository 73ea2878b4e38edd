"""Errors the services raise, and ``problem``: an error as RFC 9457 problem details (what
the API answers with them, and what any layer answers an API request with)."""

from __future__ import annotations

from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from pyramid.response import Response

PROBLEM_JSON = "application/problem+json"


@dataclass(frozen=True)
class FieldProblem:
    field: str | None
    message: str
    line: int | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"message": self.message}
        if self.field is not None:
            out["field"] = self.field
        if self.line is not None:
            out["line"] = self.line
        return out


class ServiceError(Exception):
    status = 400
    title = "Bad Request"

    def __init__(self, detail: str, errors: list[FieldProblem] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []

    @classmethod
    def field(cls, field: str, message: str) -> ServiceError:
        return cls(f"{field}: {message}", [FieldProblem(field, message)])

    def at_line(self, line: int, kind: str) -> ServiceError:
        """The same error, located on line ``line`` of an import, in its ``kind`` object.

        Fields are named as the line names them (``post/author``), like schema errors.
        """
        errors = [
            FieldProblem(f"{kind}/{e.field}" if e.field else kind, e.message, line)
            for e in self.errors
        ] or [FieldProblem(kind, self.detail, line)]
        return type(self)(f"line {line}: {self.detail}", errors)


class Invalid(ServiceError):
    """Well-formed input that breaks a rule (unknown reference, cycle, bad pattern)."""

    status = 422
    title = "Unprocessable Content"


class NotFound(ServiceError):
    status = 404
    title = "Not Found"


class Gone(ServiceError):
    """What the request names existed and no longer does (a change feed's old cursor)."""

    status = 410
    title = "Gone"


class Conflict(ServiceError):
    """The input collides with what is stored (duplicate slug or name, object in use)."""

    status = 409
    title = "Conflict"


def problem(
    status: int,
    detail: str | None = None,
    errors: list[FieldProblem] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
    }
    if detail:
        body["detail"] = detail
    if errors:
        body["errors"] = [e.as_dict() for e in errors]
    response = Response(status=status, json_body=body, content_type=PROBLEM_JSON, charset="utf-8")
    if headers:
        response.headers.update(headers)
    return response


# How much of a request's path (or of anything a client sent) a log line carries: enough to
# recognise it, while a 10 kB URL or a 2 MiB body stays out of the logs.
LOGGED_CHARS = 200


def logged(text: object) -> str:
    """``text`` cut short for a log line (the client's path, query or body)."""
    shown = str(text)
    if len(shown) <= LOGGED_CHARS:
        return shown
    return f"{shown[:LOGGED_CHARS]}… ({len(shown):,} characters)"
