"""Site settings (S-106) through the admin API (S-701, S-703)."""

import pytest
from sqlalchemy import select

from sitemap_server.models import SiteSettings
from sitemap_server.testing import assert_problem

DEFAULTS = {
    "site_url": "http://sitemaps.test",
    "title": "My Site",
    "language": "en",
    "timezone": "UTC",
    "private": False,
    "entries_per_page": 1000,
    "front_page": "posts",
    "front_page_id": None,
    "posts_page_id": None,
    "allowed_image_hosts": [],
    "author_sitemap": True,
    "excluded_post_ids": [],
    "languages": [],
    "x_default_language": None,
}


def create_post(api, **fields):
    return api.post_json("/api/posts", {"title": "A post", **fields}, status=201).json


def stored_settings(dbsession):
    dbsession.expire_all()
    return dbsession.scalars(select(SiteSettings)).one()


def test_defaults(api, dbsession):
    assert api.get("/api/settings").json == DEFAULTS
    # The configured site URL is not copied into the database.
    assert stored_settings(dbsession).site_url is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", "Daily Planet"),
        ("title", ""),
        ("language", "fr"),
        ("language", "pt-BR"),
        ("language", "zh-Hant-TW"),
        ("language", "haw"),
        ("timezone", "Europe/Paris"),
        ("timezone", "America/Argentina/Buenos_Aires"),
        ("private", True),
        ("entries_per_page", 1),
        ("entries_per_page", 50000),
        ("front_page", "page"),
        ("allowed_image_hosts", ["cdn.example.com", "img.example.org"]),
        ("site_url", "https://www.example.com"),
    ],
)
def test_patch_one_field(api, dbsession, field, value):
    changed = api.patch_json("/api/settings", {field: value}).json

    assert changed == {**DEFAULTS, field: value}
    assert api.get("/api/settings").json == changed
    assert getattr(stored_settings(dbsession), field) == value


def test_patch_several_fields_at_once(api):
    body = {"title": "Planet", "language": "de", "timezone": "Europe/Berlin", "private": True}
    assert api.patch_json("/api/settings", body).json == {**DEFAULTS, **body}


def test_empty_patch_changes_nothing(api, db_snapshot):
    before = db_snapshot()
    assert api.patch_json("/api/settings", {}).json == DEFAULTS
    assert db_snapshot() == before


def test_site_url_with_a_path_prefix_moves_every_url(api):
    author = api.post_json("/api/authors", {"slug": "jane", "name": "Jane"}, status=201).json
    post = create_post(
        api, type="post", slug="hello", status="publish", published_at="2024-05-01T10:00:00Z"
    )
    term = api.post_json("/api/terms", {"taxonomy": "post_tag", "name": "X"}, status=201).json

    settings = api.patch_json("/api/settings", {"site_url": "https://example.com/blog/"}).json

    assert settings["site_url"] == "https://example.com/blog"
    assert api.get(f"/api/posts/{post['id']}").json["permalink"] == (
        "https://example.com/blog/2024/05/hello/"
    )
    assert api.get(f"/api/authors/{author['id']}").json["url"] == (
        "https://example.com/blog/author/jane/"
    )
    assert api.get(f"/api/terms/{term['id']}").json["url"] == "https://example.com/blog/tag/x/"
    created = api.post_json("/api/authors", {"slug": "john", "name": "John"}, status=201).json
    assert created["url"] == "https://example.com/blog/author/john/"


def test_site_url_null_goes_back_to_the_configured_one(api, dbsession):
    author = api.post_json("/api/authors", {"slug": "jane", "name": "Jane"}, status=201).json
    api.patch_json("/api/settings", {"site_url": "https://example.com/blog"})

    settings = api.patch_json("/api/settings", {"site_url": None}).json

    assert settings["site_url"] == "http://sitemaps.test"
    assert stored_settings(dbsession).site_url is None
    assert api.get(f"/api/authors/{author['id']}").json["url"] == (
        "http://sitemaps.test/author/jane/"
    )


def test_allowed_image_hosts_are_lowercased(api, dbsession):
    changed = api.patch_json(
        "/api/settings", {"allowed_image_hosts": ["CDN.Example.COM", "img.example.org"]}
    ).json

    assert changed["allowed_image_hosts"] == ["cdn.example.com", "img.example.org"]
    assert stored_settings(dbsession).allowed_image_hosts == ["cdn.example.com", "img.example.org"]


def test_allowed_image_hosts_differing_only_in_case_are_stored_once(api, dbsession):
    changed = api.patch_json(
        "/api/settings", {"allowed_image_hosts": ["CDN.example.com", "cdn.example.com"]}
    ).json

    assert changed["allowed_image_hosts"] == ["cdn.example.com"]
    assert stored_settings(dbsession).allowed_image_hosts == ["cdn.example.com"]


def test_allowed_image_hosts_can_be_emptied(api):
    api.patch_json("/api/settings", {"allowed_image_hosts": ["cdn.example.com"]})
    assert api.patch_json("/api/settings", {"allowed_image_hosts": []}).json == DEFAULTS


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"entries_per_page": 0}, "entries_per_page"),
        ({"entries_per_page": 50001}, "entries_per_page"),
        ({"entries_per_page": -5}, "entries_per_page"),
        ({"entries_per_page": "100"}, "entries_per_page"),
        ({"entries_per_page": 10.5}, "entries_per_page"),
        ({"entries_per_page": None}, "entries_per_page"),
        ({"timezone": "Mars/Olympus"}, "timezone"),
        ({"timezone": "../../etc/passwd"}, "timezone"),
        ({"timezone": ""}, "timezone"),
        ({"timezone": "Europe/" + "x" * 60}, "timezone"),
        ({"language": "EN"}, "language"),
        ({"language": "english"}, "language"),
        ({"language": "e"}, "language"),
        ({"language": "en_GB"}, "language"),
        ({"language": "en-"}, "language"),
        ({"language": "en-GB\n"}, "language"),
        ({"language": ""}, "language"),
        ({"front_page": "static"}, "front_page"),
        ({"front_page": None}, "front_page"),
        ({"front_page_id": 0}, "front_page_id"),
        ({"front_page_id": "1"}, "front_page_id"),
        ({"posts_page_id": -1}, "posts_page_id"),
        ({"private": "no"}, "private"),
        ({"title": None}, "title"),
        ({"title": "t" * 256}, "title"),
        ({"site_url": "example.com"}, "site_url"),
        ({"site_url": "ftp://example.com"}, "site_url"),
        ({"site_url": "https://example.com/?lang=en"}, "site_url"),
        ({"site_url": "https://example.com/#top"}, "site_url"),
        ({"site_url": "https://exa mple.com"}, "site_url"),
        ({"site_url": "https://"}, "site_url"),
        ({"site_url": ""}, "site_url"),
        ({"site_url": "https://example.com/" + "x" * 1000}, "site_url"),
        ({"allowed_image_hosts": "cdn.example.com"}, "allowed_image_hosts"),
        ({"allowed_image_hosts": ["cdn.example.com", "cdn.example.com"]}, "allowed_image_hosts"),
        ({"allowed_image_hosts": [f"h{n}.example.com" for n in range(101)]}, "allowed_image_hosts"),
        ({"allowed_image_hosts": ["https://cdn.example.com"]}, "allowed_image_hosts/0"),
        (
            {"allowed_image_hosts": ["ok.example.com", "cdn.example.com/img"]},
            "allowed_image_hosts/1",
        ),
        ({"allowed_image_hosts": ["cdn.example.com:8080"]}, "allowed_image_hosts/0"),
        ({"allowed_image_hosts": ["-cdn.example.com"]}, "allowed_image_hosts/0"),
        ({"allowed_image_hosts": ["cdn..example.com"]}, "allowed_image_hosts/0"),
        ({"allowed_image_hosts": ["cdn example.com"]}, "allowed_image_hosts/0"),
        ({"allowed_image_hosts": [""]}, "allowed_image_hosts/0"),
        ({"allowed_image_hosts": ["a" * 64 + ".example.com"]}, "allowed_image_hosts/0"),
        ({"allowed_image_hosts": [7]}, "allowed_image_hosts/0"),
        ({"sitemap_url": "https://example.com/"}, "sitemap_url"),
        ({"id": 2}, "id"),
    ],
)
def test_patch_refuses_malformed_input(api, db_snapshot, body, field):
    before = db_snapshot()
    response = api.patch_json("/api/settings", {"title": "Changed", **body}, status=400)
    assert_problem(response, 400, field)
    assert db_snapshot() == before
    assert api.get("/api/settings").json["title"] == "My Site"


def test_patch_refuses_a_body_that_is_not_an_object(api, db_snapshot):
    before = db_snapshot()
    assert_problem(api.patch_json("/api/settings", ["title"], status=400), 400)
    assert db_snapshot() == before


def test_front_page_and_posts_page(api, dbsession):
    home = create_post(api, type="page", slug="home", status="publish")
    blog = create_post(api, type="page", slug="blog", status="publish")

    changed = api.patch_json(
        "/api/settings",
        {"front_page": "page", "front_page_id": home["id"], "posts_page_id": blog["id"]},
    ).json

    assert changed == {
        **DEFAULTS,
        "front_page": "page",
        "front_page_id": home["id"],
        "posts_page_id": blog["id"],
    }
    stored = stored_settings(dbsession)
    assert (stored.front_page_id, stored.posts_page_id) == (home["id"], blog["id"])

    cleared = api.patch_json("/api/settings", {"front_page_id": None, "posts_page_id": None})
    assert (cleared.json["front_page_id"], cleared.json["posts_page_id"]) == (None, None)


@pytest.mark.parametrize("field", ["front_page_id", "posts_page_id"])
def test_page_setting_naming_a_post_is_422(api, db_snapshot, field):
    post = create_post(api, type="post", slug="hello")
    before = db_snapshot()

    response = api.patch_json("/api/settings", {"title": "X", field: post["id"]}, status=422)

    assert_problem(response, 422, field)
    assert db_snapshot() == before


@pytest.mark.parametrize("field", ["front_page_id", "posts_page_id"])
def test_page_setting_naming_a_custom_type_post_is_422(api, db_snapshot, field):
    api.post_json(
        "/api/post-types", {"name": "doc", "label": "Docs", "hierarchical": True}, status=201
    )
    doc = create_post(api, type="doc", slug="intro")
    before = db_snapshot()

    response = api.patch_json("/api/settings", {field: doc["id"]}, status=422)

    assert_problem(response, 422, field)
    assert db_snapshot() == before


@pytest.mark.parametrize("field", ["front_page_id", "posts_page_id"])
def test_page_setting_naming_a_missing_post_is_422(api, db_snapshot, field):
    before = db_snapshot()
    response = api.patch_json("/api/settings", {"title": "X", field: 999}, status=422)
    assert_problem(response, 422, field)
    assert db_snapshot() == before


def test_posts_page_cannot_be_the_front_page(api, db_snapshot):
    home = create_post(api, type="page", slug="home")
    before = db_snapshot()

    response = api.patch_json(
        "/api/settings",
        {"title": "X", "front_page_id": home["id"], "posts_page_id": home["id"]},
        status=422,
    )

    assert_problem(response, 422, "posts_page_id")
    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("stored", "patch"), [("front_page_id", "posts_page_id"), ("posts_page_id", "front_page_id")]
)
def test_posts_page_cannot_become_the_stored_front_page(api, db_snapshot, stored, patch):
    home = create_post(api, type="page", slug="home")
    api.patch_json("/api/settings", {stored: home["id"]})
    before = db_snapshot()

    response = api.patch_json("/api/settings", {"private": True, patch: home["id"]}, status=422)

    assert_problem(response, 422, "posts_page_id")
    assert db_snapshot() == before


def test_deleting_the_front_page_clears_the_setting(api):
    home = create_post(api, type="page", slug="home")
    blog = create_post(api, type="page", slug="blog")
    api.patch_json(
        "/api/settings",
        {"front_page": "page", "front_page_id": home["id"], "posts_page_id": blog["id"]},
    )

    api.delete(f"/api/posts/{home['id']}", status=204)

    settings = api.get("/api/settings").json
    assert settings["front_page_id"] is None
    assert settings["posts_page_id"] == blog["id"]


def test_settings_need_a_token(testapp, db_snapshot):
    before = db_snapshot()
    assert_problem(testapp.get("/api/settings", status=401), 401)
    assert_problem(testapp.patch_json("/api/settings", {"title": "X"}, status=401), 401)
    assert db_snapshot() == before


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_settings_allow_only_get_and_patch(api, db_snapshot, method):
    before = db_snapshot()
    response = getattr(api, method)("/api/settings", status=405)
    assert_problem(response, 405)
    assert response.headers["Allow"] == "GET, PATCH"
    assert db_snapshot() == before
