"""The sitemaps in a real browser (S-308): both views of the demo site, end to end.

One ``pserve production.ini`` (every installed plugin loaded) serves a SQLite database that
``sitemap-server migrate`` and ``seed-demo`` prepared, on a port chosen first so that the
site URL *is* the server and every link in the pages can be followed. One headless Debian
Chromium, driven by Playwright, opens the documents:

- the XSL view: the ``.xml`` URL, which the browser transforms with the stylesheet the XML
  names (Chromium still does, under a deprecation banner);
- the HTML view: ``/sitemaps/`` and ``/sitemaps/{name}.html``, the same XSL applied on the
  server.

For the index, the post sitemap's first page and the plugins' video and news sitemaps,
in both views, the live DOM shows the count sentence with the number of ``<sitemap>``,
``<url>`` and ``video:video`` elements counted here in the XML with lxml; the table has a
row per entry with the right link (the ``<loc>``, or in the HTML view of the index the
sitemap's page); each view links to the other, and clicking those links (and an index row,
and "All sitemaps") lands on the right page with its own count; a full-page screenshot of
each is saved. Crawlers asking for the ``.xml`` URLs with any ``Accept`` header (a
browser's included) still get the very same XML.

A second Chromium runs with XSLT off, as Chrome's stable channel ships since November
2026: opening a ``.xml`` URL shows the XML itself, laid out by the CSS it also names and
led by a sentence naming the page for people, and that page shows the document (S-312).

The demo holds 1,200 posts, so the post sitemap's first page is a table of 1,000 rows,
filtered in both views by typing into its box. Two more servers show the rest: a private
site (every view says why it lists nothing) and one whose documents name no XSL
(``sitemap_server.xsl_instruction`` false: Chromium shows the CSS view and no XSLT
banner). Screenshots of every view are saved.

The browser resolves no host but 127.0.0.1, and the commands run behind a proxy that
refuses, so the test never touches the network (the demo asks for nothing anyway).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
import yaml
from lxml import etree
from playwright.sync_api import BrowserContext, Page, sync_playwright

from sitemap_server.sitemaps.rendering import PRIVATE_NOTE
from sitemap_server.testing import (
    PROJECT_ROOT,
    SITEMAP_NS,
    free_port,
    production_command,
    pserve_production,
    running,
    server_environment,
    wait_until,
    xml_parser,
)

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # Only the server under test: demo thumbnails on i.ytimg.com fail at once, offline.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
# What Chromium sends for a page: text/html first, yet a sitemap URL must stay XML.
BROWSER_ACCEPT = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
    "image/apng,*/*;q=0.8"
)
# Anything that would reach out (none should: oEmbed is off unless configured, and the
# demo's videos carry their metadata) fails at once instead of touching the network.
REFUSING_PROXY = "http://127.0.0.1:9"
NO_NETWORK = {
    **{name: REFUSING_PROXY for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")},
    **{name: "" for name in ("NO_PROXY", "no_proxy")},
}
TIMEOUT_MS = 10_000
# A screenshot: the top of the page (at most this many pixels), within this time.
SCREENSHOT_HEIGHT = 4000
SCREENSHOT_TIMEOUT_MS = 60_000
# The demo site's title, which every view shows.
DEMO_TITLE = "Demo Site"
# The big demo's posts: the post sitemap's first page is a full page of 1,000 rows.
BIG_DEMO_POSTS = 1200
NS = {
    "s": SITEMAP_NS,
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
}

INDEX = "sitemap_index"
# The documents checked (parametrize id -> name): the index, the post sitemap's first
# page, and the two plugins' sitemaps (installed in this environment, so listed).
DOCUMENTS = {
    "index": INDEX,
    "post": "post-sitemap",
    "video": "video-sitemap",
    "news": "news-sitemap",
}
URLSETS = {key: name for key, name in DOCUMENTS.items() if name != INDEX}
XSL_VIEW, HTML_VIEW = "xsl-view", "html-view"
VIEWS = [XSL_VIEW, HTML_VIEW]
ACCEPTS = {
    "any": "*/*",
    "xml": "application/xml",
    "html-first": "text/html,application/xml;q=0.9",
    "chromium": BROWSER_ACCEPT,
}


def xml_path(name: str) -> str:
    return f"/{name}.xml"


def html_path(name: str) -> str:
    return "/sitemaps/" if name == INDEX else f"/sitemaps/{name}.html"


def name_of(url: str) -> str:
    """``post-sitemap2`` from ``http://…/post-sitemap2.xml``."""
    return urlsplit(url).path.rsplit("/", 1)[-1].removesuffix(".xml")


@dataclass(frozen=True)
class Expected:
    """What a document's two views must show, from its XML as a crawler gets it."""

    body: bytes
    root: str  # "sitemapindex" or "urlset"
    count: str  # the count sentence; ending in ":", how it begins
    links: list[str]  # each table row's link in the XSL view, in order
    html_links: list[str]  # and in the HTML view
    html_view: str | None  # the page the XML names in <?html-view?>


def expectation(site: str, name: str) -> Expected:
    response = requests.get(site + xml_path(name), timeout=10)
    assert response.status_code == 200, f"{name}: {response.status_code}"
    root = etree.fromstring(response.content, xml_parser())
    kind = etree.QName(root).localname
    instructions = {
        node.target: node.text
        for node in root.itersiblings(preceding=True)
        if isinstance(node, etree._ProcessingInstruction)
    }
    if kind == "sitemapindex":
        locs = root.xpath("s:sitemap/s:loc/text()", namespaces=NS)
        count = f"This XML sitemap index contains {len(locs)} sitemaps."
        links = locs
        html_links = [site + html_path(name_of(loc)) for loc in locs]
    else:
        urls = len(root.xpath("s:url", namespaces=NS))
        if name.startswith("video-sitemap"):  # one row per video, linking to its page
            links = [
                video.xpath("string(../s:loc)", namespaces=NS)
                for video in root.xpath("s:url/video:video", namespaces=NS)
            ]
            count = f"This video sitemap contains {urls} URLs with {len(links)} videos."
        else:
            links = root.xpath("s:url/s:loc/text()", namespaces=NS)
            count = (
                f"This news sitemap contains {urls} URLs:"  # then what they are (see below)
                if name.startswith("news-sitemap")
                else f"This XML sitemap contains {urls} URLs."
            )
        html_links = links
    return Expected(
        response.content, kind, count, list(links), list(html_links), instructions.get("html-view")
    )


def run_cli(env: dict[str, str], *args: str) -> None:
    production_command(env, *args)


# Fixtures: one server, one browser for the module -------------------------------------------


@contextmanager
def demo_site(
    tmp_path_factory: pytest.TempPathFactory, posts: int, **settings: str
) -> Iterator[tuple[str, dict[str, str]]]:
    """The demo site with ``posts`` posts, served by ``pserve production.ini`` with the
    environment's ``settings``: its URL, which is the server's, and that environment."""
    tmp = tmp_path_factory.mktemp("e2e-site")
    port = free_port()
    site_url = f"http://127.0.0.1:{port}"
    database_url = f"sqlite:///{tmp / 'site.sqlite'}"
    env = server_environment(
        SITEMAP_SERVER_DATABASE_URL=database_url,
        SITEMAP_SERVER_SITE_URL=site_url,
        **NO_NETWORK,
        **settings,
    )
    run_cli(env, "migrate")
    run_cli(env, "seed-demo", "--posts", str(posts))
    with running(pserve_production(port), PROJECT_ROOT, env, tmp / "pserve.log", port) as base:
        assert base == site_url
        yield base, env


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo site, with more posts than a page holds (the post sitemap's first page is a
    table of 1,000 rows), as this version ships it (the XSL instruction in)."""
    with demo_site(tmp_path_factory, BIG_DEMO_POSTS) as (base, _):
        yield base


@pytest.fixture(scope="module")
def private_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A small demo site made private through the admin API ("discourage search engines"),
    once its sitemaps listed its content."""
    with demo_site(tmp_path_factory, 20) as (base, env):
        token = production_command(env, "token", "create", "e2e").split()[0]
        answer = requests.patch(
            base + "/api/settings",
            json={"private": True},
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        assert answer.status_code == 200, answer.text
        wait_until(
            lambda: "<?site-private " in requests.get(base + "/sitemap_index.xml", timeout=10).text,
            "the private setting to reach the documents",
        )
        yield base


@pytest.fixture(scope="module")
def site_without_xsl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo site whose documents name no XSL (``sitemap_server.xsl_instruction``
    false, from the environment)."""
    with demo_site(tmp_path_factory, 300, SITEMAP_SERVER_XSL_INSTRUCTION="false") as (base, _):
        yield base


@pytest.fixture(scope="module")
def expected(site: str) -> Callable[[str], Expected]:
    """Each document's expectations, fetched and counted once."""
    known: dict[str, Expected] = {}

    def get(name: str) -> Expected:
        if name not in known:
            known[name] = expectation(site, name)
        return known[name]

    return get


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., BrowserContext]]:
    """Starts Chromium with more arguments; every one started is closed with the module."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/ensure-chromium")
    with sync_playwright() as playwright:
        contexts: list[BrowserContext] = []

        def launch(*args: str) -> BrowserContext:
            context = playwright.chromium.launch_persistent_context(
                user_data_dir=tmp_path_factory.mktemp("chromium-profile"),
                executable_path=CHROMIUM,
                headless=True,
                args=[*CHROMIUM_ARGS, *args],
            )
            context.set_default_timeout(TIMEOUT_MS)
            context.set_default_navigation_timeout(TIMEOUT_MS)
            contexts.append(context)
            return context

        try:
            yield launch
        finally:
            for context in contexts:
                context.close()


@pytest.fixture(scope="module")
def browser(chromium: Callable[..., BrowserContext]) -> BrowserContext:
    """Chromium as it ships this version: XSLT on, under a deprecation banner."""
    return chromium()


@pytest.fixture(scope="module")
def browser_without_xslt(chromium: Callable[..., BrowserContext]) -> BrowserContext:
    """Chromium as its stable channel ships since November 2026: no XSLT. It shows an XML
    document as a tree of its source, comments and instructions included."""
    return chromium("--disable-blink-features=XSLT")


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def opened(browser: BrowserContext, site: str) -> Callable[[str, str], Page]:
    """A document open in a view, in its own tab, loaded once for the read-only tests."""
    pages: dict[tuple[str, str], Page] = {}

    def get(name: str, view: str) -> Page:
        if (name, view) not in pages:
            pages[name, view] = open_view(browser.new_page(), site, name, view)
        return pages[name, view]

    return get


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    """A fresh tab, for tests that navigate."""
    tab = browser.new_page()
    yield tab
    tab.close()


def url_of(site: str, name: str, view: str) -> str:
    return site + (xml_path(name) if view == XSL_VIEW else html_path(name))


def open_view(page: Page, site: str, name: str, view: str) -> Page:
    response = page.goto(url_of(site, name, view))
    assert response is not None
    assert response.status == 200
    # The XSL view is the XML itself, transformed by the browser; the HTML view is HTML.
    # (``headers``: as the browser has them, also after a 304 revalidated its copy.)
    content_type = response.headers.get("content-type", "")
    assert content_type.split(";")[0] == ("text/xml" if view == XSL_VIEW else "text/html")
    return page


# What the browser shows ---------------------------------------------------------------------


def count_sentence(page: Page) -> str:
    return " ".join(page.locator("#count").inner_text().split())


def assert_shows_count(page: Page, want: Expected) -> None:
    sentence = count_sentence(page)
    if want.count.endswith(":"):  # the news page goes on to say what the URLs are
        assert sentence.startswith(want.count), sentence
    else:
        assert sentence == want.count


def table_of(name: str) -> str:
    return "table#sitemaps" if name == INDEX else "table#urls"


def row_links(page: Page, name: str) -> list[list[str | None]]:
    """Each table row's links (their href attributes), as rendered; a row's translations
    (their own column) aside."""
    return page.locator(f"{table_of(name)} tbody tr").evaluate_all(
        "rows => rows.map(row => Array.from(row.querySelectorAll('td:not(.translations) a'),"
        " a => a.getAttribute('href')))"
    )


def test_the_index_lists_the_core_and_plugin_sitemaps(site, expected):
    listed = expected(INDEX).links
    for name in DOCUMENTS.values():
        if name != INDEX:
            assert site + xml_path(name) in listed


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("name", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_the_count_sentence_counts_the_xml(opened, expected, name, view):
    assert_shows_count(opened(name, view), expected(name))


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("name", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_the_table_has_a_row_per_entry_with_its_link(opened, expected, name, view):
    page = opened(name, view)
    want = expected(name).links if view == XSL_VIEW else expected(name).html_links
    assert want, "the demo site has entries in every document checked"
    assert page.locator(f"{table_of(name)} tbody tr").count() == len(want)
    assert row_links(page, name) == [[link] for link in want]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("name", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_the_views_link_to_each_other(opened, expected, site, name, view):
    page = opened(name, view)
    if view == XSL_VIEW:
        # The page the XML names for people, which is the HTML view; no link to itself.
        assert expected(name).html_view == site + html_path(name)
        assert page.locator("#html-view").get_attribute("href") == site + html_path(name)
        assert page.locator("#xml-view").count() == 0
    else:
        assert page.locator("#xml-view").get_attribute("href") == site + xml_path(name)
        assert page.locator("#html-view").count() == 0
    if name != INDEX:  # "All sitemaps", in the same view
        index = page.locator("#index").evaluate("a => a.href")
        assert index == url_of(site, INDEX, view)


@pytest.mark.parametrize("name", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_clicking_from_one_view_to_the_other_and_back(page, expected, site, name):
    open_view(page, site, name, XSL_VIEW)
    page.locator("#html-view").click()
    page.wait_for_url(site + html_path(name))
    assert_shows_count(page, expected(name))

    page.locator("#xml-view").click()
    page.wait_for_url(site + xml_path(name))
    assert_shows_count(page, expected(name))
    assert page.locator("#html-view").count() == 1  # transformed again, not raw XML


@pytest.mark.parametrize("view", VIEWS)
def test_clicking_an_index_row_opens_that_sitemap(page, expected, site, view):
    open_view(page, site, INDEX, view)
    first = page.locator("table#sitemaps tbody tr a").first
    target = first.get_attribute("href")
    sitemap = name_of(expected(INDEX).links[0])
    assert target == url_of(site, sitemap, view)
    first.click()
    page.wait_for_url(target)
    assert_shows_count(page, expected(sitemap))
    assert page.locator("table#urls tbody tr").count() == len(expected(sitemap).links)


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("name", URLSETS.values(), ids=URLSETS.keys())
def test_clicking_all_sitemaps_returns_to_the_index(page, expected, site, name, view):
    open_view(page, site, name, view)
    page.locator("#index").click()
    page.wait_for_url(url_of(site, INDEX, view))
    assert_shows_count(page, expected(INDEX))


@pytest.mark.parametrize("view", VIEWS)
def test_every_sitemap_of_the_demo_site_shows_its_count_and_links(page, site, expected, view):
    """Not only the four above: every sitemap the index lists (pages, authors, each
    taxonomy…), in this view, with the count and the row links of its XML."""
    names = [name_of(loc) for loc in expected(INDEX).links]
    assert len(names) >= 8
    for name in names:
        want = expected(name)
        open_view(page, site, name, view)
        assert_shows_count(page, want)
        links = want.links if view == XSL_VIEW else want.html_links
        assert row_links(page, name) == [[link] for link in links], name


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("name", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_readable_on_a_phone(page, site, name, view):
    """At a phone's width the page does not scroll sideways: long URLs wrap, and only a
    wide table (the video one) scrolls inside its own box."""
    page.set_viewport_size({"width": 390, "height": 844})
    open_view(page, site, name, view)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    assert page.evaluate(
        "document.querySelector('meta[name=viewport]').getAttribute('content')"
    ).startswith("width=device-width")


@pytest.mark.parametrize("view", VIEWS)
def test_translated_pages_show_their_translations(page, site, view):
    """The demo's translated pages: in both views each row of the group lists the same
    languages, each linking to that language's page, as the XML's hreflang links say."""
    xml = etree.fromstring(requests.get(f"{site}/page-sitemap.xml", timeout=10).content)
    groups = {
        url.findtext("s:loc", namespaces=NS): [
            (link.get("hreflang"), link.get("href"))
            for link in url.iterfind("{http://www.w3.org/1999/xhtml}link")
        ]
        for url in xml.iterfind("s:url", NS)
    }
    about = groups[f"{site}/about/"]
    assert [hreflang for hreflang, _ in about] == ["de", "en", "fr", "x-default"]
    open_view(page, site, "page-sitemap", view)
    shown = page.locator("table#urls tbody tr").evaluate_all(
        "rows => rows.map(row => [row.querySelector('td.url a').href,"
        " Array.from(row.querySelectorAll('td.translations a'),"
        " a => [a.textContent, a.href])])"
    )
    assert {loc: [tuple(link) for link in links] for loc, links in shown} == groups


@pytest.mark.parametrize("view", VIEWS)
def test_the_news_page_tells_the_order_its_rows_are_in(opened, site, view):
    """The sentence says "most recently changed first", and so are the rows: their XML
    ``lastmod``s (the later of published and modified) never grow down the table."""
    page = opened("news-sitemap", view)
    assert "published or changed in the last 48 hours, most recently changed first" in (
        count_sentence(page)
    )
    links = page.locator("table#urls tbody td.title a").evaluate_all(
        "links => links.map(a => a.href)"
    )
    xml = etree.fromstring(requests.get(f"{site}/news-sitemap.xml", timeout=10).content)
    lastmod = {
        url.findtext("s:loc", namespaces=NS): url.findtext("s:lastmod", namespaces=NS)
        for url in xml.iterfind("s:url", NS)
    }
    changed = [datetime.fromisoformat(lastmod[link]) for link in links]
    assert changed and changed == sorted(changed, reverse=True)


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("name", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_a_full_page_screenshot(opened, screenshots, name, view):
    path = screenshots / f"{name}-{view}.png"
    page = opened(name, view)
    page.bring_to_front()
    # The top of a long page (the 1,000-row one is 40,000 pixels tall: a PNG of it takes
    # Chromium seconds, and more on a loaded machine), given time as a large write is.
    height = min(page.evaluate("document.documentElement.scrollHeight"), SCREENSHOT_HEIGHT)
    page.screenshot(
        path=path,
        full_page=True,
        clip={"x": 0, "y": 0, "width": page.viewport_size["width"], "height": height},
        timeout=SCREENSHOT_TIMEOUT_MS,
    )
    assert path.is_file()
    assert path.stat().st_size > 0
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize("view", VIEWS)
def test_the_index_names_the_site_and_counts_the_urls_of_each_sitemap(opened, expected, site, view):
    """The index's page names the site (linked to it), titles itself with it, and says in
    a column how many URLs each sitemap holds: as many as that sitemap's XML lists."""
    page = opened(INDEX, view)
    assert page.locator("#site").inner_text() == DEMO_TITLE
    assert page.locator("#site a").get_attribute("href") == site + "/"
    assert page.title() == f"XML Sitemap Index · {DEMO_TITLE}"
    rows = page.locator("table#sitemaps tbody tr").evaluate_all(
        "rows => rows.map(row => [row.querySelector('td.url a').textContent,"
        " row.querySelector('td.urls').textContent])"
    )
    index = etree.fromstring(expected(INDEX).body, xml_parser())
    sitemaps = index.xpath("s:sitemap/s:loc/text()", namespaces=NS)
    urls = {
        name: len(etree.fromstring(expected(name).body, xml_parser()).findall("s:url", NS))
        for name in map(name_of, sitemaps)
    }
    assert [(loc, int(count)) for loc, count in rows] == [
        (loc, urls[name_of(loc)]) for loc in sitemaps
    ]
    assert urls["post-sitemap"] == 1000


VISIBLE_ROWS = "rows => rows.filter(row => !row.hidden).map(row => row.textContent)"


@pytest.mark.parametrize("view", VIEWS)
def test_a_thousand_rows_are_filtered_by_what_is_typed(page, site, screenshots, view):
    """The post sitemap's 1,000 rows: typing words shows only the rows holding every one of
    them (in their URL, date or counts), says how many of all; emptying the box shows all
    again. Nothing is fetched for it: the page runs only its own inline script."""
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    open_view(page, site, "post-sitemap", view)
    rows = page.locator("table#urls tbody tr")
    every = rows.evaluate_all(VISIBLE_ROWS)
    assert len(every) == 1000
    for typed in ("kitchen", "Kitchen  MARKET", "2025-05", "no-such-words-anywhere"):
        words = typed.lower().split()
        want = [text for text in every if all(word in text.lower() for word in words)]
        page.locator("#filter").fill(typed)
        assert rows.evaluate_all(VISIBLE_ROWS) == want, typed
        assert page.locator("#shown").inner_text() == f"{len(want)} of 1000 shown"
        if typed == "Kitchen  MARKET":
            assert 0 < len(want) < 100
            page.screenshot(
                path=screenshots / f"post-sitemap-filtered-{view}.png",
                timeout=SCREENSHOT_TIMEOUT_MS,
            )
    page.locator("#filter").fill("")
    assert rows.evaluate_all(VISIBLE_ROWS) == every
    assert page.locator("#shown").inner_text() == ""
    assert page.locator("script[src]").count() == 0
    assert {urlsplit(url).netloc for url in fetched} == {urlsplit(site).netloc}


PRIVATE_VIEWS = {"index": INDEX, "post": "post-sitemap"}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("name", PRIVATE_VIEWS.values(), ids=PRIVATE_VIEWS.keys())
def test_a_private_site_says_so_and_why(browser, private_site, screenshots, name, view):
    """A private site's documents list nothing; each view says why (the setting, what it
    does) and how the owner changes it, above the empty count."""
    page = browser.new_page()
    try:
        open_view(page, private_site, name, view)
        assert page.locator("#private").inner_text() == PRIVATE_NOTE
        assert page.locator("#private").is_visible()
        assert page.locator("table tbody tr").count() == 0
        page.screenshot(
            path=screenshots / f"private-{name}-{view}.png",
            full_page=True,
            timeout=SCREENSHOT_TIMEOUT_MS,
        )
    finally:
        page.close()


@pytest.mark.parametrize("name", PRIVATE_VIEWS.values(), ids=PRIVATE_VIEWS.keys())
def test_without_xslt_a_private_site_says_so_and_why(browser_without_xslt, private_site, name):
    """The CSS view (no XSLT) says it too, in the lines that lead the XML."""
    page = browser_without_xslt.new_page()
    try:
        page.goto(private_site + xml_path(name))
        shown = css_view_text(page)
        assert PRIVATE_NOTE in shown
        assert shown.startswith(f"{DEMO_TITLE} A sitemap, for search engines.")
    finally:
        page.close()


def css_view_text(page: Page) -> str:
    """The text a person reads of the XML laid out by its CSS, generated lines included
    (as the browser's accessibility tree has it), its blanks made single spaces."""
    items = yaml.safe_load(page.locator(":root").aria_snapshot())
    texts = (" ".join(map(str, i.values())) if isinstance(i, dict) else str(i) for i in items)
    return " ".join(" ".join(texts).split())


# The banner Chromium puts over a page made by XSLT ("This site uses XSLT; that
# functionality is being removed from this browser very soon. …"), an element of its own.
XSLT_BANNER = "xslt-warning-banner"


@pytest.mark.parametrize("name", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_without_the_xsl_instruction_a_browser_shows_the_css_view_and_no_banner(
    browser, browser_without_xslt, site, site_without_xsl, screenshots, name
):
    """``sitemap_server.xsl_instruction`` false: a browser that has XSLT (and shows its
    removal banner over the XSL view of a site that names the XSL) shows the XML laid out
    by its CSS, as one without XSLT does: the site, the page for people, the count
    sentence counted by CSS over the entries shown; no banner. The page for people is the
    same page as with the instruction."""
    with_xsl = browser.new_page()
    page = browser.new_page()
    try:
        open_view(with_xsl, site, name, XSL_VIEW)
        assert with_xsl.locator("#count").count() == 1
        assert with_xsl.locator(XSLT_BANNER).count() == 1
        open_view(page, site_without_xsl, name, XSL_VIEW)
        assert page.locator("#count").count() == 0  # not transformed
        assert page.locator(XSLT_BANNER).count() == 0
        seen = page.evaluate(SHOWN)
        readable = site_without_xsl + html_path(name)
        assert seen["lead"] == (
            f'"{DEMO_TITLE}\\a A sitemap, for search engines. People read it at {readable}"'
        )
        what = ("sitemap index", "sitemaps") if name == INDEX else ("sitemap", "URLs")
        sentence = page.evaluate("getComputedStyle(document.documentElement, '::after').content")
        assert sentence == f'"This XML {what[0]} contains " counter(entries) " {what[1]}."'
        increments = page.evaluate(
            "Array.from(document.documentElement.children,"
            " e => getComputedStyle(e).counterIncrement)"
        )
        assert increments and set(increments) == {"entries 1"}
        page.screenshot(path=screenshots / f"{name}-css-view.png", timeout=SCREENSHOT_TIMEOUT_MS)
        open_view(page, site_without_xsl, name, HTML_VIEW)
        assert page.locator("#count").count() == 1 and page.locator("#site").inner_text() == (
            DEMO_TITLE
        )
        assert page.locator(f"{table_of(name)} tbody tr").count() > 0
    finally:
        with_xsl.close()
        page.close()


# What a crawler gets ------------------------------------------------------------------------


@pytest.mark.parametrize("accept", ACCEPTS.values(), ids=ACCEPTS.keys())
@pytest.mark.parametrize("name", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_crawlers_get_the_xml_whatever_they_accept(site, expected, name, accept):
    response = requests.get(site + xml_path(name), headers={"Accept": accept}, timeout=10)
    assert response.status_code == 200
    assert response.headers["Content-Type"].split(";")[0] == "text/xml"
    root = etree.fromstring(response.content, xml_parser())
    want = "sitemapindex" if name == INDEX else "urlset"
    assert etree.QName(root).namespace == SITEMAP_NS
    assert etree.QName(root).localname == expected(name).root == want
    assert response.content == expected(name).body


# Without XSLT -------------------------------------------------------------------------------


# What a person sees of plain XML, made legible by the document's CSS: the sentence that
# leads it (its ::before), and each element rendered (not hidden) with its own text.
SHOWN = """() => {
  const root = document.documentElement;
  const shown = [];
  for (const element of root.getElementsByTagName("*")) {
    if (element.checkVisibility() && element.children.length === 0) {
      shown.push([element.localName, element.textContent.trim()]);
    }
  }
  return {lead: getComputedStyle(root, "::before").content, shown: shown};
}"""


@pytest.mark.parametrize("name", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_without_xslt_the_xml_shows_where_its_readable_page_is(
    browser_without_xslt, expected, site, name
):
    """What a person sees opening a sitemap in a browser without XSLT: the XML itself,
    laid out by its CSS, led by a sentence that names the page for people, then each
    entry's loc and lastmod (images, videos, alternates hidden); that page shows the
    document, counted and linked."""
    page = browser_without_xslt.new_page()
    try:
        response = page.goto(site + xml_path(name))
        assert response is not None and response.status == 200
        assert response.headers["content-type"].split(";")[0] == "text/xml"
        assert page.locator("#count").count() == 0  # not transformed
        seen = page.evaluate(SHOWN)
        readable = site + html_path(name)
        assert seen["lead"] == (
            f'"{DEMO_TITLE}\\a A sitemap, for search engines. People read it at {readable}"'
        )
        assert readable == expected(name).html_view
        locs = [text for tag, text in seen["shown"] if tag == "loc"]
        want = expected(name).links if name == INDEX else expected(name).html_links
        assert locs == list(dict.fromkeys(want))  # a video row per video, a loc per URL
        assert {tag for tag, _ in seen["shown"]} <= {"loc", "lastmod"}
        page.goto(readable)
        assert_shows_count(page, expected(name))
        assert row_links(page, name) == [[link] for link in expected(name).html_links]
    finally:
        page.close()


@pytest.mark.parametrize("name", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_without_xslt_the_page_for_people_links_to_the_same_xml(
    browser_without_xslt, expected, site, name
):
    page = browser_without_xslt.new_page()
    try:
        open_view(page, site, name, HTML_VIEW)
        page.locator("#xml-view").click()
        page.wait_for_url(site + xml_path(name))
        assert site + html_path(name) in page.evaluate(SHOWN)["lead"]
    finally:
        page.close()
    response = requests.get(site + xml_path(name), headers={"Accept": BROWSER_ACCEPT}, timeout=10)
    assert response.content == expected(name).body


def test_an_independent_consumer_reads_every_sitemap_and_its_translations(site, expected):
    """ultimate-sitemap-parser, as a crawler's tooling would: from the home page through
    robots.txt and the index to every sitemap; it finds every URL, and the translations
    it reads are the XML's and reciprocal."""
    from usp.objects.sitemap import InvalidSitemap
    from usp.tree import sitemap_tree_for_homepage

    tree = sitemap_tree_for_homepage(site + "/", use_known_paths=False)
    invalid = [s for s in tree.all_sitemaps() if isinstance(s, InvalidSitemap)]
    assert invalid == []
    pages = list(tree.all_pages())
    urls = {page.url for page in pages}
    for loc in expected(INDEX).links:
        for link in expected(name_of(loc)).links:
            assert link in urls, link
    alternates = {page.url: page.alternates for page in pages if page.alternates}
    assert len(alternates) >= 6  # the demo's translated pages, posts and categories
    for url, links in alternates.items():
        assert (url in dict(links).values()) and links[-1][0] == "x-default"
        for _, other in links:
            assert alternates[other] == links, (url, other)


@pytest.mark.parametrize("name", URLSETS.values(), ids=URLSETS.keys())
def test_an_independent_consumer_reads_the_text_and_gzip_file_of_each_sitemap(site, expected, name):
    """ultimate-sitemap-parser fetches a page's ``.txt`` (its plain-text parser) and
    ``.xml.gz`` (it gunzips by the URL and the type) as the text and XML sitemaps they
    are: the same URLs as the page's XML, in its order (S-313)."""
    from usp.fetch_parse import SitemapFetcher
    from usp.objects.sitemap import PagesTextSitemap, PagesXMLSitemap

    xml = etree.fromstring(expected(name).body, xml_parser())
    want = xml.xpath("s:url/s:loc/text()", namespaces=NS)
    assert want
    text = SitemapFetcher(site + f"/{name}.txt", recursion_level=0).sitemap()
    assert isinstance(text, PagesTextSitemap), text
    assert [page.url for page in text.all_pages()] == want
    zipped = SitemapFetcher(site + f"/{name}.xml.gz", recursion_level=0).sitemap()
    assert isinstance(zipped, PagesXMLSitemap), zipped
    assert [page.url for page in zipped.all_pages()] == want


def test_an_independent_consumer_reads_the_feed_as_a_sitemap(site):
    """ultimate-sitemap-parser reads ``/sitemap.atom`` as the Atom sitemap it is: the
    feed's URLs, each with its date (S-313)."""
    from usp.fetch_parse import SitemapFetcher
    from usp.objects.sitemap import PagesAtomSitemap

    feed = etree.fromstring(requests.get(site + "/sitemap.atom", timeout=10).content)
    atom = {"a": "http://www.w3.org/2005/Atom"}
    want = feed.xpath("a:entry/a:link/@href", namespaces=atom)
    dates = feed.xpath("a:entry/a:updated/text()", namespaces=atom)
    assert len(want) == 100  # the demo has more listed URLs than the feed's default

    read = SitemapFetcher(site + "/sitemap.atom", recursion_level=0).sitemap()

    assert isinstance(read, PagesAtomSitemap), read
    pages = list(read.all_pages())
    assert [page.url for page in pages] == want
    # It keeps an entry's date as a news story's (its model of a feed's item).
    read_dates = [page.news_story.publish_date for page in pages]
    assert read_dates == [datetime.fromisoformat(d) for d in dates]


def test_the_api_docs_render_from_the_site_alone(page, site):
    """Swagger UI shows the admin API with everything loaded from the site itself: no
    CDN (the browser resolves no other host anyway), no script its policy refuses."""
    requested: list[str] = []
    refused: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.on(
        "console",
        lambda message: (
            refused.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    response = page.goto(site + "/api/docs")
    assert response is not None and response.status == 200
    title = page.locator(".swagger-ui .info .title")
    title.wait_for()
    assert "sitemap-server admin API" in title.inner_text()
    assert page.locator(".opblock").count() > 20  # an operation block per operation
    assert requested and all(url.startswith(site + "/") for url in requested), requested
    assert refused == []
    # The sitemaps for people are a link away (Swagger UI opens it in a new tab).
    link = page.locator(".swagger-ui .info a", has_text="/sitemaps/")
    assert link.evaluate("a => a.href") == site + "/sitemaps/"
    page.goto(site + "/sitemaps/")
    assert count_sentence(page).startswith("This XML sitemap index contains")
