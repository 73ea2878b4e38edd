"""The read path: the index, each provider's pages, the XSL and robots.txt (S-3xx).

A request reads the content versions (one small query); if the client already has that
version it gets a 304, if this process rendered it before it gets the cached bytes,
and otherwise the page row and its entries are read by key range and rendered. Nothing
that decides an answer lives only in this process: the versions are in the database.
"""

from __future__ import annotations

import gzip
import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from importlib.resources import files
from threading import Lock
from typing import Any

from chameleon import PageTemplateFile
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPMovedPermanently
from pyramid.request import Request
from pyramid.response import Response
from sqlalchemy import select, tuple_

from ..models import SITE, SitemapEntry, SitemapPage, SitemapVersion
from ..plugins import PLUGIN_MANAGER
from ..services.site import effective_site_url, get_settings
from ..sitemaps.maintenance import all_providers
from ..sitemaps.providers import MAIN_XSL, Provider
from .xml import w3c, xml_text

X_ROBOTS_TAG = "noindex, follow"
# The protocol's limit of sitemaps per provider (S-304); a larger number is a page that
# cannot exist, answered without asking the database (which may not hold such an int).
MAX_PAGES = 50_000
NOT_FOUND_ECHO_CHARS = 200
XML_CONTENT_TYPE = "text/xml"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
TEMPLATES: dict[str, PageTemplateFile] = {}


@dataclass
class Rendered:
    body: bytes
    gzipped: bytes
    etag: str
    last_modified: datetime | None


class RenderCache:
    """Rendered documents by (path, versions): bounded, least recently used out first."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.items: OrderedDict[tuple[Any, ...], Rendered] = OrderedDict()
        self.lock = Lock()

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
        cost = len(value.body) + len(value.gzipped)
        if cost > self.max_bytes // 4:
            return
        with self.lock:
            self.items[key] = value
            self.size += cost
            while self.size > self.max_bytes:
                _, old = self.items.popitem(last=False)
                self.size -= len(old.body) + len(old.gzipped)


def template(spec: str) -> PageTemplateFile:
    if spec not in TEMPLATES:
        package, _, path = spec.partition(":")
        TEMPLATES[spec] = PageTemplateFile(str(files(package).joinpath(path)))
    return TEMPLATES[spec]


SITE_SNAPSHOT = "sitemap_server.site_snapshot"
NAMESPACES = "sitemap_server.namespaces"


@dataclass(frozen=True)
class SiteSnapshot:
    private: bool
    site_url: str
    providers: list[Provider]


class ReadState:
    """What one request needs to know: versions, settings, providers."""

    def __init__(self, request: Request) -> None:
        session = request.dbsession
        rows = session.execute(select(SitemapVersion)).scalars().all()
        self.versions = {row.provider: (row.version, row.changed_at) for row in rows}
        self.request = request
        # Settings and the set of providers change only with the site version (settings,
        # post types, taxonomies), so they are read once per site version, not per request.
        site_version = self.versions.get(SITE)
        cached = request.registry.get(SITE_SNAPSHOT)
        if cached is None or cached[0] != site_version:
            settings = get_settings(session)
            snapshot = SiteSnapshot(
                private=settings.private,
                site_url=effective_site_url(
                    settings, request.registry.settings["sitemap_server.site_url"]
                ),
                providers=all_providers(session, request.registry.settings[PLUGIN_MANAGER]),
            )
            cached = (site_version, snapshot)
            request.registry[SITE_SNAPSHOT] = cached
        self.site: SiteSnapshot = cached[1]
        self.site_url = self.site.site_url

    def providers(self) -> list[Provider]:
        return self.site.providers

    def version_of(self, *names: str) -> tuple[tuple[str, int, str], ...]:
        """Number and time of the last change of each provider. The time is part of it
        because numbers start again from 0 when the database is recreated (or restored),
        and a version seen before must never name different content."""
        found = []
        for name in (SITE, *names):
            number, changed_at = self.versions.get(name, (0, None))
            found.append((name, number, changed_at.isoformat() if changed_at else ""))
        return tuple(found)

    def changed_at(self, *names: str) -> datetime | None:
        dates = [self.versions[n][1] for n in (SITE, *names) if n in self.versions]
        return max(dates) if dates else None


def version_tag(versions: tuple[tuple[str, int, str], ...]) -> str:
    """``*.3-post.7-…`` and a digest of the change times, for ETags."""
    numbers = "-".join(f"{name}.{number}" for name, number, _ in versions)
    times = "|".join(changed_at for _, _, changed_at in versions).encode()
    return f"{numbers}-{hashlib.blake2b(times, digest_size=6).hexdigest()}"


def sitemap_response(
    request: Request, key: tuple[Any, ...], etag: str, last_modified: datetime | None, render: Any
) -> Response:
    """304, cached bytes, or a fresh rendering; always with the sitemap headers."""
    response = Response(content_type=XML_CONTENT_TYPE, charset="UTF-8")
    response.headers["X-Robots-Tag"] = X_ROBOTS_TAG
    response.headers["Vary"] = "Accept-Encoding"
    response.cache_control = request.registry.settings["sitemap_server.cache_control"]
    # No (or an unreadable) Accept-Encoding gets plain XML: curl, urllib and many
    # validators send none and do not decompress.
    accept_encoding = request.accept_encoding
    wants_gzip = bool(accept_encoding) and bool(accept_encoding.acceptable_offers(["gzip"]))
    tagged = f"{etag}-gz" if wants_gzip else etag
    response.headers["ETag"] = f'"{tagged}"'
    if last_modified is not None:
        response.last_modified = last_modified
    if request.headers.get("If-None-Match"):
        not_modified = tagged in request.if_none_match
    else:
        not_modified = (
            last_modified is not None
            and request.if_modified_since is not None
            and last_modified.replace(microsecond=0) <= request.if_modified_since
        )
    if not_modified:
        response.status = 304
        response.content_type = None
        return response
    cache: RenderCache = request.registry["sitemap_server.render_cache"]
    rendered = cache.get(key)
    if rendered is None:
        body = render().encode("utf-8")
        rendered = Rendered(body, gzip.compress(body, 6, mtime=0), etag, last_modified)
        cache.put(key, rendered)
    if wants_gzip:
        response.body = rendered.gzipped
        response.content_encoding = "gzip"
    else:
        response.body = rendered.body
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


def index_view(request: Request) -> Response:
    state = ReadState(request)
    providers = [] if state.site.private else state.providers()
    names = [p.name for p in providers]
    versions = state.version_of(*names)
    etag = "index-" + version_tag(versions)

    def render() -> str:
        pages = request.dbsession.execute(
            select(SitemapPage.provider, SitemapPage.page, SitemapPage.lastmod).where(
                SitemapPage.provider.in_(names)
            )
        ).all()
        order = {name: i for i, name in enumerate(names)}
        pages.sort(key=lambda row: (order[row.provider], row.page))
        sitemaps = [
            {
                "loc": xml_text(sitemap_url(state.site_url, row.provider, row.page)),
                "lastmod": w3c(row.lastmod),
            }
            for row in pages
        ]
        return template("sitemap_server:templates/sitemapindex.pt")(
            xsl=MAIN_XSL, sitemaps=[_Obj(s) for s in sitemaps]
        )

    return sitemap_response(
        request, ("index", state.site_url, versions), etag, state.changed_at(*names), render
    )


class _Obj:
    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


def page_view(request: Request) -> Response:
    name = request.matchdict["name"]
    number = request.matchdict["number"]
    digits = number.lstrip("0")
    if len(digits) > len(str(MAX_PAGES)) or (digits and int(digits) > MAX_PAGES):
        return not_found(request, request.path)
    if number and (number.startswith("0") or number == "1"):
        page = max(int(digits or "0"), 1)
        return HTTPMovedPermanently(location=sitemap_url(request.application_url, name, page))
    page = int(number) if number else 1
    state = ReadState(request)
    provider = next((p for p in state.providers() if p.name == name), None)
    if provider is None or (state.site.private and page > 1):
        return not_found(request, request.path)
    row = None if state.site.private else request.dbsession.get(SitemapPage, (name, page))
    if row is None and page > 1:
        return not_found(request, request.path)
    versions = state.version_of(name)
    etag = f"{name}-{page}-" + version_tag(versions)
    namespaces = request.registry[NAMESPACES]

    def render() -> str:
        entries: list[Any] = []
        if row is not None:
            position = tuple_(SitemapEntry.key, SitemapEntry.part)
            query = (
                select(
                    SitemapEntry.path, SitemapEntry.lastmod, SitemapEntry.images, SitemapEntry.extra
                )
                .where(
                    SitemapEntry.provider == name,
                    position >= tuple_(row.first_key, row.first_part),
                    position <= tuple_(row.last_key, row.last_part),
                )
                .order_by(SitemapEntry.key, SitemapEntry.part)
            )
            site = state.site_url
            entries = [
                _Obj(
                    {
                        "loc": xml_text(site + e.path),
                        "lastmod": w3c(e.lastmod),
                        "images": [xml_text(i) for i in e.images or ()],
                        "extra": e.extra,
                    }
                )
                for e in request.dbsession.execute(query)
            ]
        return template(provider.template)(
            xsl=provider.xsl, namespaces=namespaces, entries=entries, provider=provider
        )

    return sitemap_response(
        request, (name, page, state.site_url, versions), etag, state.changed_at(name), render
    )


def legacy_index_view(request: Request) -> Response:
    return HTTPMovedPermanently(location=request.application_url + "/sitemap_index.xml")


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
    settings = get_settings(request.dbsession)
    if settings.private:
        text = "User-agent: *\nDisallow: /\n"
    else:
        site = effective_site_url(settings, request.registry.settings["sitemap_server.site_url"])
        text = f"User-agent: *\nDisallow:\n\nSitemap: {site}/sitemap_index.xml\n"
    return Response(text, content_type="text/plain", charset="UTF-8")


def includeme(config: Configurator) -> None:
    settings = config.get_settings()
    config.registry["sitemap_server.render_cache"] = RenderCache(
        settings["sitemap_server.render_cache_bytes"]
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
    for number, (path, asset) in enumerate(sorted(xsl_files.items())):
        config.add_route(f"sitemap.xsl.{number}", path)
        config.add_view(xsl_view(asset), route_name=f"sitemap.xsl.{number}", request_method="GET")
