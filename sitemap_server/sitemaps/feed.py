"""The Atom feed of the most recently changed listed URLs (S-313): ``/sitemap.atom``.

Search engines take an RSS or Atom feed as a sitemap, and Google recommends one beside
the XML sitemaps for freshness: it is small, fetched often, and names what changed last.
Its entries are the entries of every sitemap with a lastmod, the newest first,
``sitemap_server.feed.entries`` of them, each one's URL as its id, link and title.

It is a document like the others (``responses.sitemap_response``): it depends on every
provider's version, so it changes when the maintainer applies a change, and it has its
ETag and 304, gzip and the robots header. Each provider's newest entries are one range
of ``ix_sitemap_entries_provider_lastmod`` read backwards, merged here: a request reads
at most ``entries`` rows a sitemap, whatever the size of the site.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, tzinfo
from typing import Any

from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy import Integer, bindparam, select
from sqlalchemy.engine import Connection

from ..documents import FEED, FEED_PATH, FEED_TAG
from ..models import SitemapEntry, SiteSettings
from .reader import ReadState
from .responses import sitemap_response, tag
from .xml import w3c, xml_text

ATOM_NS = "http://www.w3.org/2005/Atom"
# Atom needs a date for the feed: an empty site's feed carries this one.
NEVER = datetime(1970, 1, 1, tzinfo=UTC)

# One sitemap's newest entries (by ``ix_sitemap_entries_provider_lastmod``, read
# backwards), newest first; an entry without a date says nothing of when it changed.
NEWEST = (
    select(SitemapEntry.lastmod, SitemapEntry.path)
    .where(SitemapEntry.provider == bindparam("name"), SitemapEntry.lastmod.is_not(None))
    .order_by(SitemapEntry.lastmod.desc(), SitemapEntry.key.desc(), SitemapEntry.part.desc())
    .limit(bindparam("take", type_=Integer))
)
TITLE = select(SiteSettings.title)


def feed_view(request: Request) -> Response:
    site = request.read_state.site
    tag(request, FEED_TAG)
    names = [] if site.private else [p.name for p in site.providers]
    take: int = request.registry.settings["sitemap_server.feed.entries"]

    def render(conn: Connection, state: ReadState) -> Iterable[str]:
        rows = newest(conn, names, take)
        updated = rows[0][0] if rows else (state.changed_at(*names) or NEVER)
        title = conn.scalar(TITLE) or ""
        return atom(state.site.site_url, title, rows, updated, state.site.zone)

    # The number of entries names the document too: processes that list another number
    # serve another document under another ETag.
    return sitemap_response(request, ("feed", take), names, render, FEED)


def newest(conn: Connection, names: list[str], take: int) -> list[tuple[datetime, str]]:
    """The ``take`` newest (lastmod, path) of the sitemaps ``names``, newest first (in a
    tie, in the order of the sitemaps, then of their entries), each URL once: a post in
    the news sitemap is in its type's too, with its newest date first.

    A URL among the ``take`` newest is among its sitemap's ``take`` newest (the ones
    before it there are other URLs, newer), so reading that many a sitemap is enough."""
    found: list[tuple[datetime, str]] = []
    for name in names:
        found.extend(
            (row.lastmod, row.path) for row in conn.execute(NEWEST, {"name": name, "take": take})
        )
    found.sort(key=lambda row: row[0], reverse=True)  # stable: ties keep their order
    seen: set[str] = set()
    unique = []
    for lastmod, path in found:
        if path not in seen:
            seen.add(path)
            unique.append((lastmod, path))
    return unique[:take]


def atom(
    site_url: str, title: str, rows: list[tuple[datetime, str]], updated: datetime, zone: tzinfo
) -> Iterator[str]:
    """The feed in pieces: its head, then an entry a row."""
    site = xml_text(site_url)
    name = xml_text(title or site_url)
    yield (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<feed xmlns="{ATOM_NS}">\n'
        f"<id>{site}{FEED_PATH}</id>\n"
        f"<title>{name}: recently changed</title>\n"
        f"<updated>{w3c(updated, zone)}</updated>\n"
        f'<link rel="self" type="application/atom+xml" href="{site}{FEED_PATH}"/>\n'
        f'<link rel="alternate" href="{site}/"/>\n'
        f"<author><name>{name}</name></author>\n"
        "<generator>sitemap-server</generator>\n"
    )
    yield "".join(_entry(site, path, lastmod, zone) for lastmod, path in rows)
    yield "</feed>\n"


def _entry(site: str, path: str, lastmod: Any, zone: tzinfo) -> str:
    url = site + xml_text(path)
    return (
        f"<entry><id>{url}</id><title>{url}</title>"
        f'<link href="{url}"/><updated>{w3c(lastmod, zone)}</updated></entry>\n'
    )
