"""One URL, one object (issue 30): an explicit ``path`` is stored in normal form and
refused (409 naming the other) when it is already someone's URL or the server's own;
a post whose pattern would land on another post's explicit path is refused too."""

from __future__ import annotations

import json

import pytest

from sitemap_server.testing import SITE_URL, assert_problem, url_locs

JAN = "2024-01-15T10:00:00+00:00"


def post(api, status=201, **fields):
    body = {"type": "post", "status": "publish", "title": "T", "published_at": JAN, **fields}
    response = api.post_json("/api/posts", body, expect_errors=True)
    assert response.status_int == status, response.text
    return response


@pytest.fixture
def site(api):
    about = api.post_json(
        "/api/posts", {"type": "page", "title": "About", "status": "publish"}, status=201
    ).json
    api.post_json("/api/authors", {"slug": "ada", "name": "Ada"}, status=201)
    api.post_json("/api/terms", {"taxonomy": "category", "name": "Travel"}, status=201)
    dup = post(api, title="Dup", path="/dup/").json
    return {"about": about, "dup": dup}


@pytest.mark.parametrize(
    ("path", "holder"),
    [
        ("/dup/", "post"),
        ("/about/", "post"),
        ("/category/travel/", "term"),
        ("/author/ada/", "author"),
        ("/", "the home page"),
        ("/post-sitemap.xml", "the server itself serves"),
        ("/sitemap_index.xml", "the server itself serves"),
        ("/robots.txt", "the server itself serves"),
        ("/api/posts", "the admin API"),
        ("/sitemaps/", "the server itself serves"),
    ],
)
def test_an_explicit_path_that_is_already_a_url_is_a_409(api, site, db_snapshot, path, holder):
    before = db_snapshot()
    problem = assert_problem(post(api, 409, title="Again", path=path), 409, "path")
    assert holder in problem["detail"]
    problem = assert_problem(
        api.patch_json(f"/api/posts/{site['dup']['id']}", {"path": path}, expect_errors=True)
        if path != "/dup/"
        else post(api, 409, path=path),
        409,
        "path",
    )
    assert db_snapshot() == before


def test_two_spellings_of_one_path_are_one_url(api, testapp, site):
    made = post(api, title="Über", path="/über-uns2/").json
    assert made["permalink"] == f"{SITE_URL}/%C3%BCber-uns2/"
    assert_problem(post(api, 409, path="/%c3%bcber-uns2/"), 409, "path")
    assert url_locs(testapp, "/post-sitemap.xml").count(made["permalink"]) == 1


def test_a_post_whose_pattern_lands_on_an_explicit_path_is_a_409(api, db_snapshot, site):
    post(api, title="Taken", path="/2024/01/hello/")
    before = db_snapshot()
    assert_problem(post(api, 409, slug="hello"), 409, "slug")
    assert db_snapshot() == before


def test_an_import_with_one_path_twice_is_refused(api, db_snapshot):
    before = db_snapshot()
    lines = [
        {"post": {"type": "post", "title": "A", "path": "/same/"}},
        {"post": {"type": "post", "title": "B", "path": "/same/"}},
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    response = api.post("/api/import", body, content_type="application/x-ndjson", status=409)
    assert response.json["errors"][0]["line"] == 2
    assert db_snapshot() == before


def test_a_term_or_author_whose_url_is_an_explicit_path_is_a_409(api, db_snapshot):
    post(api, title="Squatter", path="/category/news/")
    post(api, title="Squatter 2", path="/author/grace/")
    before = db_snapshot()
    term = {"taxonomy": "category", "name": "News"}
    response = api.post_json("/api/terms", term, expect_errors=True)
    assert "explicit path of post" in assert_problem(response, 409, "slug")["detail"]
    response = api.post_json("/api/authors", {"slug": "grace", "name": "G"}, expect_errors=True)
    assert "explicit path of post" in assert_problem(response, 409, "slug")["detail"]
    assert db_snapshot() == before
    other = api.post_json("/api/terms", {**term, "slug": "other"}, status=201).json
    response = api.patch_json(f"/api/terms/{other['id']}", {"slug": "news"}, expect_errors=True)
    assert_problem(response, 409, "slug")


def test_an_import_line_whose_permalink_is_an_explicit_path_is_refused(api, db_snapshot):
    post(api, title="Taken", path="/2024/01/imported/")
    before = db_snapshot()
    line = {"post": {"type": "post", "title": "Imported", "published_at": JAN}}
    body = (json.dumps({"post": {"type": "post", "title": "Fine"}}) + "\n").encode()
    body += (json.dumps(line) + "\n").encode()
    response = api.post("/api/import", body, content_type="application/x-ndjson", status=409)
    [problem] = response.json["errors"]
    assert (problem["line"], problem["field"]) == (2, "post/slug")
    assert "explicit path of post" in problem["message"]
    assert db_snapshot() == before
