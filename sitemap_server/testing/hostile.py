"""A hostile corpus, and what every document and page must still be (issue 14).

Shared by the core's and the plugins' hostile-content tests
(``tests/functional/test_hostile_content.py``, ``plugins/*/tests/test_hostile_*.py``):
text and URLs an attacker sends, written by hand and generated (hypothesis strategies),
and the checks made after: every document the index lists parsed, validated against the
XSDs (``fetch_sitemap``) and its URLs absolute http(s), RFC 3986-valid and under 2,048
characters; every page for people 200, well-formed and linking to nothing but http(s)
URLs and paths on the site.
"""

from __future__ import annotations

import re
from functools import cache
from html.parser import HTMLParser
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

from hypothesis import strategies as st
from lxml import etree

from . import SITE_URL, fetch_sitemap, index_locs

SITE_HOST = urlsplit(SITE_URL).hostname or ""
IMAGE_HOSTS = ["cdn.test", "xn--bcher-kva.test"]  # the second is "bücher.test"
# Characters an attacker reaches for: controls, XML's non-characters, bidi marks, a BOM,
# markup and the end of a CDATA section.
HOSTILE_CHARS = [
    *"\x00\x01\x08\x0b\x0c\x1b\x1f\x7f\x85\x9f\ufffe\uffff\u200e\u200f\u202a\u202e\u2066",
    *"\u2069\ufeff\u00a0\u2028\t\n\r \"'<>&%\\#?/:@[]",
    "]]>",
    "<![CDATA[",
    "<script>alert(1)</script>",
    "é",
    "\U0001f600",
]
HOSTILE_TEXT = [
    "\x01control",
    "U+FFFE \ufffe and U+FFFF \uffff",
    "right\u202eto\u200fleft",
    "]]> ends a CDATA section",
    "<script>alert(1)</script>",
    "quotes \" ' and & ampersands &amp; &#0; &#xFFFE;",
    "tab\tnew\nline\rreturn\x0bvertical\x0cform",
    "\ufeffBOM",
    "x" * 5000,
]
HOSTILE_URLS = [
    "http://127.0.0.1:6611:80/x.png",
    f"http://{SITE_HOST}/a b.png",
    f'http://{SITE_HOST}/"quoted".png',
    f"http://{SITE_HOST}/it's.png",
    f"http://{SITE_HOST}/tab\there.png",
    f"http://{SITE_HOST}/\u200fright-to-left\u202e.png",
    f"http://{SITE_HOST}/\x01control.png",
    f"http://{SITE_HOST}/\ufffe.png",
    f"http://{SITE_HOST}/<angle>&amp.png?a=1&b=<2>#frag ment",
    f"http://{SITE_HOST}/%zz%4.png",
    f"http://{SITE_HOST}:99999/x.png",
    f"http://{SITE_HOST}:0/x.png",
    f"http://{SITE_HOST}:/x.png",
    f"http://{SITE_HOST}:080/x.png",
    f"http://user:secret@{SITE_HOST}/x.png",
    f"http://evil.test@{SITE_HOST}/x.png",
    f"http://{SITE_HOST.upper()}/UPPER.png",
    "javascript:alert(document.domain)",
    "JaVaScRiPt:alert(1)",
    "java\tscript:alert(1)",
    " javascript:alert(1)",
    "data:image/png;base64,iVBORw0KGgo=",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "ftp://cdn.test/x.png",
    "//cdn.test/protocol-relative.png",
    "/\\evil.test/x.png",
    "http://[::1/x.png",
    "http://[::1]/x.png",
    "http://999.999.999.999/x.png",
    "http://1.2.3/x.png",
    "http://-bad-.test/x.png",
    "http://a..b/x.png",
    "http://xn--zz.test/x.png",
    "http://bücher.test/ünïcode.png",
    "http://b\u202eh.test/x.png",
    "https://cdn.test/" + "a" * 3000 + ".png",
    f"http://{SITE_HOST}/" + "é" * 1200 + ".png",
    "../relative/../../up.png",
    "relative with spaces.png",
    "/uploads/\u202e\x01.png",
    "",
    " ",
]


# What every document and page must be ------------------------------------------------

# RFC 3986 characters (percent-encoding checked apart); no space, quote, angle bracket,
# backslash or non-ASCII character.
RFC3986 = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?#\[\]%]+")
BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def assert_web_url(url: str | None) -> str:
    """An absolute http(s) URL, RFC 3986-valid and under 2,048 characters (S-404); its host."""
    assert url is not None
    assert len(url) < 2048, url[:100]
    assert RFC3986.fullmatch(url), url
    assert not BAD_ESCAPE.search(url), url
    parts = urlsplit(url)
    assert parts.scheme in ("http", "https"), url
    assert parts.hostname, url
    assert parts.username is None, url
    port = parts.port  # raises on a bad port
    assert port is None or 0 < port < 65536
    assert "[" not in parts.path + parts.query + parts.fragment, url
    return parts.hostname


def assert_document_urls(root: Any) -> None:
    """Every URL of a parsed document (``loc``, ``*_loc``, ``info``): web URLs; ``loc``
    on the site (S-208), images on the site's host or an allowed one (S-403)."""
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        name = element.tag.rpartition("}")[2]
        if name == "loc" or name.endswith("_loc"):
            host = assert_web_url(element.text)
            parent = element.getparent().tag.rpartition("}")[2]
            if name == "loc" and parent in ("url", "sitemap"):
                assert host == SITE_HOST and "#" not in (element.text or "")
            if parent == "image":
                assert host in (SITE_HOST, *IMAGE_HOSTS), element.text
        if "info" in element.attrib:
            assert_web_url(element.attrib["info"])


class _PageChecker(HTMLParser):
    """Well-formed HTML (every element closed in order), links to web URLs only."""

    VOID = {"meta", "img", "br", "hr", "link", "input", "source", "col", "area", "base", "wbr"}
    LINKS = {"href", "src", "srcset", "action", "formaction", "poster", "data", "background"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.scripts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag not in ("iframe", "object", "embed"), tag
        if tag == "script":  # the stylesheet's own, inline; none from a document
            assert attrs == [], attrs
            self.scripts.append("")
        for name, value in attrs:
            assert not name.startswith("on"), name
            if name in self.LINKS:
                assert value is not None
                assert value.startswith(("http://", "https://")) or (
                    value.startswith("/") and not value.startswith(("//", "/\\"))
                ), value
                if value.startswith("http"):
                    assert_web_url(value)
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        if self.open and self.open[-1] == "script":
            self.scripts[-1] += data

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, (tag, self.open[-3:])
        self.open.pop()


@cache
def stylesheet_script() -> str:
    """The one script a page for people runs: the table's filter, as ``main-sitemap.xsl``
    writes it (``filter-script``)."""
    source = files("sitemap_server").joinpath("static/main-sitemap.xsl").read_bytes()
    xsl = {"xsl": "http://www.w3.org/1999/XSL/Transform"}
    script: str = etree.fromstring(source).xpath(
        "string(//xsl:template[@name='filter-script']/script)", namespaces=xsl
    )
    return script.strip()


def assert_safe_page(text: str) -> None:
    checker = _PageChecker()
    checker.feed(text)
    checker.close()
    assert checker.open == [], checker.open
    assert [script.strip() for script in checker.scripts] in ([], [stylesheet_script()])


def check_everything(testapp: Any) -> None:
    """Every document the index lists, and every page for people."""
    names = []
    for loc in index_locs(testapp):
        path = urlsplit(loc).path
        assert_document_urls(fetch_sitemap(testapp, path))
        names.append(path.strip("/").removesuffix(".xml"))
    for page in ["/sitemaps/", *(f"/sitemaps/{name}.html" for name in names)]:
        response = testapp.get(page, status=200)
        assert response.content_type == "text/html"
        assert_safe_page(response.text)


# Generated -------------------------------------------------------------------------------

hostile_text = st.one_of(
    st.text(max_size=80),  # any character but a lone surrogate
    st.lists(st.sampled_from([*HOSTILE_CHARS, "a", "Z", "0", " "]), max_size=30).map("".join),
)
hosts = st.sampled_from(
    [
        SITE_HOST,
        SITE_HOST.upper(),
        "cdn.test",
        "bücher.test",
        "xn--bcher-kva.test",
        "elsewhere.test",
        "127.0.0.1",
        "[::1]",
        "[::1",
        "999.1.1.1",
        "a..b",
        "-x.test",
        f"{SITE_HOST}.",
        "xn--zz.test",
        "b\u202eh.test",
        "user:pw@" + SITE_HOST,
        "",
    ]
)
ports = st.one_of(
    st.just(""),
    st.integers(-5, 70_000).map(lambda n: f":{n}"),
    st.sampled_from([":", ":80:80", ":6611:80", ":8o", ":\u0661", ": 80"]),
)
schemes = st.sampled_from(
    ["http://", "https://", "HTTP://", "javascript:", "data:image/png,", "ftp://", "//", "", " "]
)
tails = st.one_of(
    st.just(""),
    hostile_text.map(lambda t: "?" + t),
    hostile_text.map(lambda t: "#" + t),
    st.integers(1990, 2100).map(lambda n: "/" + "y" * n),
)
hostile_urls = st.one_of(
    st.builds(
        lambda scheme, host, port, path, tail: f"{scheme}{host}{port}/{path}{tail}",
        schemes,
        hosts,
        ports,
        hostile_text,
        tails,
    ),
    hostile_text,  # not even trying to look like a URL
)
