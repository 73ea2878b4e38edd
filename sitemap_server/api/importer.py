"""``POST /api/import``: newline-delimited JSON, streamed, all or nothing (S-704)."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from pyramid.view import view_config

from ..errors import problem
from ..services.importer import import_lines, read_lines
from .auth import ADMIN

NDJSON_TYPES = ("application/x-ndjson", "application/jsonl", "application/jsonlines")


@view_config(route_name="api.import", request_method="POST", permission=ADMIN, renderer="json")
def import_content(request: Request) -> Any:
    if request.content_type not in NDJSON_TYPES:
        return problem(415, f"send the lines as {NDJSON_TYPES[0]}")
    unknown = list(request.GET)
    if unknown:
        return problem(400, f"unknown query parameter {unknown[0]!r}")
    report = import_lines(
        request.dbsession, read_lines(request.body_file), request.site.import_validator
    )
    return report.as_dict()
