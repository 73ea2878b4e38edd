"""What a test asserts about answers: problem details, sitemap documents valid against the
official XSDs, 404s."""

from __future__ import annotations

from functools import cache
from typing import Any

from .fixtures import SCHEMAS_DIR

PROBLEM_JSON = "application/problem+json"


def assert_problem(response: Any, status: int, field: str | None = None) -> dict[str, Any]:
    """A problem-details answer with ``status``, naming ``field`` when one is given."""
    assert response.status_int == status
    assert response.content_type == PROBLEM_JSON
    body: dict[str, Any] = response.json
    assert body["status"] == status
    assert body["title"]
    if field is not None:
        assert field in [e.get("field") for e in body.get("errors", [])], body
    return body


SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def xml_parser() -> Any:
    """An lxml parser that never fetches anything nor expands entities."""
    from lxml import etree

    return etree.XMLParser(no_network=True, resolve_entities=False)


def browser_stylesheet(app: Any, path: str) -> Any:
    """The XSL that ``app`` (a WebTest client) serves at ``path``, compiled as a browser
    compiles it: what it imports (a plugin's stylesheet imports ``main-sitemap.xsl``) read
    from the same site, nothing from anywhere else."""
    from lxml import etree

    class FromTheSite(etree.Resolver):
        def resolve(self, url: str, _id: str, context: Any) -> Any:
            if not url.startswith(BROWSER_ORIGIN + "/"):
                return None
            return self.resolve_string(app.get(url.removeprefix(BROWSER_ORIGIN)).body, context)

    parser = xml_parser()
    parser.resolvers.add(FromTheSite())
    source = etree.fromstring(app.get(path).body, parser, base_url=BROWSER_ORIGIN + path)
    return etree.XSLT(source, access_control=etree.XSLTAccessControl.DENY_ALL)


# Where ``browser_stylesheet`` pretends the stylesheets are.
BROWSER_ORIGIN = "http://browser.test"


@cache
def sitemap_schemas(kind: str) -> tuple[Any, ...]:
    """The current and 2009 XSDs for ``urlset`` or ``sitemapindex``, compiled once."""
    from lxml import etree

    # Urlsets: the official schemas and the XHTML link of hreflang (schemas/SOURCES.md).
    name = "sitemap-with-hreflang.xsd" if kind == "urlset" else "siteindex.xsd"
    return tuple(
        etree.XMLSchema(etree.parse(str(directory / name), xml_parser()))
        for directory in (SCHEMAS_DIR, SCHEMAS_DIR / "legacy-2009")
    )


def parse_sitemap(body: bytes) -> Any:
    """A sitemap document: UTF-8, well-formed, in the sitemaps namespace, and valid against
    both XSD revisions unless it is empty (the XSDs demand an entry; S-307)."""
    from lxml import etree

    body.decode("utf-8")
    root = etree.fromstring(body, xml_parser())
    assert root.getroottree().docinfo.encoding.upper() == "UTF-8"
    kind = etree.QName(root).localname
    assert etree.QName(root).namespace == SITEMAP_NS
    assert kind in ("urlset", "sitemapindex")
    if len(root):
        for schema in sitemap_schemas(kind):
            schema.assertValid(root)
    return root


X_ROBOTS_TAG = "noindex, follow"
NOT_FOUND_MAX_BYTES = 1024


def fetch_sitemap(app: Any, path: str) -> Any:
    """The parsed sitemap at ``path`` (200, XML, the robots header; see ``parse_sitemap``)."""
    response = app.get(path, status=200)
    assert response.headers["Content-Type"] == "text/xml; charset=UTF-8"
    assert response.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    return parse_sitemap(response.body)


def index_locs(app: Any) -> list[str]:
    """The sitemaps the index lists, in order."""
    root = fetch_sitemap(app, "/sitemap_index.xml")
    assert root.tag == f"{{{SITEMAP_NS}}}sitemapindex"
    return [loc.text for loc in root.iterfind("s:sitemap/s:loc", {"s": SITEMAP_NS})]


def url_locs(app: Any, path: str) -> list[str]:
    """The ``<loc>`` of each ``<url>`` of the sitemap at ``path``, in order."""
    root = fetch_sitemap(app, path)
    return [loc.text for loc in root.iterfind("s:url/s:loc", {"s": SITEMAP_NS})]


def assert_not_found(app: Any, path: str) -> None:
    """S-305: 404, the robots header, a small body (well-formed if XML), no stack trace."""
    from lxml import etree

    response = app.get(path, status=404)
    assert response.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    assert response.content_type in ("text/plain", "text/xml", "application/xml")
    assert len(response.body) < NOT_FOUND_MAX_BYTES
    assert b"Traceback" not in response.body
    if response.content_type != "text/plain":
        etree.fromstring(response.body, xml_parser())
