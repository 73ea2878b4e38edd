"""Authors (S-104) through the admin API (S-701, S-703)."""

import pytest
from sqlalchemy import select

from sitemap_server.models import Author
from sitemap_server.testing import assert_problem


def create_author(api, slug="jane", name="Jane Doe", **fields):
    return api.post_json("/api/authors", {"slug": slug, "name": name, **fields}, status=201).json


def test_create_author(api, dbsession):
    response = api.post_json("/api/authors", {"slug": "jane", "name": "Jane Doe"}, status=201)

    author = response.json
    assert response.location == f"http://localhost/api/authors/{author['id']}"
    assert author == {
        "id": author["id"],
        "slug": "jane",
        "name": "Jane Doe",
        "noindex": False,
        "url": "http://sitemaps.test/author/jane/",
    }
    row = dbsession.scalars(select(Author)).one()
    assert (row.id, row.slug, row.name, row.noindex) == (author["id"], "jane", "Jane Doe", False)


def test_get_author(api):
    created = create_author(api, noindex=True)
    assert api.get(f"/api/authors/{created['id']}").json == {
        "id": created["id"],
        "slug": "jane",
        "name": "Jane Doe",
        "noindex": True,
        "url": "http://sitemaps.test/author/jane/",
    }


def test_create_author_with_explicit_id(api):
    response = api.post_json("/api/authors", {"id": 42, "slug": "jane", "name": "Jane"}, status=201)
    assert response.json["id"] == 42
    assert response.location == "http://localhost/api/authors/42"
    assert api.get("/api/authors/42").json["slug"] == "jane"
    # Ids given without one continue after it (the PostgreSQL sequence moved on).
    assert create_author(api, slug="john")["id"] == 43


def test_explicit_id_already_taken_is_409(api, db_snapshot):
    create_author(api, id=7)
    before = db_snapshot()

    response = api.post_json("/api/authors", {"id": 7, "slug": "john", "name": "J"}, status=409)

    assert_problem(response, 409, "id")
    assert db_snapshot() == before


def test_duplicate_slug_is_409(api, db_snapshot):
    create_author(api)
    before = db_snapshot()

    response = api.post_json("/api/authors", {"slug": "jane", "name": "Other"}, status=409)

    assert_problem(response, 409, "slug")
    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"slug": "Jane", "name": "J"}, "slug"),
        ({"slug": "-jane", "name": "J"}, "slug"),
        ({"slug": "_jane", "name": "J"}, "slug"),
        ({"slug": "jane doe", "name": "J"}, "slug"),
        ({"slug": "jane/doe", "name": "J"}, "slug"),
        ({"slug": "janÉ", "name": "J"}, "slug"),  # upper case, in any script
        ({"slug": "", "name": "J"}, "slug"),
        ({"slug": "j" * 201, "name": "J"}, "slug"),
        ({"slug": 5, "name": "J"}, "slug"),
        ({"name": "J"}, "slug"),
        ({"slug": "jane"}, "name"),
        ({"slug": "jane", "name": ""}, "name"),
        ({"slug": "jane", "name": "n" * 256}, "name"),
        ({"slug": "jane", "name": None}, "name"),
        ({"slug": "jane", "name": "J", "noindex": "yes"}, "noindex"),
        ({"slug": "jane", "name": "J", "id": 0}, "id"),
        ({"slug": "jane", "name": "J", "id": 2**31}, "id"),
        ({"slug": "jane", "name": "J", "id": "7"}, "id"),
        ({"slug": "jane", "name": "J", "email": "j@example.com"}, "email"),
        ({"slug": "jane", "name": "J", "url": "http://x.test/"}, "url"),
    ],
)
def test_create_author_refuses_malformed_input(api, db_snapshot, body, field):
    before = db_snapshot()
    assert_problem(api.post_json("/api/authors", body, status=400), 400, field)
    assert db_snapshot() == before


def test_slug_may_be_two_hundred_characters(api):
    slug = "j" * 200
    assert create_author(api, slug=slug)["url"] == f"http://sitemaps.test/author/{slug}/"


def test_create_author_refuses_a_body_that_is_not_json(api, db_snapshot):
    before = db_snapshot()
    response = api.post(
        "/api/authors", b'{"slug": "jane",', content_type="application/json", status=400
    )
    assert_problem(response, 400)
    assert db_snapshot() == before


def test_patch_author(api):
    author = create_author(api)

    changed = api.patch_json(
        f"/api/authors/{author['id']}", {"slug": "jdoe", "name": "J. Doe", "noindex": True}
    ).json

    assert changed == {
        "id": author["id"],
        "slug": "jdoe",
        "name": "J. Doe",
        "noindex": True,
        "url": "http://sitemaps.test/author/jdoe/",
    }
    assert api.get(f"/api/authors/{author['id']}").json == changed


def test_patch_author_keeps_fields_not_given(api):
    author = create_author(api, noindex=True)
    changed = api.patch_json(f"/api/authors/{author['id']}", {"name": "Jane D."}).json
    assert (changed["slug"], changed["name"], changed["noindex"]) == ("jane", "Jane D.", True)


def test_patch_author_to_its_own_slug(api):
    author = create_author(api)
    changed = api.patch_json(f"/api/authors/{author['id']}", {"slug": "jane", "name": "Jane"})
    assert changed.json["slug"] == "jane"


def test_patch_author_to_a_taken_slug_is_409(api, db_snapshot):
    create_author(api, slug="jane")
    john = create_author(api, slug="john", name="John")
    before = db_snapshot()

    response = api.patch_json(
        f"/api/authors/{john['id']}", {"name": "Johnny", "slug": "jane"}, status=409
    )

    assert_problem(response, 409, "slug")
    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"slug": "Jane"}, "slug"),
        ({"slug": None}, "slug"),
        ({"name": ""}, "name"),
        ({"noindex": 1}, "noindex"),
        ({"id": 9}, "id"),
        ({"email": "j@example.com"}, "email"),
    ],
)
def test_patch_author_refuses_malformed_input(api, db_snapshot, body, field):
    author = create_author(api)
    before = db_snapshot()
    assert_problem(api.patch_json(f"/api/authors/{author['id']}", body, status=400), 400, field)
    assert db_snapshot() == before


def test_delete_author(api, dbsession):
    author = create_author(api)

    assert api.delete(f"/api/authors/{author['id']}", status=204).body == b""

    assert_problem(api.get(f"/api/authors/{author['id']}", status=404), 404)
    assert dbsession.scalars(select(Author)).all() == []


def test_delete_author_with_posts_is_409(api, db_snapshot):
    author = create_author(api)
    post = api.post_json(
        "/api/posts", {"type": "post", "title": "Hi", "author": author["id"]}, status=201
    ).json
    before = db_snapshot()

    response = api.delete(f"/api/authors/{author['id']}", status=409)

    assert_problem(response, 409)
    assert "1 post" in response.json["detail"]

    assert db_snapshot() == before
    api.patch_json(f"/api/posts/{post['id']}", {"author": None})
    api.delete(f"/api/authors/{author['id']}", status=204)


@pytest.mark.parametrize("method", ["get", "delete"])
def test_missing_author_is_404(api, db_snapshot, method):
    create_author(api)
    before = db_snapshot()
    assert_problem(getattr(api, method)("/api/authors/999", status=404), 404)
    assert db_snapshot() == before


def test_patch_missing_author_is_404(api, db_snapshot):
    before = db_snapshot()
    assert_problem(api.patch_json("/api/authors/999", {"name": "X"}, status=404), 404)
    assert db_snapshot() == before


@pytest.mark.parametrize("author_id", ["0", "-1", "abc", "2147483648"])
def test_malformed_author_id_is_400(api, author_id):
    assert_problem(api.get(f"/api/authors/{author_id}", status=400), 400, "id")


def test_list_authors_pages_in_id_order(api):
    ids = [create_author(api, slug=f"author-{n}", name=f"Author {n}")["id"] for n in range(5)]

    first = api.get("/api/authors", {"per_page": 2}).json
    third = api.get("/api/authors", {"per_page": 2, "page": 3}).json
    beyond = api.get("/api/authors", {"per_page": 2, "page": 4}).json

    assert [a["id"] for a in first["items"]] == ids[:2]
    assert [a["id"] for a in third["items"]] == ids[4:]
    assert beyond["items"] == []
    assert (first["page"], first["per_page"], first["total"]) == (1, 2, 5)
    assert (third["page"], third["total"]) == (3, 5)
    assert first["items"][0]["url"] == "http://sitemaps.test/author/author-0/"


def test_list_authors_when_there_are_none(api):
    assert api.get("/api/authors").json == {"items": [], "page": 1, "per_page": 50, "total": 0}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"per_page": 0}, "per_page"),
        ({"per_page": 501}, "per_page"),
        ({"page": 0}, "page"),
        ({"slug": "jane"}, "slug"),
    ],
)
def test_list_authors_refuses_bad_query(api, params, field):
    assert_problem(api.get("/api/authors", params, status=400), 400, field)


def test_authors_need_a_token(testapp, db_snapshot):
    before = db_snapshot()
    assert_problem(testapp.get("/api/authors", status=401), 401)
    assert_problem(testapp.post_json("/api/authors", {"slug": "j", "name": "J"}, status=401), 401)
    assert db_snapshot() == before
