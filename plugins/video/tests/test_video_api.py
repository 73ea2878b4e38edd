"""The video plugin's admin endpoints (S-502, S-503, S-701 … S-703), through WebTest.

``/api/posts/{id}/videos`` lists and adds a post's videos, ``/api/videos/{id}`` reads,
changes and deletes one. Posts are made through the core's API. Every rejected request is
checked to have left the database exactly as it was, and what the API stores is checked
where a user sees it: in the JSON answers and in ``/video-sitemap.xml``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import jsonschema
import pytest
from sqlalchemy import func, select

from sitemap_server.testing import assert_problem, parse_sitemap
from sitemap_server_video.models import Video

SITE = "http://sitemaps.test"
NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
}
LONG_URL = "http://example.com/" + "a" * 2029  # 2,048 characters: one too many

FULL = {
    "title": "A full video",
    "description": "What the video shows.",
    "caption": "A caption",
    "content_url": "https://cdn.example.com/v/full.mp4",
    "player_url": "https://player.example.com/embed/full",
    "thumbnail_url": "https://cdn.example.com/v/full.jpg",
    "page_url": "https://videos.example.com/full",
    "published_at": "2024-02-03T04:05:06+00:00",
    "duration": 754,
    "view_count": 12345,
    "width": 1280,
    "height": 720,
    "family_friendly": False,
    "uploader": "Jane Doe",
    "uploader_url": "http://sitemaps.test/author/jane/",
}


# Helpers --------------------------------------------------------------------------------


def create_post(api, **fields):
    body = {
        "type": "post",
        "title": "A post with videos",
        "status": "publish",
        "published_at": "2024-03-01T12:00:00+00:00",
        **fields,
    }
    return api.post_json("/api/posts", body, status=201).json


def add_video(api, post_id, **fields):
    body = fields or {"player_url": "https://player.example.com/embed/1"}
    return api.post_json(f"/api/posts/{post_id}/videos", body, status=201).json


def listable(**fields):
    """Fields of a video the sitemap can list (a thumbnail and a player URL)."""
    return {
        "player_url": "https://player.example.com/embed/1",
        "thumbnail_url": "https://cdn.example.com/1.jpg",
        **fields,
    }


def parse_time(text):
    return datetime.fromisoformat(text)


def video_sitemap(testapp):
    """``{loc: [<video:video> as a dict of child name -> text(s)]}`` of /video-sitemap.xml."""
    response = testapp.get("/video-sitemap.xml", status=200)
    root = parse_sitemap(response.body)
    listed = {}
    for url in root.findall("sm:url", NS):
        videos = []
        for element in url.findall("video:video", NS):
            fields = {}
            for child in element:
                name = child.tag.rpartition("}")[2]
                if name == "tag":
                    fields.setdefault("tag", []).append(child.text)
                else:
                    fields[name] = child.text
                if name == "uploader" and "info" in child.attrib:
                    fields["uploader_info"] = child.attrib["info"]
            videos.append(fields)
        listed[url.findtext("sm:loc", namespaces=NS)] = videos
    return listed


def video_rows(dbsession):
    dbsession.expire_all()
    return dbsession.scalar(select(func.count()).select_from(Video))


def validator(spec, name):
    """A validator of the OpenAPI document's schema ``name`` (refs resolve in the document)."""
    schema = {**spec, "$ref": f"#/components/schemas/{name}"}
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture
def post(api):
    return create_post(api)


@pytest.fixture
def existing(api):
    """Stored posts and videos, so that a half-written change would show in a snapshot."""
    post = create_post(api, title="Taken")
    other = create_post(api, title="Other")
    video = add_video(api, post["id"], **listable(title="Stored"))
    add_video(api, other["id"], content_url="https://cdn.example.com/other.mp4")
    return {"post": post["id"], "other": other["id"], "video": video["id"]}


# Create ---------------------------------------------------------------------------------


def test_create_returns_the_video_and_its_location(api, post):
    response = api.post_json(f"/api/posts/{post['id']}/videos", FULL, status=201)

    video = response.json
    assert response.content_type == "application/json"
    assert response.location == f"http://localhost/api/videos/{video['id']}"
    assert api.get(response.location, status=200).json == video


def test_create_stores_every_field(api, post):
    before = datetime.now(UTC)
    video = api.post_json(f"/api/posts/{post['id']}/videos", FULL, status=201).json
    after = datetime.now(UTC)

    for name, value in FULL.items():
        if name == "published_at":
            assert parse_time(video[name]) == parse_time(value)
        else:
            assert video[name] == value, name
    assert video["post"] == post["id"]
    assert video["source"] == "manual"
    assert video["host_description"] is None
    assert video["fetched_at"] is None
    assert video["fetch_error"] is None
    assert video["listable"] is True
    assert before - timedelta(seconds=1) <= parse_time(video["modified_at"]) <= after
    assert api.get(f"/api/videos/{video['id']}").json == video


def test_create_fills_in_defaults(api, post):
    video = add_video(api, post["id"], content_url="https://cdn.example.com/a.mp4")

    assert video["source"] == "manual"
    assert video["family_friendly"] is True
    assert video["content_url"] == "https://cdn.example.com/a.mp4"
    for name in (
        "title",
        "description",
        "caption",
        "player_url",
        "thumbnail_url",
        "page_url",
        "published_at",
        "duration",
        "view_count",
        "width",
        "height",
        "uploader",
        "uploader_url",
    ):
        assert video[name] is None, name
    # No thumbnail: the sitemap's schema requires one.
    assert video["listable"] is False


def test_create_offsets_are_stored_in_utc(api, post):
    video = add_video(api, post["id"], **listable(published_at="2024-05-01T14:00:00+02:00"))

    assert parse_time(video["published_at"]) == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert parse_time(video["published_at"]).utcoffset() == timedelta(0)


def test_list_a_posts_videos_in_order(api, post):
    other = create_post(api, title="Other post")
    first = add_video(api, post["id"], **listable(title="First"))
    add_video(api, other["id"], **listable(title="Elsewhere"))
    second = add_video(api, post["id"], content_url="https://cdn.example.com/2.mp4")

    response = api.get(f"/api/posts/{post['id']}/videos", status=200)

    assert response.content_type == "application/json"
    assert response.json == {"items": [first, second]}


def test_a_post_without_videos_lists_none(api, post):
    assert api.get(f"/api/posts/{post['id']}/videos", status=200).json == {"items": []}


def test_answers_match_the_documented_schemas(api, testapp, post):
    spec = testapp.get("/api/openapi.json", status=200).json
    video = add_video(api, post["id"], **FULL)
    bare = add_video(api, post["id"], player_url="https://player.example.com/embed/2")
    changed = api.patch_json(f"/api/videos/{bare['id']}", {"title": None}, status=200).json

    for answer in (video, bare, changed, api.get(f"/api/videos/{video['id']}").json):
        validator(spec, "Video").validate(answer)
    validator(spec, "VideoList").validate(api.get(f"/api/posts/{post['id']}/videos").json)
    missing = api.get("/api/videos/999", status=404).json
    validator(spec, "Problem").validate(missing)


# Update ---------------------------------------------------------------------------------


def test_patch_changes_only_the_given_fields(api, post, clock):
    video = add_video(api, post["id"], **FULL)
    clock.advance(minutes=5)

    response = api.patch_json(
        f"/api/videos/{video['id']}",
        {"title": "Renamed", "duration": 60, "family_friendly": True},
        status=200,
    )

    changed = response.json
    assert response.content_type == "application/json"
    assert changed["title"] == "Renamed"
    assert changed["duration"] == 60
    assert changed["family_friendly"] is True
    untouched = {k: v for k, v in video.items() if k not in ("title", "duration", "modified_at")}
    untouched.pop("family_friendly")
    assert {k: changed[k] for k in untouched} == untouched
    assert parse_time(changed["modified_at"]) >= parse_time(video["modified_at"]) + timedelta(
        minutes=5
    )
    assert api.get(f"/api/videos/{video['id']}").json == changed


def test_patch_null_clears_a_field(api, post):
    video = add_video(api, post["id"], **FULL)

    changed = api.patch_json(
        f"/api/videos/{video['id']}",
        {"content_url": None, "thumbnail_url": None, "duration": None, "uploader": None},
        status=200,
    ).json

    assert changed["content_url"] is None
    assert changed["thumbnail_url"] is None
    assert changed["duration"] is None
    assert changed["uploader"] is None
    assert changed["player_url"] == FULL["player_url"]
    assert changed["listable"] is False
    assert api.get(f"/api/videos/{video['id']}").json == changed


def test_an_empty_patch_changes_nothing_but_is_accepted(api, post):
    video = add_video(api, post["id"], **FULL)

    changed = api.patch_json(f"/api/videos/{video['id']}", {}, status=200).json

    assert {k: v for k, v in changed.items() if k != "modified_at"} == {
        k: v for k, v in video.items() if k != "modified_at"
    }


# Delete ---------------------------------------------------------------------------------


def test_delete_a_video(api, post, dbsession):
    kept = add_video(api, post["id"], **listable(title="Kept"))
    gone = add_video(api, post["id"], **listable(title="Gone"))

    response = api.delete(f"/api/videos/{gone['id']}", status=204)

    assert response.body == b""
    assert_problem(api.get(f"/api/videos/{gone['id']}", status=404), 404)
    assert api.get(f"/api/posts/{post['id']}/videos").json == {"items": [kept]}
    assert video_rows(dbsession) == 1
    assert_problem(api.delete(f"/api/videos/{gone['id']}", status=404), 404)


def test_deleting_a_post_deletes_its_videos(api, post, dbsession):
    first = add_video(api, post["id"], **listable())
    second = add_video(api, post["id"], content_url="https://cdn.example.com/2.mp4")
    other = create_post(api, title="Other")
    kept = add_video(api, other["id"], **listable())

    api.delete(f"/api/posts/{post['id']}", status=204)

    for video in (first, second):
        assert_problem(api.get(f"/api/videos/{video['id']}", status=404), 404)
    assert_problem(api.get(f"/api/posts/{post['id']}/videos", status=404), 404)
    assert api.get(f"/api/videos/{kept['id']}", status=200).json == kept
    assert video_rows(dbsession) == 1


# Authentication -------------------------------------------------------------------------


def every_operation(existing):
    video = f"/api/videos/{existing['video']}"
    videos = f"/api/posts/{existing['post']}/videos"
    body = listable(title="Sneaky")
    return [
        ("get", videos, None),
        ("post_json", videos, body),
        ("get", video, None),
        ("patch_json", video, {"title": "Sneaky"}),
        ("delete", video, None),
    ]


def call(client, method, path, body, **kwargs):
    if body is None:
        return getattr(client, method)(path, **kwargs)
    return getattr(client, method)(path, body, **kwargs)


def test_every_operation_needs_a_token(testapp, existing, db_snapshot):
    before = db_snapshot()

    for method, path, body in every_operation(existing):
        response = call(testapp, method, path, body, status=401)
        assert_problem(response, 401)
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert "Sneaky" not in response.text

    assert db_snapshot() == before


def test_a_wrong_token_is_refused(testapp, existing, db_snapshot):
    testapp.authorization = ("Bearer", "not-a-token")
    before = db_snapshot()

    for method, path, body in every_operation(existing):
        response = call(testapp, method, path, body, status=401)
        assert_problem(response, 401)
        assert "invalid_token" in response.headers["WWW-Authenticate"]

    assert db_snapshot() == before


# Unknown posts and videos ---------------------------------------------------------------


def test_the_videos_of_an_unknown_post_are_404(api, existing, db_snapshot):
    before = db_snapshot()

    listed = api.get("/api/posts/9999/videos", status=404)
    created = api.post_json("/api/posts/9999/videos", listable(), status=404)

    for response in (listed, created):
        body = assert_problem(response, 404)
        assert "9999" in body["detail"] and "post" in body["detail"]
    assert db_snapshot() == before


@pytest.mark.parametrize("method", ["get", "patch_json", "delete"])
def test_an_unknown_video_is_404(api, existing, db_snapshot, method):
    before = db_snapshot()

    body = {"title": "Nobody"} if method == "patch_json" else None
    response = call(api, method, "/api/videos/9999", body, status=404)

    problem = assert_problem(response, 404)
    assert "9999" in problem["detail"] and "video" in problem["detail"]
    assert db_snapshot() == before


@pytest.mark.parametrize("bad_id", ["abc", "0", "-1", "2147483648", "1.5", "9" * 10_000])
def test_a_malformed_id_is_400_naming_it(api, existing, db_snapshot, bad_id):
    before = db_snapshot()

    responses = [
        api.get(f"/api/posts/{bad_id}/videos", status=400),
        api.post_json(f"/api/posts/{bad_id}/videos", listable(), status=400),
        api.get(f"/api/videos/{bad_id}", status=400),
        api.patch_json(f"/api/videos/{bad_id}", {"title": "x"}, status=400),
        api.delete(f"/api/videos/{bad_id}", status=400),
    ]

    for response in responses:
        assert_problem(response, 400, "id")
    assert db_snapshot() == before


# Bad input ------------------------------------------------------------------------------

# name -> (body changes, the field the error names)
SCHEMA_PROBLEMS = {
    "unknown field": ({"colour": "red"}, "colour"),
    "post is not a field": ({"post": 1}, "post"),
    "id is not a field": ({"id": 5}, "id"),
    "source is not a field": ({"source": "detected"}, "source"),
    "fetched_at is not a field": ({"fetched_at": "2024-01-01T00:00:00Z"}, "fetched_at"),
    "listable is not a field": ({"listable": True}, "listable"),
    # types
    "title a number": ({"title": 12}, "title"),
    "description a list": ({"description": ["a"]}, "description"),
    "duration a string": ({"duration": "60"}, "duration"),
    "duration a float": ({"duration": 1.5}, "duration"),
    "view_count a string": ({"view_count": "many"}, "view_count"),
    "width a bool": ({"width": True}, "width"),
    "family_friendly a string": ({"family_friendly": "yes"}, "family_friendly"),
    "family_friendly null": ({"family_friendly": None}, "family_friendly"),
    "player_url an object": ({"player_url": {"url": "https://x.test/"}}, "player_url"),
    # ranges
    "duration negative": ({"duration": -5}, "duration"),
    "duration 0": ({"duration": 0}, "duration"),
    "duration over a day": ({"duration": 86401}, "duration"),
    "view_count negative": ({"view_count": -1}, "view_count"),
    "view_count past 64 bits": ({"view_count": 2**64}, "view_count"),
    "width past 64 bits": ({"width": -(2**63) - 1}, "width"),
    "width 0": ({"width": 0}, "width"),
    "height too large": ({"height": 100001}, "height"),
    # URLs
    "content_url ftp": ({"content_url": "ftp://example.com/a.mp4"}, "content_url"),
    "player_url javascript": ({"player_url": "javascript:alert(1)"}, "player_url"),
    "thumbnail_url relative": ({"thumbnail_url": "/uploads/a.jpg"}, "thumbnail_url"),
    "thumbnail_url protocol-relative": (
        {"thumbnail_url": "//cdn.example.com/a.jpg"},
        "thumbnail_url",
    ),
    "page_url not a URL": ({"page_url": "not a url"}, "page_url"),
    "uploader_url data": ({"uploader_url": "data:text/html,hi"}, "uploader_url"),
    "content_url with a space": ({"content_url": "http://example.com/a b.mp4"}, "content_url"),
    "content_url 2048 chars": ({"content_url": LONG_URL}, "content_url"),
    # times
    "published_at naive": ({"published_at": "2024-05-01T12:00:00"}, "published_at"),
    "published_at a date only": ({"published_at": "2024-05-01"}, "published_at"),
    "published_at not a time": ({"published_at": "yesterday"}, "published_at"),
    # lengths
    "title 1001 chars": ({"title": "t" * 1001}, "title"),
    "description 10001 chars": ({"description": "d" * 10001}, "description"),
    "uploader empty": ({"uploader": ""}, "uploader"),
    "uploader 256 chars": ({"uploader": "u" * 256}, "uploader"),
    # NUL cannot be stored (PostgreSQL) nor written in XML
    "title with NUL": ({"title": "a\x00b"}, "title"),
}


@pytest.mark.parametrize(("changes", "field"), SCHEMA_PROBLEMS.values(), ids=SCHEMA_PROBLEMS)
def test_create_rejects_bad_input(api, existing, db_snapshot, changes, field):
    body = {**listable(), **changes}
    before = db_snapshot()

    response = api.post_json(f"/api/posts/{existing['post']}/videos", body, status=400)

    assert_problem(response, 400, field)
    assert db_snapshot() == before


@pytest.mark.parametrize(("changes", "field"), SCHEMA_PROBLEMS.values(), ids=SCHEMA_PROBLEMS)
def test_patch_rejects_bad_input(api, existing, db_snapshot, changes, field):
    before = db_snapshot()

    response = api.patch_json(f"/api/videos/{existing['video']}", changes, status=400)

    assert_problem(response, 400, field)
    assert db_snapshot() == before


@pytest.mark.parametrize(
    "value",
    [
        "0001-01-01T00:00:00+14:00",
        "9999-12-31T23:59:59-14:00",
        "9999-01-01T00:00:00Z",
        "0999-12-31T23:59:59Z",
    ],
)
def test_a_publication_time_out_of_the_range_is_422_naming_it(api, existing, db_snapshot, value):
    """The range of every date-time the core takes (issue 29): never a 500, nothing stored."""
    before = db_snapshot()
    responses = [
        api.post_json(
            f"/api/posts/{existing['post']}/videos", listable(published_at=value), status=422
        ),
        api.patch_json(f"/api/videos/{existing['video']}", {"published_at": value}, status=422),
    ]
    for response in responses:
        [error] = assert_problem(response, 422, "published_at")["errors"]
        assert error["message"] == ("must be between 1000-01-01T00:00:00Z and 9999-01-01T00:00:00Z")
    assert db_snapshot() == before


def test_every_problem_of_a_body_is_named(api, existing, db_snapshot):
    before = db_snapshot()

    response = api.post_json(
        f"/api/posts/{existing['post']}/videos",
        {**listable(), "duration": -1, "content_url": "ftp://x.test/a.mp4", "extra": 1},
        status=400,
    )

    body = assert_problem(response, 400)
    named = {error.get("field") for error in body["errors"]}
    assert {"duration", "content_url", "extra"} <= named
    assert db_snapshot() == before


@pytest.mark.parametrize(
    "raw",
    [b'{"player_url": "https://x.test/"', b"{'title': 'x'}", b"\xff\xfe", b"[" * 100_000],
    ids=["unclosed", "single quotes", "not utf-8", "deeply nested"],
)
def test_malformed_json_is_rejected(api, existing, db_snapshot, raw):
    before = db_snapshot()

    created = api.post(
        f"/api/posts/{existing['post']}/videos", raw, content_type="application/json", status=400
    )
    patched = api.patch(
        f"/api/videos/{existing['video']}", raw, content_type="application/json", status=400
    )

    assert_problem(created, 400)
    assert_problem(patched, 400)
    assert db_snapshot() == before


@pytest.mark.parametrize("raw", [b"[]", b'"video"', b"null", b"42"])
def test_a_body_that_is_not_an_object_is_rejected(api, existing, db_snapshot, raw):
    before = db_snapshot()

    created = api.post(
        f"/api/posts/{existing['post']}/videos", raw, content_type="application/json", status=400
    )
    patched = api.patch(
        f"/api/videos/{existing['video']}", raw, content_type="application/json", status=400
    )

    assert_problem(created, 400)
    assert_problem(patched, 400)
    assert db_snapshot() == before


def test_an_empty_body_is_rejected(api, existing, db_snapshot):
    before = db_snapshot()

    response = api.post(
        f"/api/posts/{existing['post']}/videos", b"", content_type="application/json", status=400
    )

    assert_problem(response, 400)
    assert db_snapshot() == before


def test_a_wrong_content_type_is_rejected(api, existing, db_snapshot):
    raw = b'{"player_url": "https://player.example.com/x"}'
    before = db_snapshot()

    created = api.post(
        f"/api/posts/{existing['post']}/videos", raw, content_type="text/plain", status=415
    )
    patched = api.patch(
        f"/api/videos/{existing['video']}", raw, content_type="text/plain", status=415
    )

    assert_problem(created, 415)
    assert_problem(patched, 415)
    assert db_snapshot() == before


def test_an_unknown_query_parameter_is_rejected(api, existing, db_snapshot):
    before = db_snapshot()

    listed = api.get(f"/api/posts/{existing['post']}/videos?page=2", status=400)
    created = api.post_json(f"/api/posts/{existing['post']}/videos?force=1", listable(), status=400)

    assert_problem(listed, 400, "page")
    assert_problem(created, 400, "force")
    assert db_snapshot() == before


# A video needs a content or a player URL: 422 ------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"title": "No URL", "thumbnail_url": "https://cdn.example.com/a.jpg"},
        {"content_url": None, "player_url": None, "page_url": "https://videos.example.com/1"},
    ],
    ids=["empty", "only a thumbnail", "both null"],
)
def test_a_video_without_a_content_or_player_url_is_422(api, existing, db_snapshot, body):
    before = db_snapshot()

    response = api.post_json(f"/api/posts/{existing['post']}/videos", body, status=422)

    assert_problem(response, 422, "content_url")
    assert db_snapshot() == before


def test_a_patch_removing_the_only_url_is_422(api, existing, db_snapshot):
    video = f"/api/videos/{existing['video']}"
    before = db_snapshot()

    response = api.patch_json(video, {"player_url": None, "title": "Lost"}, status=422)

    assert_problem(response, 422, "content_url")
    assert db_snapshot() == before
    assert api.get(video).json["player_url"] == "https://player.example.com/embed/1"
    assert api.get(video).json["title"] == "Stored"


def test_a_patch_swapping_one_url_for_the_other_is_fine(api, existing):
    video = f"/api/videos/{existing['video']}"

    changed = api.patch_json(
        video, {"player_url": None, "content_url": "https://cdn.example.com/x.mp4"}, status=200
    ).json

    assert changed["player_url"] is None
    assert changed["content_url"] == "https://cdn.example.com/x.mp4"


def test_a_rejected_video_does_not_reach_the_sitemap(api, testapp, existing):
    before = video_sitemap(testapp)

    api.post_json(
        f"/api/posts/{existing['other']}/videos",
        {"thumbnail_url": "https://cdn.example.com/no-url.jpg"},
        status=422,
    )
    api.patch_json(f"/api/videos/{existing['video']}", {"title": "t" * 1001}, status=400)

    assert video_sitemap(testapp) == before


# The OpenAPI document ------------------------------------------------------------------


def test_the_operations_are_documented(testapp):
    spec = testapp.get("/api/openapi.json", status=200).json

    videos = spec["paths"]["/api/posts/{id}/videos"]
    video = spec["paths"]["/api/videos/{id}"]
    assert videos["get"]["operationId"] == "listPostVideos"
    assert videos["post"]["operationId"] == "createPostVideo"
    assert video["get"]["operationId"] == "getVideo"
    assert video["patch"]["operationId"] == "updateVideo"
    assert video["delete"]["operationId"] == "deleteVideo"
    for operation in (videos["get"], videos["post"], video["get"], video["patch"]):
        assert "videos" in operation["tags"]
    assert "201" in videos["post"]["responses"]
    assert "204" in video["delete"]["responses"]
    schemas = spec["components"]["schemas"]
    assert {"Video", "VideoFields", "VideoList"} <= set(schemas)
    assert schemas["VideoFields"]["additionalProperties"] is False
    assert "videos" in [tag["name"] for tag in spec["tags"]]
    # The core's operations are still there beside the plugin's.
    assert spec["paths"]["/api/posts/{id}"]["get"]["operationId"] == "getPost"


def test_the_documented_fields_are_the_accepted_ones(api, testapp, post):
    spec = testapp.get("/api/openapi.json", status=200).json
    documented = set(spec["components"]["schemas"]["VideoFields"]["properties"])

    video = add_video(api, post["id"], **FULL)

    assert documented == set(FULL)
    assert set(spec["components"]["schemas"]["Video"]["required"]) == set(video)


# The video sitemap ---------------------------------------------------------------------


def test_a_video_added_through_the_api_is_listed_with_its_fields(api, testapp, post):
    assert post["permalink"] not in video_sitemap(testapp)

    add_video(api, post["id"], **FULL)

    [video] = video_sitemap(testapp)[post["permalink"]]
    assert video == {
        "thumbnail_loc": FULL["thumbnail_url"],
        "title": FULL["title"],
        "description": FULL["caption"],  # the caption comes first (S-503)
        "content_loc": FULL["content_url"],
        "player_loc": FULL["player_url"],
        "duration": "754",
        "view_count": "12345",
        "publication_date": video["publication_date"],
        "family_friendly": "no",
        "uploader": "Jane Doe",
        "uploader_info": FULL["uploader_url"],
    }
    assert parse_time(video["publication_date"]) == parse_time(FULL["published_at"])


def test_a_post_lists_each_of_its_listable_videos(api, testapp, post):
    add_video(api, post["id"], **listable(title="One"))
    add_video(api, post["id"], content_url="https://cdn.example.com/no-thumbnail.mp4")
    add_video(
        api,
        post["id"],
        content_url="https://cdn.example.com/two.mp4",
        thumbnail_url="https://cdn.example.com/two.jpg",
        title="Two",
    )

    videos = video_sitemap(testapp)[post["permalink"]]

    assert [v["title"] for v in videos] == ["One", "Two"]
    assert videos[1]["content_loc"] == "https://cdn.example.com/two.mp4"
    assert "player_loc" not in videos[1]


def test_the_sitemap_follows_updates(api, testapp, post):
    video = add_video(api, post["id"], **listable(title="Before", duration=60))

    api.patch_json(
        f"/api/videos/{video['id']}",
        {"title": "After", "duration": None, "family_friendly": False},
        status=200,
    )

    [listed] = video_sitemap(testapp)[post["permalink"]]
    assert listed["title"] == "After"
    assert "duration" not in listed
    assert listed["family_friendly"] == "no"


def test_removing_the_thumbnail_unlists_and_adding_one_lists(api, testapp, post):
    video = add_video(api, post["id"], **listable())

    api.patch_json(f"/api/videos/{video['id']}", {"thumbnail_url": None}, status=200)
    assert post["permalink"] not in video_sitemap(testapp)

    api.patch_json(f"/api/videos/{video['id']}", {"thumbnail_url": "https://cdn.example.com/b.jpg"})
    [listed] = video_sitemap(testapp)[post["permalink"]]
    assert listed["thumbnail_loc"] == "https://cdn.example.com/b.jpg"


def test_deleting_videos_changes_the_sitemap(api, testapp, post):
    first = add_video(api, post["id"], **listable(title="First"))
    second = add_video(api, post["id"], **listable(title="Second"))

    api.delete(f"/api/videos/{first['id']}", status=204)
    assert [v["title"] for v in video_sitemap(testapp)[post["permalink"]]] == ["Second"]

    api.delete(f"/api/videos/{second['id']}", status=204)
    assert post["permalink"] not in video_sitemap(testapp)


def test_deleting_the_post_removes_it_from_the_video_sitemap(api, testapp, post):
    other = create_post(api, title="Stays")
    add_video(api, post["id"], **listable())
    add_video(api, other["id"], **listable())

    api.delete(f"/api/posts/{post['id']}", status=204)

    listed = video_sitemap(testapp)
    assert post["permalink"] not in listed
    assert other["permalink"] in listed


def test_the_lastmod_follows_a_video_change(api, testapp, post, clock):
    video = add_video(api, post["id"], **listable())
    first = parse_sitemap(testapp.get("/video-sitemap.xml").body)
    before = parse_time(first.findtext("sm:url/sm:lastmod", namespaces=NS))

    clock.advance(days=2)
    api.patch_json(f"/api/videos/{video['id']}", {"title": "Later"}, status=200)

    after = parse_sitemap(testapp.get("/video-sitemap.xml").body)
    assert parse_time(after.findtext("sm:url/sm:lastmod", namespaces=NS)) >= before + timedelta(
        days=2
    )


def test_a_video_of_a_draft_is_not_listed(api, testapp):
    draft = create_post(api, title="Draft", status="draft", published_at=None)

    video = add_video(api, draft["id"], **listable())

    assert video["listable"] is True  # it could be, its post is not
    assert draft["permalink"] not in video_sitemap(testapp)
    api.patch_json(f"/api/posts/{draft['id']}", {"status": "publish"}, status=200)
    assert draft["permalink"] in video_sitemap(testapp)


# Methods the endpoints do not have -------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/api/videos/{video}", "DELETE, GET, PATCH"),
        ("POST", "/api/videos/{video}", "DELETE, GET, PATCH"),
        ("DELETE", "/api/posts/{post}/videos", "GET, POST"),
        ("PATCH", "/api/posts/{post}/videos", "GET, POST"),
    ],
)
def test_another_method_is_405_naming_the_allowed_ones(
    api, existing, db_snapshot, method, path, allow
):
    url = path.format(**existing)
    before = db_snapshot()

    response = api.request(
        url, method=method, body=b'{"title": "x"}', content_type="application/json", status=405
    )

    assert_problem(response, 405)
    assert response.headers["Allow"] == allow
    assert db_snapshot() == before
