"""``POST /api/import``: newline-delimited JSON, streamed, all or nothing (S-704); or a
WordPress export (S-706)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from pyramid.request import Request
from pyramid.view import view_config

from ..errors import FieldProblem, Invalid, problem
from ..services.importer import import_lines, read_lines
from ..wordpress.importer import import_wordpress
from ..wordpress.wxr import WxrError
from .auth import ADMIN

NDJSON_TYPES = ("application/x-ndjson", "application/jsonl", "application/jsonlines")
WXR_TYPES = ("application/xml", "text/xml", "application/rss+xml", "application/gzip")


@view_config(route_name="api.import", request_method="POST", permission=ADMIN, renderer="json")
def import_content(request: Request) -> Any:
    wordpress = request.content_type in WXR_TYPES
    if request.content_type not in NDJSON_TYPES and not wordpress:
        return problem(
            415, f"send the lines as {NDJSON_TYPES[0]}, or a WordPress export as {WXR_TYPES[0]}"
        )
    unknown = list(request.GET)
    if unknown:
        return problem(400, f"unknown query parameter {unknown[0]!r}")
    if wordpress:
        return _import_wordpress(request)
    report = import_lines(
        request.dbsession, read_lines(request.body_file), request.site.import_validator
    )
    return report.as_dict()


def _import_wordpress(request: Request) -> Any:
    body = request.body_file_seekable  # read twice: waitress keeps a large one in a file

    @contextmanager
    def rewound() -> Iterator[IO[bytes]]:
        body.seek(0)
        yield body

    try:
        report = import_wordpress(request.dbsession, rewound, request.site.import_validator)
    except WxrError as error:
        errors = [FieldProblem(None, str(error), error.line)] if error.line else []
        raise Invalid(f"not a WordPress export this server can read: {error}", errors) from None
    finally:
        body.close()  # a temporary file WebOb made: nothing reads the body again
    return report.as_dict()
