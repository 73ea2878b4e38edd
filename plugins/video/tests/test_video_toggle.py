"""The video plugin on and off (S-501, S-502).

Installed, the plugin is loaded by default (``testapp``, ``api``). Disabled by setting
(``sitemap_server.disabled_plugins = video``) it must leave no trace a client can see —
its sitemap, stylesheet, admin endpoints and OpenAPI paths answer as if it were not
installed, the index does not name it even while the database still holds its videos —
and the core keeps working. Both applications share the test database.
"""

from __future__ import annotations

from typing import Any

import pytest
from lxml import etree
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
VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
NS = {"sm": SM_NS, "video": VIDEO_NS}
VIDEO_SITEMAP = "/video-sitemap.xml"
VIDEO_XSL = "/video-sitemap.xsl"
VIDEO_API_PATHS = ("/api/posts/{id}/videos", "/api/videos/{id}")


@pytest.fixture
def disabled_app(app_with: Any) -> Any:
    """The application with the installed video plugin disabled by setting."""
    return app_with(**{"sitemap_server.disabled_plugins": "video"})


@pytest.fixture
def without_video(disabled_app: Any, clean_database: Any) -> TestApp:
    """That application through WebTest, without credentials."""
    return client(disabled_app)


@pytest.fixture
def admin_without_video(disabled_app: Any, api_token: str) -> TestApp:
    """That application through WebTest, signed in."""
    return client(disabled_app, api_token)


def create_post(api: TestApp, slug: str, **fields: Any) -> dict[str, Any]:
    body = {
        "type": "post",
        "title": slug.title(),
        "slug": slug,
        "status": "publish",
        "published_at": "2024-03-01T12:00:00+00:00",
        **fields,
    }
    return api.post_json("/api/posts", body, status=201).json


def add_video(api: TestApp, post: dict[str, Any], **fields: Any) -> dict[str, Any]:
    body = {
        "title": "A video",
        "thumbnail_url": "https://cdn.example.test/thumb.jpg",
        "player_url": "https://player.example.test/embed/1",
        **fields,
    }
    return api.post_json(f"/api/posts/{post['id']}/videos", body, status=201).json


def post_with_video(api: TestApp, slug: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A listed post and its video, made through the application with the plugin."""
    post = create_post(api, slug)
    return post, add_video(api, post)


# Disabled: nothing of the plugin answers -------------------------------------------------


def test_the_setting_blocks_the_plugin(disabled_app, wsgi_app):
    import sitemap_server_video

    disabled = site_of_app(disabled_app).plugins
    assert disabled.is_blocked("video")
    assert sitemap_server_video not in disabled.get_plugins()
    enabled = site_of_app(wsgi_app).plugins
    assert sitemap_server_video in enabled.get_plugins()


def test_the_video_sitemap_and_its_stylesheet_are_404_when_disabled(api, testapp, without_video):
    post, _ = post_with_video(api, "with-video")
    assert url_locs(testapp, VIDEO_SITEMAP) == [post["permalink"]]
    assert testapp.get(VIDEO_XSL, status=200).content_type == "text/xsl"

    for path in (VIDEO_SITEMAP, "/video-sitemap2.xml", VIDEO_XSL):
        assert_not_found(without_video, path)
    without_video.head(VIDEO_SITEMAP, status=404)


def test_the_admin_endpoints_are_404_problems_when_disabled(api, admin_without_video):
    post, video = post_with_video(api, "with-video")
    assert [v["id"] for v in api.get(f"/api/posts/{post['id']}/videos").json["items"]] == [
        video["id"]
    ]
    assert api.get(f"/api/videos/{video['id']}").json["title"] == "A video"

    client = admin_without_video
    assert client.get(f"/api/posts/{post['id']}", status=200).json["id"] == post["id"]
    assert_problem(client.get(f"/api/posts/{post['id']}/videos", expect_errors=True), 404)
    assert_problem(
        client.post_json(
            f"/api/posts/{post['id']}/videos",
            {"player_url": "https://player.example.test/embed/2"},
            expect_errors=True,
        ),
        404,
    )
    assert_problem(client.get(f"/api/videos/{video['id']}", expect_errors=True), 404)
    assert_problem(
        client.patch_json(f"/api/videos/{video['id']}", {"title": "X"}, expect_errors=True), 404
    )
    assert_problem(client.delete(f"/api/videos/{video['id']}", expect_errors=True), 404)
    # Nothing was changed behind those 404s.
    assert api.get(f"/api/videos/{video['id']}").json["title"] == "A video"


def test_the_index_names_no_video_sitemap_while_the_database_has_videos(
    api, testapp, without_video, admin_without_video
):
    post, video = post_with_video(api, "with-video")
    assert f"{SITE_URL}{VIDEO_SITEMAP}" in index_locs(testapp)

    listed = index_locs(without_video)
    assert f"{SITE_URL}/post-sitemap.xml" in listed
    assert not [loc for loc in listed if "video" in loc]
    assert url_locs(without_video, "/post-sitemap.xml") == [f"{SITE_URL}/", post["permalink"]]

    # A write through the application without the plugin changes nothing of that.
    create_post(admin_without_video, "another")
    assert not [loc for loc in index_locs(without_video) if "video" in loc]
    assert api.get(f"/api/videos/{video['id']}", status=200)


def test_the_openapi_document_has_no_video_paths_when_disabled(testapp, without_video):
    enabled = testapp.get("/api/openapi.json", status=200).json
    for path in VIDEO_API_PATHS:
        assert path in enabled["paths"]
    assert "Video" in enabled["components"]["schemas"]

    document = without_video.get("/api/openapi.json", status=200).json
    assert "/api/posts" in document["paths"]
    assert not [path for path in document["paths"] if "video" in path]
    assert not [name for name in document["components"]["schemas"] if "Video" in name]
    assert "videos" not in [tag["name"] for tag in document.get("tags", [])]


def test_the_core_sitemaps_work_without_the_plugin(admin_without_video, without_video, api):
    client = admin_without_video
    tag = client.post_json("/api/terms", {"taxonomy": "post_tag", "name": "Cats"}, status=201)
    post = create_post(
        client,
        "embeds",
        terms=[tag.json["id"]],
        content='<iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ"></iframe>'
        '<img src="/uploads/cat.jpg">',
    )
    page = create_post(client, "about", type="page")

    listed = index_locs(without_video)
    for name in ("post", "page", "post_tag"):
        assert f"{SITE_URL}/{name}-sitemap.xml" in listed
    assert url_locs(without_video, "/post-sitemap.xml") == [f"{SITE_URL}/", post["permalink"]]
    assert page["permalink"] in url_locs(without_video, "/page-sitemap.xml")
    assert url_locs(without_video, "/post_tag-sitemap.xml") == [tag.json["url"]]
    root = fetch_sitemap(without_video, "/post-sitemap.xml")
    images = root.xpath("//image:loc/text()", namespaces={"image": IMAGE_NS})
    assert images == [f"{SITE_URL}/uploads/cat.jpg"]
    assert without_video.get("/main-sitemap.xsl", status=200).content_type == "text/xsl"
    assert "Sitemap: " in without_video.get("/robots.txt").text
    # Without the plugin nobody looked for the embedded video.
    assert api.get(f"/api/posts/{post['id']}/videos").json["items"] == []


# Namespaces: the core's urlsets declare video: only with the plugin ---------------------


@pytest.mark.parametrize("path", ["/post-sitemap.xml", "/page-sitemap.xml"])
def test_core_urlsets_declare_the_video_namespace_only_with_the_plugin(
    api, testapp, without_video, path
):
    create_post(api, "plain")
    create_post(api, "about", type="page")

    with_plugin = fetch_sitemap(testapp, path)
    assert len(with_plugin) == 1 + (path == "/post-sitemap.xml")
    assert with_plugin.nsmap.get("video") == VIDEO_NS
    assert with_plugin.nsmap.get("image") == IMAGE_NS

    without_plugin = fetch_sitemap(without_video, path)
    assert "video" not in without_plugin.nsmap
    assert VIDEO_NS not in without_plugin.nsmap.values()
    assert without_plugin.nsmap.get("image") == IMAGE_NS
    assert etree.tostring(without_plugin) != etree.tostring(with_plugin)


# Enabled: the same URLs work --------------------------------------------------------------


def test_with_the_plugin_every_video_url_answers(api, testapp):
    post, video = post_with_video(api, "with-video")

    root = fetch_sitemap(testapp, VIDEO_SITEMAP)
    assert [u.text for u in root.iterfind("sm:url/sm:loc", NS)] == [post["permalink"]]
    assert root.findtext("sm:url/video:video/video:title", namespaces=NS) == "A video"
    xsl = testapp.get(VIDEO_XSL, status=200)
    assert xsl.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    assert (
        api.get(f"/api/posts/{post['id']}/videos", status=200).json["items"][0]["id"]
        == (video["id"])
    )
    assert api.get(f"/api/videos/{video['id']}", status=200).json["post"] == post["id"]
    assert f"{SITE_URL}{VIDEO_SITEMAP}" in index_locs(testapp)
