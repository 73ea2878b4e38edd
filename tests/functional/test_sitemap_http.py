"""The sitemaps over HTTP: URLs, pages, status codes and headers (S-301 … S-310, S-803).

Sites are built through the admin API (``api``) and read as a crawler would (``testapp``,
no credentials). Every non-empty document is validated against both the current and the
2009 sitemaps.org XSDs; empty ones (S-306) only for root element and namespace. Where
WebTest would hide what went over the wire (it gunzips bodies), the WSGI application is
called directly with a ``webob`` request.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from lxml import etree
from sqlalchemy.orm import Session
from webob import Request
from webtest import TestApp

from sitemap_server.services.tokens import create_token
from sitemap_server.sitemaps import rendering, responses
from sitemap_server.testing import (
    NOT_FOUND_MAX_BYTES,
    assert_not_found,
    forget_rendered,
    parse_sitemap,
    reset_database,
    serve_production,
    xml_parser,
)

SITE = "http://sitemaps.test"
SM_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
NS = {"sm": SM_NS, "image": IMAGE_NS}
XSL_PATH = "/main-sitemap.xsl"
X_ROBOTS_TAG = "noindex, follow"
# Browsers and shared caches revalidate every use (a cheap 304); a shared cache may serve
# its copy for a day while this server fails (S-314).
DEFAULT_CACHE_CONTROL = "public, max-age=0, s-maxage=0, stale-if-error=86400"
# A 404 is "small": a line of text, not an HTML page or a stack trace.
PER_PAGE = 3


# Reading sitemaps -----------------------------------------------------------------------


def assert_sitemap_headers(response: Any) -> None:
    assert response.headers["Content-Type"] == "text/xml; charset=UTF-8"
    assert response.headers["X-Robots-Tag"] == X_ROBOTS_TAG


parse_document = parse_sitemap


def fetch(app: TestApp, path: str) -> etree._Element:
    response = app.get(path, status=200)
    assert_sitemap_headers(response)
    return parse_document(response.body)


def index(app: TestApp) -> dict[str, str]:
    """``/sitemap_index.xml`` as {sitemap URL: lastmod}, in document order."""
    root = fetch(app, "/sitemap_index.xml")
    assert root.tag == f"{{{SM_NS}}}sitemapindex"
    found = {
        s.findtext("sm:loc", namespaces=NS): s.findtext("sm:lastmod", namespaces=NS)
        for s in root.iterfind("sm:sitemap", namespaces=NS)
    }
    assert len(found) == len(root), "a sitemap is listed twice"
    return found


def page_url(name: str, page: int) -> str:
    return f"{SITE}/{name}-sitemap{'' if page == 1 else page}.xml"


def page_entries(app: TestApp, name: str, page: int = 1) -> list[tuple[str, str]]:
    """(loc, lastmod) of each ``<url>`` of a page, in document order."""
    root = fetch(app, urlsplit(page_url(name, page)).path)
    assert root.tag == f"{{{SM_NS}}}urlset"
    return [
        (url.findtext("sm:loc", namespaces=NS), url.findtext("sm:lastmod", namespaces=NS))
        for url in root.iterfind("sm:url", namespaces=NS)
    ]


def pages_of(app: TestApp, name: str) -> list[list[str]]:
    """The locs of each page of ``name`` that the index lists, checking it lists them in
    order from 1 and that each listed page exists and the next one does not."""
    listed = [loc for loc in index(app) if loc.startswith(f"{SITE}/{name}-sitemap")]
    assert listed == [page_url(name, n) for n in range(1, len(listed) + 1)]
    app.get(urlsplit(page_url(name, len(listed) + 1)).path, status=404)
    return [[loc for loc, _ in page_entries(app, name, n)] for n in range(1, len(listed) + 1)]


def moment(text: str | None) -> datetime:
    assert text is not None
    return datetime.fromisoformat(text)


def raw(app: TestApp, path: str, **headers: str) -> Any:
    """What the WSGI application really sends (WebTest would decompress the body)."""
    return Request.blank(path, headers=headers).get_response(app.app)


# Building sites -------------------------------------------------------------------------


def at(day: int, hour: int = 12) -> str:
    """A fixed past time, as the API takes it."""
    return f"2024-03-{day:02d}T{hour:02d}:00:00+00:00"


def create_type(api: TestApp, name: str, **fields: Any) -> None:
    api.post_json("/api/post-types", {"name": name, "label": name.title(), **fields}, status=201)


def create_book(api: TestApp, number: int, **fields: Any) -> dict[str, Any]:
    """A published post of the custom type ``book``, which has no archive entry, so that
    its sitemap holds exactly its posts, one per id."""
    body = {
        "type": "book",
        "title": f"Book {number}",
        "slug": f"book-{number}",
        "status": "publish",
        "published_at": at(number),
        "modified_at": at(number, hour=13),
        "images": [f"/uploads/book-{number}-{i}.jpg" for i in range(number % 3)],
    }
    body.update(fields)
    return api.post_json("/api/posts", body, status=201).json


def update_post(api: TestApp, post: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return api.patch_json(f"/api/posts/{post['id']}", fields, status=200).json


def update_settings(api: TestApp, **fields: Any) -> None:
    api.patch_json("/api/settings", fields, status=200)


def by_id(books: list[dict[str, Any]]) -> list[str]:
    return [b["permalink"] for b in sorted(books, key=lambda b: b["id"])]


def chunked(items: list[str], size: int = PER_PAGE) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


@pytest.fixture
def books(api: TestApp) -> list[dict[str, Any]]:
    """Eight listed books, three sitemap entries per page."""
    update_settings(api, entries_per_page=PER_PAGE)
    create_type(api, "book")
    return [create_book(api, n) for n in range(1, 9)]


# S-301, S-304: the index and pagination -------------------------------------------------


def test_pages_hold_entries_per_page_in_id_order(books, testapp):
    expected = chunked(by_id(books))
    assert [len(page) for page in expected] == [3, 3, 2]

    assert pages_of(testapp, "book") == expected
    listed = [loc for loc in index(testapp) if "/book-sitemap" in loc]
    assert listed == [page_url("book", 1), page_url("book", 2), page_url("book", 3)]


def test_index_lastmod_is_the_newest_lastmod_of_each_page(books, testapp):
    listed = index(testapp)
    book_pages = [loc for loc in listed if "/book-sitemap" in loc]
    assert len(book_pages) == 3
    for number, loc in enumerate(book_pages, start=1):
        entries = page_entries(testapp, "book", number)
        assert moment(listed[loc]) == max(moment(lastmod) for _, lastmod in entries)


def test_every_sitemap_the_index_lists_is_full_but_the_last_and_none_is_empty(api, books, testapp):
    create_book(api, 9, type="post")
    create_book(api, 10, type="page", slug="about")
    listed = index(testapp)
    assert listed
    by_provider: dict[str, list[int]] = {}
    for loc in listed:
        name, _, number = urlsplit(loc).path[1:].removesuffix(".xml").partition("-sitemap")
        by_provider.setdefault(name, []).append(int(number or 1))
    for name, numbers in by_provider.items():
        assert numbers == list(range(1, len(numbers) + 1))
        sizes = [len(page_entries(testapp, name, n)) for n in numbers]
        assert all(size == PER_PAGE for size in sizes[:-1]), (name, sizes)
        assert 0 < sizes[-1] <= PER_PAGE, (name, sizes)


def test_editing_a_post_moves_no_post_between_pages(api, books, testapp):
    before = pages_of(testapp, "book")

    update_post(api, books[0], title="Renamed", modified_at="2025-01-01T00:00:00+00:00")
    update_post(api, books[4], content="<p>Longer text</p>", modified_at=at(20))

    assert pages_of(testapp, "book") == before
    listed = index(testapp)
    assert moment(listed[page_url("book", 1)]) == datetime(2025, 1, 1, tzinfo=UTC)
    assert moment(listed[page_url("book", 2)]) == moment(at(20))
    assert moment(listed[page_url("book", 3)]) == moment(at(8, hour=13))


def test_unlisting_a_post_shifts_the_later_ones_and_the_index_follows(api, books, testapp):
    update_post(api, books[1], status="draft")
    remaining = by_id(books[:1] + books[2:])
    assert pages_of(testapp, "book") == chunked(remaining)  # 3, 3, 1

    update_post(api, books[0], exclude_from_sitemap=True)
    remaining = by_id(books[2:])
    assert pages_of(testapp, "book") == chunked(remaining)  # 3, 3
    assert page_url("book", 3) not in index(testapp)

    update_post(api, books[1], status="publish")
    assert pages_of(testapp, "book") == chunked(by_id(books[1:]))  # 3, 3, 1


def test_new_posts_fill_the_last_page_then_open_a_new_one(api, books, testapp):
    books.append(create_book(api, 9))
    assert [len(p) for p in pages_of(testapp, "book")] == [3, 3, 3]
    assert pages_of(testapp, "book") == chunked(by_id(books))

    books.append(create_book(api, 10))
    assert pages_of(testapp, "book") == chunked(by_id(books))  # 3, 3, 3, 1
    assert page_url("book", 4) in index(testapp)


def test_changing_entries_per_page_recuts_every_page(api, testapp):
    create_type(api, "book")
    books = [create_book(api, n) for n in range(1, 9)]
    assert pages_of(testapp, "book") == [by_id(books)]

    update_settings(api, entries_per_page=PER_PAGE)
    assert pages_of(testapp, "book") == chunked(by_id(books))

    update_settings(api, entries_per_page=5)
    assert pages_of(testapp, "book") == chunked(by_id(books), 5)


# S-302, S-303: redirects ----------------------------------------------------------------


@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap.xml?x=1", "/sitemap.xml?page=2"])
def test_sitemap_xml_redirects_permanently_to_the_index(testapp, path):
    response = testapp.get(path, status=301)
    assert urlsplit(response.location).path == "/sitemap_index.xml"
    assert not urlsplit(response.location).query


@pytest.mark.parametrize(
    ("path", "canonical"),
    [
        ("/post-sitemap1.xml", "/post-sitemap.xml"),
        ("/post-sitemap0.xml", "/post-sitemap.xml"),
        ("/post-sitemap00.xml", "/post-sitemap.xml"),
        ("/post-sitemap01.xml", "/post-sitemap.xml"),
        ("/post-sitemap002.xml", "/post-sitemap2.xml"),
        ("/book-sitemap03.xml", "/book-sitemap3.xml"),
    ],
)
def test_page_zero_one_and_zero_padded_numbers_redirect_to_the_canonical_url(
    books, testapp, path, canonical
):
    response = testapp.get(path, status=301)
    location = urlsplit(response.location)
    assert location.scheme in ("http", "https") and location.netloc
    assert location.path == canonical
    testapp.get(canonical, status=200 if canonical != "/post-sitemap2.xml" else 404)


# S-305, S-306: missing and empty sitemaps -----------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/nothing-sitemap.xml",  # no such type
        "/secret-sitemap.xml",  # a type that is not public
        "/hidden-sitemap.xml",  # a noindexed type
        "/book-sitemap4.xml",  # past the last page
        "/book-sitemap50000.xml",
        "/book-sitemap50001.xml",  # past the protocol's limit
        "/book-sitemap99999999999999999999999999.xml",  # no database holds such a number
        "/post-sitemap2.xml",  # past the first page of an empty type
        "/Book-sitemap.xml",  # names are lower case
        "/book-sitemap-2.xml",
    ],
)
def test_sitemaps_that_do_not_exist_are_404_with_the_robots_header(api, books, testapp, path):
    create_type(api, "secret", public=False)
    create_type(api, "hidden", noindex=True)
    create_book(api, 20, type="secret", slug="s")
    create_book(api, 21, type="hidden", slug="h")

    assert_not_found(testapp, path)


def test_very_long_page_numbers_are_answered_not_crashed_on(testapp):
    padded = testapp.get("/post-sitemap" + "0" * 5000 + "2.xml", status=301)
    assert urlsplit(padded.location).path == "/post-sitemap2.xml"
    assert_not_found(testapp, "/post-sitemap" + "9" * 5000 + ".xml")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/post-sitemap.xml"),
        ("DELETE", "/sitemap_index.xml"),
        ("PATCH", "/robots.txt"),
        ("POST", "/post-sitemap2.xml"),
        ("POST", "/sitemap_index2.xml"),
        ("DELETE", "/sitemap.xml"),
        ("PUT", "/main-sitemap.xsl"),
        ("POST", "/sitemaps/"),
        ("DELETE", "/sitemaps/post-sitemap.html"),
        ("OPTIONS", "/post-sitemap.xml"),
    ],
)
def test_other_methods_on_the_documents_are_405_with_allow(testapp, method, path):
    """The documents are read, never written: RFC 9110's 405 with Allow, not a 404."""
    response = testapp.request(path, method=method, status=405)
    assert response.headers["Allow"] == "GET, HEAD"
    assert response.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    assert response.content_type == "text/plain"
    assert len(response.body) < NOT_FOUND_MAX_BYTES
    testapp.get(path, status="*")  # and GET still answers as before (200, 301 or 404)


def test_a_405_on_a_huge_path_echoes_a_slice_of_it(testapp):
    response = testapp.request("/post-sitemap" + "0" * 10_000 + ".xml", method="PUT", status=405)
    assert len(response.body) < NOT_FOUND_MAX_BYTES


@pytest.mark.parametrize("name", ["post", "page", "author", "category", "post_tag", "book"])
def test_a_type_that_lists_nothing_has_an_empty_first_page_and_no_index_entry(api, testapp, name):
    create_type(api, "book")
    root = fetch(testapp, f"/{name}-sitemap.xml")
    assert root.tag == f"{{{SM_NS}}}urlset"
    assert len(root) == 0
    assert not [loc for loc in index(testapp) if f"/{name}-sitemap" in loc]


# S-307: headers and validity ------------------------------------------------------------


def test_every_document_has_the_sitemap_headers_and_is_valid(api, books, testapp):
    create_book(api, 9, type="post")
    listed = index(testapp)
    assert len(listed) >= 4
    for loc in listed:
        root = fetch(testapp, urlsplit(loc).path)
        assert len(root), f"{loc} is listed but empty"

    xsl = testapp.get(XSL_PATH, status=200)
    assert xsl.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    assert xsl.content_type in ("text/xsl", "text/xml", "application/xml", "application/xslt+xml")
    assert xsl.charset.upper() == "UTF-8"


def test_an_empty_site_has_a_well_formed_empty_index(testapp):
    root = fetch(testapp, "/sitemap_index.xml")
    assert root.tag == f"{{{SM_NS}}}sitemapindex"
    assert len(root) == 0


# S-308: the stylesheet ------------------------------------------------------------------


def stylesheet_of(body: bytes) -> etree._ProcessingInstruction:
    """The ``xml-stylesheet`` instruction, which must come before anything else."""
    root = etree.fromstring(body, xml_parser())
    before_root = list(root.itersiblings(preceding=True))
    assert before_root, "no processing instruction before the root element"
    first = before_root[-1]
    assert isinstance(first, etree._ProcessingInstruction)
    assert first.target == "xml-stylesheet"
    return first


def rendered_rows(app: TestApp, path: str) -> list[list[str]]:
    """The body rows of the HTML table that the XSL makes of ``path``, as cell texts, with
    the link of the first cell checked against its text."""
    transform = etree.XSLT(etree.fromstring(app.get(XSL_PATH).body, xml_parser()))
    html = transform(etree.fromstring(app.get(path).body, xml_parser()))
    tables = html.xpath("//table")
    assert len(tables) == 1
    headings = [th.text for th in tables[0].xpath(".//thead//th")]
    assert headings
    rows = []
    for tr in tables[0].xpath(".//tbody/tr"):
        cells = [" ".join("".join(td.itertext()).split()) for td in tr.xpath("td")]
        assert len(cells) == len(headings)
        assert tr.xpath("td[1]/a/@href") == [cells[0]]
        rows.append(cells)
    return rows


def readable(lastmod: str) -> str:
    """How the XSL shows a W3C datetime: date, minutes and the (site's) offset."""
    return f"{lastmod[:10]} {lastmod[11:16]} ({lastmod[19:]})"


def test_documents_point_at_the_served_xsl(books, testapp):
    for path in ["/sitemap_index.xml", "/book-sitemap.xml", "/book-sitemap3.xml"]:
        instruction = stylesheet_of(testapp.get(path).body)
        assert instruction.get("type") == "text/xsl"
        assert instruction.get("href") == XSL_PATH
    empty = testapp.get("/page-sitemap.xml").body
    assert stylesheet_of(empty).get("href") == XSL_PATH

    xsl = testapp.get(XSL_PATH, status=200)
    assert etree.QName(etree.fromstring(xsl.body, xml_parser())).localname == "stylesheet"


def test_the_xsl_renders_the_index_as_a_table_of_sitemaps(books, testapp):
    listed = index(testapp)

    rows = rendered_rows(testapp, "/sitemap_index.xml")

    assert [row[0] for row in rows] == list(listed)
    assert [row[-1] for row in rows] == [readable(lastmod) for lastmod in listed.values()]


def test_the_xsl_renders_a_urlset_as_a_table_of_urls_with_image_counts(books, testapp):
    rows = rendered_rows(testapp, "/book-sitemap.xml")

    first_page = sorted(books, key=lambda b: b["id"])[:PER_PAGE]
    assert rows == [
        [
            book["permalink"],
            str(len(book["images"])),
            readable(max(book["published_at"], book["modified_at"])),
        ]
        for book in first_page
    ]
    assert [row[1] for row in rows] == ["1", "2", "0"]


def test_the_xsl_renders_an_empty_urlset_as_an_empty_table(testapp):
    assert rendered_rows(testapp, "/post-sitemap.xml") == []


# S-309: robots.txt ----------------------------------------------------------------------


def robots_lines(app: TestApp) -> list[str]:
    response = app.get("/robots.txt", status=200)
    assert response.content_type == "text/plain"
    return response.text.splitlines()


def test_robots_txt_names_the_index_and_blocks_nothing(testapp):
    lines = robots_lines(testapp)
    assert f"Sitemap: {SITE}/sitemap_index.xml" in lines
    assert "Disallow: /" not in lines


def test_robots_txt_of_a_private_site_disallows_everything_and_names_no_sitemap(api, testapp):
    update_settings(api, private=True)
    lines = robots_lines(testapp)
    assert "Disallow: /" in lines
    assert not [line for line in lines if line.lower().startswith("sitemap:")]

    update_settings(api, private=False)
    assert f"Sitemap: {SITE}/sitemap_index.xml" in robots_lines(testapp)


def test_robots_txt_follows_the_site_url_setting(api, testapp):
    update_settings(api, site_url="https://www.example.test/blog")
    assert "Sitemap: https://www.example.test/blog/sitemap_index.xml" in robots_lines(testapp)


# HTTP: validators, compression, caching, HEAD -------------------------------------------

SITEMAP_PATHS = ["/sitemap_index.xml", "/book-sitemap.xml", "/book-sitemap3.xml"]


@pytest.mark.parametrize("path", SITEMAP_PATHS)
def test_sitemaps_carry_etag_and_last_modified(books, testapp, path):
    response = testapp.get(path)
    assert response.etag
    assert response.headers["ETag"].startswith('"')
    last_modified = parsedate_to_datetime(response.headers["Last-Modified"])
    assert last_modified <= datetime.now(UTC) + timedelta(seconds=1)


@pytest.mark.parametrize("path", SITEMAP_PATHS)
def test_if_none_match_with_the_etag_answers_304_without_body(books, testapp, path):
    etag = testapp.get(path).headers["ETag"]

    for given in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        response = testapp.get(path, headers={"If-None-Match": given}, status=304)
        assert response.body == b""
        assert response.headers["ETag"] == etag
        assert response.headers["Cache-Control"] == DEFAULT_CACHE_CONTROL
        assert response.headers["Vary"] == "Accept-Encoding"

    testapp.get(path, headers={"If-None-Match": '"something-else"'}, status=200)


@pytest.mark.parametrize("path", SITEMAP_PATHS)
def test_a_write_changes_the_etag_and_the_old_one_gets_the_new_document(api, books, testapp, path):
    before = testapp.get(path)

    update_post(api, books[-1], modified_at="2025-06-01T00:00:00+00:00")
    update_post(api, books[0], modified_at="2025-06-01T00:00:00+00:00")

    after = testapp.get(path, headers={"If-None-Match": before.headers["ETag"]}, status=200)
    assert after.headers["ETag"] != before.headers["ETag"]
    assert after.body != before.body
    assert b"2025-06-01T00:00:00+00:00" in after.body
    testapp.get(path, headers={"If-None-Match": after.headers["ETag"]}, status=304)


def test_a_write_elsewhere_leaves_other_sitemaps_revalidating(api, books, testapp):
    etag = testapp.get("/book-sitemap.xml").headers["ETag"]
    api.post_json("/api/authors", {"slug": "ada", "name": "Ada"}, status=201)
    testapp.get("/book-sitemap.xml", headers={"If-None-Match": etag}, status=304)


@pytest.mark.parametrize("path", SITEMAP_PATHS)
def test_if_modified_since_the_last_modification_answers_304(books, testapp, path):
    response = testapp.get(path)
    last_modified = parsedate_to_datetime(response.headers["Last-Modified"])

    for since in (last_modified, last_modified + timedelta(days=1)):
        header = format_datetime(since, usegmt=True)
        not_modified = testapp.get(path, headers={"If-Modified-Since": header}, status=304)
        assert not_modified.body == b""

    earlier = format_datetime(last_modified - timedelta(seconds=1), usegmt=True)
    assert testapp.get(path, headers={"If-Modified-Since": earlier}, status=200).body


def test_if_none_match_wins_over_if_modified_since(books, testapp):
    response = testapp.get("/sitemap_index.xml")
    headers = {
        "If-None-Match": '"stale"',
        "If-Modified-Since": response.headers["Last-Modified"],
    }
    testapp.get("/sitemap_index.xml", headers=headers, status=200)


@pytest.mark.parametrize("path", [*SITEMAP_PATHS, "/page-sitemap.xml"])
def test_gzip_when_the_client_accepts_it(books, testapp, path):
    plain = raw(testapp, path)
    assert plain.status_int == 200
    assert plain.content_encoding is None
    assert plain.headers["Vary"] == "Accept-Encoding"

    for accepted in ("gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8, *;q=0.1"):
        zipped = raw(testapp, path, **{"Accept-Encoding": accepted})
        assert zipped.status_int == 200
        assert zipped.content_encoding == "gzip"
        assert zipped.headers["Vary"] == "Accept-Encoding"
        assert_sitemap_headers(zipped)
        assert gzip.decompress(zipped.body) == plain.body
        assert len(zipped.body) == int(zipped.headers["Content-Length"])
        # One ETag per representation, so that a cache never swaps them.
        assert zipped.headers["ETag"] != plain.headers["ETag"]
        again = raw(
            testapp, path, **{"Accept-Encoding": accepted, "If-None-Match": zipped.headers["ETag"]}
        )
        assert again.status_int == 304


def test_a_large_document_is_cached_gzipped_and_served_plain_all_the_same(
    books, wsgi_app, testapp, monkeypatch
):
    whole = raw(testapp, "/book-sitemap.xml")  # rendered in one piece, kept plain
    assert whole.body.count(b"<url>") == PER_PAGE > 2
    forget_rendered(wsgi_app)
    # Documents over KEEP_PLAIN_BYTES keep only their gzipped bytes in the render cache,
    # and are sent plain in pieces; a page is made of pieces of PIECE_ENTRIES entries.
    monkeypatch.setattr(responses, "KEEP_PLAIN_BYTES", 10)
    monkeypatch.setattr(responses, "PLAIN_PIECE_BYTES", 100)
    monkeypatch.setattr(rendering, "PIECE_ENTRIES", 2)
    first = raw(testapp, "/book-sitemap.xml")  # rendered now
    again = raw(testapp, "/book-sitemap.xml")  # from the cache, decompressed
    zipped = raw(testapp, "/book-sitemap.xml", **{"Accept-Encoding": "gzip"})
    assert first.body == whole.body
    assert again.body == first.body
    assert gzip.decompress(zipped.body) == first.body
    assert again.headers["ETag"] == first.headers["ETag"]
    assert len(again.body) == int(again.headers["Content-Length"])


def test_requests_that_miss_the_cache_at_once_wait_for_one_rendering(
    books, wsgi_app, testapp, monkeypatch
):
    """After a change every crawler connection finds the page missing; one renders it and
    the others are answered with its bytes."""
    testapp.get("/post-sitemap.xml")  # every change applied: the next ones miss together
    renderings = []
    real = responses._render

    def slow_render(*args: Any) -> Any:
        renderings.append(args[2])
        time.sleep(0.3)  # long enough for the other requests to arrive meanwhile
        return real(*args)

    monkeypatch.setattr(responses, "_render", slow_render)
    forget_rendered(wsgi_app)
    bodies: list[bytes] = []

    def fetch() -> None:
        bodies.append(TestApp(wsgi_app).get("/post-sitemap.xml").body)

    threads = [threading.Thread(target=fetch) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert renderings == [("post", 1)]
    assert len(bodies) == 4 and len(set(bodies)) == 1


@pytest.mark.parametrize("accepted", [None, "identity", "gzip;q=0", "deflate", "br"])
def test_plain_xml_when_the_client_does_not_accept_gzip(books, testapp, accepted):
    headers = {} if accepted is None else {"Accept-Encoding": accepted}
    response = raw(testapp, "/sitemap_index.xml", **headers)
    assert response.status_int == 200
    assert response.content_encoding is None
    assert response.body.startswith(b"<?xml")
    parse_document(response.body)


# S-314: a cache policy for shared caches, and tags naming what a purge must reach.

# Every answer of the read path (path → its tags, after "sitemaps"): each form of a
# document and its pages for people carry the document's tag; a sitemap's pages their
# provider's; the index's parts "index"; a redirect the tags of where it leads; a 404 of
# a page that may exist tomorrow the tags it would have.
TAGGED = {
    "/sitemap_index.xml": "index doc:sitemap_index",
    "/sitemap_index.xml.gz": "index doc:sitemap_index",
    "/sitemap.xml": "index doc:sitemap_index",
    "/sitemap_index1.xml": "index doc:sitemap_index",
    "/sitemap_index2.xml": "index doc:sitemap_index2",
    "/book-sitemap.xml": "provider:book doc:book-sitemap",
    "/book-sitemap.txt": "provider:book doc:book-sitemap",
    "/book-sitemap.xml.gz": "provider:book doc:book-sitemap",
    "/book-sitemap1.xml": "provider:book doc:book-sitemap",
    "/book-sitemap3.xml": "provider:book doc:book-sitemap3",
    "/book-sitemap4.xml": "provider:book doc:book-sitemap4",
    "/sitemaps/": "index doc:sitemap_index",
    "/sitemaps/book-sitemap2.html": "provider:book doc:book-sitemap2",
    "/sitemaps/book-sitemap2.css": "provider:book doc:book-sitemap2",
    "/sitemaps/sitemap_index.css": "index doc:sitemap_index",
    "/sitemap.atom": "doc:sitemap.atom",
    "/robots.txt": "doc:robots.txt",
    XSL_PATH: "stylesheets",
}


@pytest.mark.parametrize("path", TAGGED)
def test_every_answer_carries_the_cache_policy_and_its_tags(books, testapp, path):
    response = testapp.get(path, status="*")
    assert response.status_int in (200, 301, 404), response.status
    assert response.headers["Cache-Control"] == DEFAULT_CACHE_CONTROL
    assert response.headers["Surrogate-Key"] == f"sitemaps {TAGGED[path]}"
    if response.status_int == 200 and response.headers.get("ETag"):
        again = testapp.get(path, headers={"If-None-Match": response.headers["ETag"]}, status=304)
        assert again.headers["Cache-Control"] == DEFAULT_CACHE_CONTROL
        assert again.headers["Surrogate-Key"] == f"sitemaps {TAGGED[path]}"


def test_tags_go_in_the_headers_the_cache_in_front_reads(books, app_for):
    """Cloudflare's and Akamai's headers take commas, Fastly's and Varnish's blanks; none
    named: no tag header at all."""
    both = app_for(**{"sitemap_server.cache.tag_headers": "Cache-Tag, xkey"})
    response = both.get("/book-sitemap.xml")
    assert response.headers["Cache-Tag"] == "sitemaps, provider:book, doc:book-sitemap"
    assert response.headers["xkey"] == "sitemaps provider:book doc:book-sitemap"
    assert "Surrogate-Key" not in response.headers
    untagged = app_for(**{"sitemap_server.cache.tag_headers": "none"}).get("/book-sitemap.xml")
    assert not {"Surrogate-Key", "Cache-Tag", "xkey"} & set(untagged.headers)


def test_the_cache_policy_follows_the_settings(books, app_for):
    """Where purges reach the cache, it may keep documents longer and serve them stale
    while it revalidates; ``sitemap_server.cache_control`` is taken as written."""
    cached = app_for(
        **{
            "sitemap_server.cache.s_maxage": "86400",
            "sitemap_server.cache.stale_while_revalidate": "30",
            "sitemap_server.cache.stale_if_error": "0",
        }
    )
    policy = "public, max-age=0, s-maxage=86400, stale-while-revalidate=30"
    for path in [*SITEMAP_PATHS, "/page-sitemap.xml", XSL_PATH, "/book-sitemap1.xml"]:
        assert cached.get(path, status="*").headers["Cache-Control"] == policy
    configured = "public, max-age=300, must-revalidate"
    other = app_for(**{"sitemap_server.cache_control": configured})
    for path in [*SITEMAP_PATHS, "/page-sitemap.xml", XSL_PATH]:
        assert other.get(path).headers["Cache-Control"] == configured
    etag = other.get("/sitemap_index.xml").headers["ETag"]
    not_modified = other.get("/sitemap_index.xml", headers={"If-None-Match": etag}, status=304)
    assert not_modified.headers["Cache-Control"] == configured


def test_server_timing_says_how_long_the_application_took_when_switched_on(books, app_for):
    """Every answer, 200, 304, 404 and the API's, carries the application's time in
    milliseconds; none does by default."""
    timed = app_for(**{"sitemap_server.server_timing": "true"})
    etag = timed.get("/book-sitemap.xml").headers["ETag"]
    answers = [
        timed.get("/book-sitemap.xml"),
        timed.get("/book-sitemap.xml", headers={"If-None-Match": etag}, status=304),
        timed.get("/nope-sitemap.xml", status=404),
        timed.get("/api/posts", status=401),
    ]
    for response in answers:
        name, _, duration = response.headers["Server-Timing"].partition(";dur=")
        assert name == "app" and 0 <= float(duration) < 60_000, response.headers
    assert "Server-Timing" not in app_for().get("/book-sitemap.xml").headers


@pytest.mark.parametrize("path", [*SITEMAP_PATHS, "/page-sitemap.xml", XSL_PATH, "/robots.txt"])
def test_head_answers_the_get_headers_without_a_body(books, testapp, path):
    got = testapp.get(path)
    head = testapp.head(path, status=200)
    assert head.body == b""
    for name in ("Content-Type", "X-Robots-Tag", "ETag", "Last-Modified", "Cache-Control"):
        assert head.headers.get(name) == got.headers.get(name), name


def test_head_of_a_missing_sitemap_is_404(testapp):
    response = testapp.head("/nothing-sitemap.xml", status=404)
    assert response.headers["X-Robots-Tag"] == X_ROBOTS_TAG


# S-803: several processes on one database -----------------------------------------------


def snapshot(app: TestApp) -> dict[str, tuple[bytes, str]]:
    """Body and ETag of the index and of every page it lists."""
    found = {}
    paths = ["/sitemap_index.xml"] + [urlsplit(loc).path for loc in index(app)]
    for path in paths:
        response = app.get(path, status=200)
        found[path] = (response.body, response.headers["ETag"])
    return found


def test_two_instances_agree_after_writes_through_either(api, books, testapp, app_for):
    other = app_for(signed_in=True)
    assert snapshot(testapp) == snapshot(other)  # both have rendered and cached everything

    update_post(other, books[0], status="draft")
    update_post(other, books[1], exclude_from_sitemap=True)
    from_other = snapshot(other)
    assert snapshot(testapp) == from_other
    assert page_url("book", 3) not in index(testapp)

    create_book(api, 9)
    update_settings(api, entries_per_page=2)
    from_first = snapshot(testapp)
    assert snapshot(other) == from_first
    assert len([p for p in from_first if p.startswith("/book-sitemap")]) == 4
    assert from_first != from_other


def test_nothing_rendered_before_the_database_was_recreated_is_served(
    api, testapp, clean_database, _migrated_rows
):
    create_type(api, "book")
    create_book(api, 1, slug="before")
    before = testapp.get("/book-sitemap.xml")

    # Version numbers start again from the migrations' rows, as after a restore.
    reset_database(clean_database, _migrated_rows)
    session = Session(clean_database)
    api.authorization = ("Bearer", create_token(session, "again"))
    session.commit()
    session.close()
    create_type(api, "book")
    create_book(api, 1, slug="after")

    etag = before.headers["ETag"]
    after = testapp.get("/book-sitemap.xml", headers={"If-None-Match": etag}, status=200)
    assert after.headers["ETag"] != etag
    assert [loc for loc, _ in page_entries(testapp, "book")] == [f"{SITE}/book/after/"]


def test_an_etag_from_one_instance_is_honoured_by_the_other(books, testapp, app_for):
    other = app_for()
    etag = testapp.get("/book-sitemap.xml").headers["ETag"]
    other.get("/book-sitemap.xml", headers={"If-None-Match": etag}, status=304)


@pytest.fixture
def two_servers(database_url, clean_database, tmp_path) -> Iterator[list[str]]:
    """Two ``pserve production.ini`` processes on the test database: their base URLs."""
    with ExitStack() as stack:
        yield [
            stack.enter_context(serve_production(database_url, SITE, tmp_path / f"pserve-{n}.log"))
            for n in range(2)
        ]


def served(base: str) -> dict[str, tuple[bytes, str]]:
    """Raw (gzipped) bytes and ETag of the index and every page it lists, over HTTP."""
    found = {}
    paths = ["/sitemap_index.xml"]
    while paths:
        path = paths.pop(0)
        response = requests.get(
            f"{base}{path}", headers={"Accept-Encoding": "gzip"}, timeout=10, stream=True
        )
        assert response.status_code == 200
        assert response.headers["Content-Encoding"] == "gzip"
        body = response.raw.read()
        found[path] = (body, response.headers["ETag"])
        if path == "/sitemap_index.xml":
            root = parse_document(gzip.decompress(body))
            paths += [urlsplit(loc.text).path for loc in root.iterfind("sm:sitemap/sm:loc", NS)]
    return found


@pytest.mark.slow
def post_pages(documents: dict[str, Any]) -> int:
    return len([path for path in documents if path.startswith("/post-sitemap")])


def test_two_server_processes_agree_after_a_write_through_either(two_servers, api_token):
    first, second = two_servers
    auth = {"Authorization": f"Bearer {api_token}"}

    def write(base: str, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = requests.request(method, f"{base}{path}", json=body, headers=auth, timeout=10)
        assert response.status_code in (200, 201), response.text
        return dict(response.json())

    def settled() -> None:
        """No worker runs beside these servers: the first request after a change has
        waited ``max_staleness`` (1 s by default) applies it, whichever process gets it."""
        time.sleep(1.2)

    write(first, "PATCH", "/api/settings", {"entries_per_page": PER_PAGE})
    posts = [
        write(first, "POST", "/api/posts", {"type": "post", "title": f"P{n}", "status": "publish"})
        for n in range(5)
    ]
    settled()
    assert served(first) == served(second)

    write(second, "PATCH", f"/api/posts/{posts[0]['id']}", {"status": "draft"})
    settled()
    after_second = served(first)
    assert after_second == served(second)
    # Two post pages (the servers load the installed plugins: a news sitemap may be there).
    assert post_pages(after_second) == 2

    write(first, "POST", "/api/posts", {"type": "post", "title": "P6", "status": "publish"})
    write(first, "POST", "/api/posts", {"type": "post", "title": "P7", "status": "publish"})
    settled()
    after_first = served(second)
    assert after_first == served(first)
    assert after_first != after_second
    assert post_pages(after_first) == 3
