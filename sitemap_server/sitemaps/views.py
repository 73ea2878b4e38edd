"""The read path: the index, each provider's pages, the XSL and robots.txt (S-3xx).

A request reads the content versions (one small query); if the client already has that
version it gets a 304, if this process rendered it before it gets the cached bytes,
and otherwise the page row and its entries are read by key range and rendered. Nothing
that decides an answer lives only in this process: the versions are in the database.
The HTTP side (304s, headers, the render cache, 404s) is in ``responses.py``.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from functools import lru_cache
from importlib.resources import files
from itertools import islice
from typing import TYPE_CHECKING, Any

from pyramid.config import Configurator
from pyramid.exceptions import PredicateMismatch
from pyramid.httpexceptions import HTTPMovedPermanently
from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy import Integer, Select, bindparam, case, func, select
from sqlalchemy.engine import Connection

from .. import documents
from ..documents import (
    READ_PATH,
    ROBOTS_TAG,
    STYLESHEETS_TAG,
    TEXT,
    XML,
    beyond,
    canonical,
    css_path,
    document_tags,
    html_url,
    index_name,
    index_path,
    sitemap_name,
    sitemap_url,
)
from ..models import SITE_KEY, SitemapEntry, SitemapPage
from .feed import feed_view
from .pages import IN_PAGE, page_range
from .providers import MAIN_XSL, Provider
from .reader import Reader, ReadState, SiteSnapshot
from .rendering import FRAME, INDEX_FRAME, PIECE_ENTRIES, document, head, template
from .responses import (
    X_ROBOTS_TAG,
    Render,
    not_allowed_view,
    not_found,
    not_found_view,
    sitemap_response,
    tag,
)

if TYPE_CHECKING:
    from ..site import Site

log = logging.getLogger(__name__)

# Pages with more entries are read through a server-side cursor, in batches.
STREAMED_ENTRIES = 5_000


def index_view(request: Request) -> Response:
    number, form = request.matchdict["number"], request.matchdict["form"]
    if beyond(number, documents.MAX_INDEXES):
        return not_found(request, request.path)
    site = request.read_state.site
    target = canonical(number)
    part = target or int(number or "1")
    tag(request, *document_tags(index_name(part)))
    if target is not None:
        return moved(request, site.site_url + index_path(target, form))
    names = index_names(site)
    what = index_document(request.site, part)
    render = index_renderer(request.site, names, part)
    return sitemap_response(request, what, names, render, form, finished=True)


def index_names(site: SiteSnapshot) -> list[str]:
    """The sitemaps the index lists (none while the site is private): the versions it
    shows."""
    return [] if site.private else [p.name for p in site.providers]


def index_document(site: Site, part: int) -> tuple[Any, ...]:
    """What names the XML of part ``part`` of the index (its cache key, its ETag)."""
    return ("index", part, *frame(site))


def index_renderer(site: Site, names: list[str], part: int) -> Render:
    """The XML of part ``part`` of the index of the sitemaps ``names``."""

    def render(conn: Connection, state: ReadState) -> Iterable[str] | None:
        # The pages' stored <sitemap> elements, in the providers' order, this index's part.
        rows = index_part(conn, names, part)
        if part > 1 and not rows:
            return None
        return document(
            INDEX_FRAME,
            (with_url_count(element, entries) for element, entries in rows),
            state.site.site_url,
            lead(site, state, MAIN_XSL, index_name(part)),
        )

    return render


def index_part(conn: Connection, names: list[str], part: int) -> list[Any]:
    """Each page in part ``part`` of the index of the sitemaps ``names``, in the index's
    order: its stored ``<sitemap>`` element and how many URLs it holds."""
    if not names:
        return []
    per_index = documents.SITEMAPS_PER_INDEX
    parameters = {"skip": (part - 1) * per_index, "take": per_index}
    return list(
        conn.execute(index_pages(tuple(names)), {**parameters, "last_page": documents.MAX_PAGES})
    )


def with_url_count(element: str, entries: int) -> str:
    """A page's ``<sitemap>`` element with ``<?urls N?>`` inside: how many URLs the page
    holds, which the views of the index show (crawlers and schemas ignore it)."""
    return element.replace("</sitemap>", f"<?urls {entries}?></sitemap>")


def frame(site: Site) -> tuple[str, ...]:
    """What names a document's XML beside its content: which instructions lead it. The
    ETag of a document without its XSL's instruction is not the one with it (an ini
    change must not answer 304 with the other's bytes in a cache)."""
    return () if names_xsl(site) else ("no-xsl",)


def names_xsl(site: Site) -> bool:
    """Whether documents lead with their XSL's instruction (``xsl_instruction``)."""
    return bool(site.settings["sitemap_server.xsl_instruction"])


def lead(site: Site, state: ReadState, xsl: str, name: str) -> str:
    """What leads the XML of the document ``name`` (``rendering.head``): its stylesheets,
    its page for people, the site's name, and why it lists nothing when it is private."""
    snapshot = state.site
    return head(
        xsl=xsl if names_xsl(site) else None,
        css=css_path(name),
        html=html_url(snapshot.site_url, name),
        title=snapshot.name,
        private=snapshot.private,
    )


def moved(request: Request, location: str) -> Response:
    """A 301 to ``location``, with the sitemaps' robots header and cache policy (and the
    tags of the document it leads to, ``tag``)."""
    response = HTTPMovedPermanently(location=location)
    response.headers["X-Robots-Tag"] = X_ROBOTS_TAG
    response.cache_control = request.site.cache_policy
    return response


def page_view(request: Request) -> Response:
    name = request.matchdict["name"]
    number, form = request.matchdict["number"], request.matchdict["form"]
    if beyond(number, documents.MAX_PAGES):
        return not_found(request, request.path)
    site = request.read_state.site
    target = canonical(number)
    page = target or (int(number) if number else 1)
    tag(request, *document_tags(sitemap_name(name, page)))
    if target is not None:
        return moved(request, sitemap_url(site.site_url, name, target, form))
    provider = site.provider(name)
    if provider is None or (site.private and page > 1):
        return not_found(request, request.path)
    render = page_renderer(request.site, provider, page, form)
    # The text is another document (its own rendering, cached apart); the gzip file is
    # the XML's.
    if form == TEXT:
        return sitemap_response(request, (name, page, TEXT), [name], render, form)
    what = page_document(request.site, name, page)
    return sitemap_response(request, what, [name], render, form, finished=True)


def page_document(site: Site, name: str, page: int) -> tuple[Any, ...]:
    """What names the XML of page ``page`` of sitemap ``name`` (its cache key, its ETag)."""
    return (name, page, *frame(site))


def page_renderer(site: Site, provider: Provider, page: int, form: str = XML) -> Render:
    """Page ``page`` of ``provider``'s sitemap, as XML or (``form`` TEXT) its URLs."""
    name = provider.name
    document_name = sitemap_name(name, page)

    def render(conn: Connection, state: ReadState) -> Iterable[str] | None:
        row = None
        if not state.site.private:
            row = conn.execute(PAGE, {"name": name, "page": page}).first()
        if row is None and (page > 1 or provider.absent_when_empty):
            return None
        if form == TEXT:
            return text_lines(state.site.site_url, page_column(conn, PATHS, name, row))
        return document(
            FRAME,
            page_column(conn, ENTRIES, name, row),
            state.site.site_url,
            lead(site, state, provider.xsl, document_name),
            namespaces=site.namespaces,
        )

    return render


def page_column(conn: Connection, column: Select[Any], name: str, row: Any) -> Iterable[Any]:
    """``column`` (``ENTRIES``, ``PATHS``) of the entries of the page ``row`` describes,
    in order; none for no row (an empty first page)."""
    if row is None:
        return ()
    if row.entries > STREAMED_ENTRIES:
        # Streamed (a server-side cursor on PostgreSQL): a page of 50,000 entries is
        # never a list of 50,000 rows, only the text it becomes.
        return conn.execution_options(stream_results=True, yield_per=1000).scalars(
            column, page_range(name, row)
        )
    # A server-side cursor costs PostgreSQL round trips a small page does not need.
    return conn.scalars(column, page_range(name, row)).all()


def text_lines(site_url: str, paths: Iterable[str]) -> Iterator[str]:
    """A text sitemap: each entry's URL on a line of its own, in pieces. An entry's path
    is a URL's in normal form (no space, no line break: ``sanitize``)."""
    paths = iter(paths)
    while piece := "".join(f"{site_url}{path}\n" for path in islice(paths, PIECE_ENTRIES)):
        yield piece


# The stored fragments of one page: a range of the primary key, in order
# (``pages.IN_PAGE``; ``pages.page_range`` gives its parameters). The LIMIT (the page's
# own count) tells PostgreSQL how few rows it takes: it walks the primary key in order
# (0.6 ms for 1,000 entries) instead of collecting them by a bitmap scan and sorting them
# (1.1 ms). Built once: constructing it for each request cost 0.2 ms.
ENTRIES = (
    select(SitemapEntry.xml)
    .where(*IN_PAGE)
    .order_by(SitemapEntry.provider, SitemapEntry.key, SitemapEntry.part)
    .limit(bindparam("entries", type_=Integer))
)
# The same entries' paths: a page's text form.
PATHS = ENTRIES.with_only_columns(SitemapEntry.path)


# The pages an index lists: none past MAX_PAGES, which the page view answers 404 for.
_LISTED_PAGES = SitemapPage.page <= bindparam("last_page", type_=Integer)


def listed_pages(names: tuple[str, ...], *columns: Any) -> Select[Any]:
    """``columns`` of the pages of ``names`` an index lists, in the index's order: that of
    ``names`` (the providers'), then by page."""
    order = case({name: n for n, name in enumerate(names)}, value=SitemapPage.provider)
    return (
        select(*columns)
        .where(SitemapPage.provider.in_(names), _LISTED_PAGES)
        .order_by(order, SitemapPage.page)
    )


@lru_cache(maxsize=32)
def index_pages(names: tuple[str, ...]) -> Select[Any]:
    """The stored ``<sitemap>`` elements of the pages of ``names``, ``take`` of them after
    ``skip``: one part of the index. Built once per set of providers."""
    return (
        listed_pages(names, SitemapPage.xml, SitemapPage.entries)
        .offset(bindparam("skip", type_=Integer))
        .limit(bindparam("take", type_=Integer))
    )


def text_pages(conn: Connection, names: list[str]) -> list[tuple[str, int]]:
    """Each page of ``names`` an index lists, as (sitemap, page), in the index's order:
    the text forms robots.txt names when asked (``sitemap_server.robots.text``)."""
    if not names:
        return []
    statement = listed_pages(tuple(names), SitemapPage.provider, SitemapPage.page)
    rows = conn.execute(statement, {"last_page": documents.MAX_PAGES})
    return [(name, page) for name, page in rows]


def index_parts(conn: Connection, names: list[str]) -> int:
    """How many index files list the pages of ``names`` (one, even when empty)."""
    pages = conn.scalar(
        select(func.count()).where(SitemapPage.provider.in_(names), _LISTED_PAGES),
        {"last_page": documents.MAX_PAGES},
    )
    return max(1, -(-int(pages or 0) // documents.SITEMAPS_PER_INDEX))


PAGE = select(
    SitemapPage.first_key,
    SitemapPage.first_part,
    SitemapPage.last_key,
    SitemapPage.last_part,
    SitemapPage.entries,
).where(SitemapPage.provider == bindparam("name"), SitemapPage.page == bindparam("page"))


def legacy_index_view(request: Request) -> Response:
    """``/sitemap.xml`` (and ``.xml.gz``), where crawlers look first: the index."""
    form = request.matchdict["form"]
    tag(request, *document_tags(index_name(1)))
    return moved(request, request.read_state.site.site_url + index_path(1, form))


@lru_cache(maxsize=64)
def stylesheet_file(asset: str) -> tuple[bytes, str, datetime | None]:
    """A stylesheet's bytes, their digest and the file's date: the same for the life of
    the process."""
    package, _, path = asset.partition(":")
    resource = files(package).joinpath(path)
    body = resource.read_bytes()
    return body, hashlib.blake2b(body, digest_size=8).hexdigest(), _modified(resource)


def stylesheet_response(request: Request, asset: str) -> Response:
    """The stylesheet ``asset``, with its digest as ETag and the file's date: a browser
    that has it gets a 304."""
    body, etag, modified = stylesheet_file(asset)
    tag(request, STYLESHEETS_TAG)
    response = Response(body=body, content_type="text/xsl", charset="UTF-8")
    response.headers["X-Robots-Tag"] = X_ROBOTS_TAG
    response.cache_control = request.site.cache_policy
    response.etag = etag
    response.last_modified = modified
    response.conditional_response = True
    return response


def xsl_view(asset: str) -> Any:
    """The view of a stylesheet known at start-up (the core's, ``sitemap_xsl``'s): served
    without asking the database."""

    def view(request: Request) -> Response:
        return stylesheet_response(request, asset)

    return view


def provider_xsl_view(request: Request) -> Response:
    """A stylesheet a provider carries (``Provider.xsl_asset``), at its ``xsl``."""
    asset = request.read_state.site.stylesheets.get(request.path_info)
    if asset is None:
        return not_found(request, request.path)
    return stylesheet_response(request, asset)


def _modified(resource: Any) -> datetime | None:
    """When a package file was last written (installed), or None when it is not a file."""
    try:
        return datetime.fromtimestamp(os.stat(str(resource)).st_mtime, UTC)
    except OSError:
        return None


def robots_view(request: Request) -> Response:
    site = request.read_state.site
    tag(request, ROBOTS_TAG)
    if site.private:
        text = "User-agent: *\nDisallow: /\n"
    else:
        reader: Reader = request.site.reader
        settings = request.registry.settings
        names = [p.name for p in site.providers]
        with reader.snapshot() as conn:
            parts = index_parts(conn, names)
            pages = text_pages(conn, names) if settings["sitemap_server.robots.text"] else []
        sitemaps = "".join(
            f"Sitemap: {site.site_url}{index_path(part)}\n" for part in range(1, parts + 1)
        )
        if settings["sitemap_server.feed.in_robots"]:
            sitemaps += f"Sitemap: {site.site_url}{documents.FEED_PATH}\n"
        sitemaps += "".join(
            f"Sitemap: {sitemap_url(site.site_url, name, page, TEXT)}\n" for name, page in pages
        )
        text = f"User-agent: *\nDisallow:\n\n{sitemaps}"
    response = Response(text, content_type="text/plain", charset="UTF-8")
    response.cache_control = request.site.cache_policy
    response.md5_etag()
    response.conditional_response = True
    return response


# The read path opens its own connections (see reader.py): no transaction manager.


def needs_transaction(request: Request) -> bool:
    """``tm.activate_hook``: everything but the read path runs in a ``pyramid_tm`` transaction."""
    return READ_PATH.match(request.path_info) is None


def read_state(request: Request) -> ReadState:
    """The versions a read path request answers from. A request that asks for no cached
    answer (``Cache-Control: no-cache``, ``Pragma: no-cache``) has them read from the
    database, not from the process's watch, which may hear of a commit a moment late:
    a shared cache fetching again after a purge must get what the purge was for
    (deploy/varnish/sitemaps.vcl asks so on every fetch)."""
    return request.site.reader.state(fresh=asks_no_cache(request))


def asks_no_cache(request: Request) -> bool:
    directives = request.headers.get("Cache-Control") or request.headers.get("Pragma") or ""
    return any(part.strip().lower().split("=")[0] == "no-cache" for part in directives.split(","))


def includeme(config: Configurator) -> None:
    site: Site = config.registry[SITE_KEY]
    config.get_settings()["tm.activate_hook"] = needs_transaction
    config.add_request_method(read_state, "read_state", reify=True)
    # Compiled now, not on the first crawler's request (Chameleon compiles a template
    # when it is first used: 90 ms each).
    for spec in (FRAME, INDEX_FRAME):
        template(spec).cook_check()
    config.add_route("sitemap.index", documents.INDEX_ROUTE)
    config.add_route("sitemap.legacy_index", documents.LEGACY_INDEX_ROUTE)
    config.add_route("sitemap.page", documents.PAGE_ROUTE)
    config.add_route("robots", "/robots.txt")
    config.add_route("sitemap.feed", documents.FEED_PATH)
    # The admin API answers its own 404s as problem details.
    config.add_notfound_view(not_found_view, path_info=r"^(?!/api(/|$))")
    # A document of the read path with a method its views do not take (PUT, DELETE …).
    config.add_exception_view(
        not_allowed_view, context=PredicateMismatch, path_info=READ_PATH.pattern
    )
    config.add_view(index_view, route_name="sitemap.index", request_method="GET")
    config.add_view(legacy_index_view, route_name="sitemap.legacy_index", request_method="GET")
    config.add_view(page_view, route_name="sitemap.page", request_method="GET")
    config.add_view(robots_view, route_name="robots", request_method="GET")
    config.add_view(feed_view, route_name="sitemap.feed", request_method="GET")
    config.include(".html")  # the same documents as pages for people, from their XSL
    for number, (path, asset) in enumerate(sorted(site.xsl_files.items())):
        config.add_route(f"sitemap.xsl.{number}", path)
        config.add_view(xsl_view(asset), route_name=f"sitemap.xsl.{number}", request_method="GET")
    config.add_route("sitemap.xsl", documents.XSL_ROUTE)
    config.add_view(provider_xsl_view, route_name="sitemap.xsl", request_method="GET")
    warm_up(site.reader)


def warm_up(reader: Reader) -> None:
    """Run the read path's queries once, read only, before the first request: SQLAlchemy
    compiles each statement on its first use and the site snapshot is read once per site
    version (10 to 15 ms of a new process's first answer). A database that cannot
    answer yet (down, or not migrated) leaves it to the first request."""
    try:
        reader.prime_watch()
        with reader.snapshot() as conn:
            state = reader.state(conn)
            names = [provider.name for provider in state.site.providers]
            if not names:
                return
            conn.execute(
                index_pages(tuple(names)), {"skip": 0, "take": 1, "last_page": documents.MAX_PAGES}
            ).all()
            row = conn.execute(PAGE, {"name": names[0], "page": 1}).first()
            if row is not None:
                conn.execute(ENTRIES, {**page_range(names[0], row), "entries": 1}).all()
    except Exception as exc:  # the first request will meet the same problem, and say so
        log.info("the read path was not warmed up: %s", exc)
