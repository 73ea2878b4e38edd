"""The sitemaps for people (S-308): the XSL a browser applies, and the same XSL applied
on the server for ``/sitemaps/`` and ``/sitemaps/{name}.html``. Crawlers always get XML.

The pages are parsed as HTML and checked for what a person sees: the counts, the table
rows, the links between the two views. (tests/e2e opens them in a real browser.)
"""

import gzip
import re
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree, html
from webob import Request

from sitemap_server.sitemaps.rendering import PRIVATE_NOTE
from sitemap_server.testing import SITE_URL, browser_stylesheet, parse_sitemap

JAN = "2024-01-10T12:00:00+00:00"
NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}


@pytest.fixture
def site(api):
    for n in range(3):
        api.post_json(
            "/api/posts",
            {
                "type": "post",
                "status": "publish",
                "title": f"Post {n}",
                "slug": f"post-{n}",
                "published_at": JAN,
                "content": f'<p><img src="/uploads/{n}.jpg"></p>' if n == 0 else "",
            },
            status=201,
        )
    api.post_json(
        "/api/posts",
        {"type": "page", "status": "publish", "title": "About", "slug": "about"},
        status=201,
    )
    return api


def page(app, path, status=200):
    response = app.get(path, status=status)
    if status == 200:
        assert response.content_type == "text/html"
        assert response.headers["X-Robots-Tag"] == "noindex, follow"
        return html.fromstring(response.body)
    return response


def texts(doc, xpath):
    return [" ".join(e.text_content().split()) for e in doc.xpath(xpath)]


def test_the_index_page_lists_every_sitemap_with_links_to_their_pages(site, testapp):
    index = parse_sitemap(testapp.get("/sitemap_index.xml").body)
    locs = [loc.text for loc in index.iterfind("s:sitemap/s:loc", NS)]
    doc = page(testapp, "/sitemaps/")
    assert texts(doc, "//*[@id='count']") == [
        f"This XML sitemap index contains {len(locs)} sitemaps."
    ]
    rows = doc.xpath("//table[@id='sitemaps']/tbody/tr")
    assert [row.xpath("string(td[1]/a)") for row in rows] == locs
    assert [row.xpath("string(td[1]/a/@href)") for row in rows] == [
        loc.replace(f"{SITE_URL}/", f"{SITE_URL}/sitemaps/").replace(".xml", ".html")
        for loc in locs
    ]
    assert doc.xpath("string(//a[@id='xml-view']/@href)") == f"{SITE_URL}/sitemap_index.xml"


def test_a_sitemap_page_lists_its_urls_images_and_dates(site, testapp):
    urlset = parse_sitemap(testapp.get("/post-sitemap.xml").body)
    locs = [loc.text for loc in urlset.iterfind("s:url/s:loc", NS)]
    doc = page(testapp, "/sitemaps/post-sitemap.html")
    assert texts(doc, "//*[@id='count']") == [f"This XML sitemap contains {len(locs)} URLs."]
    rows = doc.xpath("//table[@id='urls']/tbody/tr")
    assert [row.xpath("string(td[1]/a/@href)") for row in rows] == locs
    images = dict(zip(locs, (row.xpath("string(td[2])").strip() for row in rows), strict=True))
    assert images[f"{SITE_URL}/2024/01/post-0/"] == "1"
    assert images[f"{SITE_URL}/2024/01/post-1/"] == "0"
    assert "2024-01-10 12:00 (+00:00)" in texts(doc, "//td[@class='date']")
    assert doc.xpath("string(//a[@id='xml-view']/@href)") == f"{SITE_URL}/post-sitemap.xml"
    assert doc.xpath("string(//a[@id='index']/@href)") == f"{SITE_URL}/sitemaps/"


def test_the_xml_names_its_page_and_its_stylesheet(site, testapp):
    for path, html_path in (
        ("/sitemap_index.xml", "/sitemaps/"),
        ("/post-sitemap.xml", "/sitemaps/post-sitemap.html"),
    ):
        root = parse_sitemap(testapp.get(path).body)
        before = list(root.itersiblings(preceding=True))
        instructions = [
            (node.target, node.text)
            for node in reversed(before)  # in document order
            if isinstance(node, etree._ProcessingInstruction)
        ]
        name = "sitemap_index" if path == "/sitemap_index.xml" else "post-sitemap"
        assert instructions == [
            ("xml-stylesheet", 'type="text/xsl" href="/main-sitemap.xsl"'),
            # For a browser without XSLT: the XML itself made legible (below).
            ("xml-stylesheet", f'type="text/css" href="/sitemaps/{name}.css"'),
            ("html-view", SITE_URL + html_path),
            # The site's name, which the views show.
            ("site-title", "My Site"),
        ]
        # For whoever reads the source: a comment naming the page for people.
        comments = [node.text for node in before if isinstance(node, etree._Comment)]
        assert comments == [
            f" A sitemap, for search engines. People read it at {SITE_URL + html_path} "
        ]


def test_a_site_url_with_a_double_hyphen_still_makes_a_well_formed_comment(api, testapp):
    """An IDN host (``xn--``) puts ``--`` in the URL, which no XML comment may hold."""
    api.patch_json("/api/settings", {"site_url": "https://xn--bcher-kva.example"}, status=200)
    for path in ("/sitemap_index.xml", "/post-sitemap.xml"):
        root = parse_sitemap(testapp.get(path).body)
        (comment,) = [n for n in root.itersiblings(preceding=True) if isinstance(n, etree._Comment)]
        url = comment.text.split(" at ")[1].strip()
        assert "--" not in comment.text
        assert unquote(url).startswith("https://xn--bcher-kva.example/sitemaps/")


def test_the_stylesheet_in_a_browser_links_to_the_page(site, testapp):
    """What a browser shows: the XSL applied to the XML as served (view='xml')."""
    xsl = browser_stylesheet(testapp, "/main-sitemap.xsl")
    xml = etree.fromstring(testapp.get("/post-sitemap.xml").body).getroottree()
    doc = html.fromstring(bytes(xsl(xml)))
    assert (
        doc.xpath("string(//a[@id='html-view']/@href)") == f"{SITE_URL}/sitemaps/post-sitemap.html"
    )
    locs = [loc.text for loc in xml.getroot().iterfind("s:url/s:loc", NS)]
    rows = doc.xpath("//table[@id='urls']/tbody/tr")
    assert [row.xpath("string(td[1]/a/@href)") for row in rows] == locs
    assert doc.xpath("string(//a[@id='index']/@href)") == f"{SITE_URL}/sitemap_index.xml"


def test_links_follow_a_site_url_with_a_path(site, api, testapp):
    blog = "https://www.example.test/blog"
    api.patch_json("/api/settings", {"site_url": blog}, status=200)
    xsl = browser_stylesheet(testapp, "/main-sitemap.xsl")
    xml = etree.fromstring(testapp.get("/post-sitemap.xml").body).getroottree()
    in_browser = html.fromstring(bytes(xsl(xml)))
    assert in_browser.xpath("string(//a[@id='index']/@href)") == f"{blog}/sitemap_index.xml"
    assert in_browser.xpath("string(//a[@id='html-view']/@href)") == (
        f"{blog}/sitemaps/post-sitemap.html"
    )
    served = page(testapp, "/sitemaps/post-sitemap.html")
    assert served.xpath("string(//a[@id='index']/@href)") == f"{blog}/sitemaps/"
    assert served.xpath("string(//a[@id='xml-view']/@href)") == f"{blog}/post-sitemap.xml"


def test_dates_are_in_the_sites_time_zone(site, api, testapp):
    api.patch_json("/api/settings", {"timezone": "Europe/Paris"}, status=200)
    urlset = parse_sitemap(testapp.get("/post-sitemap.xml").body)
    assert {e.text for e in urlset.iterfind("s:url/s:lastmod", NS)} == {"2024-01-10T13:00:00+01:00"}
    doc = page(testapp, "/sitemaps/post-sitemap.html")
    assert "2024-01-10 13:00 (+01:00)" in texts(doc, "//td[@class='date']")


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/sitemaps", "/sitemaps/"),
        ("/sitemaps/sitemap_index.html", "/sitemaps/"),
        ("/sitemaps/post-sitemap1.html", "/sitemaps/post-sitemap.html"),
    ],
)
def test_other_spellings_redirect(site, testapp, path, location):
    response = testapp.get(path, status=301)
    assert response.location == SITE_URL + location


@pytest.mark.parametrize(
    "path", ["/sitemaps/nothing-sitemap.html", "/sitemaps/post-sitemap9.html", "/sitemaps/x.html"]
)
def test_pages_of_sitemaps_that_do_not_exist_are_404(site, testapp, path):
    assert testapp.get(path, status=404).headers["X-Robots-Tag"] == "noindex, follow"


def in_browser(app, path):
    """What a browser with XSLT shows of the XML at ``path``: its XSL applied to it as
    served (view='xml'), as lxml does it (tests/e2e does it in Chromium)."""
    xsl = browser_stylesheet(app, "/main-sitemap.xsl")
    xml = etree.fromstring(app.get(path).body).getroottree()
    return html.fromstring(bytes(xsl(xml)))


def css_rules(app, name):
    """The CSS a browser lays the XML of ``name`` out with when it applies no XSL, with its
    strings read back (``css_string``'s escapes undone)."""
    text = app.get(f"/sitemaps/{name}.css").text
    return re.sub(r"\\([0-9a-f]{1,6}) ?", lambda m: chr(int(m.group(1), 16)), text)


def test_a_private_site_says_so_and_why_in_every_view(site, api, testapp):
    """The classic foot-gun ("discourage search engines" left on): every view of every
    document says the site is private, why nothing is listed, and how to change it."""
    for name, path in (
        ("sitemap_index", "/sitemaps/"),
        ("post-sitemap", "/sitemaps/post-sitemap.html"),
    ):
        for view in (page(testapp, path), in_browser(testapp, f"/{name}.xml")):
            assert view.xpath("//*[@id='private']") == []
            assert view.xpath("//*[@id='count']")
        assert "private" not in css_rules(testapp, name)
    api.patch_json("/api/settings", {"private": True}, status=200)

    index = page(testapp, "/sitemaps/")
    assert index.xpath("//table[@id='sitemaps']/tbody/tr") == []
    for name, path in (
        ("sitemap_index", "/sitemaps/"),
        ("post-sitemap", "/sitemaps/post-sitemap.html"),
    ):
        xml = parse_sitemap(testapp.get(f"/{name}.xml").body)
        (note,) = [
            node.text
            for node in xml.itersiblings(preceding=True)
            if isinstance(node, etree._ProcessingInstruction) and node.target == "site-private"
        ]
        assert note == PRIVATE_NOTE
        for view in (page(testapp, path), in_browser(testapp, f"/{name}.xml")):
            assert texts(view, "//*[@id='private']") == [PRIVATE_NOTE]
        assert PRIVATE_NOTE in css_rules(testapp, name)
    assert "Discourage search engines" in PRIVATE_NOTE and '"private": false' in PRIVATE_NOTE


def test_the_index_names_the_site_and_counts_the_urls_of_each_sitemap(site, api, testapp):
    """In both views of the index: the site's title (linked to the site) and, for each
    sitemap, how many URLs its XML lists; the CSS view says the same numbers."""
    api.patch_json("/api/settings", {"title": "Tom & Jerry ?> <Shorts>"}, status=200)
    index = parse_sitemap(testapp.get("/sitemap_index.xml").body)
    locs = [loc.text for loc in index.iterfind("s:sitemap/s:loc", NS)]
    counts = [
        str(len(parse_sitemap(testapp.get(loc.removeprefix(SITE_URL)).body).findall("s:url", NS)))
        for loc in locs
    ]
    assert len(locs) >= 2 and "0" not in counts
    shown = "Tom & Jerry ? > <Shorts>"
    for view in (page(testapp, "/sitemaps/"), in_browser(testapp, "/sitemap_index.xml")):
        assert texts(view, "//*[@id='site']") == [shown]
        assert view.xpath("string(//*[@id='site']/a/@href)") == f"{SITE_URL}/"
        assert view.xpath("string(//title)").strip() == f"XML Sitemap Index · {shown}"
        rows = view.xpath("//table[@id='sitemaps']/tbody/tr")
        assert [row.xpath("string(td[1]/a)") for row in rows] == locs
        assert [row.xpath("normalize-space(td[@class='number urls'])") for row in rows] == counts
    css = css_rules(testapp, "sitemap_index")
    assert f'"{shown}"' in css
    assert re.findall(r'nth-of-type\((\d+)\)::after \{ content: "(\d+) URLs?"', css) == [
        (str(n), count) for n, count in enumerate(counts, start=1)
    ]


def test_a_site_without_a_title_is_named_by_its_host(site, api, testapp):
    api.patch_json("/api/settings", {"title": ""}, status=200)
    doc = page(testapp, "/sitemaps/post-sitemap.html")
    assert texts(doc, "//*[@id='site']") == [SITE_URL.split("//")[1]]
    assert doc.xpath("string(//title)").strip() == f"XML Sitemap · {SITE_URL.split('//')[1]}"


def test_the_css_view_counts_as_the_xsl_view_does(site, testapp):
    """The sentence a browser without XSLT shows first is the XSL view's count sentence,
    counted by a CSS counter over the entries (no number the XML does not hold)."""
    assert 'content: "This XML sitemap contains " counter(entries) " URLs."' in css_rules(
        testapp, "post-sitemap"
    )
    assert 'content: "This XML sitemap index contains " counter(entries) " sitemaps."' in (
        css_rules(testapp, "sitemap_index")
    )


def test_without_the_xsl_instruction_the_documents_name_only_their_css(site, app_for, testapp):
    """``sitemap_server.xsl_instruction = false``: no browser applies an XSL (no
    deprecation banner); the CSS lays the XML out and the pages for people are made as
    before, from the providers' stylesheets. The document is another: another ETag."""
    plain = app_for(**{"sitemap_server.xsl_instruction": "false"})
    for path, name in (
        ("/sitemap_index.xml", "sitemap_index"),
        ("/post-sitemap.xml", "post-sitemap"),
    ):
        with_xsl, without = testapp.get(path), plain.get(path)
        root = parse_sitemap(without.body)
        targets = [
            (node.target, node.text)
            for node in reversed(list(root.itersiblings(preceding=True)))
            if isinstance(node, etree._ProcessingInstruction)
        ]
        assert targets[0] == ("xml-stylesheet", f'type="text/css" href="/sitemaps/{name}.css"')
        assert not any("text/xsl" in text for _, text in targets)
        assert etree.tostring(root) == etree.tostring(parse_sitemap(with_xsl.body))
        assert without.etag != with_xsl.etag
        plain.get(path, headers={"If-None-Match": with_xsl.headers["ETag"]}, status=200)
    assert page(plain, "/sitemaps/post-sitemap.html").xpath("//table[@id='urls']/tbody/tr")
    assert page(plain, "/sitemaps/").xpath("//table[@id='sitemaps']/tbody/tr")


@pytest.mark.parametrize(
    "accept",
    [None, "*/*", "application/xml", "text/html,application/xml;q=0.9", "text/html"],
)
@pytest.mark.parametrize("path", ["/sitemap_index.xml", "/post-sitemap.xml"])
def test_crawlers_always_get_xml(site, testapp, path, accept):
    headers = {"Accept": accept} if accept else {}
    response = testapp.get(path, headers=headers, status=200)
    assert response.content_type == "text/xml"
    parse_sitemap(response.body)


def test_the_page_revalidates_like_the_xml(site, testapp):
    first = testapp.get("/sitemaps/post-sitemap.html")
    assert first.etag
    again = testapp.get(
        "/sitemaps/post-sitemap.html", headers={"If-None-Match": f'"{first.etag}"'}, status=304
    )
    assert again.body == b""
    site.patch_json("/api/posts/1", {"title": "Renamed"}, status=200)
    changed = testapp.get(
        "/sitemaps/post-sitemap.html", headers={"If-None-Match": f'"{first.etag}"'}, status=200
    )
    assert changed.etag != first.etag


def test_the_page_is_made_once_per_version_of_its_xml(site, testapp, monkeypatch):
    """A page for people costs an XSLT transformation (about a second for 50,000 URLs): it
    is kept, like the XML, until the document changes."""
    from sitemap_server.sitemaps import html as html_views

    made = []
    real = html_views._page

    def counted(*args):
        made.append(args[1])
        return real(*args)

    monkeypatch.setattr(html_views, "_page", counted)
    bodies = {testapp.get("/sitemaps/post-sitemap.html", status=200).body for _ in range(3)}
    assert made == ["post-sitemap"] and len(bodies) == 1
    site.patch_json("/api/posts/1", {"title": "Renamed"}, status=200)
    changed = testapp.get("/sitemaps/post-sitemap.html", status=200)
    assert made == ["post-sitemap"] * 2
    assert changed.body != bodies.pop()


def test_the_page_is_gzipped_for_browsers_that_accept_it(site, testapp):
    def raw(**headers):  # what the application sends (WebTest would decompress it)
        return Request.blank("/sitemaps/post-sitemap.html", headers=headers).get_response(
            testapp.app
        )

    plain = raw(**{"Accept-Encoding": "identity"})
    zipped = raw(**{"Accept-Encoding": "gzip, deflate, br"})
    assert plain.content_encoding is None and zipped.content_encoding == "gzip"
    assert zipped.headers["Vary"] == "Accept-Encoding"
    assert gzip.decompress(zipped.body) == plain.body
    assert zipped.etag != plain.etag
    assert html.fromstring(plain.body).xpath("count(//table[@id='urls']/tbody/tr)") == 4
    again = raw(**{"Accept-Encoding": "gzip", "If-None-Match": zipped.headers["ETag"]})
    assert again.status_int == 304


@pytest.mark.parametrize(
    ("path", "page"),
    [
        ("/sitemaps/sitemap_index.css", "/sitemaps/"),
        ("/sitemaps/post-sitemap.css", "/sitemaps/post-sitemap.html"),
        ("/sitemaps/post-sitemap2.css", "/sitemaps/post-sitemap2.html"),
    ],
)
def test_the_css_for_plain_xml_names_the_page_for_people(site, testapp, path, page):
    response = testapp.get(path, status=200)
    assert response.content_type == "text/css"
    assert response.headers["X-Robots-Tag"] == "noindex, follow"
    assert f'"{SITE_URL}{page}"' in response.text
    testapp.get(path, headers={"If-None-Match": response.headers["ETag"]}, status=304)


@given(st.text())
def test_a_css_string_holds_any_text(text):
    """What ``css_string`` writes reads back as the text (CSS Syntax 4.3.7: a backslash,
    up to six hex digits and one space) and never ends the string or the line."""
    from sitemap_server.sitemaps.html import css_string

    written = css_string(text)
    assert not set(written) & set('"\n\r\f')
    read = re.sub(r"\\([0-9a-f]{1,6}) ?", lambda m: chr(int(m.group(1), 16)), written)
    assert read == text


@pytest.mark.parametrize(
    "path",
    [
        "/sitemaps/x.css",
        "/sitemaps/post-sitemap.css/x",
        # An index file past the last one there may be, however long its number.
        "/sitemaps/sitemap_index501.css",
        "/sitemaps/sitemap_index99999999999999999999999.css",
    ],
)
def test_other_css_paths_are_404(testapp, path):
    testapp.get(path, status=404)
