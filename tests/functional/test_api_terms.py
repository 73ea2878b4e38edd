"""Terms of taxonomies (S-105) through the admin API (S-701, S-703)."""

import pytest
from sqlalchemy import select

from sitemap_server.models import post_terms
from sitemap_server.testing import assert_problem


def create_term(api, taxonomy="category", name="News", **fields):
    body = {"taxonomy": taxonomy, "name": name, **fields}
    return api.post_json("/api/terms", body, status=201).json


def create_post(api, **fields):
    return api.post_json(
        "/api/posts", {"type": "post", "title": "A post", **fields}, status=201
    ).json


# Creating -----------------------------------------------------------------------------


def test_create_term_takes_its_slug_from_the_name(api):
    response = api.post_json(
        "/api/terms", {"taxonomy": "category", "name": "Café & Culture"}, status=201
    )

    term = response.json
    assert response.location == f"http://localhost/api/terms/{term['id']}"
    assert term == {
        "id": term["id"],
        "taxonomy": "category",
        "slug": "cafe-culture",
        "name": "Café & Culture",
        "parent": None,
        "description": "",
        "noindex": False,
        "canonical": None,
        "language": None,
        "translation_group": None,
        "url": "http://sitemaps.test/category/cafe-culture/",
    }
    assert api.get(response.location).json == term


def test_slugs_from_names_do_not_collide(api):
    first = create_term(api, name="News")
    second = create_term(api, name="news!")
    third = create_term(api, name="NEWS")
    assert [first["slug"], second["slug"], third["slug"]] == ["news", "news-2", "news-3"]


def test_a_name_without_letters_gets_a_fallback_slug(api):
    term = create_term(api, taxonomy="post_tag", name="!!!")
    assert term["slug"] == "post-tag-term"
    assert term["url"] == "http://sitemaps.test/tag/post-tag-term/"


def test_create_term_with_every_field(api):
    body = {
        "id": 77,
        "taxonomy": "post_tag",
        "slug": "py",
        "name": "Python",
        "parent": None,
        "description": "<p>The language.</p>",
        "noindex": True,
        "canonical": "https://example.com/python/",
        "language": "en",
        "translation_group": "python",
    }
    response = api.post_json("/api/terms", body, status=201)
    assert response.location == "http://localhost/api/terms/77"
    assert response.json == {**body, "url": "http://sitemaps.test/tag/py/"}
    # Later terms continue after the explicit id (the PostgreSQL sequence moved on).
    assert create_term(api)["id"] == 78


def test_explicit_id_already_taken_is_409(api, db_snapshot):
    create_term(api, id=5)
    before = db_snapshot()
    response = api.post_json(
        "/api/terms", {"id": 5, "taxonomy": "post_tag", "name": "Other"}, status=409
    )
    assert_problem(response, 409, "id")
    assert db_snapshot() == before


def test_tag_url(api):
    assert create_term(api, taxonomy="post_tag", name="X")["url"] == "http://sitemaps.test/tag/x/"


def test_hierarchical_term_url_has_its_parents(api):
    parent = create_term(api, name="Parent")
    child = create_term(api, name="Child", parent=parent["id"])
    grandchild = create_term(api, name="Grandchild", parent=child["id"])

    assert child["parent"] == parent["id"]
    assert child["url"] == "http://sitemaps.test/category/parent/child/"
    assert grandchild["url"] == "http://sitemaps.test/category/parent/child/grandchild/"
    assert api.get(f"/api/terms/{grandchild['id']}").json["url"] == grandchild["url"]


def test_duplicate_slug_in_one_taxonomy_is_409(api, db_snapshot):
    create_term(api, slug="news")
    before = db_snapshot()

    response = api.post_json(
        "/api/terms", {"taxonomy": "category", "slug": "news", "name": "Other"}, status=409
    )

    assert_problem(response, 409, "slug")
    assert db_snapshot() == before


def test_same_slug_in_another_taxonomy_is_fine(api):
    category = create_term(api, slug="news", name="News")
    tag = create_term(api, taxonomy="post_tag", slug="news", name="News")

    assert category["id"] != tag["id"]
    assert category["url"] == "http://sitemaps.test/category/news/"
    assert tag["url"] == "http://sitemaps.test/tag/news/"


def test_unknown_taxonomy_is_422(api, db_snapshot):
    before = db_snapshot()
    response = api.post_json("/api/terms", {"taxonomy": "genre", "name": "Noir"}, status=422)
    assert_problem(response, 422, "taxonomy")
    assert db_snapshot() == before


def test_parent_on_a_non_hierarchical_taxonomy_is_422(api, db_snapshot):
    tag = create_term(api, taxonomy="post_tag", name="Python")
    before = db_snapshot()

    response = api.post_json(
        "/api/terms",
        {"taxonomy": "post_tag", "name": "Django", "parent": tag["id"]},
        status=422,
    )

    assert_problem(response, 422, "parent")
    assert db_snapshot() == before


def test_parent_from_another_taxonomy_is_422(api, db_snapshot):
    api.post_json(
        "/api/taxonomies", {"name": "genre", "label": "G", "hierarchical": True}, status=201
    )
    genre = create_term(api, taxonomy="genre", name="Noir")
    before = db_snapshot()

    response = api.post_json(
        "/api/terms", {"taxonomy": "category", "name": "Crime", "parent": genre["id"]}, status=422
    )

    assert_problem(response, 422, "parent")
    assert db_snapshot() == before


def test_unknown_parent_is_422(api, db_snapshot):
    before = db_snapshot()
    response = api.post_json(
        "/api/terms", {"taxonomy": "category", "name": "Crime", "parent": 999}, status=422
    )
    assert_problem(response, 422, "parent")
    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "News"}, "taxonomy"),
        ({"taxonomy": "Category", "name": "News"}, "taxonomy"),
        ({"taxonomy": "t" * 33, "name": "News"}, "taxonomy"),
        ({"taxonomy": "category"}, "name"),
        ({"taxonomy": "category", "name": ""}, "name"),
        ({"taxonomy": "category", "name": "n" * 256}, "name"),
        ({"taxonomy": "category", "name": "News", "slug": "News"}, "slug"),
        ({"taxonomy": "category", "name": "News", "slug": "-news"}, "slug"),
        ({"taxonomy": "category", "name": "News", "slug": "s" * 201}, "slug"),
        ({"taxonomy": "category", "name": "News", "parent": 0}, "parent"),
        ({"taxonomy": "category", "name": "News", "parent": "1"}, "parent"),
        ({"taxonomy": "category", "name": "News", "description": 5}, "description"),
        ({"taxonomy": "category", "name": "News", "description": "d" * 100001}, "description"),
        ({"taxonomy": "category", "name": "News", "noindex": "no"}, "noindex"),
        ({"taxonomy": "category", "name": "News", "url": "http://x.test/"}, "url"),
    ],
)
def test_create_term_refuses_malformed_input(api, db_snapshot, body, field):
    before = db_snapshot()
    assert_problem(api.post_json("/api/terms", body, status=400), 400, field)
    assert db_snapshot() == before


@pytest.mark.parametrize(
    "canonical",
    [
        "news",
        "/category/news/",
        "ftp://example.com/news/",
        "http://",
        "https://example.com/a b/",
        "https://example.com:99999/",
        "https://example.com/" + "x" * 2048,
        "",
        7,
    ],
)
def test_create_term_refuses_a_bad_canonical(api, db_snapshot, canonical):
    before = db_snapshot()
    response = api.post_json(
        "/api/terms",
        {"taxonomy": "category", "name": "News", "canonical": canonical},
        status=400,
    )
    assert_problem(response, 400, "canonical")
    assert db_snapshot() == before


# Changing -----------------------------------------------------------------------------


def test_patch_term(api):
    term = create_term(api, name="News")

    changed = api.patch_json(
        f"/api/terms/{term['id']}",
        {
            "slug": "latest",
            "name": "Latest",
            "description": "<b>New</b>",
            "noindex": True,
            "canonical": "https://example.com/latest/",
            "language": "en-GB",
            "translation_group": "news",
        },
    ).json

    assert changed == {
        "id": term["id"],
        "taxonomy": "category",
        "slug": "latest",
        "name": "Latest",
        "parent": None,
        "description": "<b>New</b>",
        "noindex": True,
        "canonical": "https://example.com/latest/",
        "language": "en-GB",
        "translation_group": "news",
        "url": "http://sitemaps.test/category/latest/",
    }
    assert api.get(f"/api/terms/{term['id']}").json == changed

    cleared = api.patch_json(f"/api/terms/{term['id']}", {"canonical": None}).json
    assert cleared["canonical"] is None
    assert cleared["name"] == "Latest"


def test_patch_term_parent_moves_its_url(api):
    news = create_term(api, name="News")
    sport = create_term(api, name="Sport")
    local = create_term(api, name="Local", parent=news["id"])

    moved = api.patch_json(f"/api/terms/{local['id']}", {"parent": sport["id"]}).json
    assert moved["parent"] == sport["id"]
    assert moved["url"] == "http://sitemaps.test/category/sport/local/"

    top = api.patch_json(f"/api/terms/{local['id']}", {"parent": None}).json
    assert top["parent"] is None
    assert top["url"] == "http://sitemaps.test/category/local/"


def test_renaming_a_parent_moves_its_children(api):
    parent = create_term(api, name="News")
    child = create_term(api, name="Local", parent=parent["id"])
    api.patch_json(f"/api/terms/{parent['id']}", {"slug": "headlines"})
    assert api.get(f"/api/terms/{child['id']}").json["url"] == (
        "http://sitemaps.test/category/headlines/local/"
    )


def test_patch_term_to_its_own_slug(api):
    term = create_term(api, slug="news")
    assert api.patch_json(f"/api/terms/{term['id']}", {"slug": "news"}).json["slug"] == "news"


def test_patch_term_to_a_taken_slug_is_409(api, db_snapshot):
    create_term(api, slug="news")
    sport = create_term(api, slug="sport", name="Sport")
    create_term(api, taxonomy="post_tag", slug="tagged", name="Tagged")
    before = db_snapshot()

    response = api.patch_json(
        f"/api/terms/{sport['id']}", {"name": "Renamed", "slug": "news"}, status=409
    )

    assert_problem(response, 409, "slug")
    assert db_snapshot() == before
    # A slug taken only in another taxonomy is free here.
    api.patch_json(f"/api/terms/{sport['id']}", {"slug": "tagged"}, status=200)


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_patch_parent_that_makes_a_cycle_is_422(api, db_snapshot, depth):
    chain = [create_term(api, name="Root")]
    for n in range(depth):
        chain.append(create_term(api, name=f"Level {n}", parent=chain[-1]["id"]))
    root, deepest = chain[0], chain[-1]
    before = db_snapshot()

    response = api.patch_json(
        f"/api/terms/{root['id']}", {"name": "Renamed", "parent": deepest["id"]}, status=422
    )

    assert_problem(response, 422, "parent")
    assert db_snapshot() == before


def test_patch_parent_from_another_taxonomy_is_422(api, db_snapshot):
    tag = create_term(api, taxonomy="post_tag", name="Python")
    category = create_term(api, name="News")
    before = db_snapshot()

    response = api.patch_json(f"/api/terms/{category['id']}", {"parent": tag["id"]}, status=422)

    assert_problem(response, 422, "parent")
    assert db_snapshot() == before


def test_patch_parent_on_a_non_hierarchical_taxonomy_is_422(api, db_snapshot):
    python = create_term(api, taxonomy="post_tag", name="Python")
    django = create_term(api, taxonomy="post_tag", name="Django")
    before = db_snapshot()

    response = api.patch_json(f"/api/terms/{django['id']}", {"parent": python["id"]}, status=422)

    assert_problem(response, 422, "parent")
    assert db_snapshot() == before


def test_patch_unknown_parent_is_422(api, db_snapshot):
    term = create_term(api)
    before = db_snapshot()
    response = api.patch_json(f"/api/terms/{term['id']}", {"parent": 999}, status=422)
    assert_problem(response, 422, "parent")
    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"taxonomy": "post_tag"}, "taxonomy"),
        ({"id": 9}, "id"),
        ({"slug": "Bad Slug"}, "slug"),
        ({"name": ""}, "name"),
        ({"name": None}, "name"),
        ({"description": None}, "description"),
        ({"noindex": None}, "noindex"),
        ({"canonical": "not a url"}, "canonical"),
        ({"canonical": "mailto:news@example.com"}, "canonical"),
        ({"parent": -3}, "parent"),
    ],
)
def test_patch_term_refuses_malformed_input(api, db_snapshot, body, field):
    term = create_term(api)
    before = db_snapshot()
    assert_problem(api.patch_json(f"/api/terms/{term['id']}", body, status=400), 400, field)
    assert db_snapshot() == before


def test_patch_missing_term_is_404(api, db_snapshot):
    before = db_snapshot()
    assert_problem(api.patch_json("/api/terms/999", {"name": "X"}, status=404), 404)
    assert db_snapshot() == before


# Deleting -----------------------------------------------------------------------------


def test_delete_term_moves_children_up_to_its_parent(api):
    news = create_term(api, name="News")
    local = create_term(api, name="Local", parent=news["id"])
    city = create_term(api, name="City", parent=local["id"])
    town = create_term(api, name="Town", parent=local["id"])

    assert api.delete(f"/api/terms/{local['id']}", status=204).body == b""

    assert_problem(api.get(f"/api/terms/{local['id']}", status=404), 404)
    for child, slug in ((city, "city"), (town, "town")):
        moved = api.get(f"/api/terms/{child['id']}").json
        assert moved["parent"] == news["id"]
        assert moved["url"] == f"http://sitemaps.test/category/news/{slug}/"


def test_delete_top_level_term_makes_its_children_top_level(api):
    news = create_term(api, name="News")
    local = create_term(api, name="Local", parent=news["id"])

    api.delete(f"/api/terms/{news['id']}", status=204)

    moved = api.get(f"/api/terms/{local['id']}").json
    assert moved["parent"] is None
    assert moved["url"] == "http://sitemaps.test/category/local/"


def test_delete_term_removes_it_from_posts(api, dbsession):
    news = create_term(api, name="News")
    python = create_term(api, taxonomy="post_tag", name="Python")
    post = create_post(api, terms=[news["id"], python["id"]])
    other = create_post(api, title="Other", terms=[news["id"]])

    api.delete(f"/api/terms/{news['id']}", status=204)

    assert api.get(f"/api/posts/{post['id']}").json["terms"] == [python["id"]]
    assert api.get(f"/api/posts/{other['id']}").json["terms"] == []
    links = dbsession.execute(select(post_terms.c.post_id, post_terms.c.term_id)).all()
    assert [tuple(link) for link in links] == [(post["id"], python["id"])]


@pytest.mark.parametrize("method", ["get", "delete"])
def test_missing_term_is_404(api, db_snapshot, method):
    create_term(api)
    before = db_snapshot()
    assert_problem(getattr(api, method)("/api/terms/999", status=404), 404)
    assert db_snapshot() == before


@pytest.mark.parametrize("term_id", ["0", "x", "1.5"])
def test_malformed_term_id_is_400(api, term_id):
    assert_problem(api.get(f"/api/terms/{term_id}", status=400), 400, "id")


# Listing ------------------------------------------------------------------------------


def test_list_terms_filters_by_taxonomy_and_parent(api):
    news = create_term(api, name="News")
    local = create_term(api, name="Local", parent=news["id"])
    world = create_term(api, name="World", parent=news["id"])
    sport = create_term(api, name="Sport")
    football = create_term(api, name="Football", parent=sport["id"])
    python = create_term(api, taxonomy="post_tag", name="Python")

    def ids(params):
        return [t["id"] for t in api.get("/api/terms", params).json["items"]]

    assert len(ids({})) == 6
    assert ids({"taxonomy": "post_tag"}) == [python["id"]]
    assert ids({"taxonomy": "category", "parent": news["id"]}) == [local["id"], world["id"]]
    assert ids({"parent": sport["id"]}) == [football["id"]]
    assert ids({"taxonomy": "post_tag", "parent": news["id"]}) == []
    assert ids({"taxonomy": "nosuch"}) == []


def test_list_terms_pages_in_id_order(api):
    ids = [create_term(api, name=f"Term {n}")["id"] for n in range(5)]

    first = api.get("/api/terms", {"per_page": 2}).json
    last = api.get("/api/terms", {"per_page": 2, "page": 3}).json
    filtered = api.get("/api/terms", {"per_page": 2, "taxonomy": "category"}).json

    assert [t["id"] for t in first["items"]] == ids[:2]
    assert [t["id"] for t in last["items"]] == ids[4:]
    assert first["total"] == last["total"] == filtered["total"] == 5
    assert first["items"][0]["url"] == "http://sitemaps.test/category/term-0/"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"taxonomy": "Category"}, "taxonomy"),
        ({"parent": "news"}, "parent"),
        ({"parent": 0}, "parent"),
        ({"per_page": 501}, "per_page"),
        ({"slug": "news"}, "slug"),
    ],
)
def test_list_terms_refuses_bad_query(api, params, field):
    assert_problem(api.get("/api/terms", params, status=400), 400, field)


def test_terms_need_a_token(testapp, db_snapshot):
    before = db_snapshot()
    assert_problem(testapp.get("/api/terms", status=401), 401)
    response = testapp.post_json("/api/terms", {"taxonomy": "category", "name": "News"}, status=401)
    assert_problem(response, 401)
    assert db_snapshot() == before
