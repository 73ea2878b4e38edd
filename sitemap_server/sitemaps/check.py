"""``sitemap-server check``: the stored sitemaps compared with a rebuild from the content.

Every write keeps ``sitemap_entries``, ``sitemap_pages`` and the providers' ``due_at``
current (``maintenance``); this is how to know they are. The stored state is copied aside,
every provider is rebuilt from the content in a savepoint (``refresh`` with
``everything``, the same code as ``rebuild-sitemaps``), and the two are compared entry by
entry, in key order, without holding either in memory. The savepoint is rolled back, or
kept with ``repair``, so a check changes nothing and a repair is one transaction.

Versions are not compared: a rebuild bumps them, and only their order means anything.
The table of which object has which URL (``object_urls``) is compared and rebuilt too,
and so is the change feed's journal (``journal.py``): the URLs it tells an integrator are
listed, and their dates, against those of the rebuild (which brings it to them, as
every rebuild does), under the name ``change feed``. The finished documents this process
would serve are rendered again and compared (``finished documents``).

What no rebuild can mend is reported too (``content_problems``): a cycle of parents
(which concurrent re-parentings could once store) and a URL that two objects list (S-107).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import String, Table, and_, column, func, or_, select, table, text
from sqlalchemy.orm import Session

from ..content import object_urls
from ..models import (
    FinishedDocument,
    ListedUrl,
    Post,
    SitemapEntry,
    SitemapPage,
    SitemapVersion,
    Term,
    site_of,
)
from ..models.meta import UTCDateTime
from . import finished
from .changes import ContentChanges
from .maintenance import all_providers, catch_up, refresh

ENTRY_FIELDS = ("path", "lastmod", "images", "extra", "alternates", "size", "xml")
PAGE_FIELDS = ("first_key", "first_part", "last_key", "last_part", "entries", "lastmod", "xml")
ENTRIES = cast(Table, SitemapEntry.__table__)
STORED_ENTRIES = "check_stored_entries"
# What a rebuild cannot repair: the content itself is wrong (fixed through the API).
PARENT_CYCLE, DUPLICATE_URL = "parent cycle", "duplicate URL"
CONTENT_PROBLEMS = (PARENT_CYCLE, DUPLICATE_URL)
# Differences kept for the report; a count of all of them is always given.
MAX_REPORTED = 1000
# The providers whose entries are objects with a URL of their own (S-107: one URL, one
# object); the others (videos, news) list some of those URLs again.
OWN_URL_KINDS = ("post", "term", "author")
# The table of which object has which URL (``content.object_urls``), compared as well.
URLS_TABLE = "object_urls"
# The change feed's journal, compared too (its repair is the rebuild's: ``journal.record``
# looks at every path of a rebuild).
FEED = "change feed"
# The stored bytes of the documents a change made (``finished.py``).
FINISHED = "finished documents"
STORED_FEED = "check_stored_listed_urls"


@dataclass(frozen=True)
class Difference:
    """One thing stored that a rebuild would store otherwise."""

    provider: str
    where: str  # "/2024/05/hello/ (key 12, part 1)", "page 2", "due_at"
    field: str  # a column, or "listed" for an entry or page only one side has
    stored: Any
    expected: Any

    def as_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "where": self.where,
            "field": self.field,
            "stored": _plain(self.stored),
            "expected": _plain(self.expected),
        }


@dataclass
class Report:
    differences: list[Difference] = field(default_factory=list)
    count: int = 0  # all of them, reported or not
    entries: int = 0  # entries a rebuild stores
    repaired: bool = False
    # What the rebuild could not compute (a provider's or plugin's failure, in words): its
    # entries are left as stored, and the stored sitemaps may not be what content implies.
    failures: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "differences": [d.as_dict() for d in self.differences],
            "failures": self.failures,
            "count": self.count,
            "entries": self.entries,
            "repaired": self.repaired,
        }

    def add(self, difference: Difference) -> None:
        self.count += 1
        if len(self.differences) < MAX_REPORTED:
            self.differences.append(difference)


def check(session: Session, repair: bool = False) -> Report:
    """Compare what is stored with a rebuild; with ``repair``, keep the rebuild when they
    differ. The change log and the scheduled changes that are due are applied first (and
    kept), as the maintainer would, so they are not reported."""
    report = Report()
    # What a maintainer would do anyway, and keeps: what waits in the change log, and
    # what has come due.
    catch_up(session)
    for problem in content_problems(session):
        report.add(problem)
    _compare_finished(session, report, repair)
    savepoint = session.begin_nested()
    try:
        stored_pages = _pages(session)
        stored_dues = _dues(session)
        session.execute(text(f"DROP TABLE IF EXISTS {STORED_ENTRIES}"))
        session.execute(
            text(f"CREATE TEMPORARY TABLE {STORED_ENTRIES} AS SELECT * FROM sitemap_entries")
        )
        session.execute(text(f"DROP TABLE IF EXISTS {STORED_FEED}"))
        session.execute(
            text(
                f"CREATE TEMPORARY TABLE {STORED_FEED} AS "
                "SELECT path, lastmod FROM listed_urls WHERE removed = :no"
            ),
            {"no": False},
        )
        urls = object_urls.all_urls(session)
        before = report.count
        for path, stored, expected in object_urls.differences(session, urls):
            report.add(Difference(URLS_TABLE, path, "owner", stored, expected))
        if report.count > before:  # kept with ``repair``, as the entries are
            object_urls.rebuild(session, urls)
        report.failures = refresh(session, ContentChanges(everything=True))[:MAX_REPORTED]
        session.flush()
        _compare_entries(session, report)
        _compare_pages(report, stored_pages, _pages(session))
        _compare_feed(session, report)
        expected_dues = _dues(session)
        for provider in sorted(stored_dues.keys() | expected_dues.keys()):
            stored, expected = stored_dues.get(provider), expected_dues.get(provider)
            if stored != expected:
                report.add(Difference(provider, "due_at", "due_at", stored, expected))
        session.execute(text(f"DROP TABLE {STORED_ENTRIES}"))
        session.execute(text(f"DROP TABLE {STORED_FEED}"))
    except BaseException:
        savepoint.rollback()
        raise
    if repair and report.count:
        savepoint.commit()
        report.repaired = True
    else:
        savepoint.rollback()
    return report


def _compare_finished(session: Session, report: Report, repair: bool) -> None:
    """The finished documents this process would serve against its rendering of them now
    (``finished.py``); with ``repair``, those that differ are dropped (rendered on
    request until a change stores them again)."""
    for name in finished.differing(session, site_of(session)):
        report.add(Difference(FINISHED, name, "bytes", "stored", "rendered now"))
        if repair:
            finished.drop(session.connection(), FinishedDocument.name == name)


def _compare_feed(session: Session, report: Report) -> None:
    """The URLs the journal told as listed before the rebuild against those it tells
    after it, with their dates."""
    told = table(STORED_FEED, column("path", String()), column("lastmod", UTCDateTime()))
    now = ListedUrl
    listed_now = and_(now.path == told.c.path, now.removed.is_(False))
    gone_or_moved = (
        select(told.c.path, told.c.lastmod, now.path, now.lastmod)
        .outerjoin(now, listed_now)
        .where(or_(now.path.is_(None), now.lastmod.is_distinct_from(told.c.lastmod)))
        .order_by(told.c.path)
    )
    for path, stored, listed, expected in session.execute(gone_or_moved):
        if listed is None:
            report.add(Difference(FEED, path, "listed", True, False))
        else:
            report.add(Difference(FEED, path, "lastmod", stored, expected))
    untold = (
        select(now.path)
        .outerjoin(told, told.c.path == now.path)
        .where(now.removed.is_(False), told.c.path.is_(None))
        .order_by(now.path)
    )
    for path in session.scalars(untold):
        report.add(Difference(FEED, path, "listed", False, True))


def content_problems(session: Session) -> Iterator[Difference]:
    """What is wrong in the content or the stored sitemaps whatever a rebuild does: every
    cycle of parents among posts and terms, every URL stored for two objects."""
    for model, what, scope in ((Post, "posts", Post.type), (Term, "terms", Term.taxonomy)):
        rows = session.execute(
            select(model.id, model.parent_id, scope).where(model.parent_id.isnot(None))
        )
        parent_of: dict[int, int | None] = {}
        scope_of: dict[int, str] = {}
        for node, parent, name in rows:
            parent_of[node], scope_of[node] = parent, name
        for cycle in parent_cycles(parent_of):
            where = f"{what} {' → '.join(map(str, [*cycle, cycle[0]]))}"
            yield Difference(scope_of[cycle[0]], where, PARENT_CYCLE, cycle, None)
    yield from _duplicate_urls(session)


def parent_cycles(parent_of: dict[int, int | None]) -> list[list[int]]:
    """Each cycle of ``parent_of`` (child → parent) once, from its lowest id up."""
    cycles: list[list[int]] = []
    done: set[int] = set()
    for start in sorted(parent_of):
        path: list[int] = []
        on_path: set[int] = set()
        node: int | None = start
        while node is not None and node not in done and node not in on_path:
            path.append(node)
            on_path.add(node)
            node = parent_of.get(node)
        if node is not None and node in on_path:
            cycle = path[path.index(node) :]
            lowest = cycle.index(min(cycle))
            cycles.append(cycle[lowest:] + cycle[:lowest])
        done.update(path)
    return sorted(cycles)


def _duplicate_urls(session: Session) -> Iterable[Difference]:
    providers = all_providers(session, site_of(session))
    owners = [p.name for p in providers if p.kind in OWN_URL_KINDS]
    entries = ENTRIES
    owned = entries.c.provider.in_(owners)
    twice = select(entries.c.path).where(owned).group_by(entries.c.path)
    twice = twice.having(func.count() > 1)
    rows = session.execute(
        select(entries.c.path, entries.c.provider, entries.c.key, entries.c.part)
        .where(owned, entries.c.path.in_(twice))
        .order_by(entries.c.path, entries.c.provider, entries.c.key, entries.c.part)
    )
    listings: dict[str, list[str]] = {}
    first: dict[str, str] = {}
    for path, provider, key, part in rows:
        first.setdefault(path, provider)
        listings.setdefault(path, []).append(f"{provider} key {key} part {part}")
    for path, found in listings.items():
        yield Difference(first[path], path, DUPLICATE_URL, found, None)


def _stored_entries() -> Any:
    return table(STORED_ENTRIES, *(column(c.name, c.type) for c in ENTRIES.columns))


def _ordered_entries(session: Session, source: Any) -> Iterator[Any]:
    statement = select(source).order_by(source.c.provider, source.c.key, source.c.part)
    yield from session.execute(statement.execution_options(yield_per=2000))


def _compare_entries(session: Session, report: Report) -> None:
    """A merge of the two sets of entries, both in (provider, key, part) order."""
    stored = _ordered_entries(session, _stored_entries())
    expected = _ordered_entries(session, ENTRIES)
    old, new = next(stored, None), next(expected, None)
    while old is not None or new is not None:
        if new is None or (old is not None and _position(old) < _position(new)):
            assert old is not None  # the loop goes on while one of them is left
            report.add(Difference(old.provider, _where(old), "listed", True, False))
            old = next(stored, None)
            continue
        report.entries += 1
        if old is None or _position(old) > _position(new):
            report.add(Difference(new.provider, _where(new), "listed", False, True))
        else:
            for name in ENTRY_FIELDS:
                stored_value, expected_value = getattr(old, name), getattr(new, name)
                if stored_value != expected_value:
                    report.add(
                        Difference(new.provider, _where(new), name, stored_value, expected_value)
                    )
            old = next(stored, None)
        new = next(expected, None)


def _position(entry: Any) -> tuple[str, int, int]:
    return entry.provider, entry.key, entry.part


def _where(entry: Any) -> str:
    return f"{entry.path} (key {entry.key}, part {entry.part})"


def _pages(session: Session) -> dict[tuple[str, int], Any]:
    rows = session.execute(select(SitemapPage.__table__))
    return {(row.provider, row.page): row for row in rows}


def _dues(session: Session) -> dict[str, Any]:
    rows = session.execute(select(SitemapVersion.provider, SitemapVersion.due_at))
    return {provider: due_at for provider, due_at in rows}


def _compare_pages(
    report: Report, stored: dict[tuple[str, int], Any], expected: dict[tuple[str, int], Any]
) -> None:
    for provider, number in sorted(stored.keys() | expected.keys()):
        old, new = stored.get((provider, number)), expected.get((provider, number))
        where = f"page {number}"
        if old is None or new is None:
            report.add(Difference(provider, where, "listed", old is not None, new is not None))
            continue
        for name in PAGE_FIELDS:
            if getattr(old, name) != getattr(new, name):
                report.add(
                    Difference(provider, where, name, getattr(old, name), getattr(new, name))
                )


def _plain(value: Any) -> Any:
    """JSON-ready: dates as ISO 8601 strings."""
    return value.isoformat() if hasattr(value, "isoformat") else value
