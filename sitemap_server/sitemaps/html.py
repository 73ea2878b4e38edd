"""The sitemaps as pages for people, made here from the same XSL a browser would apply.

Browsers are dropping XSLT (Chromium shows a deprecation banner, then turns it off), so
``/sitemaps/`` and ``/sitemaps/{name}.html`` apply each document's own stylesheet on the
server, with lxml, to the very XML a crawler gets (an internal subrequest): one source of
truth for both views. The stylesheet gets ``view = 'html'`` and then links to these pages;
the XML links here through its ``<?html-view URL?>`` instruction. The ``.xml`` URLs
always answer XML, whatever a client's ``Accept`` header says.
"""

from __future__ import annotations

import re
import threading
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response

from .. import documents
from ..documents import DOCUMENT_ROUTE, HTML_ROOT, INDEX, document_tags, html_url
from .providers import MAIN_XSL
from .rendering import PRIVATE_NOTE, instruction_text
from .responses import (
    X_ROBOTS_TAG,
    RenderCache,
    Rendered,
    accepts_gzip,
    not_found,
    not_modified,
    pack,
    send,
    tag,
)
from .views import index_part, moved, stylesheet_file

# lxml is imported by the first page for people, in each function that uses it: a
# process that serves only XML does without it (~5 MB).
if TYPE_CHECKING:
    from lxml import etree

    from .reader import Reader, SiteSnapshot


class Stylesheets:
    """Each XSL compiled once per thread (an lxml XSLT object is not shared across them).

    A stylesheet may import another one the site serves by its URL (a plugin's imports
    ``main-sitemap.xsl``, as a browser reads it next to it): the import is read from the
    asset served at that path, and nothing else is ever read (no file, no network)."""

    def __init__(self) -> None:
        self.local = threading.local()

    def get(self, path: str, served: dict[str, str]) -> etree.XSLT | None:
        """The stylesheet served at ``path``, compiled; ``served``: the asset (a Pyramid
        asset spec) of each stylesheet path the site serves. None for a path it does not
        serve."""
        asset = served.get(path)
        if asset is None:
            return None
        compiled: dict[str, etree.XSLT] = self.local.__dict__.setdefault("compiled", {})
        if asset not in compiled:
            from lxml import etree

            xsl_parser = parser()
            xsl_parser.resolvers.add(_ServedStylesheets(served))
            source = etree.fromstring(
                stylesheet_file(asset)[0], xsl_parser, base_url=STYLESHEETS_BASE + path
            )
            compiled[asset] = etree.XSLT(source, access_control=etree.XSLTAccessControl.DENY_ALL)
        return compiled[asset]


# Where the stylesheets are, as lxml resolves their imports: the paths the site serves them
# at, on a host that exists nowhere.
STYLESHEETS_BASE = "http://stylesheets.invalid"


def _ServedStylesheets(served: dict[str, str]) -> Any:
    """An lxml resolver that reads an imported stylesheet from the asset served at its
    path; anything else it leaves to lxml, which is refused it (``DENY_ALL``)."""
    from lxml import etree

    class Resolver(etree.Resolver):
        def resolve(self, url: str, _id: str, context: Any) -> Any:
            if url.startswith(STYLESHEETS_BASE + "/"):
                asset = served.get(urlsplit(url).path)
                if asset is not None:
                    return self.resolve_string(stylesheet_file(asset)[0], context)
            return None  # then refused: the stylesheet is compiled with DENY_ALL

    return Resolver()


def parser() -> etree.XMLParser:
    """A parser that reads nothing but the bytes it is given (no network, no entity)."""
    from lxml import etree

    return etree.XMLParser(no_network=True, resolve_entities=False, huge_tree=True)


document_parser = cache(parser)


def html_view(request: Request) -> Response:
    document = request.matchdict.get("document") or INDEX
    site_url = request.read_state.site.site_url
    tag(request, *document_tags(document))  # made of the document: purged with it
    if document == INDEX and request.path_info != HTML_ROOT:
        return moved(request, html_url(site_url, INDEX))
    xml_path = f"/{document}.xml"
    subrequest = Request.blank(xml_path, base_url=request.application_url)
    xml = request.invoke_subrequest(subrequest, use_tweens=False)
    if xml.status_int in (301, 302):  # post-sitemap1.xml: the same move, as pages
        name = urlsplit(xml.location).path.rsplit("/", 1)[-1].removesuffix(".xml")
        return moved(request, html_url(site_url, name))
    if xml.status_int != 200:
        return not_found(request, request.path)
    # The page is made once per version of its XML (a 50,000-URL page takes about a
    # second), and kept in the render cache beside the XML.
    etag = f"{xml.etag}-html"
    wants_gzip = accepts_gzip(request)
    unchanged = not_modified(request, etag, xml.last_modified, wants_gzip)
    if unchanged is not None:
        return unchanged
    cache: RenderCache = request.site.render_cache
    key = ("html", document, site_url, etag)
    page = cache.get(key)
    if page is None:
        with cache.rendering(key):
            page = cache.get(key) or _page(request, document, xml, site_url, etag)
            if page is None:
                return not_found(request, request.path)
            cache.put(key, page)
    response = Response(content_type="text/html", charset="UTF-8")
    return send(request, response, page, wants_gzip)


def _page(
    request: Request, document: str, xml: Response, site_url: str, etag: str
) -> Rendered | None:
    """The page for people of ``document``, whose XML is ``xml``: its stylesheet applied;
    None when its provider's is not served."""
    from lxml import etree

    xml_path = f"/{document}.xml"
    tree = etree.fromstring(xml.body, document_parser()).getroottree()
    site = request.read_state.site
    stylesheets: Stylesheets = request.site.stylesheets
    stylesheet = stylesheets.get(stylesheet_of(site, document), site.stylesheets)
    if stylesheet is None:
        return None
    page = stylesheet(
        tree,
        view=etree.XSLT.strparam("html"),
        **{
            "xml-url": etree.XSLT.strparam(site_url + xml_path),
            "html-base": etree.XSLT.strparam(site_url + HTML_ROOT),
        },
    )
    _only_web_links(page.getroot())
    return pack([bytes(page)], etag, xml.last_modified)


# Plain XML made legible (a browser without XSLT, or a document that names no XSL, shows
# the XML itself laid out with this): first the site's name and the page for people, a
# private site's notice, and the count sentence of the XSL's view (a CSS counter of the
# entries, put first by the flex order); then each entry's loc and lastmod (and in an
# index, how many URLs each sitemap holds), the rest hidden.
CSS = """/* A sitemap, for search engines, shown as plain XML: its page for people is named. */
@namespace s url(http://www.sitemaps.org/schemas/sitemap/0.9);
:root {{
  display: flex; flex-direction: column; margin: 1em;
  font: 14px/1.5 system-ui, sans-serif; counter-reset: entries;
}}
:root::before {{
  order: -2; display: block; margin-bottom: .5em; white-space: pre-line;
  content: "{site}" "\\A" "A sitemap, for search engines. People read it at " "{url}"{private};
}}
:root::after {{
  order: -1; display: block; margin-bottom: 1em; font-weight: bold;
  content: "{count}";
}}
s|url, s|sitemap {{ display: block; margin: 0 0 .6em; counter-increment: entries; }}
s|loc {{ display: block; }}
s|lastmod {{ display: block; color: #555; font-size: 12px; }}
s|url > :not(s|loc):not(s|lastmod) {{ display: none; }}
s|sitemap::after {{ display: block; color: #555; font-size: 12px; }}
"""
# The count sentence, as the XSL's (a CSS counter: the number of entries above it).
INDEX_COUNT = '"This XML sitemap index contains " counter(entries) " sitemaps."'
PAGE_COUNT = '"This XML sitemap contains " counter(entries) " URLs."'


def css_view(request: Request) -> Response:
    """The stylesheet a document names besides its XSL (``documents.css_path``): what a
    browser shows of the XML when it does not apply the XSL, saying what the XSL's view
    says first (the site, the page for people, why a private site lists nothing, how many
    entries it holds) and, for an index, how many URLs each sitemap holds."""
    document = request.matchdict["document"]
    site = request.read_state.site
    tag(request, *document_tags(document))
    index = documents.INDEX_DOCUMENT.fullmatch(document)
    if index is not None and documents.beyond(index.group(1), documents.MAX_INDEXES):
        return not_found(request, request.path)  # no such index file, as its XML says
    private = f' "\\A\\A" "{css_string(PRIVATE_NOTE)}"' if site.private else ""
    text = CSS.format(
        site=css_string(instruction_text(site.name)),  # as the XML carries it
        url=css_string(html_url(site.site_url, document)),
        private=private,
        count="{count}",
    ).replace('"{count}"', INDEX_COUNT if index else PAGE_COUNT)
    if index is not None and not site.private:
        text += _url_counts(request, [p.name for p in site.providers], int(index.group(1) or 1))
    response = Response(text, content_type="text/css", charset="UTF-8")
    response.headers["X-Robots-Tag"] = X_ROBOTS_TAG
    response.cache_control = request.site.cache_policy
    response.md5_etag()
    response.conditional_response = True
    return response


def _url_counts(request: Request, names: list[str], part: int) -> str:
    """A rule for each sitemap listed in part ``part`` of the index: how many URLs it
    holds, shown under it (what the XSL's view shows in its URLs column)."""
    reader: Reader = request.site.reader
    with reader.snapshot() as conn:
        rows = index_part(conn, names, part)
    rules = []
    for n, (_, entries) in enumerate(rows, start=1):
        urls = "1 URL" if entries == 1 else f"{entries} URLs"
        rules.append(f's|sitemap:nth-of-type({n})::after {{ content: "{urls}"; }}\n')
    return "".join(rules)


def css_string(value: str) -> str:
    """``value`` as the inside of a double-quoted CSS string."""
    return "".join(f"\\{ord(c):x} " if c in '"\\\n\r' or ord(c) < 32 else c for c in value)


def _only_web_links(root: Any) -> None:
    """Remove every link attribute that is not an http(s) URL or a path on this site.

    The stylesheets link only to such URLs, and the documents carry no other; this holds
    for a plugin's stylesheet too, and whatever a document says: a page made here never
    runs a ``javascript:`` or ``data:`` URL."""
    from lxml import etree

    if root is None:
        return
    for element in root.iter(etree.Element):
        for name in LINK_ATTRIBUTES.intersection(element.attrib):
            if not is_web_link(element.attrib[name]):
                del element.attrib[name]


# Attributes of HTML whose value a browser loads or follows.
LINK_ATTRIBUTES = frozenset(
    {"href", "src", "srcset", "action", "formaction", "poster", "cite", "data", "background"}
)
# http(s), or a path on this site (not "//host", and no "\" that a browser takes for "/").
_WEB_LINK = re.compile(r"(?:https?://|/(?![/\\]))[^\x00-\x20\x7f\\]*", re.IGNORECASE)


def is_web_link(value: str) -> bool:
    """Whether ``value`` is an http(s) URL or a path on the site (nothing a browser would
    run, and nothing it would read as another scheme after removing blanks)."""
    return _WEB_LINK.fullmatch(value) is not None


def stylesheet_of(site: SiteSnapshot, document: str) -> str:
    """The path of the stylesheet of ``document`` (``sitemap_index2``, ``post-sitemap``):
    the core's for an index, the provider's for a page. Read from the provider, not from
    the document's instruction: a document may name no XSL
    (``sitemap_server.xsl_instruction``), and its page for people is made all the same."""
    page = documents.PAGE_DOCUMENT.fullmatch(document)
    provider = None if page is None else site.provider(page.group(1))
    return MAIN_XSL if provider is None else provider.xsl


def includeme(config: Configurator) -> None:
    config.add_route("sitemap.html.root", HTML_ROOT.rstrip("/"))
    config.add_route("sitemap.html.index", HTML_ROOT)
    config.add_route(
        "sitemap.html.page",
        HTML_ROOT + DOCUMENT_ROUTE + ".html",
    )
    for route in ("sitemap.html.root", "sitemap.html.index", "sitemap.html.page"):
        config.add_view(html_view, route_name=route, request_method=("GET", "HEAD"))
    config.add_route("sitemap.css", HTML_ROOT + DOCUMENT_ROUTE + ".css")
    config.add_view(css_view, route_name="sitemap.css", request_method=("GET", "HEAD"))
