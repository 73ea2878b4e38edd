"""Following a live WordPress (issue 35): ``sitemap-server sync-wordpress URL``.

A run reads WordPress's REST API (``rest.py``) and imports what it read through the WXR
import (``importer.import_records``), as records of an export: the mapping is the
import's, exactly. What it reads:

1. the site (``/wp-json/``), its post types and taxonomies, its users, and every term of
   those taxonomies (terms have no date to ask by; a term list is short);
2. every post id of each type, 100 a request (``_fields=id``): what WordPress still shows;
3. the posts of each type modified since the run before (its cursor, ``modified_after``),
   and those of step 2 that this site does not have yet (a scheduled post WordPress
   published, a post restored from the trash: their date of change did not move);
4. for each batch of ``CHUNK`` posts, their ancestors (a page's path is made of its
   parents') and their attachments (images, featured images).

Each batch is imported, and its cursor moved, in a transaction of its own: a run cut
short (WordPress stopped, the process killed) resumes from the last batch committed.
Then what the site had from this WordPress and it no longer shows (deleted, trashed,
unpublished for an anonymous sync) is deleted, as ``import-wordpress --prune`` deletes
it; what the sync did not create (another source's objects, the admin API's) is never
touched. Every run is recorded (``WordPressSync``): its start and end, the cursors,
what it read and did by kind, the requests it made, and its error.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..models import ImportedObject, Post, WordPressSync, hold_lock
from ..models.meta import utcnow
from ..notify.report import iso
from . import rest, wxr
from .importer import Report, import_records

if TYPE_CHECKING:
    import requests

    from ..site import Site

log = logging.getLogger(__name__)

# Posts imported, and their cursor moved, per transaction.
CHUNK = 500
# How long a run holds its WordPress without committing a batch (a killed run's hold ends).
LEASE = timedelta(minutes=5)
# A type's ids are listed again at least this often, whatever its count says.
LISTING_EVERY = timedelta(hours=1)
# Spans of dates of change whose counts are compared (``_Sync._bisect``), at most, before
# the rest are listed whole; and the dates they start within.
MAX_SPANS = 200
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(3000, 1, 1, tzinfo=UTC)
SECOND = timedelta(seconds=1)
# The statuses WordPress lists, with credentials (``status=any``: not the trash) and without.
LISTED = ("draft", "future", "pending", "private", "publish")
PUBLIC = ("publish",)
# Ancestors looked for, generation after generation, at most.
MAX_DEPTH = 50
USER = "SITEMAP_SERVER_WORDPRESS_USER"
PASSWORD = "SITEMAP_SERVER_WORDPRESS_PASSWORD"


class Busy(Exception):
    """Another run of the same WordPress is at work."""


def credentials_from_environment() -> tuple[str, str] | None:
    """The user and application password to read WordPress as (``USER``, ``PASSWORD``),
    or None: anonymous, public content only."""
    user, password = os.environ.get(USER, ""), os.environ.get(PASSWORD, "")
    if not user and not password:
        return None
    if not user or not password:
        raise rest.WordPressError(f"set both {USER} and {PASSWORD}, or neither")
    return (user, password)


@dataclass
class Run:
    """What a run read and did."""

    source: str = ""
    read: Counter[str] = field(default_factory=Counter)  # posts read, by type
    imported: Counter[str] = field(default_factory=Counter)
    updated: Counter[str] = field(default_factory=Counter)
    deleted: Counter[str] = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)  # items that did not parse, named
    requests: int = 0

    def add(self, report: Report) -> None:
        self.imported.update(report.imported)
        self.updated.update(report.updated)
        self.deleted.update(report.pruned)
        self.skipped += [f"item {line}: {why}" for line, why in report.failed]

    def as_dict(self) -> dict[str, Any]:
        return {
            "read": dict(sorted(self.read.items())),
            "imported": dict(sorted(self.imported.items())),
            "updated": dict(sorted(self.updated.items())),
            "deleted": dict(sorted(self.deleted.items())),
            "skipped": self.skipped[:100],
        }

    def summary(self) -> list[str]:
        def listed(counts: Counter[str]) -> str:
            return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "nothing"

        lines = [
            f"read {listed(self.read)} changed; {self.requests} requests",
            f"imported {listed(self.imported)}; updated {listed(self.updated)}; "
            f"deleted {listed(self.deleted)}",
        ]
        lines += [f"left out: {line}" for line in self.skipped[:20]]
        return lines


def sync(
    site: Site,
    url: str,
    auth: tuple[str, str] | None,
    http: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
    post_pattern: str | None = None,
) -> Run:
    """One run against the WordPress at ``url``: what it did. ``post_pattern``: the
    posts' permalink pattern, given rather than found from their links
    (``permalinks.from_wordpress``). Raises ``rest.WordPressError`` when WordPress could
    not be read (recorded too), ``Busy`` when another run of it is at work."""
    if http is None:
        import requests

        http = requests.Session()
    client = rest.Client(url, auth, http, sleep)
    run = Run(source=url.rstrip("/"))  # until WordPress names its home
    try:
        channel = rest.channel(client.index())
    except Exception as error:
        if _begin(site, run.source) is not None:
            _end(site, run, _said(error))
        raise
    run.source = (channel.base_blog_url or channel.link or url).rstrip("/")
    held = _begin(site, run.source)
    if held is None:
        raise Busy(f"another run of {run.source} is at work")
    try:
        _Sync(site, client, channel, run, *held, post_pattern=post_pattern).run()
    except Exception as error:
        _end(site, run, _said(error), client.requests)
        raise
    _end(site, run, None, client.requests)
    return run


def _said(error: Exception) -> str:
    """What a run's error is, as ``--status`` shows it."""
    said = (
        str(error) if isinstance(error, rest.WordPressError) else f"{type(error).__name__}: {error}"
    )
    return said[:2000]


class Follower:
    """The worker's job (``sitemap_server.wordpress.url``): a run every ``poll_seconds``
    (from the start of one to the start of the next), in a thread of its own beside the
    maintainer, until ``stop`` is set. A run that fails is logged in one line, once until
    the error changes, and once when a run passes again; the sitemaps are served all the
    while, as the last run left them."""

    def __init__(
        self,
        site: Site,
        url: str,
        auth: tuple[str, str] | None,
        poll_seconds: float,
        post_pattern: str | None = None,
    ) -> None:
        self.site = site
        self.url = url
        self.auth = auth
        self.poll_seconds = poll_seconds
        self.post_pattern = post_pattern
        self.failing: str | None = None

    def run(self, stop: threading.Event) -> None:
        import requests

        log.info("following WordPress at %s every %s s", self.url, self.poll_seconds)
        with requests.Session() as http:
            while not stop.is_set():
                started = time.monotonic()
                self.once(http)
                stop.wait(max(0.0, self.poll_seconds - (time.monotonic() - started)))

    def once(self, http: requests.Session) -> Run | None:
        try:
            done = sync(self.site, self.url, self.auth, http, post_pattern=self.post_pattern)
        except Busy:
            return None  # another worker's run: this one waits for the next poll
        except Exception as error:
            said = _said(error)
            if said != self.failing:
                if isinstance(error, rest.WordPressError):
                    log.warning("WordPress at %s could not be read: %s", self.url, said)
                else:
                    log.exception("WordPress at %s: the run failed", self.url)
                self.failing = said
            return None
        if self.failing is not None:
            log.warning("WordPress at %s is read again", self.url)
            self.failing = None
        if done.skipped or any(done.imported.values()) or any(done.deleted.values()):
            log.info("WordPress at %s: %s", self.url, "; ".join(done.summary()))
        return done


def status(session: Session) -> list[dict[str, Any]]:
    """Every WordPress followed, and its last run."""
    rows = session.scalars(select(WordPressSync).order_by(WordPressSync.source)).all()
    return [
        {
            "source": row.source,
            "started_at": iso(row.started_at),
            "finished_at": iso(row.finished_at),
            "succeeded_at": iso(row.succeeded_at),
            "cursors": dict(sorted(row.cursors.items())),
            "listings": dict(sorted(row.listings.items())),
            "counts": row.counts,
            "requests": row.requests,
            "error": row.error,
            "running_until": iso(row.running_until),
        }
        for row in rows
    ]


def _begin(site: Site, source: str) -> tuple[dict[str, str], dict[str, Any]] | None:
    """Hold ``source`` for a run (``LEASE``): its cursors and listings, or None while
    another run holds it."""
    with site.sessions.begin() as session:
        hold_lock(session, f"wordpress sync {source}")
        row = session.get(WordPressSync, source)
        now = utcnow()
        if row is None:
            row = WordPressSync(source=source, cursors={}, listings={}, counts={}, requests=0)
            session.add(row)
        elif row.running_until is not None and row.running_until > now:
            return None
        row.started_at = now
        row.running_until = now + LEASE
        return dict(row.cursors), dict(row.listings)


def _end(site: Site, run: Run, error: str | None, requests: int | None = None) -> None:
    """Record how ``run`` went (``requests``: how many it made) and free the WordPress."""
    if requests is not None:
        run.requests = requests
    with site.sessions.begin() as session:
        row = session.get_one(WordPressSync, run.source)
        row.running_until = None
        row.finished_at = utcnow()
        if error is None:
            row.succeeded_at = row.finished_at
        row.error = error
        row.counts = run.as_dict()
        row.requests = run.requests


class _Sync:
    def __init__(
        self,
        site: Site,
        client: rest.Client,
        channel: wxr.Channel,
        run: Run,
        cursors: dict[str, str],
        listings: dict[str, Any],
        post_pattern: str | None = None,
    ) -> None:
        self.site = site
        self.client = client
        self.channel = channel
        self.done = run
        self.cursors = cursors
        self.listings = listings
        self.post_pattern = post_pattern
        self.line = 0
        # The posts this run imported: never pruned by it, whatever a listing saw; and
        # those it read, imported or left out (not fetched again by id).
        self.synced: set[int] = set()
        self.seen: set[Any] = set()
        self.statuses = LISTED if client.auth else PUBLIC
        # The types whose posts this run found by counts, not by a listing.
        self.bisected: set[str] = set()

    def run(self) -> None:
        client = self.client
        types = client.post_types()
        by_name = {t.name: t for t in types}
        used = {name for t in types for name in t.taxonomies}
        self.taxonomies = {t.name: t for t in client.taxonomies() if t.name in used}
        self.users = {}
        for user in client.users():
            try:
                self.users[user["id"]] = rest.author(user)
            except (KeyError, TypeError, ValueError) as error:
                self._skipped("user", user, error)
        self.logins = {user_id: author.login for user_id, author in self.users.items()}
        self.term_records, self.terms = self._terms()
        known = self._known_posts()
        # By type, the posts a listing or the counts found WordPress shows, and its count.
        listed: dict[str, set[int]] = {}
        counted: dict[str, int] = {}
        for post_type in types:
            name = post_type.name
            total = client.total(post_type)
            started = client.server_time or utcnow()
            cursor = _moment(self.cursors.get(name))
            if cursor is None:
                # The first run of this type: its ids, then its posts by id, 100 a
                # request (WordPress finds them by key, where paging in order of change
                # sorts them all again for each page). A run cut short resumes with those
                # this site lacks; what changes meanwhile, the next run reads.
                self.done.read[name] = 0
                listed[name] = ids = set(client.ids(post_type))
                counted[name] = len(ids)
                self._fetch(by_name, post_type, sorted(ids - known))
                self._start_cursor(name, started)
                continue
            # A second before: WordPress asks for later posts only, and another post may
            # have changed in the cursor's second.
            after = cursor - timedelta(seconds=1)
            changed = list(client.posts(post_type, after=after))
            if client.auth:  # a post trashed comes in trashed, as an export has it
                changed += client.posts(post_type, after=after, trash=True)
                # One order of change, so that the cursor each batch moves to is passed
                # by every post before it.
                changed.sort(key=_modified)
            self.seen |= {found.get("id") for found in changed if isinstance(found, dict)}
            self.done.read[name] = len(changed)
            for start in range(0, len(changed), CHUNK):
                self._import(by_name, post_type, changed[start : start + CHUNK], started)
            if self._listing_due(name):
                listed[name] = ids = set(client.ids(post_type))
                counted[name] = len(ids)
                self._fetch(by_name, post_type, sorted(ids - known - self.seen))
            elif not self._consistent(name, total):
                # A post this site has is gone from WordPress, or WordPress shows one
                # this site lacks, and no date of change says which: found by counts.
                gone, lacking = self._bisect(post_type, total)
                self.bisected.add(name)
                listed[name] = (self._our_ids(name) - gone) | lacking
                counted[name] = total
                self._fetch(by_name, post_type, sorted(lacking - self.seen))
        self._prune(listed, counted, {t.name for t in types})

    def _fetch(
        self, by_name: dict[str, rest.PostType], post_type: rest.PostType, ids: list[int]
    ) -> None:
        """The posts ``ids`` of ``post_type``, read and imported a batch at a time."""
        for start in range(0, len(ids), CHUNK):
            found = list(self.client.posts_by_id(post_type, ids[start : start + CHUNK]))
            self.seen |= {f.get("id") for f in found if isinstance(f, dict)}
            self.done.read[post_type.name] += len(found)
            self._import(by_name, post_type, found, None)

    def _start_cursor(self, name: str, started: datetime) -> None:
        """A type read whole: the next run reads what changed after ``started``."""
        moment = started.isoformat()
        with self.site.sessions.begin() as session:
            row = session.get_one(WordPressSync, self.done.source)
            row.cursors = {**row.cursors, name: moment}
        self.cursors[name] = moment

    def _listing_due(self, name: str) -> bool:
        """Whether ``name``'s ids were never listed, or not for ``LISTING_EVERY``."""
        last = self.listings.get(name)
        if not isinstance(last, dict) or (at := _moment(last.get("at"))) is None:
            return True
        return utcnow() - at > LISTING_EVERY

    def _consistent(self, name: str, total: int) -> bool:
        """Whether WordPress's count of ``name`` posts (``total``, read before this run
        imported them) is this site's of them from it plus the gap found at the last
        listing (the posts this site does not take)."""
        return bool(total - self._ours(name) == self.listings[name].get("gap"))

    def _bisect(self, post_type: rest.PostType, total: int) -> tuple[set[int], set[int]]:
        """The posts this site has from WordPress that it no longer shows, and those it
        shows that this site lacks: spans of dates of change whose counts differ, halved
        (at the median of this site's posts in them) until a span's posts fit in a
        page, which is listed. Of two halves only the first is counted: the second's
        count is what is left of the whole's (``total``: every date's). Past
        ``MAX_SPANS`` counts, spans are listed whole."""
        times = self._times(post_type.name)
        moments = [moment for moment, _ in times]
        gone: set[int] = set()
        lacking: set[int] = set()
        spans: list[tuple[datetime, datetime, int]] = [(EARLIEST, LATEST, total)]
        counts = 0
        while spans:
            first, last, there = spans.pop()
            low, high = bisect_left(moments, first), bisect_right(moments, last)
            ours = {post_id for _, post_id in times[low:high]}
            if there == len(ours):
                continue
            if there <= rest.PER_PAGE or first == last or counts > MAX_SPANS:
                found = set(self.client.ids(post_type, (first, last)))
                gone |= ours - found
                lacking |= found - ours
                continue
            if high - low >= 2:
                middle = moments[(low + high) // 2 - 1]
            else:
                middle = first + (last - first) / 2
            middle = max(first, min(middle.replace(microsecond=0), last - SECOND))
            before = self.client.total(post_type, (first, middle))
            counts += 1
            spans += [(first, middle, before), (middle + SECOND, last, there - before)]
        return gone, lacking

    def _times(self, name: str) -> list[tuple[datetime, int]]:
        """This site's posts of type ``name`` from WordPress that it lists to this run,
        by date of change (to the second), as (moment, WordPress id)."""
        with self.site.sessions() as session:
            rows = session.execute(
                self._posts_here(select(Post.modified_at, ImportedObject.source_id), name)
            ).all()
        return sorted(
            (moment.replace(microsecond=0), int(i))
            for moment, i in rows
            if i.isdigit() and i.isascii()
        )

    def _our_ids(self, *names: str) -> set[int]:
        """The WordPress ids of this site's posts of the types ``names`` from it."""
        with self.site.sessions() as session:
            query = self._posts_here(select(ImportedObject.source_id), *names, listed=False)
            found = session.scalars(query)
            return {int(i) for i in found if i.isdigit() and i.isascii()}

    def _ours(self, name: str) -> int:
        """This site's posts of type ``name`` from this WordPress, of the statuses
        WordPress lists to this run."""
        with self.site.sessions() as session:
            return int(session.scalar(self._ours_query(name)) or 0)

    def _ours_query(self, name: str) -> Any:
        return self._posts_here(select(func.count()), name)

    def _posts_here(self, columns: Any, *names: str, listed: bool = True) -> Any:
        """``columns`` of this site's posts of the types ``names`` from this WordPress;
        ``listed``: of the statuses WordPress lists to this run."""
        query = (
            columns.select_from(ImportedObject)
            .join(Post, Post.id == ImportedObject.object_id)
            .where(
                ImportedObject.source == self.done.source,
                ImportedObject.kind == "post",
                Post.type.in_(names),
            )
        )
        return query.where(Post.status.in_(self.statuses)) if listed else query

    # Reading --------------------------------------------------------------------------

    def _terms(self) -> tuple[list[wxr.WpTerm], dict[str, dict[int, tuple[str, str]]]]:
        records: list[wxr.WpTerm] = []
        terms: dict[str, dict[int, tuple[str, str]]] = {}
        for name, taxonomy in sorted(self.taxonomies.items()):
            found = [t for t in self.client.terms(taxonomy) if isinstance(t, dict)]
            slugs = {t["id"]: t["slug"] for t in found if "id" in t and "slug" in t}
            terms[name] = {}
            for data in found:
                try:
                    record = rest.term(name, data, slugs)
                except (KeyError, TypeError, ValueError) as error:
                    self._skipped(taxonomy.rest_base, data, error)
                    continue
                records.append(record)
                terms[name][data["id"]] = (record.slug, record.name)
        return records, terms

    def _items(self, found: Iterable[Any], kind: str) -> Iterator[wxr.WpItem]:
        for data in found:
            self.line += 1
            try:
                if not isinstance(data, dict):
                    raise ValueError("not an object")
                if kind == "media":
                    yield rest.attachment(data, self.line)
                else:
                    yield rest.item(data, self.line, self.logins, self.terms, self.taxonomies)
            except (KeyError, TypeError, ValueError) as error:
                self._skipped(kind, data, error)

    def _skipped(self, kind: str, data: Any, error: Exception) -> None:
        name = data.get("id") if isinstance(data, dict) else None
        what = f"{kind} {name if name is not None else '(no id)'}: {error!r} does not parse"
        log.warning("WordPress sync: %s; left out", what)
        self.done.skipped.append(what)

    def _known_posts(self) -> set[int]:
        with self.site.sessions() as session:
            found = session.scalars(
                select(ImportedObject.source_id).where(
                    ImportedObject.source == self.done.source, ImportedObject.kind == "post"
                )
            )
            return {int(i) for i in found if i.isdigit() and i.isascii()}

    # Importing ------------------------------------------------------------------------

    def _import(
        self,
        by_name: dict[str, rest.PostType],
        post_type: rest.PostType,
        chunk: list[Any],
        started: datetime | None,
    ) -> None:
        """Import ``chunk`` with what it needs and, unless it was fetched by id (no
        ``started``), move the type's cursor forward to its last change: never past
        ``started`` (WordPress's clock when the listing began), since a post WordPress
        scheduled, or dated, has its date of change ahead of the clock."""
        items = list(self._items(chunk, post_type.rest_base))
        ids = {item.post_id for item in items}
        self.synced |= {i for i in ids if i is not None}
        ancestors = self._ancestors(by_name, items, ids)
        everything = ancestors + items
        featured = sorted(
            {int(i.meta["_thumbnail_id"]) for i in everything if "_thumbnail_id" in i.meta}
        )
        posts = sorted(i.post_id for i in everything if i.post_id is not None)
        media = list(self._items(self.client.media(posts, featured), "media"))
        records: list[wxr.Record] = [self.channel]
        creators = {i.creator for i in everything}
        records += [a for a in self.users.values() if a.login in creators]
        records += self.term_records
        records += media
        records += everything
        cursor = None
        if started is not None:
            changes = [m for i in items if (m := _moment(i.post_modified_gmt)) is not None]
            cursor = min(max(changes, default=started), started)
            before = _moment(self.cursors.get(post_type.name))
            if before is not None and cursor <= before:
                cursor = None
        with self.site.sessions.begin() as session:
            report = import_records(
                session,
                lambda: nullcontext(records),
                self.site.import_validator,
                post_pattern=self.post_pattern,
                keep_going=True,
            )
            row = session.get_one(WordPressSync, self.done.source)
            row.running_until = utcnow() + LEASE
            if cursor is not None:
                moment = cursor.isoformat()
                row.cursors = {**row.cursors, post_type.name: moment}
                self.cursors[post_type.name] = moment
        self.done.add(report)

    def _ancestors(
        self, by_name: dict[str, rest.PostType], items: list[wxr.WpItem], ids: set[int | None]
    ) -> list[wxr.WpItem]:
        """The ancestors of ``items`` that are not among them, outermost first."""
        found: list[wxr.WpItem] = []
        generation = items
        for _ in range(MAX_DEPTH):
            wanted: dict[str, set[int]] = {}
            for item in generation:
                if item.post_parent and item.post_parent not in ids:
                    wanted.setdefault(item.post_type, set()).add(item.post_parent)
            if not wanted:
                break
            generation = []
            for kind, parents in sorted(wanted.items()):
                if kind not in by_name:
                    continue
                post_type = by_name[kind]
                generation += self._items(
                    self.client.posts_by_id(post_type, sorted(parents)), post_type.rest_base
                )
            ids |= {item.post_id for item in generation}
            found = generation + found
        return found

    def _prune(self, listed: dict[str, set[int]], counted: dict[str, int], types: set[str]) -> None:
        """Delete what this WordPress no longer shows: the posts of the types listed
        whose id was not, those of types it no longer has, the terms of no list, the
        authors left with no post. Then note, for each type listed, the gap between
        WordPress's count and this site's (``_consistent``)."""
        source = self.done.source
        with self.site.sessions() as session:
            authors = set(
                session.scalars(
                    select(ImportedObject.source_id).where(
                        ImportedObject.source == source, ImportedObject.kind == "author"
                    )
                )
            )
        keep = self._our_ids(*sorted(types - set(listed)))
        for ids in listed.values():
            keep |= ids
        records: list[wxr.Record] = [self.channel]
        records += [a for a in self.users.values() if _author_slug(a) in authors]
        records += self.term_records
        with self.site.sessions.begin() as session:
            report = import_records(
                session,
                lambda: nullcontext(records),
                self.site.import_validator,
                prune=True,
                keep_going=True,
                listed=keep | self.synced,
            )
            session.flush()
            now = utcnow().isoformat()
            for name in listed:
                ours = session.scalar(self._ours_query(name)) or 0
                # When its ids were last listed (not found by counts: ``_bisect``).
                at = self.listings[name]["at"] if name in self.bisected else now
                self.listings[name] = {"gap": counted[name] - ours, "at": at}
            row = session.get_one(WordPressSync, source)
            row.listings = dict(self.listings)
        self.done.add(report)


def _author_slug(author: wxr.WpAuthor) -> str:
    from ..content.slugs import slugify

    return slugify(author.login, "")


def _modified(found: Any) -> str:
    return str(found.get("modified_gmt") or "") if isinstance(found, dict) else ""


def _moment(value: str | None) -> datetime | None:
    """A cursor, or a date of an export's record (UTC), as a moment; None for none."""
    if not value or value == wxr.NO_DATE:
        return None
    try:
        found = datetime.fromisoformat(value)
    except ValueError:
        return None
    return found.replace(tzinfo=UTC) if found.tzinfo is None else found
