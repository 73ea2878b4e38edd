"""The news plugin's admin endpoints (S-502, S-504, S-701 … S-703), through WebTest.

``/api/news/settings`` reads and changes the news settings, ``/api/posts/{id}/news`` and
``/api/terms/{id}/news`` the news fields of a post and of a term. Posts and terms are made
through the core's API. Every rejected request is checked to have left the database
exactly as it was, and what the API stores is checked where a user sees it: in the JSON
answers and in ``/news-sitemap.xml``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import jsonschema
import pytest
from webtest import TestApp

from sitemap_server.testing import assert_problem, parse_sitemap

NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
}
SETTINGS = "/api/news/settings"
DEFAULT_SETTINGS = {"post_types": ["post"], "publication_name": None, "language": None}
GENRES = ["PressRelease", "Satire", "Blog", "OpEd", "Opinion", "UserGenerated"]
# BCP 47 tags the news language fields take, stored as given.
LANGUAGE_TAGS = [
    "en",
    "haw",
    "zh-cn",
    "zh-tw",
    "pt-BR",
    "en-GB",
    "en-us",
    "es-419",
    "zh-Hant",
    "zh-TW",
    "sr-Latn-RS",
    "de-CH-1996",
    "en-x-aaaaaaaa-bbbbbbbb-cccccccc-ddd",  # 35 characters, the most
]
# Not shaped like a BCP 47 tag, or too long: refused with a 400 naming the field.
BAD_LANGUAGE_TAGS = [
    "english",
    "pt_BR",
    "123",
    "",
    "e",
    "EN",
    "pt-",
    "-pt",
    "pt--BR",
    "pt BR",
    " pt",
    "zh-Hant-toolongsubtag",
    "en-x-aaaaaaaa-bbbbbbbb-cccccccc-dddd",  # 36 characters
]


# Helpers --------------------------------------------------------------------------------


def create_post(api: TestApp, clock: Any, **fields: Any) -> dict[str, Any]:
    when = (clock.now() - timedelta(hours=1)).replace(microsecond=0).isoformat()
    body = {
        "type": "post",
        "title": "A story",
        "status": "publish",
        "published_at": when,
        "modified_at": when,
        **fields,
    }
    return api.post_json("/api/posts", body, status=201).json


def create_term(api: TestApp, name: str, taxonomy: str = "category") -> dict[str, Any]:
    return api.post_json("/api/terms", {"taxonomy": taxonomy, "name": name}, status=201).json


def news_items(app: TestApp) -> list[dict[str, Any]]:
    root = parse_sitemap(app.get("/news-sitemap.xml", status=200).body)
    return [
        {
            "loc": url.findtext("sm:loc", namespaces=NS),
            "name": url.findtext("news:news/news:publication/news:name", namespaces=NS),
            "language": url.findtext("news:news/news:publication/news:language", namespaces=NS),
            "genres": url.findtext("news:news/news:genres", namespaces=NS),
            "keywords": url.findtext("news:news/news:keywords", namespaces=NS),
        }
        for url in root.iterfind("sm:url", NS)
    ]


def validator(spec: dict[str, Any], name: str) -> jsonschema.Draft202012Validator:
    """A validator of the OpenAPI document's schema ``name`` (refs resolve in the document)."""
    return jsonschema.Draft202012Validator({**spec, "$ref": f"#/components/schemas/{name}"})


@pytest.fixture
def existing(api, clock):
    """Stored posts, terms and news fields, so that a half-written change would show."""
    post = create_post(api, clock, slug="stored")
    other = create_post(api, clock, slug="other")
    term = create_term(api, "Sponsored")
    api.patch_json(SETTINGS, {"publication_name": "The Stored Times", "language": "fr"})
    api.patch_json(f"/api/posts/{post['id']}/news", {"genres": ["Blog"], "keywords": "stored"})
    api.patch_json(f"/api/terms/{term['id']}/news", {"exclude": False})
    return {"post": post["id"], "other": other["id"], "term": term["id"]}


# News settings --------------------------------------------------------------------------


def test_the_settings_start_with_posts_as_news(api):
    response = api.get(SETTINGS, status=200)

    assert response.content_type == "application/json"
    assert response.json == DEFAULT_SETTINGS


def test_patch_settings_changes_only_the_given_fields(api):
    api.post_json("/api/post-types", {"name": "story", "label": "Stories"}, status=201)

    changed = api.patch_json(SETTINGS, {"post_types": ["story", "page"]}, status=200).json
    assert changed == {**DEFAULT_SETTINGS, "post_types": ["story", "page"]}

    changed = api.patch_json(SETTINGS, {"publication_name": "The Test Times"}, status=200).json
    assert changed == {
        "post_types": ["story", "page"],
        "publication_name": "The Test Times",
        "language": None,
    }

    changed = api.patch_json(SETTINGS, {"language": "zh-cn"}, status=200).json
    assert changed["language"] == "zh-cn"
    assert changed["publication_name"] == "The Test Times"
    assert api.get(SETTINGS).json == changed


def test_patch_settings_null_clears_name_and_language(api):
    api.patch_json(SETTINGS, {"publication_name": "Named", "language": "de"}, status=200)

    cleared = api.patch_json(SETTINGS, {"publication_name": None, "language": None}).json

    assert cleared == DEFAULT_SETTINGS
    assert api.get(SETTINGS).json == DEFAULT_SETTINGS


def test_an_empty_patch_changes_nothing(api, existing, db_snapshot):
    before_json = api.get(SETTINGS).json
    before = db_snapshot()

    assert api.patch_json(SETTINGS, {}, status=200).json == before_json
    assert db_snapshot() == before


def test_repeated_post_types_are_stored_once_and_an_empty_list_is_allowed(api):
    assert api.patch_json(SETTINGS, {"post_types": ["post", "page", "post"]}).json[
        "post_types"
    ] == ["post", "page"]
    assert api.patch_json(SETTINGS, {"post_types": []}).json["post_types"] == []


@pytest.mark.parametrize("language", LANGUAGE_TAGS)
def test_bcp_47_languages_are_accepted_and_stored_as_given(api, clock, language):
    post = create_post(api, clock)
    post_url = f"/api/posts/{post['id']}/news"

    assert api.patch_json(SETTINGS, {"language": language}, status=200).json["language"] == (
        language
    )
    assert api.patch_json(post_url, {"language": language}, status=200).json["language"] == (
        language
    )
    assert api.get(SETTINGS).json["language"] == language
    assert api.get(post_url).json["language"] == language


def test_the_settings_reach_the_news_sitemap(api, testapp, clock):
    api.patch_json("/api/settings", {"title": "Site", "language": "en"}, status=200)
    post = create_post(api, clock)
    assert news_items(testapp) == [
        {
            "loc": post["permalink"],
            "name": "Site",
            "language": "en",
            "genres": None,
            "keywords": None,
        }
    ]

    api.patch_json(SETTINGS, {"publication_name": "Herald", "language": "it"}, status=200)

    [item] = news_items(testapp)
    assert (item["name"], item["language"]) == ("Herald", "it")


@pytest.mark.parametrize(
    ("changes", "field", "status"),
    [
        ({"post_types": ["post", "book"]}, "post_types", 422),
        ({"post_types": ["nope"]}, "post_types", 422),
        ({"post_types": "post"}, "post_types", 400),
        ({"post_types": [1]}, "post_types/0", 400),
        ({"post_types": ["Not A Name"]}, "post_types/0", 400),
        ({"publication_name": ""}, "publication_name", 400),
        ({"publication_name": "n" * 256}, "publication_name", 400),
        ({"publication_name": 5}, "publication_name", 400),
        *[({"language": tag}, "language", 400) for tag in BAD_LANGUAGE_TAGS],
        ({"language": 42}, "language", 400),
        ({"language": "de", "publication_name": ""}, "publication_name", 400),
        ({"publication_name": "Changed", "language": "pt_BR"}, "language", 400),
        ({"colour": "blue"}, "colour", 400),
        ({"post_types": ["page"], "extra": True}, "extra", 400),
    ],
    ids=lambda v: str(v) if not isinstance(v, dict) else "-".join(v),
)
def test_bad_settings_are_rejected_naming_the_field(
    api, testapp, existing, db_snapshot, clock, changes, field, status
):
    before_json = api.get(SETTINGS).json
    before_sitemap = testapp.get("/news-sitemap.xml").body
    before = db_snapshot()

    response = api.patch_json(SETTINGS, changes, status=status)

    assert_problem(response, status, field)
    assert db_snapshot() == before
    assert api.get(SETTINGS).json == before_json
    assert testapp.get("/news-sitemap.xml").body == before_sitemap


@pytest.mark.parametrize("path", ["settings", "post"])
def test_a_language_with_a_trailing_newline_is_refused(api, existing, db_snapshot, path):
    url = SETTINGS if path == "settings" else f"/api/posts/{existing['post']}/news"
    before_json = api.get(url).json
    before = db_snapshot()

    response = api.patch_json(url, {"language": "pt-BR\n"}, status=400)

    assert_problem(response, 400, "language")
    assert db_snapshot() == before
    assert api.get(url).json == before_json


def test_an_unknown_post_type_among_good_changes_changes_nothing(api, existing, db_snapshot):
    before = db_snapshot()

    response = api.patch_json(
        SETTINGS,
        {"publication_name": "Changed", "language": "de", "post_types": ["page", "ghost"]},
        status=422,
    )

    body = assert_problem(response, 422, "post_types")
    assert "ghost" in str(body)
    assert db_snapshot() == before
    assert api.get(SETTINGS).json["publication_name"] == "The Stored Times"


# News fields of a post -------------------------------------------------------------------


def test_a_post_starts_with_empty_news_fields(api, clock):
    post = create_post(api, clock)

    response = api.get(f"/api/posts/{post['id']}/news", status=200)

    assert response.content_type == "application/json"
    assert response.json == {
        "post": post["id"],
        "language": None,
        "not_news": False,
        "keywords": None,
        "genres": [],
    }


def test_patch_post_news_changes_only_the_given_fields(api, clock):
    post = create_post(api, clock)
    url = f"/api/posts/{post['id']}/news"

    changed = api.patch_json(url, {"language": "de", "genres": ["Blog", "OpEd"]}).json
    assert changed == {
        "post": post["id"],
        "language": "de",
        "not_news": False,
        "keywords": None,
        "genres": ["Blog", "OpEd"],
    }
    changed = api.patch_json(url, {"keywords": "a, b", "not_news": True}).json
    assert changed == {
        "post": post["id"],
        "language": "de",
        "not_news": True,
        "keywords": "a, b",
        "genres": ["Blog", "OpEd"],
    }
    assert api.get(url).json == changed

    cleared = api.patch_json(url, {"language": None, "keywords": None, "genres": []}).json
    assert cleared == {**changed, "language": None, "keywords": None, "genres": []}


def test_every_genre_of_the_enum_is_accepted_once(api, clock):
    post = create_post(api, clock)

    every = api.patch_json(f"/api/posts/{post['id']}/news", {"genres": GENRES}, status=200).json
    assert every["genres"] == GENRES
    repeated = api.patch_json(
        f"/api/posts/{post['id']}/news", {"genres": ["Satire", "Satire"]}, status=200
    ).json
    assert repeated["genres"] == ["Satire"]


def test_post_news_fields_reach_the_news_sitemap(api, testapp, clock):
    api.patch_json("/api/settings", {"language": "en"}, status=200)
    post = create_post(api, clock)

    api.patch_json(
        f"/api/posts/{post['id']}/news",
        {"language": "pt", "genres": ["PressRelease", "UserGenerated"], "keywords": "x, y"},
        status=200,
    )

    [item] = news_items(testapp)
    assert item["language"] == "pt"
    assert item["genres"] == "PressRelease, UserGenerated"
    assert item["keywords"] == "x, y"

    api.patch_json(f"/api/posts/{post['id']}/news", {"not_news": True}, status=200)
    assert news_items(testapp) == []


def test_a_language_with_a_region_or_script_is_stored_and_reduced_in_the_sitemap(
    api, testapp, clock
):
    api.patch_json("/api/settings", {"language": "fr"}, status=200)
    post = create_post(api, clock)
    url = f"/api/posts/{post['id']}/news"

    assert api.patch_json(url, {"language": "pt-BR"}, status=200).json["language"] == "pt-BR"
    assert api.get(url).json["language"] == "pt-BR"
    assert [item["language"] for item in news_items(testapp)] == ["pt"]

    api.patch_json(url, {"language": "zh-Hant"}, status=200)
    assert api.get(url).json["language"] == "zh-Hant"
    assert [item["language"] for item in news_items(testapp)] == ["zh-tw"]

    # The news settings' language, for posts that name none.
    api.patch_json(url, {"language": None}, status=200)
    assert api.patch_json(SETTINGS, {"language": "en-GB"}).json["language"] == "en-GB"
    assert api.get(SETTINGS).json["language"] == "en-GB"
    assert [item["language"] for item in news_items(testapp)] == ["en"]

    api.patch_json(SETTINGS, {"language": "zh-HK"}, status=200)
    assert [item["language"] for item in news_items(testapp)] == ["zh-tw"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"genres": ["News"]}, "genres/0"),
        ({"genres": ["blog"]}, "genres/0"),
        ({"genres": "Blog"}, "genres"),
        ({"genres": [*GENRES, "Blog"]}, "genres"),
        *[({"language": tag}, "language") for tag in BAD_LANGUAGE_TAGS],
        ({"language": "DE"}, "language"),
        ({"language": 1}, "language"),
        ({"language": "pt-BR", "genres": ["News"]}, "genres/0"),
        ({"genres": ["Blog"], "language": "english"}, "language"),
        ({"not_news": "yes"}, "not_news"),
        ({"not_news": None}, "not_news"),
        ({"keywords": 7}, "keywords"),
        ({"keywords": "k" * 1001}, "keywords"),
        ({"post": 5}, "post"),
        ({"exclude": True}, "exclude"),
    ],
    ids=lambda v: str(v) if not isinstance(v, dict) else "-".join(v),
)
def test_bad_post_news_fields_are_rejected_naming_the_field(
    api, existing, db_snapshot, changes, field
):
    url = f"/api/posts/{existing['post']}/news"
    before_json = api.get(url).json
    before = db_snapshot()

    response = api.patch_json(url, changes, status=400)

    assert_problem(response, 400, field)
    assert db_snapshot() == before
    assert api.get(url).json == before_json


def test_a_rejected_patch_does_not_create_the_news_row(api, existing, db_snapshot):
    """The other post has no news fields yet: a bad patch must not leave an empty row."""
    before = db_snapshot()

    api.patch_json(f"/api/posts/{existing['other']}/news", {"genres": ["Gossip"]}, status=400)
    api.patch_json(f"/api/posts/{existing['other']}/news", {"language": "pt_BR"}, status=400)

    assert db_snapshot() == before


# News fields of a term -------------------------------------------------------------------


def test_a_term_starts_not_excluded_and_can_be_excluded(api):
    term = create_term(api, "Sponsored")
    url = f"/api/terms/{term['id']}/news"

    response = api.get(url, status=200)
    assert response.content_type == "application/json"
    assert response.json == {"term": term["id"], "exclude": False}

    assert api.patch_json(url, {"exclude": True}).json == {"term": term["id"], "exclude": True}
    assert api.get(url).json == {"term": term["id"], "exclude": True}
    assert api.patch_json(url, {}).json == {"term": term["id"], "exclude": True}
    assert api.patch_json(url, {"exclude": False}).json == {"term": term["id"], "exclude": False}


def test_excluding_a_tag_reaches_the_news_sitemap(api, testapp, clock):
    tag = create_term(api, "Advertising", taxonomy="post_tag")
    post = create_post(api, clock, terms=[tag["id"]])
    assert [i["loc"] for i in news_items(testapp)] == [post["permalink"]]

    api.patch_json(f"/api/terms/{tag['id']}/news", {"exclude": True}, status=200)

    assert news_items(testapp) == []


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"exclude": "yes"}, "exclude"),
        ({"exclude": None}, "exclude"),
        ({"exclude": 1}, "exclude"),
        ({"not_news": True}, "not_news"),
        ({"term": 3}, "term"),
    ],
    ids=lambda v: str(v) if not isinstance(v, dict) else "-".join(v),
)
def test_bad_term_news_fields_are_rejected_naming_the_field(
    api, existing, db_snapshot, changes, field
):
    url = f"/api/terms/{existing['term']}/news"
    before = db_snapshot()

    response = api.patch_json(url, changes, status=400)

    assert_problem(response, 400, field)
    assert db_snapshot() == before


# Requests refused before anything is read --------------------------------------------------


def operations(existing: dict[str, int]) -> list[tuple[str, str, dict[str, Any] | None]]:
    post, term = existing["post"], existing["term"]
    return [
        ("GET", SETTINGS, None),
        ("PATCH", SETTINGS, {"publication_name": "Hijacked"}),
        ("GET", f"/api/posts/{post}/news", None),
        ("PATCH", f"/api/posts/{post}/news", {"not_news": True}),
        ("GET", f"/api/terms/{term}/news", None),
        ("PATCH", f"/api/terms/{term}/news", {"exclude": True}),
    ]


def call(app: TestApp, method: str, path: str, body: Any, **kwargs: Any) -> Any:
    if method == "GET":
        return app.get(path, **kwargs)
    return app.patch_json(path, body, **kwargs)


def test_every_operation_needs_a_token(testapp, existing, db_snapshot):
    before = db_snapshot()

    for method, path, body in operations(existing):
        response = call(testapp, method, path, body, status=401)
        assert_problem(response, 401)
        assert "Bearer" in response.headers.get("WWW-Authenticate", "")

    assert db_snapshot() == before


def test_a_wrong_token_is_refused(testapp, existing, db_snapshot):
    testapp.authorization = ("Bearer", "not-a-real-token")
    before = db_snapshot()

    for method, path, body in operations(existing):
        assert_problem(call(testapp, method, path, body, status=401), 401)

    assert db_snapshot() == before


@pytest.mark.parametrize("method", ["GET", "PATCH"])
@pytest.mark.parametrize("kind", ["posts", "terms"])
def test_an_unknown_post_or_term_is_404(api, existing, db_snapshot, method, kind):
    body = {"not_news": True} if kind == "posts" else {"exclude": True}
    before = db_snapshot()

    response = call(api, method, f"/api/{kind}/999999/news", body, status=404)

    assert_problem(response, 404)
    assert db_snapshot() == before


@pytest.mark.parametrize("bad_id", ["abc", "0", "-1", "1.5"])
@pytest.mark.parametrize("kind", ["posts", "terms"])
def test_a_malformed_id_is_refused(api, existing, db_snapshot, kind, bad_id):
    before = db_snapshot()

    response = api.get(f"/api/{kind}/{bad_id}/news", expect_errors=True)

    assert response.status_int in (400, 404)
    assert_problem(response, response.status_int)
    assert db_snapshot() == before


@pytest.mark.parametrize(
    "raw",
    [b"{", b"[]", b'"x"', b"null", b"42", b""],
    ids=["broken", "list", "str", "null", "int", "empty"],
)
@pytest.mark.parametrize("which", ["settings", "post", "term"])
def test_a_body_that_is_not_a_json_object_is_400(api, existing, db_snapshot, raw, which):
    path = {
        "settings": SETTINGS,
        "post": f"/api/posts/{existing['post']}/news",
        "term": f"/api/terms/{existing['term']}/news",
    }[which]
    before = db_snapshot()

    response = api.patch(path, raw, content_type="application/json", status=400)

    assert_problem(response, 400)
    assert db_snapshot() == before


def test_a_wrong_content_type_is_415(api, existing, db_snapshot):
    before = db_snapshot()

    response = api.patch(SETTINGS, b'{"language": "de"}', content_type="text/plain", status=415)

    assert_problem(response, 415)
    assert db_snapshot() == before


def test_an_unknown_query_parameter_is_400(api, existing, db_snapshot):
    before = db_snapshot()

    read = api.get(f"{SETTINGS}?verbose=1", status=400)
    written = api.patch_json(f"/api/posts/{existing['post']}/news?force=1", {}, status=400)

    assert_problem(read, 400, "verbose")
    assert_problem(written, 400, "force")
    assert db_snapshot() == before


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_other_methods_are_405(api, existing, db_snapshot, method):
    before = db_snapshot()

    for path in (
        SETTINGS,
        f"/api/posts/{existing['post']}/news",
        f"/api/terms/{existing['term']}/news",
    ):
        response = api.request(path, method=method, expect_errors=True)
        assert_problem(response, 405)
        assert set(response.headers["Allow"].replace(" ", "").split(",")) >= {"GET", "PATCH"}

    assert db_snapshot() == before


# The OpenAPI document --------------------------------------------------------------------


def test_the_operations_are_documented(testapp):
    spec = testapp.get("/api/openapi.json", status=200).json

    settings = spec["paths"]["/api/news/settings"]
    post = spec["paths"]["/api/posts/{id}/news"]
    term = spec["paths"]["/api/terms/{id}/news"]
    assert settings["get"]["operationId"] == "getNewsSettings"
    assert settings["patch"]["operationId"] == "updateNewsSettings"
    assert post["get"]["operationId"] == "getPostNews"
    assert post["patch"]["operationId"] == "updatePostNews"
    assert term["get"]["operationId"] == "getTermNews"
    assert term["patch"]["operationId"] == "updateTermNews"
    for operation in (*settings.values(), *post.values(), *term.values()):
        if isinstance(operation, dict) and "operationId" in operation:
            assert "news" in operation["tags"]
    schemas = spec["components"]["schemas"]
    assert {"NewsSettings", "NewsSettingsUpdate", "PostNews", "TermNews"} <= set(schemas)
    assert schemas["NewsGenre"]["enum"] == GENRES
    assert "news" in [tag["name"] for tag in spec["tags"]]
    assert spec["paths"]["/api/posts/{id}"]["get"]["operationId"] == "getPost"


def test_answers_match_the_documented_schemas(api, testapp, existing):
    spec = testapp.get("/api/openapi.json", status=200).json

    validator(spec, "NewsSettings").validate(api.get(SETTINGS).json)
    validator(spec, "PostNews").validate(api.get(f"/api/posts/{existing['post']}/news").json)
    validator(spec, "PostNews").validate(api.get(f"/api/posts/{existing['other']}/news").json)
    validator(spec, "TermNews").validate(api.get(f"/api/terms/{existing['term']}/news").json)
    validator(spec, "Problem").validate(api.get("/api/posts/999999/news", status=404).json)
