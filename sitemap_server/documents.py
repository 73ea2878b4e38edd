"""The documents the read path serves and their URLs, in one place: the sitemap index and
its parts, each sitemap's pages, the pages for people and their stylesheets.

The routes (``sitemaps/views.py``, ``sitemaps/html.py``), ``explain``, the index's
entries (``sitemaps/rendering.py``), the pings and the rule that keeps content off these
paths (``content/urls.py``) all read them here. It imports nothing of the application.
"""

from __future__ import annotations

import re

# The protocol's limit of sitemaps per provider (S-304); a larger number is a page that
# cannot exist, answered without asking the database (which may not hold such an int),
# and pages past it are listed in no index.
MAX_PAGES = 50_000
# The protocol's limit of sitemaps one index lists (S-311). Past it the index is split:
# sitemap_index.xml, sitemap_index2.xml, ... (Google accepts no index of indexes), and
# robots.txt names every one.
SITEMAPS_PER_INDEX = 50_000
# Index files a URL may name (Google reads at most 500 per site); a larger number is
# answered 404 without asking the database.
MAX_INDEXES = 500
INDEX = "sitemap_index"
# The sitemaps as pages for people, rendered from their XSL (``sitemaps/html.py``).
HTML_ROOT = "/sitemaps/"
# The stylesheets the providers carry (``Provider.xsl``): one path segment, ``.xsl``.
XSL_ROUTE = "/{stylesheet:[^/]+}.xsl"

# A sitemap's name in its URLs (a provider's: ``post``, ``post_tag``), and a page or part
# number ("" for the first; ``0``, ``1`` and zero-padded ones move to the canonical URL).
NAME = "[a-z0-9_]+"
NUMBER = "[0-9]*"

# The forms of a document, its URL's suffix (S-313): the XML; the same bytes gzipped, as
# a file (what the gzip transfer of the XML sends); a page's URLs as plain text, one a
# line (the protocol's text sitemap; pages only: an index of text files is no format).
XML = "xml"
GZIP_FILE = "xml.gz"
TEXT = "txt"
INDEX_FORMS = (XML, GZIP_FILE)
PAGE_FORMS = (XML, GZIP_FILE, TEXT)
# The Atom feed of the most recently changed URLs (``sitemaps/feed.py``), a form of its
# own.
FEED = "atom"
FEED_PATH = "/sitemap.atom"
# Each set of forms as a regular expression's alternatives.
_INDEX_FORMS = "|".join(map(re.escape, INDEX_FORMS))
_PAGE_FORMS = "|".join(map(re.escape, PAGE_FORMS))

# Route patterns: the index's parts, a sitemap's pages (each in its forms), and a
# document as a page for people (``.html``) or as plain XML's stylesheet (``.css``)
# under ``HTML_ROOT``.
INDEX_ROUTE = f"/{INDEX}{{number:{NUMBER}}}.{{form:{_INDEX_FORMS}}}"
PAGE_ROUTE = f"/{{name:{NAME}}}-sitemap{{number:{NUMBER}}}.{{form:{_PAGE_FORMS}}}"
# Where crawlers look first (``/sitemap.xml``): moved to the index, in the same form.
LEGACY_INDEX_ROUTE = f"/sitemap.{{form:{_INDEX_FORMS}}}"
DOCUMENT_ROUTE = f"{{document:{INDEX}{NUMBER}|{NAME}-sitemap{NUMBER}}}"

# A document's name (``documents.sitemap_name``, ``index_name``): group 1 a page's sitemap.
INDEX_DOCUMENT = re.compile(rf"{INDEX}({NUMBER})")
PAGE_DOCUMENT = re.compile(rf"({NAME})-sitemap{NUMBER}")

# The same as paths (``explain``): group 1 a page's sitemap name, the next its number
# (at most 9 digits: more name no page).
PAGE_PATH = re.compile(rf"^/({NAME})-sitemap([0-9]{{0,9}})\.xml$")
INDEX_PATH = re.compile(rf"^/{INDEX}([0-9]{{0,9}})\.xml$")

# Every path the read path answers: what no content may have as its URL.
_HTML_DIR = HTML_ROOT.strip("/")
READ_PATH = re.compile(
    rf"^/({INDEX}{NUMBER}\.(?:{_INDEX_FORMS})|sitemap\.(?:{_INDEX_FORMS})"
    rf"|{re.escape(FEED_PATH[1:])}|robots\.txt|{NAME}-sitemap{NUMBER}\.(?:{_PAGE_FORMS})|[^/]+\.xsl"
    rf"|{_HTML_DIR}/?|{_HTML_DIR}/[a-z0-9_-]+\.(?:html|css))$"
)


def sitemap_name(name: str, page: int) -> str:
    """The document that is page ``page`` of sitemap ``name``: ``post-sitemap2``."""
    return f"{name}-sitemap{'' if page == 1 else page}"


def sitemap_path(name: str, page: int, form: str = XML) -> str:
    """Where page ``page`` of sitemap ``name`` is, on the site (in ``form``)."""
    return f"/{sitemap_name(name, page)}.{form}"


def sitemap_url(site_url: str, name: str, page: int, form: str = XML) -> str:
    return site_url + sitemap_path(name, page, form)


def index_name(part: int) -> str:
    """The document that is part ``part`` of the index: ``sitemap_index2``."""
    return f"{INDEX}{'' if part == 1 else part}"


def index_path(part: int, form: str = XML) -> str:
    return f"/{index_name(part)}.{form}"


def index_url(site_url: str, part: int = 1) -> str:
    return site_url + index_path(part)


def html_url(site_url: str, document: str) -> str:
    """Where people see ``document`` (``sitemap_index``, ``post-sitemap2``) as a page."""
    page = "" if document == INDEX else f"{document}.html"
    return f"{site_url}{HTML_ROOT}{page}"


def css_path(document: str) -> str:
    """The stylesheet that makes ``document`` legible as plain XML, in a browser without
    XSLT: it names the page for people (``html.css_view``)."""
    return f"{HTML_ROOT}{document}.css"


def beyond(number: str, last: int) -> bool:
    """Whether a page number from a URL (digits) is past ``last``, however long it is."""
    digits = number.lstrip("0")
    return len(digits) > len(str(last)) or (bool(digits) and int(digits) > last)


def canonical(number: str) -> int | None:
    """The page a number that is not its page's canonical form means: ``0``, ``1`` and
    zero-padded numbers (``02``) move to the canonical URL (S-303); None for one that
    is canonical already ("" for the first, then ``2``, ``3``...)."""
    if number and (number.startswith("0") or number == "1"):
        return max(int(number.lstrip("0") or "0"), 1)
    return None


# Cache tags (S-314): what a cache in front keeps with each answer, and what a purge names.
# Every answer of the read path carries ALL_TAG; a document its own (``doc:post-sitemap2``:
# all its forms, its page for people and its CSS), a sitemap's page its provider's
# (``provider:post``), every part of the index INDEX_TAG. The maintainer names the tags
# of what each pass changed (``sitemaps/touched.py``).
ALL_TAG = "sitemaps"
INDEX_TAG = "index"
STYLESHEETS_TAG = "stylesheets"
ROBOTS = "robots.txt"


def document_tag(document: str) -> str:
    """The tag of the document ``document`` (``post-sitemap2``, ``sitemap_index``,
    ``robots.txt``, ``sitemap.atom``)."""
    return f"doc:{document}"


def provider_tag(name: str) -> str:
    """The tag of every page of the sitemap ``name``."""
    return f"provider:{name}"


def document_tags(document: str) -> tuple[str, ...]:
    """The tags of ``document`` (``sitemap_index2``, ``post-sitemap``) besides
    ``ALL_TAG``: its own, and its provider's or the index's."""
    if INDEX_DOCUMENT.fullmatch(document):
        return (INDEX_TAG, document_tag(document))
    page = PAGE_DOCUMENT.fullmatch(document)
    assert page is not None, document
    return (provider_tag(page.group(1)), document_tag(document))


FEED_TAG = document_tag(FEED_PATH.lstrip("/"))
ROBOTS_TAG = document_tag(ROBOTS)
