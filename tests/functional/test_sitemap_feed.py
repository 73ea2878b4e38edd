"""The Atom feed of the most recently changed listed URLs (S-313): ``/sitemap.atom``.

Read as feed readers and crawlers read it: feedparser (an independent consumer; the
browser suite has ultimate-sitemap-parser read it over HTTP too) and RFC 4287's
requirements checked on the parsed XML.
"""

from __future__ import annotations

import gzip
from datetime import datetime
from typing import Any

import feedparser
import pytest
from lxml import etree
from webob import Request

from sitemap_server.models import SitemapEntry
from sitemap_server.sitemaps.feed import newest
from sitemap_server.testing import xml_parser

SITE = "http://sitemaps.test"
ATOM = "{http://www.w3.org/2005/Atom}"


def when(day: int, hour: int = 12) -> str:
    return f"2024-03-{day:02d}T{hour:02d}:00:00+00:00"


def create_post(api: Any, slug: str, day: int, **fields: Any) -> dict[str, Any]:
    body = {"type": "post", "title": slug, "slug": slug, "status": "publish"}
    body |= {"published_at": when(day), "modified_at": when(day, 13), **fields}
    return api.post_json("/api/posts", body, status=201).json


def read_feed(app: Any) -> tuple[Any, list[tuple[str, datetime]]]:
    """The feed as a reader gets it, checked against RFC 4287's musts; its entries'
    (link, updated), in order."""
    response = app.get("/sitemap.atom", status=200)
    assert response.headers["Content-Type"] == "application/atom+xml; charset=UTF-8"
    assert response.headers["X-Robots-Tag"] == "noindex, follow"
    root = etree.fromstring(response.body, xml_parser())
    assert root.tag == f"{ATOM}feed"
    for element in (root, *root.iterfind(f"{ATOM}entry")):
        for must in ("id", "title", "updated"):
            assert len(element.findall(f"{ATOM}{must}")) == 1, (element.tag, must)
    assert root.find(f"{ATOM}author/{ATOM}name") is not None  # entries carry none
    parsed = feedparser.parse(response.body)
    assert not parsed.bozo, parsed.bozo_exception
    assert parsed.version == "atom10"
    entries = [(e.link, datetime.fromisoformat(e.updated)) for e in parsed.entries]
    assert [e.id for e in parsed.entries] == [link for link, _ in entries]
    return response, entries


def test_the_feed_lists_the_newest_listed_urls_newest_first(api, testapp):
    posts = [create_post(api, f"post-{day}", day) for day in (3, 1, 4, 2)]
    create_post(api, "hidden", 9, robots="noindex")  # not listed: not in the feed
    create_post(api, "draft", 9, status="draft")

    _, entries = read_feed(testapp)

    newest_first = sorted(posts, key=lambda p: p["modified_at"], reverse=True)
    links = [link for link, _ in entries]
    # The posts, and the home page, dated by the newest of them.
    assert [link for link in links if "/2024/03/" in link] == [p["permalink"] for p in newest_first]
    assert f"{SITE}/" in links
    assert f"{SITE}/2024/03/hidden/" not in links and f"{SITE}/2024/03/draft/" not in links
    assert [u for _, u in entries] == sorted((u for _, u in entries), reverse=True)
    assert len(links) == len(set(links))
    # Each date is the one the sitemaps give the URL.
    assert dict(entries)[posts[0]["permalink"]] == datetime.fromisoformat(when(3, 13))


def test_a_change_moves_its_url_to_the_top_and_changes_the_etag(api, testapp):
    posts = [create_post(api, f"post-{day}", day) for day in (1, 2, 3)]
    before, entries = read_feed(testapp)
    assert entries[0][0] == posts[2]["permalink"]
    assert dict(entries)[f"{SITE}/"] == entries[0][1]  # the home page changed with it
    etag = before.headers["ETag"]
    testapp.get("/sitemap.atom", headers={"If-None-Match": etag}, status=304)

    api.patch_json(f"/api/posts/{posts[0]['id']}", {"modified_at": when(20)}, status=200)

    after, entries = read_feed(testapp)
    assert after.headers["ETag"] != etag
    assert entries[0] == (posts[0]["permalink"], datetime.fromisoformat(when(20)))


def test_the_number_of_entries_is_a_setting(api, testapp, app_for):
    for day in range(1, 8):
        create_post(api, f"post-{day}", day)
    app = app_for(**{"sitemap_server.feed.entries": "3"})

    _, entries = read_feed(app)

    _, every = read_feed(testapp)
    assert len(every) > 3 and entries == every[:3]
    assert entries[0][0] == f"{SITE}/2024/03/post-7/"


def test_a_private_site_has_an_empty_feed(api, testapp):
    create_post(api, "post-1", 1)
    api.patch_json("/api/settings", {"private": True}, status=200)

    _, entries = read_feed(testapp)

    assert entries == []


def test_an_empty_site_has_a_valid_empty_feed(testapp):
    response, entries = read_feed(testapp)
    assert entries == [] and response.etag


@pytest.mark.parametrize(("named", "lines"), [("false", 1), ("true", 2)])
def test_robots_txt_names_the_feed_when_asked(app_for, named, lines):
    app = app_for(**{"sitemap_server.feed.in_robots": named})
    sitemaps = [
        line for line in app.get("/robots.txt").text.splitlines() if line.startswith("Sitemap:")
    ]
    assert len(sitemaps) == lines
    assert (f"Sitemap: {SITE}/sitemap.atom" in sitemaps) == (named == "true")


def test_the_feed_is_gzipped_for_a_client_that_takes_it(api, testapp):
    create_post(api, "post-1", 1)
    plain = Request.blank("/sitemap.atom").get_response(testapp.app)
    zipped = Request.blank("/sitemap.atom", headers={"Accept-Encoding": "gzip"})
    response = zipped.get_response(testapp.app)
    assert response.headers["Content-Encoding"] == "gzip"
    assert response.headers["Vary"] == "Accept-Encoding"
    assert gzip.decompress(response.body) == plain.body


def test_a_url_in_two_sitemaps_is_listed_once_with_its_newest_date(dbsession):
    """A post is in its type's sitemap and in the news sitemap (a plugin's): one entry."""
    day = datetime.fromisoformat
    rows = [
        ("post", 1, "/a/", day(when(1))),
        ("post", 2, "/b/", day(when(2))),
        ("post", 3, "/c/", day(when(3))),
        ("news", 1, "/c/", day(when(5))),
        ("news", 2, "/b/", day(when(2))),
        ("news", 3, "/d/", None),  # no date: nothing to say of when it changed
    ]
    for provider, key, path, lastmod in rows:
        dbsession.add(SitemapEntry(provider=provider, key=key, path=path, lastmod=lastmod))
    dbsession.flush()

    found = newest(dbsession.connection(), ["post", "news"], 3)

    assert found == [(day(when(5)), "/c/"), (day(when(2)), "/b/"), (day(when(1)), "/a/")]
    assert newest(dbsession.connection(), ["post", "news"], 1) == [(day(when(5)), "/c/")]
