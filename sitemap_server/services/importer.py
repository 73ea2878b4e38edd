"""Bulk import of newline-delimited JSON (S-704): all or nothing.

Each line holds one object to create, e.g. ``{"author": {...}}`` or ``{"post": {...}}``,
with the body the matching create endpoint takes; or settings to change, of a type or
taxonomy that exists (``post_type_settings``, ``taxonomy_settings``: the body of its PATCH
with its ``name``) or of the site (``settings``), as an export writes them. Lines are
applied in order in the caller's transaction; the first bad line raises an error naming
its line number, and the caller aborts the transaction, so nothing of a rejected import is
kept.

Posts, the bulk of any site, are checked by the same ``prepare_post`` as the API and
inserted in batches; the few other objects go through their usual create functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from sqlalchemy.orm import Session

from ..content import object_urls
from ..content.slugs import normal_slug
from ..errors import FieldProblem, Invalid, ServiceError
from ..models import Post, update_planner_statistics
from ..sitemaps.changes import held_back, record
from . import authors, site, terms, types
from .decoding import NotJSON, NotUTF8, decode_json, text_problems
from .ids import note_explicit_ids, sync_sequences
from .posts import Lookups, base_slug, insert_prepared, prepare_post

BATCH_SIZE = 1000
# Planner statistics are taken again after 10,000 imported posts, then 40,000, 160,000 …
FIRST_STATISTICS = 10_000
STATISTICS_GROWTH = 4
# Longest line accepted (bytes): the largest post the API takes, with room for escaping.
MAX_LINE_BYTES = 8 * 1024 * 1024

KINDS = (
    "post_type",
    "taxonomy",
    "author",
    "term",
    "post",
    "post_type_settings",
    "taxonomy_settings",
    "settings",
)

# An import line -> what is wrong with its shape (nothing when it matches ImportLine).
LineValidator = Callable[[Any], list[FieldProblem]]


@dataclass
class ImportReport:
    lines: int = 0
    created: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "created": {k: self.created[k] for k in KINDS if self.created[k]},
        }


class _TermBatch:
    """Terms waiting to be inserted together, checked by the API's own rules
    (``terms.prepare_term``): one statement per batch, their URLs held at once."""

    def __init__(self, session: Session, lookups: Lookups, report: ImportReport) -> None:
        self.session, self.lookups, self.report = session, lookups, report
        self.terms = terms.TermLookups(session)
        self.pending: list[tuple[int, dict[str, Any]]] = []
        # Called with each pending term's id once it is inserted, by its index in pending.
        self.then: dict[int, Callable[[int], None]] = {}

    def add(
        self, line: int, data: dict[str, Any], then: Callable[[int], None] | None = None
    ) -> None:
        if then is not None:
            self.then[len(self.pending)] = then
        self.pending.append((line, data))
        if len(self.pending) >= BATCH_SIZE:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        # One query per taxonomy tells which of the batch's slugs are taken, one which of
        # the ids they give or refer to are terms.
        wanted: dict[str, set[str]] = {}
        for _line, data in self.pending:
            if isinstance(data.get("slug"), str):
                wanted.setdefault(data["taxonomy"], set()).add(normal_slug(data["slug"]))
        for taxonomy, slugs in wanted.items():
            self.terms.prefetch_slugs(taxonomy, slugs)
        self.terms.prefetch_terms(
            i for _line, data in self.pending for i in (data.get("id"), data.get("parent")) if i
        )
        rows = []
        for line, data in self.pending:
            try:
                rows.append(terms.prepare_term(self.terms, data))
            except ServiceError as exc:
                raise exc.at_line(line, "term") from None
        terms.insert_prepared(self.session, rows)
        lines = {row["id"]: line for (line, _data), row in zip(self.pending, rows, strict=True)}
        urls = object_urls.term_urls(self.session, ids=lines)
        try:
            object_urls.hold(self.session, urls, "slug", written={("term", i) for i in lines})
        except object_urls.UrlTaken as taken:
            raise taken.at_line(lines[taken.claimant[1]], "term") from None
        record(self.session, terms=set(lines))
        for term_id in lines:
            self.lookups.remember_term(term_id)
        self.report.created["term"] += len(rows)
        self.pending.clear()
        then, self.then = self.then, {}
        for index, call in then.items():
            call(rows[index]["id"])


class _PostBatch:
    def __init__(
        self, session: Session, lookups: Lookups, report: ImportReport, terms: _TermBatch
    ) -> None:
        self.session, self.lookups, self.report = session, lookups, report
        # Inserted before the posts, which may link to them.
        self.terms = terms
        self.pending: list[tuple[int, dict[str, Any]]] = []
        # Called with each pending post's id once it is inserted, by its index in pending.
        self.then: dict[int, Callable[[int], None]] = {}
        self.next_statistics = FIRST_STATISTICS

    def add(
        self, line: int, data: dict[str, Any], then: Callable[[int], None] | None = None
    ) -> None:
        if then is not None:
            self.then[len(self.pending)] = then
        self.pending.append((line, data))
        if len(self.pending) >= BATCH_SIZE:
            self.flush()

    def _hold_urls(self, rows: list[dict[str, Any]]) -> None:
        """The batch's posts take their URLs (``object_urls``), as the API's creates do:
        a URL another object has refuses the import, naming the line."""
        lines = {row["id"]: line for (line, _data), row in zip(self.pending, rows, strict=True)}
        inserted = [SimpleNamespace(**row) for row in rows]  # ``prepare_post`` fills them all
        urls = object_urls.post_urls(self.session, rows=inserted)
        try:
            object_urls.hold(self.session, urls, "slug", written={("post", i) for i in lines})
        except object_urls.UrlTaken as taken:
            raise taken.at_line(lines[taken.claimant[1]], "post") from None

    def flush(self) -> None:
        self.terms.flush()
        if not self.pending:
            return
        # One query per type (and parent) tells which of the batch's slugs are taken.
        wanted: dict[tuple[str, int | None], set[str]] = {}
        for _line, data in self.pending:
            slug = normal_slug(data.get("slug") or base_slug(data))
            wanted.setdefault((data["type"], data.get("parent")), set()).add(slug)
        for (post_type, parent), slugs in wanted.items():
            self.lookups.prefetch_slugs(post_type, parent, slugs)
        self.lookups.prefetch_posts(
            i for _line, data in self.pending for i in (data.get("id"), data.get("parent")) if i
        )
        rows, links = [], []
        for line, data in self.pending:
            try:
                row, term_ids = prepare_post(self.lookups, data)
            except ServiceError as exc:
                raise exc.at_line(line, "post") from None
            rows.append(row)
            links.append(term_ids)
        if any("id" in row for row in rows):
            note_explicit_ids(self.session, Post.__table__)
        insert_prepared(self.session, rows, links)
        self._hold_urls(rows)
        record(
            self.session,
            posts={row["id"] for row in rows},
            authors={row["author_id"] for row in rows},
            terms={term for term_ids in links for term in term_ids},
        )
        self.report.created["post"] += len(rows)
        self.pending.clear()
        then, self.then = self.then, {}
        for index, call in then.items():
            call(rows[index]["id"])
        if self.report.created["post"] >= self.next_statistics:
            self.next_statistics *= STATISTICS_GROWTH
            # The import is one transaction: autovacuum cannot see its rows, and a planner
            # that still takes ``posts`` for empty looks up each batch's slugs with a scan
            # of every post imported so far (quadratic: 1.5 s a batch was seen in a
            # 1,000,000-post import on PostgreSQL). ANALYZE in the transaction sees them.
            update_planner_statistics(self.session)


def read_lines(stream: Any, max_bytes: int = MAX_LINE_BYTES) -> Iterable[bytes]:
    """Lines of a binary stream, without holding more than one line in memory.

    A line longer than ``max_bytes`` is cut there, and the cut fails the length check.
    """
    while True:
        line = stream.readline(max_bytes + 1)
        if not line:
            return
        yield line


def import_lines(
    session: Session,
    lines: Iterable[bytes],
    validate: LineValidator,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Apply every line; raise a ServiceError naming the line of the first problem."""
    objects = ObjectImport(session, validate)
    # The sitemaps are brought up to date once, at the end: nobody can see the state
    # between two lines, and one refresh of many keys is far cheaper than many of one.
    with held_back(session):
        for number, raw in enumerate(lines, start=1):
            objects.report.lines = number
            if progress is not None:
                progress(len(raw))
            if raw.strip():
                objects.add(number, _decoded(number, raw))
        objects.finish()
    return objects.report


def _decoded(number: int, raw: bytes) -> Any:
    """The JSON value of line ``number``."""
    if len(raw) > MAX_LINE_BYTES:
        raise Invalid(
            f"line {number} is longer than {MAX_LINE_BYTES} bytes",
            [FieldProblem(None, "line too long", number)],
        )
    try:
        return decode_json(raw)
    except NotUTF8 as exc:  # a 400, as for an API body
        raise ServiceError(f"line {number} {exc}", [FieldProblem(None, str(exc), number)]) from None
    except NotJSON as exc:
        raise Invalid(
            f"line {number} {exc}", [FieldProblem(None, "not valid JSON", number)]
        ) from None


class ObjectImport:
    """Import objects (an ``ImportLine`` each: ``{"post": {...}}``) applied in order in the
    caller's transaction, posts in batches and the rest one by one: what the NDJSON import
    and the WordPress import (``wordpress/``) share. A problem raises a ServiceError naming
    the object's line (of the NDJSON file, or of the export)."""

    def __init__(self, session: Session, validate: LineValidator) -> None:
        self.session = session
        self.validate = validate
        self.report = ImportReport()
        self.lookups = Lookups(session)
        self.terms = _TermBatch(session, self.lookups, self.report)
        self.posts = _PostBatch(session, self.lookups, self.report, self.terms)

    def add(self, number: int, item: Any, then: Callable[[int], None] | None = None) -> Any:
        """Apply ``item``: None for a post or a term (inserted with its batch, and then
        given to ``then`` with its id), else what was created (the author, post type or
        taxonomy) or changed (settings)."""
        self.check(number, item)
        kind, data = next(iter(item.items()))
        if kind == "post":
            self.posts.add(number, data, then)
            return None
        if kind == "term":
            self.terms.add(number, data, then)
            return None
        self.flush()  # keep the order: earlier objects exist before later ones
        try:
            created = _create_other(self.session, self.lookups, kind, data)
        except ServiceError as exc:
            raise exc.at_line(number, kind) from None
        self.report.created[kind] += 1
        return created

    def check(self, number: int, item: Any) -> None:
        """Refuse ``item`` if it is not an import object, naming its line."""
        text = text_problems(item)
        if text:  # a 400, as for an API body
            raise _at_line(ServiceError, number, text)
        problems = self.validate(item)
        if problems:
            raise _at_line(Invalid, number, problems)

    def flush(self) -> None:
        """Insert the terms and posts waiting in their batches."""
        self.posts.flush()  # the terms first

    def finish(self) -> None:
        """Insert the terms and posts still waiting in the last batches."""
        self.flush()
        sync_sequences(self.session)


def _at_line(error: type[ServiceError], number: int, problems: list[FieldProblem]) -> ServiceError:
    located = [FieldProblem(p.field, p.message, number) for p in problems]
    first = located[0]
    return error(f"line {number}: {first.field or 'line'}: {first.message}", located)


def _create_other(session: Session, lookups: Lookups, kind: str, data: dict[str, Any]) -> Any:
    if kind == "post_type":
        return types.create_post_type(session, data)
    if kind == "taxonomy":
        return types.create_taxonomy(session, data)
    if kind == "author":
        author = authors.create_author(session, data)
        lookups.remember_author(author.id)
        return author
    if kind == "post_type_settings":
        changes = {k: v for k, v in data.items() if k != "name"}
        return types.update_post_type(session, types.get_post_type(session, data["name"]), changes)
    if kind == "taxonomy_settings":
        changes = {k: v for k, v in data.items() if k != "name"}
        return types.update_taxonomy(session, types.get_taxonomy(session, data["name"]), changes)
    if kind == "settings":
        return site.update_settings(session, data)
    # The ImportLine schema admits no other key.
    raise Invalid.field(kind, "is not something an import can create")  # pragma: no cover
