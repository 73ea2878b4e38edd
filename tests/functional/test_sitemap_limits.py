"""S-310: no sitemap page passes the byte limit; a page that would is split, not truncated.

The limit is 50 MiB in production; here the application is built with a small
``sitemap_server.max_page_bytes`` so that a few long URLs reach it.
"""

from __future__ import annotations

from itertools import pairwise

import pytest
from lxml import etree

from sitemap_server.sitemaps.maintenance import PAGE_FRAME_BYTES
from sitemap_server.testing import SITE_URL, client, parse_sitemap

LIMIT = PAGE_FRAME_BYTES + 6000
NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}


@pytest.fixture
def site(app_with, clean_database, api_token):
    return client(app_with(**{"sitemap_server.max_page_bytes": str(LIMIT)}), api_token)


def create_post(api, number: int, images: int = 2) -> dict:
    body = {
        "type": "post",
        "title": f"Post {number}",
        "slug": f"post-{number:03d}-" + "x" * 190,
        "status": "publish",
        "published_at": "2024-03-01T12:00:00+00:00",
        "images": [f"{SITE_URL}/uploads/{number}-{i}-{'y' * 200}.jpg" for i in range(images)],
    }
    return api.post_json("/api/posts", body, status=201).json


def pages(api) -> list[bytes]:
    """Every post sitemap page the index lists, as served."""
    index = parse_sitemap(api.get("/sitemap_index.xml").body)
    urls = [
        loc.text for loc in index.iterfind("sm:sitemap/sm:loc", NS) if "/post-sitemap" in loc.text
    ]
    return [api.get(url.removeprefix(SITE_URL), status=200).body for url in urls]


def locs(body: bytes) -> list[str]:
    return [loc.text for loc in parse_sitemap(body).iterfind("sm:url/sm:loc", NS)]


def entry_bytes(body: bytes) -> list[int]:
    root = etree.fromstring(body)
    return [len(etree.tostring(url)) for url in root.iterfind("sm:url", NS)]


def test_a_page_that_would_pass_the_byte_limit_is_split(site):
    posts = [create_post(site, n) for n in range(1, 31)]
    served = pages(site)
    # 31 entries (the home page and 30 posts) fit one page by count (1,000 a page), not
    # by bytes: split into several, none over the limit, nothing lost or repeated.
    assert len(served) > 3
    assert all(len(body) <= LIMIT for body in served)
    listed = [loc for body in served for loc in locs(body)]
    assert listed == [f"{SITE_URL}/"] + [p["permalink"] for p in posts]
    # Every page but the last is filled: the next entry would not have fitted.
    budget = LIMIT - PAGE_FRAME_BYTES
    for body, following in pairwise(served):
        assert sum(entry_bytes(body)) + entry_bytes(following)[0] > budget * 0.95


def test_an_entry_that_grows_splits_its_page_and_moves_only_what_follows(site):
    posts = [create_post(site, n, images=1) for n in range(1, 25)]
    before = [locs(body) for body in pages(site)]
    grown = posts[len(posts) // 2]
    site.patch_json(
        f"/api/posts/{grown['id']}",
        {"images": [f"{SITE_URL}/uploads/grown-{i}-{'z' * 200}.jpg" for i in range(8)]},
    )
    served = pages(site)
    assert all(len(body) <= LIMIT for body in served)
    after = [locs(body) for body in served]
    assert [loc for page in after for loc in page] == [loc for page in before for loc in page]
    holding = next(i for i, page in enumerate(before) if grown["permalink"] in page)
    assert after[:holding] == before[:holding]  # pages before the grown entry keep their cut
    assert after != before


def test_an_entry_too_large_for_any_page_with_others_gets_a_page_of_its_own(site):
    create_post(site, 1, images=1)
    big = create_post(site, 2, images=18)  # about 5,500 of the 6,000 bytes
    create_post(site, 3, images=1)
    served = pages(site)
    assert any(locs(body) == [big["permalink"]] for body in served)
    for body in served:
        parse_sitemap(body)  # well-formed and valid against the XSDs
