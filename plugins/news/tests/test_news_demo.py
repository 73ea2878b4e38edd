"""The demo site (``sitemap-server seed-demo``) has news: its latest posts."""

from __future__ import annotations

from sitemap_server.demo import seed_demo
from sitemap_server.testing import parse_sitemap

NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
}


def test_the_demo_sites_latest_posts_are_in_the_news_sitemap(app_session, testapp):
    with app_session.begin():
        seed_demo(app_session, posts=40)

    index = parse_sitemap(testapp.get("/sitemap_index.xml").body)
    assert "http://sitemaps.test/news-sitemap.xml" in [
        loc.text for loc in index.iterfind("sm:sitemap/sm:loc", NS)
    ]
    root = parse_sitemap(testapp.get("/news-sitemap.xml").body)  # valid against the XSDs
    # The demo's last six posts are from the last 40 hours, newest (by lastmod) first.
    assert len(root.findall("sm:url/news:news/news:publication_date", NS)) == 6
    dates = [e.text for e in root.iterfind("sm:url/sm:lastmod", NS)]
    assert dates == sorted(dates, reverse=True)
    assert {e.text for e in root.iterfind("sm:url/news:news/news:publication/news:name", NS)} == {
        "Demo Site"
    }
    assert {
        e.text for e in root.iterfind("sm:url/news:news/news:publication/news:language", NS)
    } == {"en"}
