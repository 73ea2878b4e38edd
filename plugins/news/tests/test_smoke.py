from datetime import timedelta

from sitemap_server.testing import parse_sitemap

NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
}


def test_a_recent_post_is_news_until_it_is_48_hours_old(api, testapp, clock):
    published = clock.now() - timedelta(hours=1)
    post = api.post_json(
        "/api/posts",
        {
            "type": "post",
            "title": "Breaking",
            "status": "publish",
            "published_at": published.isoformat(),
            "modified_at": published.isoformat(),
        },
        status=201,
    ).json
    root = parse_sitemap(testapp.get("/news-sitemap.xml").body)
    assert [u.findtext("sm:loc", namespaces=NS) for u in root.iterfind("sm:url", NS)] == [
        post["permalink"]
    ]
    assert root.findtext("sm:url/news:news/news:title", namespaces=NS) == "Breaking"
    clock.advance(hours=46, minutes=59, seconds=59)  # 47:59:59 old
    assert len(parse_sitemap(testapp.get("/news-sitemap.xml").body)) == 1
    clock.advance(seconds=2)
    assert len(parse_sitemap(testapp.get("/news-sitemap.xml").body)) == 0
    assert "/news-sitemap.xml" not in testapp.get("/sitemap_index.xml").text
