"""POST /api/import (S-704): newline-delimited JSON, all or nothing."""

import json

import pytest
from sqlalchemy import func, select

from sitemap_server.models import Author, Post, Term, post_terms
from sitemap_server.testing import PROBLEM_JSON

NDJSON = "application/x-ndjson"
KINDS = ("post_type", "taxonomy", "author", "term", "post")


def ndjson(*lines):
    """An import body; a line that is already a string is sent as it is."""
    return "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)


def post_import(api, body, status=200):
    return api.post("/api/import", body.encode(), content_type=NDJSON, status=status)


def many_posts(count, **fields):
    return [
        {"post": {"type": "post", "title": f"Post {n}", "slug": f"post-{n}", **fields}}
        for n in range(1, count + 1)
    ]


def assert_rejected_at(response, line, field=None):
    """A 4xx problem whose errors name ``line`` (and ``field``, however deeply nested)."""
    assert 400 <= response.status_int < 500
    assert response.content_type == PROBLEM_JSON
    problem = response.json
    assert problem["status"] == response.status_int
    assert [e["line"] for e in problem["errors"]] == [line] * len(problem["errors"])
    assert f"line {line}" in problem["detail"]
    if field is not None:
        # Every error names the field as the line does: "post/title", "author/slug".
        fields = [e.get("field", "") for e in problem["errors"]]
        assert all(f.partition("/")[0] in KINDS for f in fields), fields
        assert field in [f.partition("/")[2] for f in fields], fields
    return problem


MIXED = [
    {"post_type": {"name": "book", "label": "Books", "hierarchical": True}},
    {"taxonomy": {"name": "genre", "label": "Genres", "hierarchical": True}},
    {"author": {"id": 7, "slug": "ada", "name": "Ada Lovelace"}},
    {"term": {"id": 50, "taxonomy": "genre", "name": "Poetry"}},
    {"term": {"id": 51, "taxonomy": "genre", "name": "Sonnets", "parent": 50}},
    {"term": {"taxonomy": "category", "name": "News"}},
    "",
    {
        "post": {
            "id": 100,
            "type": "book",
            "title": "Collected Poems",
            "author": 7,
            "status": "publish",
            "published_at": "2024-03-01T09:00:00Z",
            "terms": [50],
        }
    },
    {
        "post": {
            "id": 101,
            "type": "book",
            "title": "Volume One",
            "parent": 100,
            "status": "publish",
            "published_at": "2024-03-02T09:00:00+01:00",
            "terms": [50, 51],
        }
    },
    {"post": {"type": "book", "title": "Volume Two", "parent": 100, "status": "draft"}},
    {"post": {"type": "post", "title": "Hello World", "author": 7, "status": "publish"}},
]


def test_mixed_import_reports_what_it_created(api):
    response = post_import(api, ndjson(*MIXED))
    assert response.content_type == "application/json"
    assert response.json == {
        "lines": 11,
        "created": {"post_type": 1, "taxonomy": 1, "author": 1, "term": 3, "post": 4},
        "dry_run": False,
    }


def test_mixed_import_really_stores_everything(api, dbsession):
    post_import(api, ndjson(*MIXED))

    assert api.get("/api/post-types/book").json["hierarchical"] is True
    assert api.get("/api/taxonomies/genre").json["label"] == "Genres"
    assert api.get("/api/authors/7").json["slug"] == "ada"
    assert api.get("/api/terms/51").json["parent"] == 50

    child = api.get("/api/posts/101").json
    assert child["parent"] == 100
    assert child["terms"] == [50, 51]
    assert child["published_at"] == "2024-03-02T08:00:00+00:00"
    assert child["permalink"] == "http://sitemaps.test/book/collected-poems/volume-one/"
    parent = api.get("/api/posts/100").json
    assert (parent["author"], parent["terms"], parent["status"]) == (7, [50], "publish")

    volume_two = api.get("/api/posts", params={"parent": 100, "status": "draft"}).json
    assert [p["title"] for p in volume_two["items"]] == ["Volume Two"]
    assert api.get("/api/posts", params={"author": 7}).json["total"] == 2

    links = dbsession.execute(select(post_terms.c.post_id, post_terms.c.term_id)).all()
    assert sorted(links) == [(100, 50), (101, 50), (101, 51)]
    assert dbsession.scalar(select(func.count()).select_from(Post)) == 4


def test_blank_lines_are_skipped_but_counted(api):
    body = "\n" + ndjson({"author": {"slug": "ada", "name": "Ada"}}) + "\n  \n"
    assert post_import(api, body).json == {"lines": 4, "created": {"author": 1}, "dry_run": False}


def test_empty_import_creates_nothing(api, db_snapshot):
    before = db_snapshot()
    assert post_import(api, "").json == {"lines": 0, "created": {}, "dry_run": False}
    assert db_snapshot() == before


# A bad line: a 4xx naming it, and nothing of the import is kept -----------------------------

GOOD_START = [
    {"author": {"id": 1, "slug": "ada", "name": "Ada"}},
    {"post": {"type": "post", "title": "Fine", "slug": "fine", "author": 1}},
]


@pytest.mark.parametrize(
    ("bad_line", "field"),
    [
        ('{"post": {"type": "post", "title": "Cut', None),
        ("[1, 2]", None),
        ("{}", None),
        ({"post": {"type": "post"}}, "title"),
        ({"post": {"type": "post", "title": "x", "colour": "red"}}, "colour"),
        ({"post": {"type": "post", "title": 5}}, "title"),
        ({"post": {"type": "post", "title": "x", "status": "live"}}, "status"),
        ({"post": {"type": "post", "title": "x", "canonical": "ftp://x.test/"}}, "canonical"),
        ({"post": {"type": "post", "title": "x", "published_at": "2024-01-01"}}, "published_at"),
        ({"post": {"type": "post", "title": "x", "author": 999}}, "author"),
        ({"post": {"type": "post", "title": "x", "terms": [999]}}, "terms/0"),
        ({"post": {"type": "page", "title": "x", "parent": 999}}, "parent"),
        ({"post": {"type": "nope", "title": "x"}}, "type"),
        ({"post": {"type": "post", "title": "x", "slug": "fine"}}, "slug"),
        ({"author": {"slug": "ada", "name": "Another Ada"}}, "slug"),
        ({"author": {"id": 1, "slug": "bob", "name": "Bob"}}, "id"),
        ({"post": {"id": 1, "type": "post", "title": "x"}}, "id"),
        ({"term": {"taxonomy": "nope", "name": "x"}}, "taxonomy"),
        ({"post": {"type": "post", "title": "x"}, "author": {"slug": "b", "name": "B"}}, None),
        ({"post": {"type": "post", "title": "Nul \x00 in it"}}, "title"),
        (
            {"post": {"type": "post", "title": "x", "published_at": "9999-12-31T23:59:59-14:00"}},
            "published_at",
        ),
        (
            {"post": {"type": "post", "title": "x", "modified_at": "0001-01-01T00:00:00+14:00"}},
            "modified_at",
        ),
        (
            {"post": {"type": "post", "title": "x", "published_at": "9999-12-31T23:59:59Z"}},
            "published_at",
        ),
        (
            {"post": {"type": "post", "title": "x", "modified_at": "0999-12-31T23:59:59Z"}},
            "modified_at",
        ),
    ],
    ids=[
        "bad-json",
        "not-an-object",
        "no-kind",
        "missing-title",
        "unknown-field",
        "wrong-type",
        "bad-enum",
        "bad-url",
        "naive-date",
        "unknown-author",
        "unknown-term",
        "unknown-parent",
        "unknown-post-type",
        "duplicate-post-slug",
        "duplicate-author-slug",
        "duplicate-author-id",
        "post-id-reused-after-the-import-took-it",
        "unknown-taxonomy",
        "two-kinds",
        "nul-character",
        "year-9999-west-of-utc",
        "year-1-east-of-utc",
        "past-the-last-date",
        "before-the-first-date",
    ],
)
def test_a_bad_line_is_named_and_nothing_is_stored(api, db_snapshot, bad_line, field):
    before = db_snapshot()
    lines = [*GOOD_START, {"post": {"id": 1, "type": "post", "title": "One"}}, bad_line]
    response = post_import(api, ndjson(*lines), status="4*")
    assert_rejected_at(response, 4, field)
    assert db_snapshot() == before


def test_slug_taken_by_a_stored_post_is_409(api, db_snapshot):
    api.post_json("/api/posts", {"type": "post", "title": "Old", "slug": "hello"}, status=201)
    before = db_snapshot()
    body = ndjson({"post": {"type": "post", "title": "New", "slug": "hello"}})
    response = post_import(api, body, status=409)
    assert_rejected_at(response, 1, "slug")
    assert db_snapshot() == before


def test_explicit_post_id_taken_by_a_stored_post_is_409(api, db_snapshot):
    api.post_json("/api/posts", {"id": 5, "type": "post", "title": "Old"}, status=201)
    before = db_snapshot()
    response = post_import(api, ndjson({"post": {"id": 5, "type": "post", "title": "New"}}), "4*")
    assert response.status_int == 409
    assert_rejected_at(response, 1, "id")
    assert db_snapshot() == before


LATE = 2500  # past the first batch of 1,000 posts, which is already in the transaction


@pytest.mark.parametrize(
    ("bad_line", "status", "field"),
    [
        ({"post": {"type": "post", "title": "Again", "slug": "post-2400"}}, 409, "slug"),
        ({"post": {"type": "post", "title": "Again", "slug": "post-5"}}, 409, "slug"),
        ({"post": {"type": "post", "title": "Who", "author": 999}}, 422, "author"),
        ({"post": {"type": "post"}}, 422, "title"),
        ('{"post": ', 422, None),
    ],
    ids=[
        "slug-earlier-in-the-same-batch",
        "slug-in-an-earlier-batch",
        "unknown-author",
        "schema",
        "bad-json",
    ],
)
def test_a_bad_line_2500_rolls_back_the_earlier_batches(api, db_snapshot, bad_line, status, field):
    before = db_snapshot()
    body = ndjson(*many_posts(LATE - 1), bad_line)
    response = post_import(api, body, status=status)
    assert_rejected_at(response, LATE, field)
    assert db_snapshot() == before


def test_wrong_content_type_is_415(api, db_snapshot):
    before = db_snapshot()
    body = ndjson({"author": {"slug": "ada", "name": "Ada"}}).encode()
    for content_type in ("application/json", "text/plain"):
        response = api.post("/api/import", body, content_type=content_type, status=415)
        assert response.content_type == PROBLEM_JSON
        assert NDJSON in response.json["detail"]
    assert db_snapshot() == before


def test_2500_posts_import(api, dbsession):
    lines = [{"author": {"id": 1, "slug": "ada", "name": "Ada"}}]
    lines += [{"term": {"id": 1, "taxonomy": "category", "name": "News"}}]
    lines += many_posts(LATE, author=1, terms=[1], status="publish")
    response = post_import(api, ndjson(*lines))
    assert response.json == {
        "lines": LATE + 2,
        "created": {"author": 1, "term": 1, "post": LATE},
        "dry_run": False,
    }
    assert api.get("/api/posts", params={"per_page": 1}).json["total"] == LATE
    assert api.get("/api/posts", params={"term": 1, "per_page": 1}).json["total"] == LATE
    slugs = set(dbsession.scalars(select(Post.slug)))
    assert slugs == {f"post-{n}" for n in range(1, LATE + 1)}


def test_titles_without_slugs_get_unique_slugs_across_batches(api, dbsession):
    lines = [{"post": {"type": "post", "title": "Same Title"}} for _ in range(1500)]
    post_import(api, ndjson(*lines))
    slugs = list(dbsession.scalars(select(Post.slug)))
    assert len(set(slugs)) == len(slugs) == 1500
    assert "same-title" in slugs


# Explicit ids and the ids that follow them ---------------------------------------------------


def test_after_explicit_ids_a_normal_create_still_succeeds(api, dbsession):
    post_import(
        api,
        ndjson(
            {"author": {"id": 1, "slug": "ada", "name": "Ada"}},
            {"term": {"id": 1, "taxonomy": "category", "name": "News"}},
            *[{"post": {"id": n, "type": "post", "title": f"Post {n}"}} for n in (1, 2, 3)],
        ),
    )
    post = api.post_json("/api/posts", {"type": "post", "title": "Later"}, status=201).json
    author = api.post_json("/api/authors", {"slug": "bob", "name": "Bob"}, status=201).json
    term = api.post_json("/api/terms", {"taxonomy": "category", "name": "Tech"}, status=201).json
    assert (post["id"], author["id"], term["id"]) == (4, 2, 2)
    assert dbsession.scalar(select(func.count()).select_from(Author)) == 2
    assert dbsession.scalar(select(func.count()).select_from(Term)) == 2


def test_explicit_and_generated_post_ids_mix_in_one_import(api):
    lines = [{"post": {"id": n, "type": "post", "title": f"Given {n}"}} for n in (1, 2)]
    lines += [{"post": {"type": "post", "title": f"Generated {n}"}} for n in range(3)]
    lines += [{"post": {"id": 1500, "type": "post", "title": "Far"}}]
    lines += many_posts(1200)  # a second batch of generated ids, after 1500
    response = post_import(api, ndjson(*lines))
    assert response.json["created"] == {"post": 1206}
    ids = [p["id"] for p in api.get("/api/posts", params={"per_page": 500}).json["items"]]
    assert len(set(ids)) == len(ids)
    assert api.post_json("/api/posts", {"type": "post", "title": "After"}).json["id"] > 1500


def test_explicit_post_id_given_twice_in_one_import_is_409(api, db_snapshot):
    before = db_snapshot()
    body = ndjson(
        {"post": {"id": 7, "type": "post", "title": "A"}},
        {"post": {"id": 7, "type": "post", "title": "B"}},
    )
    response = post_import(api, body, status=409)
    assert_rejected_at(response, 2, "id")
    assert db_snapshot() == before
