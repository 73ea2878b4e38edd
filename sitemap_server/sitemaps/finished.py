"""Finished documents: the bytes of each document a change made, stored with the change.

A process renders a document the first time it is asked for a version of it: the page's
stored ``<url>`` fragments read and joined, gzipped (``responses.py``). Each process, on
each host, did so for itself after every change. Now the maintainer does it once, in the
transaction of the pass that changed the document: it hears the cache tags of what it
changed (``sitemap_documents_changed``, the hook purges use too) and stores the gzipped XML
of each page and index part they name in ``finished_documents``. A process that has not
rendered that version reads the row instead: one indexed read of a blob.

- Only what changed is stored: a post edit stores the pages that list it (its post page,
  its author's and its terms' pages when their dates moved), the index and nothing else.
  A sitemap rebuilt whole (``provider:NAME``) and a change of every document
  (``sitemaps``) store nothing and drop what they made stale: the next request renders
  them as before.
- A row is found by a digest of everything that names its rendering beside the content
  (``digest``): the document, the site URL and the site's version, the output settings
  and the namespaces of the plugins loaded. A process that would render other bytes
  (other plugins, another ``xsl_instruction``) never finds it and renders for itself.
- A row records the version of each sitemap it shows. Every pass that changes the
  document replaces its row in the transaction that makes the new version, so a row is
  what the document shows at any later version, until the next row: an edit on one page
  of a sitemap makes a new version of the sitemap, and every other page is still served
  from its row. A request that read an older version than the row's renders for itself.
- What no change stored (every document after a sitemap was rebuilt whole or a change of
  every document, and on a site built and not changed since) the worker stores when it
  has nothing to apply (``fill``), a moment at a time under the maintainer's lock.
- A maintainer that does not store them (``finished_documents`` off in its ini file)
  drops them all, so that none is left behind a change.
- The XML and its gzip file are stored (one gzipped body); the text form, the pages for
  people and the feed are rendered as before.
- Every write of rows is numbered (``FinishedSequence``), in the order they commit. A
  server process's versions watch reads, after each change, the rows stored since it last
  looked and keeps them (``Recent``): the first request of a document a change stored is
  answered from memory, with no query. A write that deletes rows it does not replace says
  so in the same row, and each process then forgets what it kept.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, bindparam, delete, insert, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session
from sqlalchemy.sql import ColumnElement

from ..documents import (
    ALL_TAG,
    INDEX,
    INDEX_DOCUMENT,
    INDEX_TAG,
    PAGE_DOCUMENT,
    index_name,
    sitemap_name,
)
from ..hookspecs import hookimpl
from ..models import SITE, FinishedDocument, FinishedSequence
from .failures import OUTAGE
from .maintenance import MAINTAINER, try_lock
from .reader import ReadState
from .rendering import SITE_MARK
from .responses import LeastRecentlyUsed, Render, document_etag, pack
from .touched import REPLACED
from .views import (
    index_document,
    index_names,
    index_parts,
    index_renderer,
    page_document,
    page_renderer,
    text_pages,
)
from .xml import xml_text

if TYPE_CHECKING:
    from ..site import Site

log = logging.getLogger(__name__)

# How long one ``fill`` renders and stores at most: the maintainer's lock is held
# meanwhile, so a change that comes waits at most about this long more to be applied.
FILL_SECONDS = 0.05


# A stored document, by its digest: built once (building costs more than running it).
STORED = select(FinishedDocument.gzipped, FinishedDocument.size, FinishedDocument.versions).where(
    FinishedDocument.key == bindparam("key")
)


def digest(site: Site, state: ReadState, what: tuple[Any, ...]) -> str:
    """The name of a rendering of the document ``what`` as of ``state``, but for the
    versions of the sitemaps it shows: the site URL and version, and what else this
    process renders with."""
    made_with = (
        what,
        state.site.site_url,
        state.version_of()[0],
        state.site.output_key,
        sorted(site.namespaces.items()),
    )
    return hashlib.blake2b(repr(made_with).encode(), digest_size=20).hexdigest()


def load(
    site: Site, state: ReadState, what: tuple[Any, ...], names: list[str]
) -> tuple[bytes, int] | None:
    """The document ``what`` (of the sitemaps ``names``) as of ``state``, gzipped, and
    its plain size, if the maintainer stored it at that version or one before that (and
    no change since replaced it): from the rows this process keeps (``Recent``), else
    from the database."""
    key = digest(site, state, what)
    recent = site.recent_documents
    kept = recent.get(key, state, names) if recent is not None else None
    if kept is not None:
        return kept
    with site.reader.versions_engine.connect() as conn:
        row = conn.execute(STORED, {"key": key}).first()
    if row is None or not _shows(state, row.versions, names):
        return None
    return row.gzipped, row.size


def _shows(state: ReadState, stored: dict[str, int], names: list[str]) -> bool:
    """Whether a row stored at the versions ``stored`` of the sitemaps ``names`` shows
    them as of ``state``: the same sitemaps, none at a version ``state`` has not seen."""
    if set(stored) != set(names):
        return False
    return all(number <= state.versions.get(name, (0,))[0] for name, number in stored.items())


@hookimpl
def sitemap_documents_changed(session: Session, tags: list[str], site: Site) -> None:
    """Store what the pass changed, in its transaction. If that fails, nothing stored
    stays (the pass goes on: the documents are rendered on request, as without it)."""
    if not site.finishes_documents:
        # Another maintainer may have stored some (another ini file): none may outlive
        # a change it did not store.
        drop(session.connection())
        return
    try:
        with session.begin_nested():
            _store_changed(session, tags, site)
    except OUTAGE:
        raise
    except Exception:
        log.exception("storing the finished documents failed; they will be rendered on request")
        drop(session.connection())


def _store_changed(session: Session, tags: list[str], site: Site) -> None:
    conn = session.connection()
    if ALL_TAG in tags:
        drop(conn)
        return
    for tag in tags:
        if tag.startswith("provider:"):
            drop(conn, FinishedDocument.provider == tag.removeprefix("provider:"))
    state = site.reader.state(conn)
    if state.site.private:
        drop(conn)
        return
    writes = Writes(site, state)
    pages = [
        made
        for tag in tags
        if tag.startswith("doc:") and PAGE_DOCUMENT.fullmatch(tag.removeprefix("doc:"))
        if (made := _rendering(site, state, tag.removeprefix("doc:"))) is not None
    ]
    replaced = session.info.get(REPLACED) or {}
    edited = [made for made in pages if replaced.get(made.provider)]
    before = _rows(conn, [made.name for made in edited])
    for made in pages:
        row = before.get(made.name)
        if row is None or not _edited(writes, row, made, replaced[made.provider]):
            _store(writes, conn, made)
    if INDEX_TAG in tags:
        _store_index(writes, conn)
    writes.write(conn)


def _rows(conn: Connection, names: list[str]) -> dict[str, Any]:
    """The stored rows of the documents ``names``, by name."""
    if not names:
        return {}
    rows = conn.execute(
        select(
            FinishedDocument.name,
            FinishedDocument.key,
            FinishedDocument.versions,
            FinishedDocument.gzipped,
        ).where(FinishedDocument.name.in_(names))
    )
    return {row.name: row for row in rows}


def _store_index(writes: Writes, conn: Connection) -> None:
    """Every part of the index (there is one below 50,000 sitemap pages), and none past
    the last."""
    part = 1
    while _store(writes, conn, _index_rendering(writes.site, writes.state, part)):
        part += 1
    writes.past_index = part


class Writes:
    """What a pass (or ``fill``) stores, written at once: the rows of every document it
    stores or finds gone deleted, and the new ones inserted, two statements however
    many."""

    def __init__(self, site: Site, state: ReadState) -> None:
        self.site = site
        self.state = state
        self.gone: set[str] = set()
        self.rows: list[dict[str, Any]] = []
        # The first part of the index past its last, when it was stored.
        self.past_index: int | None = None

    def put(self, made: Document, pieces: Iterable[bytes]) -> None:
        """``pieces``, the XML of the document ``made``, in place of its rows."""
        state = self.state
        versions = state.version_of(*made.shows)
        rendered = pack(pieces, document_etag(made.what, versions), state.changed_at(*made.shows))
        self.gone.add(made.name)
        self.rows.append(
            {
                "key": digest(self.site, state, made.what),
                "versions": {name: state.versions.get(name, (0,))[0] for name in made.shows},
                "name": made.name,
                "provider": made.provider,
                "etag": rendered.etag,
                "last_modified": rendered.last_modified,
                "size": rendered.size,
                "gzipped": rendered.gzipped,
            }
        )

    def write(self, conn: Connection) -> None:
        gone: list[ColumnElement[bool]] = []
        if self.gone:
            gone.append(FinishedDocument.name.in_(sorted(self.gone)))
        if self.past_index is not None:  # and the parts of the index past its last
            parts = [index_name(n) for n in range(1, self.past_index)]
            name = FinishedDocument.name
            gone.append(and_(name.like(f"{INDEX}%"), name.not_in(parts)))
        deleted: set[str] = set()
        if gone:
            deleted = set(
                conn.scalars(
                    delete(FinishedDocument).where(or_(*gone)).returning(FinishedDocument.key)
                )
            )
        if not self.rows and not deleted:
            return
        # A row deleted and not stored again under its key (a document gone, or stored
        # under another digest by a maintainer with other settings): the processes must
        # forget what they keep.
        number = _number(conn, dropped=bool(deleted - {row["key"] for row in self.rows}))
        if self.rows:
            conn.execute(insert(FinishedDocument), [{**row, "stored": number} for row in self.rows])


def drop(conn: Connection, *where: ColumnElement[bool]) -> None:
    """Delete the rows ``where`` says (every row, without), in a write numbered as one
    that dropped rows: every process forgets the rows it keeps (``Recent``)."""
    conn.execute(delete(FinishedDocument).where(*where))
    _number(conn, dropped=True)


def _number(conn: Connection, dropped: bool = False) -> int:
    """The number of this write, the last stored plus one (``FinishedSequence``), marked
    as one that ``dropped`` rows. The sequence's row stays locked until the transaction
    ends, so the numbers follow the order of the commits."""
    stored = FinishedSequence.stored
    values: dict[str, Any] = {"stored": stored + 1}
    if dropped:
        values["dropped"] = stored + 1  # the value before this update
    number = conn.scalar(
        update(FinishedSequence).where(FinishedSequence.id == 1).values(values).returning(stored)
    )
    if number is None:  # the row was deleted (it is the migration's)
        conn.execute(insert(FinishedSequence).values(id=1, stored=1, dropped=1))
        return 1
    return int(number)


def _edited(writes: Writes, row: Any, made: Document, replaced: dict[str, str]) -> bool:
    """Store the page ``made`` as its ``row`` held it before this pass, each of its
    fragments that the pass replaced in place (``touched.replaced``) replaced in it:
    whether it could. It can when the row was what the page showed (no pass since
    replaced it, the same settings) and holds each old fragment it has once: a fragment
    names its URL, which no other entry of the sitemap has. Decompressing, replacing and
    compressing costs a fraction of reading the page's entries and rendering them."""
    state = writes.state
    if row.key != digest(writes.site, state, made.what):
        return False
    if not _shows(state, row.versions, made.shows):
        return False
    site_url = xml_text(state.site.site_url)
    body = gzip.decompress(row.gzipped)
    edited = 0
    for old, new in replaced.items():
        before = old.replace(SITE_MARK, site_url).encode()
        found = body.count(before)
        if found > 1:
            return False
        if found:
            body = body.replace(before, new.replace(SITE_MARK, site_url).encode())
            edited += 1
    if not edited:
        return False
    writes.put(made, [body])
    return True


def _store(writes: Writes, conn: Connection, made: Document) -> bool:
    """Render the document ``made`` and store it in place of its rows: whether it
    exists (its rows are dropped when not)."""
    pieces = made.render(conn, writes.state)
    if pieces is None:
        writes.gone.add(made.name)
        return False
    writes.put(made, (piece.encode() for piece in pieces))
    return True


def fill(site: Site, seconds: float = FILL_SECONDS) -> int | None:
    """Store documents that have no row for the versions now (after a sitemap was rebuilt
    whole, or a change of every document, or on a site never changed since it was built)
    for about ``seconds``, in one transaction under the maintainer's lock, so no pass
    changes them meanwhile: how many were stored, or None when another maintainer is at
    work. The worker calls it when it has nothing to apply (``Worker.run``)."""
    if not site.finishes_documents:
        return 0
    deadline = time.monotonic() + seconds
    stored = 0
    with site.sessions.begin() as session:
        if not try_lock(session, MAINTAINER, wait=False):
            return None
        conn = session.connection()
        state = site.reader.state(conn)
        if state.site.private:
            return 0
        writes = Writes(site, state)
        for name in missing(conn, site, state):
            made = _rendering(site, state, name)
            if made is not None:
                stored += _store(writes, conn, made)
            if time.monotonic() >= deadline:
                break
        writes.write(conn)
    return stored


def missing(conn: Connection, site: Site, state: ReadState) -> list[str]:
    """The documents (index parts, then pages) with no row this process would serve as
    of ``state``."""
    names = index_names(state.site)
    documents = [index_name(part) for part in range(1, index_parts(conn, names) + 1)]
    documents += [sitemap_name(provider, page) for provider, page in text_pages(conn, names)]
    stored = dict(conn.execute(select(FinishedDocument.key, FinishedDocument.versions)).all())
    found = []
    for name in documents:
        made = _rendering(site, state, name)
        if made is None:
            continue
        versions = stored.get(digest(site, state, made.what))
        if versions is None or not _shows(state, versions, made.shows):
            found.append(name)
    return found


def differing(session: Session, site: Site) -> list[str]:
    """The stored documents that this process would serve (their digest is the one it
    computes now) and that differ from its rendering of them now (``check``)."""
    conn = session.connection()
    state = site.reader.state(conn)
    rows = conn.execute(
        select(
            FinishedDocument.key,
            FinishedDocument.name,
            FinishedDocument.versions,
            FinishedDocument.gzipped,
        )
    ).all()
    found = []
    for key, name, versions, gzipped in rows:
        made = _rendering(site, state, name)
        if made is None:
            continue
        if key != digest(site, state, made.what) or not _shows(state, versions, made.shows):
            continue  # not what this process would take: other settings, a later version
        pieces = made.render(conn, state)
        rendered = "".join(pieces).encode() if pieces is not None else None
        if rendered != gzip.decompress(gzipped):
            found.append(name)
    return sorted(found)


@dataclass(frozen=True)
class Document:
    """A document as the maintainer stores it: its ``name``, what names it for the caches
    (``what``, its ETag's start), the sitemaps whose versions it ``shows``, how to
    ``render`` it, and the sitemap it is a page of (None: the index)."""

    name: str
    what: tuple[Any, ...]
    shows: list[str]
    render: Render
    provider: str | None


def _index_rendering(site: Site, state: ReadState, part: int) -> Document:
    """Part ``part`` of the index."""
    names = index_names(state.site)
    return Document(
        index_name(part), index_document(site, part), names, index_renderer(site, names, part), None
    )


def _rendering(site: Site, state: ReadState, name: str) -> Document | None:
    """The document ``name``; None for a page of a sitemap that is no more."""
    if INDEX_DOCUMENT.fullmatch(name):
        return _index_rendering(site, state, int(name.removeprefix(INDEX) or 1))
    provider_name, _, number = name.rpartition("-sitemap")
    provider = state.site.provider(provider_name)
    if provider is None:
        return None
    page = int(number or 1)
    return Document(
        name,
        page_document(site, provider_name, page),
        [provider_name],
        page_renderer(site, provider, page),
        provider_name,
    )


@dataclass(frozen=True)
class Kept:
    """A row as a process keeps it (``Recent``)."""

    gzipped: bytes
    size: int
    versions: dict[str, int]

    @property
    def cost(self) -> int:
        return len(self.gzipped)


RECENT_ROWS = select(
    FinishedDocument.key, FinishedDocument.gzipped, FinishedDocument.size, FinishedDocument.versions
).where(FinishedDocument.stored > bindparam("seen"), FinishedDocument.stored <= bindparam("number"))


class Recent:
    """The finished documents stored since this process began to look, kept in memory
    (the least recently used out first past ``max_bytes``): the versions watch reads them
    after each change it hears of (``read``), so the first request of a document a change
    stored reads no row (``get``).

    What it keeps is what the database held when it last looked, or a part of it: every
    write is numbered in the order of the commits, so the rows stored since the number it
    saw last are all it missed, and a write that deleted rows without storing them again
    (``drop``) makes it forget everything. So a kept row serves a request just as the
    database's would, for a request whose versions were read before that look; a request
    that read newer versions (of the document's sitemaps) reads the database."""

    def __init__(self, max_bytes: int) -> None:
        self.lock = threading.Lock()  # a look (``read``) is seen whole or not at all
        self.rows: LeastRecentlyUsed[str, Kept] = LeastRecentlyUsed(max_bytes)
        self.seen: int | None = None  # the number of the last write read
        # The versions read before that look: what a request may be as new as.
        self.as_of: dict[str, int] | None = None

    def read(self, conn: Connection, versions: Sequence[Any]) -> None:
        """Read the rows stored since the last look, on ``conn`` (autocommit), just after
        the sitemap ``versions`` were read on it."""
        numbers = conn.execute(select(FinishedSequence.stored, FinishedSequence.dropped)).first()
        number, dropped = (numbers.stored, numbers.dropped) if numbers is not None else (0, 0)
        seen = self.seen
        forget = seen is None or dropped > seen or number < seen
        rows: Sequence[Any] = ()
        if seen is not None and number > seen:
            # Read after the numbers: every row up to ``number`` is committed.
            rows = conn.execute(RECENT_ROWS, {"seen": seen, "number": number}).all()
        with self.lock:
            if forget:
                self.rows.clear()
            for row in rows:
                self.rows.put(row.key, Kept(row.gzipped, row.size, row.versions))
            self.seen = number
            self.as_of = {row.provider: row.version for row in versions}

    def get(self, key: str, state: ReadState, names: list[str]) -> tuple[bytes, int] | None:
        """The row ``key`` as ``load`` would read it for ``state``, if kept."""
        with self.lock:
            as_of = self.as_of
            if as_of is None:
                return None
            for name in (SITE, *names):
                if state.versions.get(name, (0,))[0] > as_of.get(name, 0):
                    return None  # versions read after the last look
            kept = self.rows.get(key)
        if kept is None or not _shows(state, kept.versions, names):
            return None
        return kept.gzipped, kept.size

    def forget(self) -> None:
        """Keep nothing, and use nothing until the next look."""
        with self.lock:
            self.rows.clear()
            self.seen = self.as_of = None
