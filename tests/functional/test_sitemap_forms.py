"""Each document's other forms (S-313): its gzip file (``.xml.gz``: the bytes the gzip
transfer of the XML sends) and, for a page of URLs, its text (``.txt``: one URL a line,
the same pages as the XML).

Sites are built through the admin API and read as a crawler would, the bytes as they
leave the WSGI application (``raw``: WebTest would decompress a gzipped body).
"""

from __future__ import annotations

import gzip
from typing import Any
from urllib.parse import urlsplit

import pytest
from webob import Request
from webtest import TestApp

from sitemap_server.testing import assert_not_found, parse_sitemap

SITE = "http://sitemaps.test"
NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
PER_PAGE = 3
X_ROBOTS_TAG = "noindex, follow"


def raw(app: TestApp, path: str, method: str = "GET", **headers: str) -> Any:
    """What the WSGI application really sends."""
    return Request.blank(path, method=method, headers=headers).get_response(app.app)


def locs(body: bytes) -> list[str]:
    """The ``<loc>`` of each entry (or each sitemap, of an index), in order; the document
    validated against the sitemap schemas on the way."""
    root = parse_sitemap(body)
    return [loc.text for loc in root.iterfind("*/sm:loc", namespaces=NS)]


def create_book(api: TestApp, number: int, **fields: Any) -> dict[str, Any]:
    body = {
        "type": "book",
        "title": f"Book {number}",
        "slug": f"book-{number}",
        "status": "publish",
        "published_at": f"2024-03-{number:02d}T12:00:00+00:00",
        "images": [f"/uploads/book-{number}.jpg"] if number % 2 else [],
        **fields,
    }
    return api.post_json("/api/posts", body, status=201).json


@pytest.fixture
def books(api: TestApp) -> list[dict[str, Any]]:
    """Eight listed books, one of them with a slug in Greek, three entries a page."""
    api.patch_json("/api/settings", {"entries_per_page": PER_PAGE}, status=200)
    api.post_json("/api/post-types", {"name": "book", "label": "Books"}, status=201)
    made = [create_book(api, n) for n in range(1, 8)]
    return [*made, create_book(api, 8, slug="βιβλίο-οκτώ")]


PAGES = ["/book-sitemap.xml", "/book-sitemap2.xml", "/book-sitemap3.xml", "/page-sitemap.xml"]
DOCUMENTS = ["/sitemap_index.xml", *PAGES]


@pytest.mark.parametrize("path", DOCUMENTS)
def test_the_gzip_file_is_what_the_gzip_transfer_sends(books, testapp, path):
    transfer = raw(testapp, path, **{"Accept-Encoding": "gzip"})
    plain = raw(testapp, path)

    for accepted in ({}, {"Accept-Encoding": "gzip"}, {"Accept-Encoding": "identity"}):
        file = raw(testapp, path + ".gz", **accepted)
        assert file.status_int == 200
        assert file.headers["Content-Type"] == "application/gzip"
        assert file.content_encoding is None  # the file is gzip; the transfer is not
        assert "Vary" not in file.headers
        assert file.headers["X-Robots-Tag"] == X_ROBOTS_TAG
        assert file.headers["Cache-Control"] == plain.headers["Cache-Control"]
        assert file.body == transfer.body
        assert file.headers["ETag"] == transfer.headers["ETag"]
        assert int(file.headers["Content-Length"]) == len(file.body)
    assert gzip.decompress(file.body) == plain.body
    assert locs(gzip.decompress(file.body)) == locs(plain.body)

    etag = file.headers["ETag"]
    again = raw(testapp, path + ".gz", **{"If-None-Match": etag})
    assert (again.status_int, again.body, again.headers["ETag"]) == (304, b"", etag)
    assert "Vary" not in again.headers
    head = raw(testapp, path + ".gz", method="HEAD")
    assert (head.status_int, head.body) == (200, b"")


@pytest.mark.parametrize("path", PAGES)
def test_the_text_lists_the_urls_of_the_same_page(books, testapp, path):
    text_path = path.removesuffix(".xml") + ".txt"
    response = raw(testapp, text_path)

    assert response.status_int == 200
    assert response.headers["Content-Type"] == "text/plain; charset=UTF-8"
    assert response.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    assert response.headers["Vary"] == "Accept-Encoding"
    text = response.body.decode("utf-8")
    assert text.splitlines() == locs(raw(testapp, path).body)
    assert text == "".join(f"{line}\n" for line in text.splitlines())
    zipped = raw(testapp, text_path, **{"Accept-Encoding": "gzip"})
    assert zipped.content_encoding == "gzip"
    assert gzip.decompress(zipped.body) == response.body
    assert zipped.headers["ETag"] != response.headers["ETag"]
    assert response.headers["ETag"] != raw(testapp, path).headers["ETag"]  # another document
    etag = response.headers["ETag"]
    assert raw(testapp, text_path, **{"If-None-Match": etag}).status_int == 304


def test_a_text_line_is_the_url_as_the_xml_gives_it(books, testapp):
    """A slug in Greek: the XML's ``<loc>`` percent-encodes it, and so does the text."""
    (line,) = [u for u in testapp.get("/book-sitemap3.txt").text.splitlines() if "%CE" in u]
    assert line in locs(testapp.get("/book-sitemap3.xml").body)
    assert line.isascii()


def test_a_write_changes_every_form_of_its_page(api, books, testapp):
    before = {p: raw(testapp, p) for p in ("/book-sitemap.txt", "/book-sitemap.xml.gz")}

    api.patch_json(f"/api/posts/{books[0]['id']}", {"slug": "first-book"}, status=200)

    for path, old in before.items():
        new = raw(testapp, path, **{"If-None-Match": old.headers["ETag"]})
        assert new.status_int == 200 and new.headers["ETag"] != old.headers["ETag"]
    assert f"{SITE}/book/first-book/" in testapp.get("/book-sitemap.txt").text.splitlines()


def test_a_type_with_nothing_listed_has_an_empty_text(api, testapp):
    response = raw(testapp, "/post-sitemap.txt")
    assert (response.status_int, response.body) == (200, b"")
    assert locs(gzip.decompress(raw(testapp, "/post-sitemap.xml.gz").body)) == []


@pytest.mark.parametrize(
    ("path", "canonical"),
    [
        ("/book-sitemap1.txt", "/book-sitemap.txt"),
        ("/book-sitemap02.xml.gz", "/book-sitemap2.xml.gz"),
        ("/sitemap_index1.xml.gz", "/sitemap_index.xml.gz"),
        ("/sitemap.xml.gz", "/sitemap_index.xml.gz"),
    ],
)
def test_other_numbers_of_a_form_move_to_its_canonical_url(books, testapp, path, canonical):
    response = testapp.get(path, status=301)
    assert urlsplit(response.location).path == canonical
    testapp.get(canonical, status=200)


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap_index.txt",  # no index of text files
        "/book-sitemap.txt.gz",
        "/book-sitemap4.txt",  # past the last page
        "/book-sitemap4.xml.gz",
        "/nothing-sitemap.txt",
        "/book-sitemap.xml.gzip",
        "/book-sitemap.TXT",
        "/sitemap_index2.xml.gz",
    ],
)
def test_forms_that_do_not_exist_are_404(books, testapp, path):
    assert_not_found(testapp, path)


def test_a_private_site_has_empty_forms(api, books, testapp):
    api.patch_json("/api/settings", {"private": True}, status=200)
    assert testapp.get("/book-sitemap.txt").body == b""
    assert locs(gzip.decompress(raw(testapp, "/sitemap_index.xml.gz").body)) == []
    assert_not_found(testapp, "/book-sitemap2.txt")


@pytest.mark.parametrize(
    "path", ["/book-sitemap.txt", "/post-sitemap7.xml.gz", "/sitemap.xml.gz", "/sitemap.atom"]
)
def test_content_cannot_take_a_forms_url(api, books, path):
    response = api.post_json(
        "/api/posts",
        {"type": "page", "title": "Mine", "status": "publish", "path": path},
        status=409,
    )
    assert response.json["errors"][0]["field"] == "path"
    assert "a document the server itself serves" in response.json["detail"]


@pytest.mark.parametrize("named", ["false", "true"])
def test_robots_txt_names_the_text_forms_only_when_asked(books, app_for, named):
    app = app_for(**{"sitemap_server.robots.text": named})
    lines = [line for line in app.get("/robots.txt").text.splitlines() if line.endswith(".txt")]
    pages = [f"{SITE}/{name}-sitemap{n}.txt" for name, n in (("book", ""), ("book", 2))]
    pages += [f"{SITE}/book-sitemap3.txt"]
    if named == "false":
        assert lines == []
    else:
        # Every page the index lists, in its order, and each is served.
        assert [line.removeprefix("Sitemap: ") for line in lines if "book" in line] == pages
        assert len(lines) == len(locs(app.get("/sitemap_index.xml").body))
        for line in lines:
            app.get(line.removeprefix(f"Sitemap: {SITE}"), status=200)
