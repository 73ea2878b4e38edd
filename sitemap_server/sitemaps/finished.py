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
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import time
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

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
from ..models import FinishedDocument
from .failures import OUTAGE
from .maintenance import MAINTAINER, try_lock
from .reader import ReadState
from .responses import Render, Rendered, document_etag, pack
from .views import (
    index_document,
    index_names,
    index_parts,
    index_renderer,
    page_document,
    page_renderer,
    text_pages,
)

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


def load(site: Site, state: ReadState, what: tuple[Any, ...], names: list[str]) -> Rendered | None:
    """The document ``what`` (of the sitemaps ``names``) as of ``state``, if the
    maintainer stored it at that version or one before that (and no change since
    replaced it)."""
    with site.reader.versions_engine.connect() as conn:
        row = conn.execute(STORED, {"key": digest(site, state, what)}).first()
    if row is None or not _shows(state, row.versions, names):
        return None
    versions = state.version_of(*names)
    etag = document_etag(what, versions)
    return Rendered(None, row.gzipped, row.size, etag, state.changed_at(*names))


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
        session.execute(delete(FinishedDocument))
        return
    try:
        with session.begin_nested():
            _store_changed(session, tags, site)
    except OUTAGE:
        raise
    except Exception:
        log.exception("storing the finished documents failed; they will be rendered on request")
        session.execute(delete(FinishedDocument))


def _store_changed(session: Session, tags: list[str], site: Site) -> None:
    if ALL_TAG in tags:
        session.execute(delete(FinishedDocument))
        return
    for tag in tags:
        if tag.startswith("provider:"):
            whole = tag.removeprefix("provider:")
            session.execute(delete(FinishedDocument).where(FinishedDocument.provider == whole))
    conn = session.connection()
    state = site.reader.state(conn)
    if state.site.private:
        session.execute(delete(FinishedDocument))
        return
    for tag in tags:
        if tag == INDEX_TAG:
            _store_index(conn, site, state)
            continue
        document = tag.removeprefix("doc:")
        if not (tag.startswith("doc:") and PAGE_DOCUMENT.fullmatch(document)):
            continue
        made = _rendering(site, state, document)
        if made is not None:
            what, names, render = made
            _store(conn, site, state, document, what, names, render, names[0])


def _store_index(conn: Connection, site: Site, state: ReadState) -> None:
    """Every part of the index (there is one below 50,000 sitemap pages)."""
    part = 1
    while _store(conn, site, state, index_name(part), *_index_rendering(site, state, part)):
        part += 1
    # A part that is no more.
    conn.execute(
        delete(FinishedDocument).where(
            FinishedDocument.name.like("sitemap_index%"),
            FinishedDocument.name.not_in([index_name(n) for n in range(1, part)]),
        )
    )


def _store(
    conn: Connection,
    site: Site,
    state: ReadState,
    name: str,
    what: tuple[Any, ...],
    names: list[str],
    render: Render,
    provider: str | None = None,
) -> bool:
    """Render the document ``name`` (named ``what`` for the caches) as of ``state`` and
    store it in place of its rows: whether it exists."""
    conn.execute(delete(FinishedDocument).where(FinishedDocument.name == name))
    pieces = render(conn, state)
    if pieces is None:
        return False
    versions = state.version_of(*names)
    rendered = pack(
        (piece.encode("utf-8") for piece in pieces),
        document_etag(what, versions),
        state.changed_at(*names),
    )
    conn.execute(
        insert(FinishedDocument),
        [
            {
                "key": digest(site, state, what),
                "versions": {name: state.versions.get(name, (0,))[0] for name in names},
                "name": name,
                "provider": provider,
                "etag": rendered.etag,
                "last_modified": rendered.last_modified,
                "size": rendered.size,
                "gzipped": rendered.gzipped,
            }
        ],
    )
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
        for name in missing(conn, site, state):
            made = _rendering(site, state, name)
            if made is not None:
                what, names, render = made
                page_of = None if INDEX_DOCUMENT.fullmatch(name) else names[0]
                stored += _store(conn, site, state, name, what, names, render, page_of)
            if time.monotonic() >= deadline:
                break
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
        what, shown, _render = made
        versions = stored.get(digest(site, state, what))
        if versions is None or not _shows(state, versions, shown):
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
        what, names, render = made
        if key != digest(site, state, what) or not _shows(state, versions, names):
            continue  # not what this process would take: other settings, a later version
        pieces = render(conn, state)
        rendered = "".join(pieces).encode() if pieces is not None else None
        if rendered != gzip.decompress(gzipped):
            found.append(name)
    return sorted(found)


def _index_rendering(
    site: Site, state: ReadState, part: int
) -> tuple[tuple[Any, ...], list[str], Render]:
    """What names part ``part`` of the index, the sitemaps it shows and how to render it."""
    names = index_names(state.site)
    return index_document(site, part), names, index_renderer(site, names, part)


def _rendering(
    site: Site, state: ReadState, name: str
) -> tuple[tuple[Any, ...], list[str], Render] | None:
    """What names the document ``name`` for the caches, the providers it shows and how
    to render it; None for a document that no longer has a sitemap."""
    if INDEX_DOCUMENT.fullmatch(name):
        return _index_rendering(site, state, int(name.removeprefix(INDEX) or 1))
    provider_name, _, number = name.rpartition("-sitemap")
    provider = state.site.provider(provider_name)
    if provider is None:
        return None
    page = int(number or 1)
    return (
        page_document(site, provider_name, page),
        [provider_name],
        page_renderer(site, provider, page),
    )
