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
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from sqlalchemy.orm import Session

from ..content import object_urls
from ..content.slugs import normal_slug
from ..errors import FieldProblem, Invalid, ServiceError
from ..models import update_planner_statistics
from ..sitemaps.changes import held_back, record
from . import authors, site, terms, types
from .decoding import NotJSON, NotUTF8, decode_json, text_problems
from .ids import sync_sequences
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
    # Lines left out, by their number and why (``--continue-on-error``).
    failed: list[tuple[int, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "created": {k: self.created[k] for k in KINDS if self.created[k]},
        }

    def summary(self) -> list[str]:
        """The report in a few lines of text."""
        created = ", ".join(f"{n} {kind}" for kind, n in self.as_dict()["created"].items())
        return [
            f"imported {self.lines} lines: {created or 'nothing'}",
            *failed_lines(self.failed, "lines"),
        ]


# Objects left out (``--continue-on-error``) that a summary names one by one.
MAX_FAILED_SHOWN = 20


def failed_lines(failed: list[tuple[int, str]], what: str) -> list[str]:
    """The summary's lines of what an import left out (``--continue-on-error``): how many
    ``what`` (lines, items), then the first ``MAX_FAILED_SHOWN`` by line and reason."""
    if not failed:
        return []
    shown = [f"  {detail}" for _line, detail in failed[:MAX_FAILED_SHOWN]]
    more = len(failed) - MAX_FAILED_SHOWN
    return [
        f"left out, failed: {len(failed)} {what}",
        *shown,
        *([f"  and {more} more"] if more > 0 else []),
    ]


class Failures:
    """What an import does with an object it cannot take: fail the import (raise its
    error, naming the line), or, with ``keep_going`` (``--continue-on-error``), leave the
    object out, keep its error, and go on."""

    def __init__(self, session: Session, keep_going: bool = False) -> None:
        self.session = session
        self.keep_going = keep_going
        self.errors: list[ServiceError] = []

    def add(self, error: ServiceError) -> None:
        if not self.keep_going:
            raise error
        self.errors.append(error)

    def by_line(self) -> list[tuple[int, str]]:
        """The objects left out: (line, why), in the order of the file."""
        return sorted(
            (problem.line or 0, error.detail)
            for error in self.errors
            for problem in error.errors[:1]
        )

    @contextmanager
    def attempt(self) -> Iterator[Attempt]:
        """A block whose writes are undone when it fails (``Attempt.failed``) and the import
        goes on past failures: a savepoint; otherwise the failure aborts the import."""
        attempt = Attempt(self)
        if not self.keep_going:
            yield attempt
            return
        savepoint = self.session.begin_nested()
        try:
            yield attempt
        except BaseException:
            savepoint.rollback()
            raise
        if attempt.error is None:
            savepoint.commit()
        else:
            savepoint.rollback()


class Attempt:
    """One ``Failures.attempt``."""

    def __init__(self, failures: Failures) -> None:
        self.failures = failures
        self.error: ServiceError | None = None

    def failed(self, error: ServiceError) -> None:
        """The attempt failed with ``error``: the import fails, or its writes are undone."""
        self.failures.add(error)
        self.error = error


class _Batch:
    """New objects of one kind waiting to be inserted together: each checked by the API's
    own rules (the kind's ``prepare_…``), then all inserted in one statement per table,
    their URLs held (``object_urls``, a URL another object has refuses the import, naming
    the line) and their changes recorded at once. The batch ``first`` (what these may
    refer to) is inserted before."""

    kind = ""

    def __init__(
        self,
        session: Session,
        lookups: Lookups,
        report: ImportReport,
        first: _Batch | None,
        failures: Failures,
    ) -> None:
        self.session, self.lookups, self.report, self.first = session, lookups, report, first
        self.failures = failures
        self.pending: list[tuple[int, dict[str, Any]]] = []
        # Called with each pending object's id once it is inserted, by its index in pending.
        self.then: dict[int, Callable[[int], None]] = {}
        self._start()

    def _start(self) -> None:
        """Make the kind's own lookups."""

    def add(
        self, line: int, data: dict[str, Any], then: Callable[[int], None] | None = None
    ) -> None:
        if then is not None:
            self.then[len(self.pending)] = then
        self.pending.append((line, data))
        if len(self.pending) >= BATCH_SIZE:
            self.flush()

    def flush(self) -> None:
        if self.first is not None:
            self.first.flush()
        if not self.pending:
            return
        self._prefetch()
        kept: list[tuple[int, int, Any]] = []  # (index in pending, line, prepared)
        for index, (line, data) in enumerate(self.pending):
            try:
                kept.append((index, line, self._prepare(data)))
            except ServiceError as exc:
                self.failures.add(exc.at_line(line, self.kind))
        kept, rows = self._insert_and_hold(kept)
        self.pending.clear()
        # Everything is in the database now, which answers the next batch's questions.
        self.lookups.forget()
        self._forget()
        then, self.then = self.then, {}
        for (index, _line, _prepared), row in zip(kept, rows, strict=True):
            if index in then:
                then[index](row["id"])

    def _insert_and_hold(
        self, kept: list[tuple[int, int, Any]]
    ) -> tuple[list[tuple[int, int, Any]], list[dict[str, Any]]]:
        """Insert the prepared objects ``kept``, hold their URLs and record them: those
        inserted and their rows. An object whose URL another has fails the batch, or
        (``Failures.keep_going``) is left out and the others are inserted again."""
        while kept:
            with self.failures.attempt() as attempt:
                prepared = [p for _index, _line, p in kept]
                rows = self._insert(prepared)
                lines = {row["id"]: line for (_i, line, _p), row in zip(kept, rows, strict=True)}
                try:
                    written = {(self.kind, i) for i in lines}
                    object_urls.hold(self.session, self._urls(rows), "slug", written=written)
                except object_urls.UrlTaken as taken:
                    claimant = taken.claimant[1]
                    attempt.failed(taken.at_line(lines[claimant], self.kind))
                    kept = [k for k, row in zip(kept, rows, strict=True) if row["id"] != claimant]
                    continue
                self._record(rows, prepared)
                self.report.created[self.kind] += len(rows)
                return kept, rows
        return [], []

    def _prefetch(self) -> None:
        """Learn what the pending objects refer to, in a few queries for all of them."""

    def _forget(self) -> None:
        """Forget what the kind's lookups learnt (``Lookups.forget``)."""

    def _prepare(self, data: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _insert(self, prepared: list[Any]) -> list[dict[str, Any]]:
        """Insert what ``_prepare`` made; the rows, with their ids."""
        raise NotImplementedError

    def _urls(self, rows: list[dict[str, Any]]) -> list[object_urls.Url]:
        raise NotImplementedError

    def _record(self, rows: list[dict[str, Any]], prepared: list[Any]) -> None:
        raise NotImplementedError


class _AuthorBatch(_Batch):
    kind = "author"

    def _start(self) -> None:
        self.authors = authors.AuthorLookups(self.session)

    def _prefetch(self) -> None:
        data = [d for _line, d in self.pending]
        self.authors.prefetch(
            (normal_slug(d["slug"]) for d in data), (d["id"] for d in data if "id" in d)
        )

    def _prepare(self, data: dict[str, Any]) -> dict[str, Any]:
        return authors.prepare_author(self.authors, data)

    def _forget(self) -> None:
        self.authors.forget()

    def _insert(self, prepared: list[dict[str, Any]]) -> list[dict[str, Any]]:
        authors.insert_prepared(self.session, prepared)
        return prepared

    def _urls(self, rows: list[dict[str, Any]]) -> list[object_urls.Url]:
        return object_urls.author_urls(self.session, ids=[row["id"] for row in rows])

    def _record(self, rows: list[dict[str, Any]], prepared: list[Any]) -> None:
        record(self.session, authors={row["id"] for row in rows})


class _TermBatch(_Batch):
    kind = "term"

    def _start(self) -> None:
        self.terms = terms.TermLookups(self.session)

    def _prefetch(self) -> None:
        # One query per taxonomy tells which of the batch's slugs are taken, one which of
        # the ids they give or refer to are terms.
        wanted: dict[str, set[str]] = {}
        for _line, data in self.pending:
            slug = normal_slug(data.get("slug") or terms.base_slug(data))
            wanted.setdefault(data["taxonomy"], set()).add(slug)
        for taxonomy, slugs in wanted.items():
            self.terms.prefetch_slugs(taxonomy, slugs)
        self.terms.prefetch_terms(
            i for _line, data in self.pending for i in (data.get("id"), data.get("parent")) if i
        )

    def _prepare(self, data: dict[str, Any]) -> dict[str, Any]:
        return terms.prepare_term(self.terms, data)

    def _forget(self) -> None:
        self.terms.forget()

    def _insert(self, prepared: list[dict[str, Any]]) -> list[dict[str, Any]]:
        terms.insert_prepared(self.session, prepared)
        return prepared

    def _urls(self, rows: list[dict[str, Any]]) -> list[object_urls.Url]:
        return object_urls.term_urls(self.session, ids=[row["id"] for row in rows])

    def _record(self, rows: list[dict[str, Any]], prepared: list[Any]) -> None:
        record(self.session, terms={row["id"] for row in rows})


class _PostBatch(_Batch):
    kind = "post"

    def _start(self) -> None:
        self.next_statistics = FIRST_STATISTICS

    def _prefetch(self) -> None:
        # One query per type (and parent) tells which of the batch's slugs are taken, one
        # which of the ids they give or refer to are posts.
        wanted: dict[tuple[str, int | None], set[str]] = {}
        for _line, data in self.pending:
            slug = normal_slug(data.get("slug") or base_slug(data))
            wanted.setdefault((data["type"], data.get("parent")), set()).add(slug)
        for (post_type, parent), slugs in wanted.items():
            self.lookups.prefetch_slugs(post_type, parent, slugs)
        self.lookups.prefetch_posts(
            i for _line, data in self.pending for i in (data.get("id"), data.get("parent")) if i
        )
        self.lookups.prefetch_references(
            (data["author"] for _line, data in self.pending if data.get("author") is not None),
            (term for _line, data in self.pending for term in data.get("terms", ())),
        )

    def _prepare(self, data: dict[str, Any]) -> tuple[dict[str, Any], list[int]]:
        return prepare_post(self.lookups, data)

    def _insert(self, prepared: list[tuple[dict[str, Any], list[int]]]) -> list[dict[str, Any]]:
        rows = [row for row, _term_ids in prepared]
        insert_prepared(self.session, rows, [term_ids for _row, term_ids in prepared])
        return rows

    def _urls(self, rows: list[dict[str, Any]]) -> list[object_urls.Url]:
        inserted = [SimpleNamespace(**row) for row in rows]  # ``prepare_post`` fills them all
        return object_urls.post_urls(self.session, rows=inserted)

    def _record(self, rows: list[dict[str, Any]], prepared: list[Any]) -> None:
        record(
            self.session,
            posts={row["id"] for row in rows},
            authors={row["author_id"] for row in rows},
            terms={term for _row, term_ids in prepared for term in term_ids},
        )
        if self.report.created["post"] + len(rows) >= self.next_statistics:
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
    keep_going: bool = False,
) -> ImportReport:
    """Apply every line; raise a ServiceError naming the line of the first problem, or
    with ``keep_going`` leave that line out, name it in the report, and go on."""
    objects = ObjectImport(session, validate, keep_going)
    # The sitemaps are brought up to date once, at the end: nobody can see the state
    # between two lines, and one refresh of many keys is far cheaper than many of one.
    with held_back(session):
        for number, raw in enumerate(lines, start=1):
            objects.report.lines = number
            if progress is not None:
                progress(len(raw))
            if not raw.strip():
                continue
            try:
                value = _decoded(number, raw)
            except ServiceError as error:
                objects.failures.add(error)
                continue
            objects.add(number, value)
        objects.finish()
    objects.report.failed = objects.failures.by_line()
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

    def __init__(self, session: Session, validate: LineValidator, keep_going: bool = False) -> None:
        self.session = session
        self.validate = validate
        self.report = ImportReport()
        self.failures = Failures(session, keep_going)
        self.lookups = Lookups(session)
        # Each inserted before the next, which may refer to it.
        report, failures = self.report, self.failures
        self.authors = _AuthorBatch(session, self.lookups, report, None, failures)
        self.terms = _TermBatch(session, self.lookups, report, self.authors, failures)
        self.posts = _PostBatch(session, self.lookups, report, self.terms, failures)

    def add(self, number: int, item: Any, then: Callable[[int], None] | None = None) -> Any:
        """Apply ``item``: None for an author, a term or a post (inserted with its batch,
        and then given to ``then`` with its id), else what was created (a post type or
        taxonomy) or changed (settings); None too for an item left out (``Failures``)."""
        try:
            self.check(number, item)
        except ServiceError as error:
            self.failures.add(error)
            return None
        kind, data = next(iter(item.items()))
        if kind == "post":
            self.posts.add(number, data, then)
            return None
        if kind in ("author", "term"):
            (self.authors if kind == "author" else self.terms).add(number, data, then)
            return None
        self.flush()  # keep the order: earlier objects exist before later ones
        with self.failures.attempt() as attempt:
            try:
                created = _create_other(self.session, self.lookups, kind, data)
            except ServiceError as exc:
                attempt.failed(exc.at_line(number, kind))
                return None
            self.report.created[kind] += 1
            return created
        return None  # pragma: no cover (the block returns)

    def check(self, number: int, item: Any) -> None:
        """Refuse ``item`` if it is not an import object, naming its line."""
        text = text_problems(item)
        if text:  # a 400, as for an API body
            raise _at_line(ServiceError, number, text)
        problems = self.validate(item)
        if problems:
            raise _at_line(Invalid, number, problems)

    def flush(self) -> None:
        """Insert the authors, terms and posts waiting in their batches."""
        self.posts.flush()  # the authors and terms first

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
