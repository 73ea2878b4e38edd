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

from ..documents import DOCUMENT_ROUTE, HTML_ROOT, INDEX, html_url
from .responses import (
    X_ROBOTS_TAG,
    RenderCache,
    Rendered,
    accepts_gzip,
    not_found,
    not_modified,
    pack,
    send,
)
from .views import moved, stylesheet_file

# lxml is imported by the first page for people, in each function that uses it: a
# process that serves only XML does without it (~5 MB).
if TYPE_CHECKING:
    from lxml import etree


class Stylesheets:
    """Each XSL compiled once per thread (an lxml XSLT object is not shared across them)."""

    def __init__(self) -> None:
        self.local = threading.local()

    def get(self, asset: str) -> etree.XSLT:
        """The stylesheet ``asset`` (a Pyramid asset spec), compiled."""
        compiled: dict[str, etree.XSLT] = self.local.__dict__.setdefault("compiled", {})
        if asset not in compiled:
            from lxml import etree

            compiled[asset] = etree.XSLT(etree.fromstring(stylesheet_file(asset)[0], parser()))
        return compiled[asset]


@cache
def parser() -> etree.XMLParser:
    from lxml import etree

    return etree.XMLParser(no_network=True, resolve_entities=False, huge_tree=True)


def html_view(request: Request) -> Response:
    document = request.matchdict.get("document") or INDEX
    site_url = request.read_state.site.site_url
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
            page = cache.get(key) or _page(request, xml, site_url, xml_path, etag)
            if page is None:
                return not_found(request, request.path)
            cache.put(key, page)
    response = Response(content_type="text/html", charset="UTF-8")
    return send(request, response, page, wants_gzip)


def _page(
    request: Request, xml: Response, site_url: str, xml_path: str, etag: str
) -> Rendered | None:
    """The page for people of ``xml``: its stylesheet applied; None when it names none."""
    from lxml import etree

    tree = etree.fromstring(xml.body, parser()).getroottree()
    stylesheet = _stylesheet_of(request, tree)
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


# Plain XML made legible (a browser without XSLT renders the XML itself, with this):
# each entry's loc and lastmod, the rest hidden, and first the page for people.
CSS = """/* A sitemap, for search engines, shown as plain XML: its page for people is named. */
@namespace s url(http://www.sitemaps.org/schemas/sitemap/0.9);
:root {{ display: block; margin: 1em; font: 14px/1.5 system-ui, sans-serif; }}
:root::before {{
  content: "A sitemap, for search engines. People read it at " "{url}";
  display: block; margin-bottom: 1em; font-weight: bold;
}}
s|url, s|sitemap {{ display: block; margin: 0 0 .6em; }}
s|loc {{ display: block; }}
s|lastmod {{ display: block; color: #555; font-size: 12px; }}
s|url > :not(s|loc):not(s|lastmod) {{ display: none; }}
"""


def css_view(request: Request) -> Response:
    """The stylesheet a document names besides its XSL (``documents.css_path``)."""
    document = request.matchdict["document"]
    url = html_url(request.read_state.site.site_url, document)
    text = CSS.format(url=css_string(url))
    response = Response(text, content_type="text/css", charset="UTF-8")
    response.headers["X-Robots-Tag"] = X_ROBOTS_TAG
    response.cache_control = request.registry.settings["sitemap_server.cache_control"]
    response.md5_etag()
    response.conditional_response = True
    return response


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


def _stylesheet_of(request: Request, tree: Any) -> etree.XSLT | None:
    """The stylesheet the document names in its ``xml-stylesheet`` instruction."""
    from lxml import etree

    node = tree.getroot().getprevious()
    while node is not None:
        if isinstance(node, etree._XSLTProcessingInstruction):
            href = node.get("href") or ""
            asset = request.read_state.site.stylesheets.get(urlsplit(href).path)
            stylesheets: Stylesheets = request.site.stylesheets
            return None if asset is None else stylesheets.get(asset)
        node = node.getprevious()
    return None


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
