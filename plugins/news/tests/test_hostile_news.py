"""Hostile text and image URLs never break the news sitemap or its page (issue 14; S-504).

The hand-written corpus of ``sitemap_server.testing.hostile`` as recent posts' titles,
keywords, content images and featured images, and as the publication's name; then every
document (the news sitemap among them) is parsed and validated and every page checked.
The cases tried are counted in ``record_property`` (a JUnit report), nothing is printed.
"""

from __future__ import annotations

import html
import itertools

from sitemap_server.testing import fetch_sitemap, index_locs
from sitemap_server.testing.hostile import (
    HOSTILE_TEXT,
    HOSTILE_URLS,
    IMAGE_HOSTS,
    check_everything,
)

NEWS_NS = "{http://www.google.com/schemas/sitemap-news/0.9}"


def test_the_hostile_corpus_breaks_no_news(api, testapp, record_property):
    api.patch_json("/api/settings", {"allowed_image_hosts": IMAGE_HOSTS}, status=200)
    api.patch_json("/api/news/settings", {"post_types": ["post"]}, status=200)
    tried = 0
    for text in HOSTILE_TEXT:
        tried += 1
        named = api.patch_json("/api/news/settings", {"publication_name": text}, expect_errors=True)
        assert named.status_int < 500, named.text
    # Each URL with one of the texts in turn: a post each (news is rebuilt whole per post).
    for url, text in zip(HOSTILE_URLS, itertools.cycle(HOSTILE_TEXT), strict=False):
        tried += 1
        escaped = html.escape(url, quote=True)
        fields = {
            "type": "post",
            "title": text,
            "status": "publish",  # published now: news
            "content": f'<p>{text}</p><img src="{escaped}">',
        }
        made = api.post_json(
            "/api/posts", {**fields, "featured_image": url or None}, expect_errors=True
        )
        if made.status_int != 201:
            made = api.post_json("/api/posts", fields, expect_errors=True)
        assert made.status_int < 500, made.text
        if made.status_int == 201:
            news = api.patch_json(
                f"/api/posts/{made.json['id']}/news", {"keywords": text}, expect_errors=True
            )
            assert news.status_int < 500, news.text

    assert any(loc.endswith("/news-sitemap.xml") for loc in index_locs(testapp))
    root = fetch_sitemap(testapp, "/news-sitemap.xml")
    assert len(root.findall(f".//{NEWS_NS}title")) > 0
    check_everything(testapp)
    record_property("cases", tried)
