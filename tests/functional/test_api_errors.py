"""Protocol-level errors of the admin API (S-703): clear 4xx problem details, nothing stored."""

import logging

import pytest
from sqlalchemy.orm.exc import StaleDataError
from webtest import TestApp

from sitemap_server.api.openapi import OpenAPI
from sitemap_server.app import main, site_of_app
from sitemap_server.errors import LOGGED_CHARS
from sitemap_server.services import authors
from sitemap_server.testing import SITE_URL, assert_problem

NDJSON = "application/x-ndjson"
DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.fixture
def small_api(app_settings, api_token):
    """A second application whose body limits are tiny."""
    app = main(
        {},
        **{
            **app_settings,
            "sitemap_server.api.max_body_bytes": "100",
            "sitemap_server.api.max_import_bytes": "200",
        },
    )
    test_app = TestApp(app)
    test_app.authorization = ("Bearer", api_token)
    yield test_app
    site_of_app(app).close()


# 413 ---------------------------------------------------------------------------------------


def test_body_over_the_limit_is_413_and_nothing_is_stored(small_api, db_snapshot):
    before = db_snapshot()
    body = {"slug": "ada", "name": "A" * 100}
    response = small_api.post_json("/api/authors", body, status=413)
    assert "100 bytes" in assert_problem(response, 413)["detail"]
    assert db_snapshot() == before


def test_body_within_the_limit_is_accepted(small_api):
    small_api.post_json("/api/authors", {"slug": "ada", "name": "Ada"}, status=201)


def test_patch_over_the_limit_is_413(small_api, db_snapshot):
    small_api.post_json("/api/authors", {"id": 1, "slug": "ada", "name": "Ada"}, status=201)
    before = db_snapshot()
    response = small_api.patch_json("/api/authors/1", {"name": "B" * 200}, status=413)
    assert_problem(response, 413)
    assert db_snapshot() == before


def test_import_has_its_own_limit(small_api, db_snapshot):
    def lines(count):
        return b"".join(b'{"author": {"slug": "a%d", "name": "A"}}\n' % n for n in range(count))

    assert 100 < len(lines(3)) < 200 < len(lines(6))  # over the general limit, then both
    assert small_api.post("/api/import", lines(3), content_type=NDJSON).json["lines"] == 3
    before = db_snapshot()
    response = small_api.post("/api/import", lines(6), content_type=NDJSON, status=413)
    assert "200 bytes" in assert_problem(response, 413)["detail"]
    assert db_snapshot() == before


def test_default_limit_is_two_megabytes(api, db_snapshot):
    before = db_snapshot()
    body = b'{"slug": "ada", "name": "' + b"A" * (2 * 1024 * 1024) + b'"}'
    response = api.post("/api/authors", body, content_type="application/json", status=413)
    assert_problem(response, 413)
    assert db_snapshot() == before


# 415 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml"]
)
def test_wrong_content_type_is_415(api, db_snapshot, content_type):
    before = db_snapshot()
    body = b'{"slug": "ada", "name": "Ada"}'
    response = api.post("/api/authors", body, content_type=content_type, status=415)
    assert "application/json" in assert_problem(response, 415)["detail"]
    assert db_snapshot() == before


def test_wrong_content_type_on_patch_is_415(api, db_snapshot):
    api.post_json("/api/authors", {"id": 1, "slug": "ada", "name": "Ada"}, status=201)
    before = db_snapshot()
    response = api.patch("/api/authors/1", b'{"name": "B"}', content_type="text/plain", status=415)
    assert_problem(response, 415)
    assert db_snapshot() == before


def test_import_as_json_is_415(api, db_snapshot):
    before = db_snapshot()
    body = b'{"author": {"slug": "ada", "name": "Ada"}}'
    response = api.post("/api/import", body, content_type="application/json", status=415)
    assert NDJSON in assert_problem(response, 415)["detail"]
    assert db_snapshot() == before


# Malformed bodies --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'{"slug": "ada", ',
        b"{'slug': 'ada'}",
        b'{"slug": "ada", "name": "Ada"} trailing',
        b"\xff\xfe{}",
        b"",
    ],
    ids=["truncated", "single-quotes", "trailing-garbage", "not-utf8", "empty"],
)
def test_malformed_json_is_400(api, db_snapshot, body):
    before = db_snapshot()
    response = api.post("/api/authors", body, content_type="application/json", status=400)
    assert_problem(response, 400)
    assert db_snapshot() == before


def test_malformed_json_says_so(api):
    response = api.post(
        "/api/authors", b'{"slug": "ada", ', content_type="application/json", status=400
    )
    assert "not valid JSON" in response.json["detail"]


@pytest.mark.parametrize(
    "body",
    [DEEP, b'{"slug": "ada", "name": ' + DEEP + b"}", b'{"slug": "ada", "name": {"a": ' * 50_000],
    ids=["array", "in-a-field", "unterminated-objects"],
)
def test_json_nested_100000_deep_is_400_not_500(api, db_snapshot, body):
    before = db_snapshot()
    response = api.post("/api/authors", body, content_type="application/json", status=400)
    assert_problem(response, 400)
    assert db_snapshot() == before


def test_deeply_nested_import_line_is_rejected_with_its_line(api, db_snapshot):
    before = db_snapshot()
    body = b'{"author": {"slug": "ada", "name": "Ada"}}\n{"author": ' + DEEP + b"}\n"
    response = api.post("/api/import", body, content_type=NDJSON, status="4*")
    problem = assert_problem(response, response.status_int)
    assert [e["line"] for e in problem["errors"]] == [2]
    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/authors", {"slug": "ada", "name": "A\x00da"}, "name"),
        ("/api/taxonomies", {"name": "genre", "label": "Genres\x00"}, "label"),
        ("/api/terms", {"taxonomy": "category", "name": "x", "description": "\x00"}, "description"),
        ("/api/posts", {"type": "post", "title": "x", "content": "<p>\x00</p>"}, "content"),
        (
            "/api/posts",
            {"type": "post", "title": "x", "images": ["/a.jpg", "/\x00.jpg"]},
            "images/1",
        ),
    ],
)
def test_nul_character_is_400_naming_the_field(api, db_snapshot, path, body, field):
    """PostgreSQL cannot store U+0000 (it was a 500 there) and XML cannot carry it."""
    before = db_snapshot()
    response = api.post_json(path, body, status=400)
    assert [e["field"] for e in assert_problem(response, 400)["errors"]] == [field]
    assert db_snapshot() == before


def test_nul_character_in_a_patch_is_400(api, db_snapshot):
    before = db_snapshot()
    response = api.patch_json("/api/settings", {"title": "Site\x00"}, status=400)
    assert [e["field"] for e in assert_problem(response, 400)["errors"]] == ["title"]
    assert db_snapshot() == before


# Methods and paths -------------------------------------------------------------------------


def test_put_is_405_with_the_documented_methods_in_allow(api, testapp, db_snapshot):
    api.post_json("/api/authors", {"id": 1, "slug": "ada", "name": "Ada"}, status=201)
    api.post_json("/api/terms", {"id": 1, "taxonomy": "category", "name": "News"}, status=201)
    api.post_json("/api/posts", {"id": 1, "type": "post", "title": "Hi"}, status=201)
    names = {"/api/post-types/{name}": "post", "/api/taxonomies/{name}": "category"}
    before = db_snapshot()
    document = testapp.get("/api/openapi.json").json
    for template, item in document["paths"].items():
        path = template.replace("{id}", "1").replace("{name}", names.get(template, ""))
        documented = sorted(m.upper() for m in item if m != "parameters")
        response = api.put_json(path, {"title": "x"}, status=405)
        assert_problem(response, 405)
        assert sorted(response.headers["Allow"].split(", ")) == documented, path
    assert db_snapshot() == before


@pytest.mark.parametrize("method", ["OPTIONS", "TRACE"])
def test_other_undocumented_methods_are_405(api, method):
    response = api.request("/api/posts", method=method, status=405)
    assert_problem(response, 405)
    assert response.headers["Allow"] == "GET, POST"


def test_get_on_import_is_405(api):
    response = api.get("/api/import", status=405)
    assert response.headers["Allow"] == "POST"


def test_head_is_answered_like_get(api):
    response = api.head("/api/posts", status=200)
    assert response.content_type == "application/json"
    assert response.body == b""


@pytest.mark.parametrize(
    "path", ["/api/", "/api/nope", "/api/posts/1/comments", "/api/posts/", "/api/v2/posts"]
)
def test_unknown_api_path_is_404_problem(api, path):
    response = api.get(path, status=404)
    assert path in assert_problem(response, 404)["detail"]


def test_unknown_path_needs_no_token_to_be_404(testapp):
    assert_problem(testapp.get("/api/nope", status=404), 404)


@pytest.mark.parametrize(
    "path",
    [
        "/api/posts/999",
        "/api/authors/999",
        "/api/terms/999",
        "/api/post-types/nope",
        "/api/taxonomies/nope",
    ],
)
def test_unknown_object_is_404_problem(api, path):
    assert_problem(api.get(path, status=404), 404)


def test_non_numeric_id_is_400_naming_the_parameter(api):
    response = api.get("/api/posts/abc", status=400)
    assert [e["field"] for e in assert_problem(response, 400)["errors"]] == ["id"]


# Query parameters --------------------------------------------------------------------------


def test_unknown_query_parameter_is_400_naming_it(api):
    response = api.get("/api/posts?colour=red", status=400)
    problem = assert_problem(response, 400)
    assert [e["field"] for e in problem["errors"]] == ["colour"]
    assert "colour" in problem["detail"]


def test_unknown_query_parameter_on_a_write_stores_nothing(api, db_snapshot):
    before = db_snapshot()
    response = api.post_json("/api/authors?dry_run=1", {"slug": "ada", "name": "Ada"}, status=400)
    assert "dry_run" in assert_problem(response, 400)["detail"]
    assert db_snapshot() == before


def test_unknown_query_parameter_on_import_is_400(api, db_snapshot):
    before = db_snapshot()
    body = b'{"author": {"slug": "ada", "name": "Ada"}}\n'
    response = api.post("/api/import?dry_run=1", body, content_type=NDJSON, status=400)
    assert "dry_run" in assert_problem(response, 400)["detail"]
    assert db_snapshot() == before


@pytest.mark.parametrize(
    "query",
    [
        "page=0",
        "per_page=501",
        "page=x",
        "status=live",
        # Integers are ASCII digits: not what int() would also take.
        "page=%201",
        "page=1_0",
        "page=%D9%A1",  # ARABIC-INDIC DIGIT ONE
        "page=1.0",
        "author=",
    ],
)
def test_bad_query_values_are_400(api, query):
    response = api.get(f"/api/posts?{query}", status=400)
    assert query.split("=")[0] in [e["field"] for e in assert_problem(response, 400)["errors"]]


def test_a_query_parameter_given_twice_is_400(api):
    response = api.get("/api/posts?page=1&page=2", status=400)
    problem = assert_problem(response, 400)
    assert problem["errors"] == [{"field": "page", "message": "must be given only once"}]


def test_a_semicolon_is_part_of_a_query_value(api):
    """Only & separates parameters (WebOb also split on ;)."""
    response = api.get("/api/posts?status=publish;draft=1", status=400)
    errors = assert_problem(response, 400)["errors"]
    assert [e["field"] for e in errors] == ["status"]
    # The whole value is the URL asked about (split at ";", it would be "/a" and b).
    explained = assert_problem(api.get("/api/explain?url=/a;b", status=404), 404)
    assert explained["detail"].startswith(f"{SITE_URL}/a;b: no post, page")


def test_query_values_are_applied(api):
    for n in range(3):
        api.post_json("/api/authors", {"slug": f"a{n}", "name": f"A {n}"}, status=201)
    listed = api.get("/api/authors?page=2&per_page=2").json
    assert (listed["page"], listed["per_page"], listed["total"]) == (2, 2, 3)
    assert len(listed["items"]) == 1


# Integers past any column's range -----------------------------------------------------------

# Longer than the 4,300 digits Python's int() takes from text (a ValueError: a 500 once).
HUGE = "9" * 10_000


@pytest.mark.parametrize(
    "path",
    [
        f"/api/posts/{HUGE}",
        f"/api/authors/{HUGE}",
        f"/api/terms/{HUGE}",
        f"/api/posts/-{HUGE}",
        f"/api/posts/{2**63}",
    ],
)
def test_a_path_id_too_long_for_any_column_is_400_naming_it(api, caplog, path):
    with caplog.at_level(logging.DEBUG):
        response = api.get(path, status=400)
    [error] = assert_problem(response, 400, "id")["errors"]
    assert error["message"] in ("must be at most 2147483647", "must be at least 1")
    assert_logs_are_short(caplog)


def test_leading_zeros_do_not_count_as_digits(api):
    api.post_json("/api/authors", {"id": 7, "slug": "ada", "name": "Ada"}, status=201)
    assert api.get("/api/authors/" + "0" * 10_000 + "7").json["slug"] == "ada"
    assert_problem(api.get("/api/authors/" + "0" * 10_000, status=400), 400, "id")


@pytest.mark.parametrize(
    "query",
    [
        f"/api/posts?page={HUGE}",
        f"/api/posts?per_page={HUGE}",
        f"/api/posts?author={HUGE}",
        f"/api/posts?term=-{HUGE}",
        f"/api/posts?parent={2**64}",
        f"/api/terms?parent={HUGE}",
        f"/api/explain?post={HUGE}",
        f"/api/sitemaps/status?change={HUGE}",
        f"/api/sitemaps/status?change={2**63}",
    ],
)
def test_a_query_integer_too_long_for_any_column_is_400_naming_it(api, caplog, query):
    with caplog.at_level(logging.DEBUG):
        response = api.get(query, status=400)
    name = query.partition("?")[2].partition("=")[0]
    assert_problem(response, 400, name)
    assert_logs_are_short(caplog)


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("post", "/api/posts", {"type": "post", "title": "x", "id": 2**63}, "id"),
        ("post", "/api/posts", {"type": "post", "title": "x", "author": 2**64}, "author"),
        ("post", "/api/posts", {"type": "page", "title": "x", "parent": 2**31}, "parent"),
        ("post", "/api/posts", {"type": "post", "title": "x", "terms": [2**63]}, "terms/0"),
        ("post", "/api/posts", {"type": "post", "title": "x", "parts": 2**63}, "parts"),
        ("post", "/api/posts", {"type": "post", "title": "x", "id": -(2**63) - 1}, "id"),
        ("post", "/api/authors", {"slug": "a", "name": "A", "id": 2**64}, "id"),
        ("post", "/api/terms", {"taxonomy": "category", "name": "A", "parent": 2**63}, "parent"),
        ("patch", "/api/settings", {"entries_per_page": 2**64}, "entries_per_page"),
        ("patch", "/api/settings", {"front_page_id": 2**63}, "front_page_id"),
        ("patch", "/api/settings", {"excluded_post_ids": [1, 2**63]}, "excluded_post_ids/1"),
    ],
)
def test_a_body_integer_past_64_bits_is_400_naming_it(api, db_snapshot, method, path, body, field):
    """Refused by the document's bounds before any database sees it (PostgreSQL's integer
    and bigint columns would fail with an error of their own)."""
    before = db_snapshot()
    response = getattr(api, f"{method}_json")(path, body, status=400)
    assert_problem(response, 400, field)
    assert db_snapshot() == before


def test_a_body_integer_of_10000_digits_is_400(api, db_snapshot):
    before = db_snapshot()
    body = b'{"type": "post", "title": "x", "parts": ' + HUGE.encode() + b"}"
    response = api.post("/api/posts", body, content_type="application/json", status=400)
    assert "is not valid JSON" in assert_problem(response, 400)["detail"]
    assert db_snapshot() == before


# Logs carry a bounded slice of what a client sent ---------------------------------------------


def assert_logs_are_short(caplog):
    """No log line (message and traceback) carries more than a slice of what a client
    sent (a run of 10,000 "9" or "x" here)."""
    for record in caplog.records:
        text = record.getMessage() + (record.exc_text or "")
        assert len(record.getMessage()) < 4 * LOGGED_CHARS, record.getMessage()[:500]
        assert "9" * (LOGGED_CHARS + 1) not in text
        assert "x" * (LOGGED_CHARS + 1) not in text


def test_an_unexpected_error_on_a_huge_path_logs_a_slice_of_it(api, monkeypatch, caplog):
    def fail(self, request):
        raise RuntimeError("boom")

    monkeypatch.setattr(OpenAPI, "validate_request", fail)
    with caplog.at_level(logging.ERROR, logger="sitemap_server"):
        response = api.get(f"/api/posts/{HUGE}", status=500)
    assert_problem(response, 500)
    [record] = [r for r in caplog.records if r.exc_info]
    assert record.getMessage().startswith("unexpected error on GET /api/posts/999")
    assert "(10,011 characters)" in record.getMessage()
    assert_logs_are_short(caplog)


def test_a_concurrent_change_on_a_huge_path_logs_a_slice_of_it(api, monkeypatch, caplog):
    def fail(self, request):
        raise StaleDataError("x" * 10_000)

    monkeypatch.setattr(OpenAPI, "validate_request", fail)
    with caplog.at_level(logging.INFO, logger="sitemap_server"):
        response = api.get(f"/api/posts/{HUGE}", status=409)
    assert_problem(response, 409)
    assert caplog.records
    assert_logs_are_short(caplog)


# Ids at the end of their range -------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/authors", {"name": "Ada"}),
        ("/api/terms", {"taxonomy": "post_tag", "name": "A"}),
        ("/api/posts", {"type": "post", "title": "A"}),
    ],
)
def test_an_explicit_id_at_the_end_of_the_range_does_not_block_later_creates(
    api, db_snapshot, path, body
):
    """New ids follow the largest; once that is the last one, they take the lowest free."""
    slugs = iter(f"s{n}" for n in range(10))
    api.post_json(path, {**body, "slug": next(slugs), "id": 2**31 - 1}, status=201)
    api.post_json(path, {**body, "slug": next(slugs), "id": 1}, status=201)

    made = [api.post_json(path, {**body, "slug": next(slugs)}, status=201).json for _ in "ab"]
    assert [m["id"] for m in made] == [2, 3]
    before = db_snapshot()
    taken = api.post_json(path, {**body, "slug": next(slugs), "id": 2**31 - 1}, status=409)
    assert "already taken" in assert_problem(taken, 409)["errors"][0]["message"]
    assert db_snapshot() == before


# 500 ---------------------------------------------------------------------------------------


def test_an_unexpected_error_is_a_500_problem_without_traceback(
    api, db_snapshot, monkeypatch, caplog
):
    real_create = authors.create_author

    def create_then_fail(session, data):
        real_create(session, data)
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(authors, "create_author", create_then_fail)
    before = db_snapshot()
    with caplog.at_level(logging.ERROR, logger="sitemap_server"):
        response = api.post_json("/api/authors", {"slug": "ada", "name": "Ada"}, status=500)
    problem = assert_problem(response, 500)
    assert "Traceback" not in response.text
    assert "secret internal detail" not in response.text
    assert "RuntimeError" not in response.text
    assert problem["detail"]
    # Logged for the operator, and the half-made author was rolled back.
    assert any(r.exc_info and r.exc_info[0] is RuntimeError for r in caplog.records)
    assert db_snapshot() == before


def test_an_import_after_an_explicit_id_at_the_end_of_the_range_takes_free_ids(api):
    api.post_json("/api/posts", {"type": "post", "title": "Last", "id": 2**31 - 1}, status=201)
    lines = b"".join(b'{"post": {"type": "post", "title": "Imported %d"}}\n' % n for n in range(3))
    api.post("/api/import", lines, content_type="application/x-ndjson", status=200)

    ids = sorted(p["id"] for p in api.get("/api/posts", {"per_page": 10}).json["items"])
    assert ids == [1, 2, 3, 2**31 - 1]
