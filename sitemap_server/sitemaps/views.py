"""The read path: the index, each provider's pages, the XSL and robots.txt (S-3xx).

A request reads the content versions (one small query); if the client already has that
version it gets a 304, if this process rendered it before it gets the cached bytes,
and otherwise the page row and its entries are read by key range and rendered. Nothing
that decides an answer lives only in this process: the versions are in the database.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from importlib.resources import files
from threading import Lock
from types import SimpleNamespace
from typing import Any

from chameleon import PageTemplateFile
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPMovedPermanently
from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy import bindparam, select, tuple_
from sqlalchemy.engine import Connection

from ..models import SitemapEntry, SitemapPage
from ..plugins import PLUGIN_MANAGER
from .providers import MAIN_XSL
from .reader import Reader, ReadState
from .xml import local_w3c, w3c, xml_text

X_ROBOTS_TAG = "noindex, follow"
# Documents larger than this are cached gzipped only (a 50,000-URL page is 9 MB plain).
KEEP_PLAIN_BYTES = 1024 * 1024
# The protocol's limit of sitemaps per provider (S-304); a larger number is a page that
# cannot exist, answered without asking the database (which may not hold such an int).
MAX_PAGES = 50_000
NOT_FOUND_ECHO_CHARS = 200
XML_CONTENT_TYPE = "text/xml"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
# The sitemaps as pages for people, rendered here from their XSL (html.py).
HTML_ROOT = "/sitemaps/"
TEMPLATES: dict[str, PageTemplateFile] = {}


@dataclass
class Rendered:
    """A rendered document. Large ones keep only their gzipped bytes (about a sixth):
    the few clients that take no gzip get them decompressed."""

    body: bytes | None
    gzipped: bytes
    etag: str
    last_modified: datetime | None

    @property
    def cost(self) -> int:
        return len(self.body or b"") + len(self.gzipped)

    def plain(self) -> bytes:
        return self.body if self.body is not None else gzip.decompress(self.gzipped)


class RenderCache:
    """Rendered documents by (path, versions): bounded, least recently used out first."""

    # Documents rendered at once by one process, at most; a document renders once at a
    # time (see ``rendering``).
    STRIPES = 64

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.items: OrderedDict[tuple[Any, ...], Rendered] = OrderedDict()
        self.lock = Lock()
        self.stripes = [Lock() for _ in range(self.STRIPES)]

    def rendering(self, what: tuple[Any, ...]) -> Lock:
        """Held while ``what`` is rendered: the requests that find the same document
        missing after a change wait for one rendering instead of each making their own
        (after a write, every crawler connection would otherwise render it at once)."""
        return self.stripes[hash(what) % self.STRIPES]

    def get(self, key: tuple[Any, ...]) -> Rendered | None:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
            return found

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.size = 0

    def put(self, key: tuple[Any, ...], value: Rendered) -> None:
        cost = value.cost
        if cost > self.max_bytes // 4:
            return
        with self.lock:
            self.items[key] = value
            self.size += cost
            while self.size > self.max_bytes:
                _, old = self.items.popitem(last=False)
                self.size -= old.cost


def template(spec: str) -> PageTemplateFile:
    if spec not in TEMPLATES:
        package, _, path = spec.partition(":")
        TEMPLATES[spec] = PageTemplateFile(str(files(package).joinpath(path)))
    return TEMPLATES[spec]


READER = "sitemap_server.reader"
NAMESPACES = "sitemap_server.namespaces"
RENDER_CACHE = "sitemap_server.render_cache"
# Render a document: its text, or None when it does not exist (a 404).
Render = Callable[[Connection, ReadState], "str | None"]


def document_etag(what: tuple[Any, ...], versions: tuple[tuple[str, int, str], ...]) -> str:
    """``post-2-*.3-post.7-…``: the document, its versions and a digest of their change
    times."""
    numbers = "-".join(f"{name}.{number}" for name, number, _ in versions)
    times = "|".join(changed_at for _, _, changed_at in versions).encode()
    digest = hashlib.blake2b(times, digest_size=6).hexdigest()
    return "-".join(map(str, what)) + f"-{numbers}-{digest}"


def sitemap_response(
    request: Request, what: tuple[Any, ...], names: list[str], render: Render
) -> Response:
    """304, cached bytes, or a fresh rendering; always with the sitemap headers.

    ``what`` names the document (``("post", 3)``) and ``names`` the providers whose
    versions it depends on; the site version is always one of them.
    """
    reader: Reader = request.registry[READER]
    cache: RenderCache = request.registry[RENDER_CACHE]
    state = request.read_state
    # No (or an unreadable) Accept-Encoding gets plain XML: curl, urllib and many
    # validators send none and do not decompress.
    accept_encoding = request.accept_encoding
    wants_gzip = bool(accept_encoding) and bool(accept_encoding.acceptable_offers(["gzip"]))

    versions = state.version_of(*names)
    etag = document_etag(what, versions)
    last_modified = state.changed_at(*names)
    if is_not_modified(request, f"{etag}-gz" if wants_gzip else etag, last_modified):
        response = sitemap_headers(request, Response(status=304), etag, wants_gzip)
        response.last_modified = last_modified
        return response
    key = (*what, state.site.site_url, versions)
    rendered = cache.get(key)
    plain = None
    if rendered is None:
        with cache.rendering(what):
            rendered = cache.get(key)  # made while this request waited
            if rendered is None:
                found = _render(reader, cache, what, names, render)
                if found is None:
                    return not_found(request, request.path)
                rendered, plain = found
    response = Response(content_type=XML_CONTENT_TYPE, charset="UTF-8")
    sitemap_headers(request, response, rendered.etag, wants_gzip)
    response.last_modified = rendered.last_modified
    if wants_gzip:
        response.body = rendered.gzipped
        response.content_encoding = "gzip"
    else:
        response.body = plain if plain is not None else rendered.plain()
    return response


def _render(
    reader: Reader, cache: RenderCache, what: tuple[Any, ...], names: list[str], render: Render
) -> tuple[Rendered, bytes | None] | None:
    """``what`` as of a snapshot (from the cache when that version was rendered already),
    stored in the cache; None when it does not exist."""
    with reader.snapshot() as conn:
        # Read again inside the snapshot: the key must name what is rendered.
        state = reader.state(conn)
        versions = state.version_of(*names)
        key = (*what, state.site.site_url, versions)
        cached = cache.get(key)
        if cached is not None:
            return cached, None
        text = render(conn, state)
    if text is None:
        return None
    plain = text.encode("utf-8")
    del text
    gzipped = gzip.compress(plain, 6, mtime=0)
    kept = plain if len(plain) <= KEEP_PLAIN_BYTES else None
    rendered = Rendered(kept, gzipped, document_etag(what, versions), state.changed_at(*names))
    cache.put(key, rendered)
    return rendered, plain


def is_not_modified(request: Request, etag: str, last_modified: datetime | None) -> bool:
    if request.headers.get("If-None-Match"):
        return etag in request.if_none_match
    return (
        last_modified is not None
        and request.if_modified_since is not None
        and last_modified.replace(microsecond=0) <= request.if_modified_since
    )


def sitemap_headers(request: Request, response: Response, etag: str, gzipped: bool) -> Response:
    response.headers["X-Robots-Tag"] = X_ROBOTS_TAG
    response.headers["Vary"] = "Accept-Encoding"
    response.headers["ETag"] = f'"{etag}-gz"' if gzipped else f'"{etag}"'
    response.cache_control = request.registry.settings["sitemap_server.cache_control"]
    return response


def not_found(request: Request, what: str) -> Response:
    if len(what) > NOT_FOUND_ECHO_CHARS:  # a small body, whatever the URL (S-305)
        what = what[:NOT_FOUND_ECHO_CHARS] + "…"
    response = Response(
        f"Not found: {what}\n", status=404, content_type="text/plain", charset="UTF-8"
    )
    response.headers["X-Robots-Tag"] = X_ROBOTS_TAG
    return response


def not_found_view(request: Request) -> Response:
    """Any other unknown URL outside the admin API, with the same header (S-305)."""
    return not_found(request, request.path)


def sitemap_url(site_url: str, name: str, page: int) -> str:
    return f"{site_url}/{name}-sitemap{'' if page == 1 else page}.xml"


def html_url(site_url: str, document: str) -> str:
    """Where people see ``document`` (``sitemap_index``, ``post-sitemap2``) as a page."""
    page = "" if document == "sitemap_index" else f"{document}.html"
    return f"{site_url}{HTML_ROOT}{page}"


def index_view(request: Request) -> Response:
    site = request.read_state.site
    names = [] if site.private else [p.name for p in site.providers]

    def render(conn: Connection, state: ReadState) -> str:
        order = {name: i for i, name in enumerate(names)}
        pages = sorted(
            conn.execute(index_pages(names)),
            key=lambda row: (order[row.provider], row.page),
        )
        sitemaps = [
            SimpleNamespace(
                loc=xml_text(sitemap_url(state.site.site_url, row.provider, row.page)),
                lastmod=w3c(row.lastmod, state.site.zone),
            )
            for row in pages
        ]
        return template("sitemap_server:templates/sitemapindex.pt")(
            xsl=MAIN_XSL, sitemaps=sitemaps, html=html_url(state.site.site_url, "sitemap_index")
        )

    return sitemap_response(request, ("index",), names, render)


class RenderedEntry:
    """One stored entry as templates use it: ``loc``, ``lastmod``, ``images`` (escaped,
    absolute) and the provider's ``extra``."""

    __slots__ = ("extra", "images", "lastmod", "loc")

    def __init__(self, site_url: str, row: Any, zone: tzinfo = UTC) -> None:
        self.loc = xml_text(site_url + row.path)
        self.lastmod = w3c(row.lastmod, zone)
        self.images = [xml_text(i) for i in row.images or ()]
        self.extra = row.extra


def page_view(request: Request) -> Response:
    name = request.matchdict["name"]
    number = request.matchdict["number"]
    digits = number.lstrip("0")
    if len(digits) > len(str(MAX_PAGES)) or (digits and int(digits) > MAX_PAGES):
        return not_found(request, request.path)
    site = request.read_state.site
    if number and (number.startswith("0") or number == "1"):
        page = max(int(digits or "0"), 1)
        return HTTPMovedPermanently(location=sitemap_url(site.site_url, name, page))
    page = int(number) if number else 1
    provider = site.provider(name)
    if provider is None or (site.private and page > 1):
        return not_found(request, request.path)
    namespaces = request.registry[NAMESPACES]

    def render(conn: Connection, state: ReadState) -> str | None:
        row = None
        if not state.site.private:
            row = conn.execute(PAGE, {"name": name, "page": page}).first()
        if row is None and (page > 1 or provider.absent_when_empty):
            return None
        entries: Iterable[RenderedEntry] = ()
        if row is not None:
            # Streamed (a server-side cursor on PostgreSQL): a page of 50,000 entries is
            # never a list of 50,000 objects, only the text it becomes.
            rows = conn.execution_options(stream_results=True, yield_per=1000).execute(
                page_entries(name, row)
            )
            site = state.site
            entries = (RenderedEntry(site.site_url, e, site.zone) for e in rows)
        document = f"{name}-sitemap{'' if page == 1 else page}"
        return template(provider.template)(
            xsl=provider.xsl,
            namespaces=namespaces,
            entries=entries,
            provider=provider,
            # The page for people (the XSL links to it), and dates of the provider's own
            # fields in the site's time zone: local("2024-05-01T10:00:00+00:00").
            html=html_url(state.site.site_url, document),
            local=lambda value: local_w3c(value, state.site.zone),
        )

    return sitemap_response(request, (name, page), [name], render)


def page_entries(provider: str, page: Any) -> Any:
    """The entries of one page: a range of the primary key, in order."""
    position = tuple_(SitemapEntry.key, SitemapEntry.part)
    return (
        select(SitemapEntry.path, SitemapEntry.lastmod, SitemapEntry.images, SitemapEntry.extra)
        .where(
            SitemapEntry.provider == provider,
            position >= tuple_(page.first_key, page.first_part),
            position <= tuple_(page.last_key, page.last_part),
        )
        .order_by(SitemapEntry.key, SitemapEntry.part)
    )


def index_pages(names: list[str]) -> Any:
    return select(SitemapPage.provider, SitemapPage.page, SitemapPage.lastmod).where(
        SitemapPage.provider.in_(names)
    )


PAGE = select(
    SitemapPage.first_key, SitemapPage.first_part, SitemapPage.last_key, SitemapPage.last_part
).where(SitemapPage.provider == bindparam("name"), SitemapPage.page == bindparam("page"))


def legacy_index_view(request: Request) -> Response:
    site_url = request.read_state.site.site_url
    return HTTPMovedPermanently(location=site_url + "/sitemap_index.xml")


def xsl_view(asset: str) -> Any:
    package, _, path = asset.partition(":")
    body = files(package).joinpath(path).read_bytes()

    def view(request: Request) -> Response:
        response = Response(body=body, content_type="text/xsl", charset="UTF-8")
        response.headers["X-Robots-Tag"] = X_ROBOTS_TAG
        response.cache_control = request.registry.settings["sitemap_server.cache_control"]
        return response

    return view


def robots_view(request: Request) -> Response:
    site = request.read_state.site
    if site.private:
        text = "User-agent: *\nDisallow: /\n"
    else:
        text = f"User-agent: *\nDisallow:\n\nSitemap: {site.site_url}/sitemap_index.xml\n"
    return Response(text, content_type="text/plain", charset="UTF-8")


# The read path opens its own connections (see reader.py): no transaction manager.
READ_PATH = re.compile(
    r"^/(sitemap_index\.xml|sitemap\.xml|robots\.txt|[a-z0-9_]+-sitemap[0-9]*\.xml|[^/]+\.xsl"
    r"|sitemaps/?|sitemaps/[a-z0-9_-]+\.html)$"
)


def needs_transaction(request: Request) -> bool:
    """``tm.activate_hook``: everything but the read path runs in a ``pyramid_tm`` transaction."""
    return READ_PATH.match(request.path_info) is None


def includeme(config: Configurator) -> None:
    settings = config.get_settings()
    settings["tm.activate_hook"] = needs_transaction
    config.registry[RENDER_CACHE] = RenderCache(settings["sitemap_server.render_cache_bytes"])
    config.registry[READER] = Reader(
        config.registry["dbsession_factory"],
        settings[PLUGIN_MANAGER],
        settings["sitemap_server.site_url"],
        settings["sitemap_server.max_staleness"],
    )
    config.add_request_method(
        lambda request: request.registry[READER].state(), "read_state", reify=True
    )
    namespaces = {"xmlns:image": IMAGE_NS}
    for extra in settings[PLUGIN_MANAGER].hook.sitemap_namespaces():
        namespaces.update({f"xmlns:{prefix}": uri for prefix, uri in extra.items()})
    config.registry[NAMESPACES] = namespaces
    config.add_route("sitemap.index", "/sitemap_index.xml")
    config.add_route("sitemap.legacy_index", "/sitemap.xml")
    config.add_route("sitemap.page", "/{name:[a-z0-9_]+}-sitemap{number:[0-9]*}.xml")
    config.add_route("robots", "/robots.txt")
    # The admin API answers its own 404s as problem details.
    config.add_notfound_view(not_found_view, path_info=r"^(?!/api(/|$))")
    config.add_view(index_view, route_name="sitemap.index", request_method="GET")
    config.add_view(legacy_index_view, route_name="sitemap.legacy_index")
    config.add_view(page_view, route_name="sitemap.page", request_method="GET")
    config.add_view(robots_view, route_name="robots", request_method="GET")
    xsl_files = {MAIN_XSL: "sitemap_server:static/main-sitemap.xsl"}
    for extra in settings[PLUGIN_MANAGER].hook.sitemap_xsl():
        xsl_files.update(extra)
    config.registry["sitemap_server.xsl_files"] = xsl_files
    config.include(".html")  # the same documents as pages for people, from their XSL
    for number, (path, asset) in enumerate(sorted(xsl_files.items())):
        config.add_route(f"sitemap.xsl.{number}", path)
        config.add_view(xsl_view(asset), route_name=f"sitemap.xsl.{number}", request_method="GET")
