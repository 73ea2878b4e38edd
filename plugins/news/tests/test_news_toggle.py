"""The news plugin on and off (S-501, S-502, S-504).

Installed, the plugin is loaded by default (``testapp``, ``api``). Disabled by setting
(``sitemap_server.disabled_plugins = news``) it must leave no trace a client can see — its
sitemap, stylesheet, admin endpoints and OpenAPI paths answer as if it were not installed,
the index does not name it even while recent posts exist — and the core keeps working.
Both applications share the test database.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from webtest import TestApp

from sitemap_server.app import site_of_app
from sitemap_server.testing import (
    SITE_URL,
    X_ROBOTS_TAG,
    assert_not_found,
    assert_problem,
    client,
    fetch_sitemap,
    index_locs,
    url_locs,
)

SM_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
NS = {"sm": SM_NS, "news": NEWS_NS}
NEWS_SITEMAP = "/news-sitemap.xml"
NEWS_XSL = "/news-sitemap.xsl"
NEWS_API_PATHS = ("/api/news/settings", "/api/posts/{id}/news", "/api/terms/{id}/news")


@pytest.fixture
def disabled_app(app_with: Any) -> Any:
    """The application with the installed news plugin disabled by setting."""
    return app_with(**{"sitemap_server.disabled_plugins": "news"})


@pytest.fixture
def without_news(disabled_app: Any, clean_database: Any) -> TestApp:
    """That application through WebTest, without credentials."""
    return client(disabled_app)


@pytest.fixture
def admin_without_news(disabled_app: Any, api_token: str) -> TestApp:
    """That application through WebTest, signed in."""
    return client(disabled_app, api_token)


def create_post(api: TestApp, clock: Any, slug: str, **fields: Any) -> dict[str, Any]:
    """A listed post published an hour ago: news while the plugin is on."""
    when = (clock.now() - timedelta(hours=1)).replace(microsecond=0).isoformat()
    body = {
        "type": "post",
        "title": slug.title(),
        "slug": slug,
        "status": "publish",
        "published_at": when,
        "modified_at": when,
        **fields,
    }
    return api.post_json("/api/posts", body, status=201).json


# Disabled: nothing of the plugin answers -------------------------------------------------


def test_the_setting_blocks_the_plugin(disabled_app, wsgi_app):
    import sitemap_server_news

    disabled = site_of_app(disabled_app).plugins
    assert disabled.is_blocked("news")
    assert sitemap_server_news not in disabled.get_plugins()
    enabled = site_of_app(wsgi_app).plugins
    assert sitemap_server_news in enabled.get_plugins()


def test_the_news_sitemap_and_its_stylesheet_are_404_when_disabled(
    api, testapp, without_news, clock
):
    post = create_post(api, clock, "breaking")
    assert url_locs(testapp, NEWS_SITEMAP) == [post["permalink"]]
    assert testapp.get(NEWS_XSL, status=200).content_type == "text/xsl"

    for path in (NEWS_SITEMAP, "/news-sitemap2.xml", NEWS_XSL):
        assert_not_found(without_news, path)
    without_news.head(NEWS_SITEMAP, status=404)


def test_the_admin_endpoints_are_404_problems_when_disabled(
    api, admin_without_news, clock, db_snapshot
):
    post = create_post(api, clock, "breaking")
    term = api.post_json("/api/terms", {"taxonomy": "category", "name": "Ads"}, status=201).json
    api.patch_json("/api/news/settings", {"publication_name": "The Herald"}, status=200)
    api.patch_json(f"/api/posts/{post['id']}/news", {"keywords": "kept"}, status=200)
    client = admin_without_news
    assert client.get(f"/api/posts/{post['id']}", status=200).json["id"] == post["id"]
    before = db_snapshot()

    for path in (
        "/api/news/settings",
        f"/api/posts/{post['id']}/news",
        f"/api/terms/{term['id']}/news",
    ):
        assert_problem(client.get(path, expect_errors=True), 404)
    assert_problem(
        client.patch_json(
            "/api/news/settings", {"publication_name": "Hijacked"}, expect_errors=True
        ),
        404,
    )
    assert_problem(
        client.patch_json(f"/api/posts/{post['id']}/news", {"not_news": True}, expect_errors=True),
        404,
    )
    assert_problem(
        client.patch_json(f"/api/terms/{term['id']}/news", {"exclude": True}, expect_errors=True),
        404,
    )

    # Nothing was changed behind those 404s.
    assert db_snapshot() == before
    assert api.get("/api/news/settings").json["publication_name"] == "The Herald"
    assert api.get(f"/api/posts/{post['id']}/news").json["not_news"] is False


def test_the_index_has_no_news_entry_even_with_recent_posts(
    api, testapp, without_news, admin_without_news, clock
):
    post = create_post(api, clock, "breaking")
    assert f"{SITE_URL}{NEWS_SITEMAP}" in index_locs(testapp)

    listed = index_locs(without_news)
    assert f"{SITE_URL}/post-sitemap.xml" in listed
    assert not [loc for loc in listed if "news" in loc]
    assert url_locs(without_news, "/post-sitemap.xml") == [f"{SITE_URL}/", post["permalink"]]

    # A write through the application without the plugin changes nothing of that.
    another = create_post(admin_without_news, clock, "another")
    assert not [loc for loc in index_locs(without_news) if "news" in loc]
    assert another["permalink"] in url_locs(without_news, "/post-sitemap.xml")
    assert post["permalink"] in url_locs(testapp, NEWS_SITEMAP)


def test_the_openapi_document_has_no_news_paths_when_disabled(testapp, without_news):
    enabled = testapp.get("/api/openapi.json", status=200).json
    for path in NEWS_API_PATHS:
        assert path in enabled["paths"]
    assert "NewsSettings" in enabled["components"]["schemas"]

    document = without_news.get("/api/openapi.json", status=200).json
    assert "/api/posts" in document["paths"]
    assert not [path for path in document["paths"] if "news" in path]
    assert not [name for name in document["components"]["schemas"] if "News" in name]
    assert "news" not in [tag["name"] for tag in document.get("tags", [])]


def test_the_core_sitemaps_work_without_the_plugin(admin_without_news, without_news, clock):
    client = admin_without_news
    tag = client.post_json("/api/terms", {"taxonomy": "post_tag", "name": "Cats"}, status=201)
    post = create_post(
        client, clock, "pictures", terms=[tag.json["id"]], content='<img src="/uploads/cat.jpg">'
    )
    page = create_post(client, clock, "about", type="page")

    listed = index_locs(without_news)
    for name in ("post", "page", "post_tag"):
        assert f"{SITE_URL}/{name}-sitemap.xml" in listed
    assert url_locs(without_news, "/post-sitemap.xml") == [f"{SITE_URL}/", post["permalink"]]
    assert page["permalink"] in url_locs(without_news, "/page-sitemap.xml")
    assert url_locs(without_news, "/post_tag-sitemap.xml") == [tag.json["url"]]
    root = fetch_sitemap(without_news, "/post-sitemap.xml")
    assert "news" not in root.nsmap
    assert NEWS_NS not in root.nsmap.values()
    images = root.xpath(
        "//image:loc/text()",
        namespaces={"image": "http://www.google.com/schemas/sitemap-image/1.1"},
    )
    assert images == [f"{SITE_URL}/uploads/cat.jpg"]
    assert without_news.get("/main-sitemap.xsl", status=200).content_type == "text/xsl"
    assert "Sitemap: " in without_news.get("/robots.txt").text


# Enabled: the same URLs work --------------------------------------------------------------


def test_with_the_plugin_every_news_url_answers(api, testapp, clock):
    post = create_post(api, clock, "breaking")

    root = fetch_sitemap(testapp, NEWS_SITEMAP)
    assert [u.text for u in root.iterfind("sm:url/sm:loc", NS)] == [post["permalink"]]
    assert root.findtext("sm:url/news:news/news:title", namespaces=NS) == "Breaking"
    assert root.nsmap.get("news") == NEWS_NS
    assert fetch_sitemap(testapp, "/post-sitemap.xml").nsmap.get("news") == NEWS_NS
    xsl = testapp.get(NEWS_XSL, status=200)
    assert xsl.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    assert api.get("/api/news/settings", status=200).json["post_types"] == ["post"]
    assert api.get(f"/api/posts/{post['id']}/news", status=200).json["post"] == post["id"]
    assert f"{SITE_URL}{NEWS_SITEMAP}" in index_locs(testapp)
