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
from ..sitemaps.changes import writes_of
from ..wordpress.importer import import_wordpress
from ..wordpress.wxr import WxrError
from .auth import ADMIN

NDJSON_TYPES = ("application/x-ndjson", "application/jsonl", "application/jsonlines")
WXR_TYPES = ("application/xml", "text/xml", "application/rss+xml", "application/gzip")


# Query parameters, each true or false: ``dry_run`` says what the import would do and
# keeps nothing; ``prune`` (a WordPress export) deletes what earlier imports of the same
# site made and the export no longer has, as ``import-wordpress --prune``.
FLAGS = ("dry_run", "prune")


@view_config(route_name="api.import", request_method="POST", permission=ADMIN, renderer="json")
def import_content(request: Request) -> Any:
    wordpress = request.content_type in WXR_TYPES
    if request.content_type not in NDJSON_TYPES and not wordpress:
        return problem(
            415, f"send the lines as {NDJSON_TYPES[0]}, or a WordPress export as {WXR_TYPES[0]}"
        )
    flags: dict[str, bool] = {}
    for name, value in request.GET.items():
        if name not in FLAGS or name in flags:
            return problem(400, f"unknown or repeated query parameter {name!r}")
        if value.lower() not in ("true", "false"):
            return problem(400, f"{name}: {value!r} is neither true nor false")
        flags[name] = value.lower() == "true"
    if flags.get("prune") and not wordpress:  # well formed, but nothing to do: a 422
        return problem(422, "prune: only a WordPress export can prune what it no longer has")
    if wordpress:
        report: Any = _import_wordpress(request, prune=flags.get("prune", False))
    else:
        report = import_lines(
            request.dbsession, read_lines(request.body_file), request.site.import_validator
        )
    if flags.get("dry_run"):
        # Nothing is kept, and no change is named to wait for.
        request.tm.doom()
        writes_of(request.dbsession).last_change = None
    return {**report.as_dict(), "dry_run": flags.get("dry_run", False)}


def _import_wordpress(request: Request, prune: bool) -> Any:
    body = request.body_file_seekable  # read twice: waitress keeps a large one in a file

    @contextmanager
    def rewound() -> Iterator[IO[bytes]]:
        body.seek(0)
        yield body

    try:
        report = import_wordpress(
            request.dbsession, rewound, request.site.import_validator, prune=prune
        )
    except WxrError as error:
        errors = [FieldProblem(None, str(error), error.line)] if error.line else []
        raise Invalid(f"not a WordPress export this server can read: {error}", errors) from None
    finally:
        body.close()  # a temporary file WebOb made: nothing reads the body again
    return report
