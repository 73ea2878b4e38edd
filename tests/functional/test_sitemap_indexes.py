"""S-311: an index lists at most 50,000 sitemaps and never one that answers 404; past that
the index is split (``sitemap_index.xml``, ``sitemap_index2.xml``, ...) and robots.txt
names every index file. Also the moves (301) and the stylesheets' validators.

The limits are made small here (three sitemaps an index, five pages a provider) and the
site cuts a page per post, so a few posts pass them.
"""

from __future__ import annotations

import pytest

from sitemap_server import documents
from sitemap_server.testing import (
    SITE_URL,
    SITEMAP_NS,
    X_ROBOTS_TAG,
    assert_not_found,
    fetch_sitemap,
    forget_rendered,
    parse_sitemap,
)

NS = {"s": SITEMAP_NS}
POSTS = 7


@pytest.fixture
def small_limits(monkeypatch):
    monkeypatch.setattr(documents, "SITEMAPS_PER_INDEX", 3)
    monkeypatch.setattr(documents, "MAX_PAGES", 5)


def create_post(api, number: int) -> dict:
    body = {
        "type": "post",
        "title": f"Post {number}",
        "slug": f"post-{number}",
        "status": "publish",
        "published_at": f"2024-03-{number + 1:02d}T12:00:00+00:00",
    }
    return api.post_json("/api/posts", body, status=201).json


@pytest.fixture
def site(api, testapp):
    api.patch_json("/api/settings", {"entries_per_page": 1}, status=200)
    for number in range(POSTS):
        create_post(api, number)
    return testapp


def robots_indexes(testapp) -> list[str]:
    text = testapp.get("/robots.txt", status=200).text
    return [
        line.removeprefix("Sitemap: ") for line in text.splitlines() if line.startswith("Sitemap:")
    ]


def listed(testapp, index_url: str) -> list[str]:
    root = fetch_sitemap(testapp, index_url.removeprefix(SITE_URL))
    assert root.tag == f"{{{SITEMAP_NS}}}sitemapindex"
    return [loc.text for loc in root.iterfind("s:sitemap/s:loc", NS)]


def test_past_the_limit_the_index_is_split_and_robots_txt_names_every_part(site, monkeypatch):
    whole = listed(site, f"{SITE_URL}/sitemap_index.xml")  # the protocol's limit: one index
    monkeypatch.setattr(documents, "SITEMAPS_PER_INDEX", 3)
    forget_rendered(site.app)  # rendered with the limit of before
    indexes = robots_indexes(site)
    parts = [listed(site, url) for url in indexes]
    # A page per post, and one for the home page (the first entry of the post sitemap).
    assert len([loc for loc in whole if "/post-sitemap" in loc]) == POSTS + 1
    assert indexes == [
        f"{SITE_URL}/sitemap_index.xml",
        *(f"{SITE_URL}/sitemap_index{n}.xml" for n in range(2, len(indexes) + 1)),
    ]
    assert len(indexes) == -(-len(whole) // 3)
    assert all(1 <= len(part) <= 3 for part in parts)
    # Every sitemap once, in the order one index would list them.
    assert [loc for part in parts for loc in part] == whole
    for loc in whole:
        parse_sitemap(site.get(loc.removeprefix(SITE_URL), status=200).body)
    assert_not_found(site, f"/sitemap_index{len(indexes) + 1}.xml")


def test_index_parts_have_their_own_etag_and_page_for_people(site, small_limits):
    first = site.get("/sitemap_index.xml", status=200)
    second = site.get("/sitemap_index2.xml", status=200)
    assert first.headers["ETag"] != second.headers["ETag"]
    site.get("/sitemap_index2.xml", headers={"If-None-Match": second.headers["ETag"]}, status=304)
    page = site.get("/sitemaps/sitemap_index2.html", status=200)
    assert page.content_type == "text/html"
    for loc in listed(site, f"{SITE_URL}/sitemap_index2.xml"):
        assert loc in page.text


def test_no_index_lists_a_page_past_the_last_one_a_provider_may_have(site, small_limits):
    listed_everywhere = [loc for url in robots_indexes(site) for loc in listed(site, url)]
    posts = [loc for loc in listed_everywhere if "/post-sitemap" in loc]
    assert posts == [
        f"{SITE_URL}/post-sitemap.xml",
        *(f"{SITE_URL}/post-sitemap{n}.xml" for n in range(2, 6)),
    ]
    assert_not_found(site, "/post-sitemap6.xml")
    for loc in listed_everywhere:
        site.get(loc.removeprefix(SITE_URL), status=200)


def test_writes_that_add_sitemaps_add_index_files(api, site, monkeypatch):
    monkeypatch.setattr(documents, "SITEMAPS_PER_INDEX", 3)
    before = robots_indexes(site)
    last = site.get(before[-1].removeprefix(SITE_URL), status=200).headers["ETag"]
    for number in range(POSTS, POSTS + 3):  # three more pages: one more index file
        create_post(api, number)
    after = robots_indexes(site)
    assert after[: len(before)] == before and len(after) == len(before) + 1
    assert site.get(before[-1].removeprefix(SITE_URL), status=200).headers["ETag"] != last
    listed(site, after[-1])


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/sitemap_index1.xml", "/sitemap_index.xml"),
        ("/sitemap_index0.xml", "/sitemap_index.xml"),
        ("/sitemap_index02.xml", "/sitemap_index2.xml"),
        ("/sitemap.xml", "/sitemap_index.xml"),
        ("/post-sitemap1.xml", "/post-sitemap.xml"),
        ("/post-sitemap02.xml", "/post-sitemap2.xml"),
        ("/sitemaps/sitemap_index.html", "/sitemaps/"),
    ],
)
def test_moves_are_permanent_and_carry_the_robots_header(site, path, location):
    response = site.get(path, status=301)
    assert response.headers["Location"] == SITE_URL + location
    assert response.headers["X-Robots-Tag"] == X_ROBOTS_TAG


@pytest.mark.parametrize("number", ["501", "9" * 40])
def test_an_index_number_no_site_can_have_is_404(testapp, number):
    assert_not_found(testapp, f"/sitemap_index{number}.xml")


def test_a_private_site_has_one_empty_index_and_no_other(api, testapp):
    api.patch_json("/api/settings", {"private": True}, status=200)
    assert listed(testapp, f"{SITE_URL}/sitemap_index.xml") == []
    assert_not_found(testapp, "/sitemap_index2.xml")


def test_the_stylesheet_has_validators_and_answers_304(testapp):
    first = testapp.get("/main-sitemap.xsl", status=200)
    assert first.headers["ETag"] and first.headers["Last-Modified"]
    assert first.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    again = testapp.get(
        "/main-sitemap.xsl", headers={"If-None-Match": first.headers["ETag"]}, status=304
    )
    assert again.body == b""
    testapp.get(
        "/main-sitemap.xsl",
        headers={"If-Modified-Since": first.headers["Last-Modified"]},
        status=304,
    )
    other = testapp.get("/main-sitemap.xsl", headers={"If-None-Match": '"other"'}, status=200)
    assert other.body == first.body


@pytest.mark.parametrize("path", ["/sitemap_index.xml", "/sitemap_index2.xml"])
def test_explain_says_what_an_index_file_is(api, path):
    explanation = api.get("/api/explain", params={"url": path}, status=200).json
    assert explanation["subject"] == {"kind": "index"}
    assert [r["rule"] for r in explanation["reasons"]] == ["index"]
