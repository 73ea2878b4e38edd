"""Post types (S-101) and taxonomies (S-105) through the admin API (S-701, S-703)."""

import pytest

from sitemap_server.sitemaps.check import check
from sitemap_server.testing import apply_changes, assert_problem, url_locs


def create_post(api, **fields):
    return api.post_json("/api/posts", {"title": "A post", **fields}, status=201).json


def create_term(api, **fields):
    return api.post_json("/api/terms", fields, status=201).json


# Post types: reading ------------------------------------------------------------------


def test_list_post_types_has_the_builtins(api):
    listing = api.get("/api/post-types").json
    assert listing["page"] == 1
    assert listing["per_page"] == 50
    assert listing["total"] == 2
    assert listing["items"] == [
        {
            "name": "page",
            "label": "Pages",
            "public": True,
            "noindex": False,
            "hierarchical": True,
            "archive_path": None,
            "permalink_pattern": "/{path}/",
            "builtin": True,
        },
        {
            "name": "post",
            "label": "Posts",
            "public": True,
            "noindex": False,
            "hierarchical": False,
            "archive_path": None,
            "permalink_pattern": "/{year}/{month}/{slug}/",
            "builtin": True,
        },
    ]


def test_list_post_types_pages_by_name(api):
    for name in ("zine", "book"):
        api.post_json("/api/post-types", {"name": name, "label": name.title()}, status=201)

    first = api.get("/api/post-types", {"per_page": 3}).json
    second = api.get("/api/post-types", {"per_page": 3, "page": 2}).json
    beyond = api.get("/api/post-types", {"per_page": 3, "page": 3}).json

    assert [t["name"] for t in first["items"]] == ["book", "page", "post"]
    assert [t["name"] for t in second["items"]] == ["zine"]
    assert beyond["items"] == []
    assert first["total"] == second["total"] == beyond["total"] == 4
    assert (second["page"], second["per_page"]) == (2, 3)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"per_page": 0}, "per_page"),
        ({"per_page": 501}, "per_page"),
        ({"page": 0}, "page"),
        ({"page": "first"}, "page"),
        ({"sort": "name"}, "sort"),
    ],
)
def test_list_post_types_refuses_bad_query(api, params, field):
    assert_problem(api.get("/api/post-types", params, status=400), 400, field)


def test_get_builtin_post_type(api):
    post_type = api.get("/api/post-types/post").json
    assert post_type["name"] == "post"
    assert post_type["builtin"] is True
    assert post_type["permalink_pattern"] == "/{year}/{month}/{slug}/"


def test_get_missing_post_type_is_404(api):
    assert_problem(api.get("/api/post-types/nosuchtype", status=404), 404)


def test_get_post_type_with_malformed_name_is_400(api):
    assert_problem(api.get("/api/post-types/Books", status=400), 400, "name")


# Post types: creating -----------------------------------------------------------------


def test_create_post_type_with_defaults(api, dbsession):
    response = api.post_json("/api/post-types", {"name": "book", "label": "Books"}, status=201)

    assert response.location == "http://localhost/api/post-types/book"
    assert response.json == {
        "name": "book",
        "label": "Books",
        "public": True,
        "noindex": False,
        "hierarchical": False,
        "archive_path": None,
        "permalink_pattern": "/{type}/{slug}/",
        "builtin": False,
    }
    assert api.get(response.location).json == response.json
    post = create_post(api, type="book", slug="dune", status="publish")
    assert post["permalink"] == "http://sitemaps.test/book/dune/"


def test_create_hierarchical_post_type_defaults_to_path_pattern(api):
    created = api.post_json(
        "/api/post-types", {"name": "guide", "label": "Guides", "hierarchical": True}, status=201
    ).json
    assert created["permalink_pattern"] == "/{type}/{path}/"

    parent = create_post(api, type="guide", slug="intro")
    child = create_post(api, type="guide", slug="setup", parent=parent["id"])
    assert child["permalink"] == "http://sitemaps.test/guide/intro/setup/"


def test_create_post_type_with_every_field(api):
    body = {
        "name": "recipe_2",
        "label": "Recipes",
        "public": False,
        "noindex": True,
        "hierarchical": False,
        "archive_path": "/recipes/",
        "permalink_pattern": "/recipes/{id}-{slug}.html",
    }
    created = api.post_json("/api/post-types", body, status=201).json
    assert created == {**body, "builtin": False}
    post = create_post(api, type="recipe_2", slug="soup")
    assert post["permalink"] == f"http://sitemaps.test/recipes/{post['id']}-soup.html"


def test_post_type_name_may_be_twenty_characters(api):
    name = "a" * 20
    api.post_json("/api/post-types", {"name": name, "label": "Long"}, status=201)
    assert api.get(f"/api/post-types/{name}").json["name"] == name


def test_duplicate_post_type_name_is_409(api, db_snapshot):
    api.post_json("/api/post-types", {"name": "book", "label": "Books"}, status=201)
    before = db_snapshot()

    for name in ("book", "post"):
        response = api.post_json("/api/post-types", {"name": name, "label": "Again"}, status=409)
        assert_problem(response, 409, "name")

    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "Books", "label": "Books"}, "name"),
        ({"name": "a" * 21, "label": "Too long"}, "name"),
        ({"name": "my-books", "label": "Dashes"}, "name"),
        ({"name": "", "label": "Empty"}, "name"),
        ({"name": 7, "label": "Number"}, "name"),
        ({"label": "No name"}, "name"),
        ({"name": "book"}, "label"),
        ({"name": "book", "label": ""}, "label"),
        ({"name": "book", "label": "x" * 201}, "label"),
        ({"name": "book", "label": "Books", "public": "yes"}, "public"),
        ({"name": "book", "label": "Books", "hierarchical": 1}, "hierarchical"),
        ({"name": "book", "label": "Books", "archive_path": "books/"}, "archive_path"),
        ({"name": "book", "label": "Books", "archive_path": "/a b/"}, "archive_path"),
        (
            {"name": "book", "label": "Books", "permalink_pattern": "/" + "x" * 255},
            "permalink_pattern",
        ),
        ({"name": "book", "label": "Books", "colour": "red"}, "colour"),
        ({"name": "book", "label": "Books", "builtin": True}, "builtin"),
    ],
)
def test_create_post_type_refuses_malformed_input(api, db_snapshot, body, field):
    before = db_snapshot()
    response = api.post_json("/api/post-types", body, status=400)
    assert_problem(response, 400, field)
    assert db_snapshot() == before


@pytest.mark.parametrize(
    "pattern",
    [
        "/books/{year}/",  # nothing that tells two posts apart
        "/books/",
        "/{title}/",  # not a field
        "/{slug}/{name}/",
        "/{}/{slug}/",
        "books/{slug}/",  # not a path
        "{slug}",
        "/{slug}/?page=1",
        "/{slug}/#top",
        "/my books/{slug}/",  # would not be a valid URL
        "/{slug}/{",
        "/{slug}/<b>/",
        "",
    ],
)
def test_create_post_type_refuses_unusable_permalink_pattern(api, db_snapshot, pattern):
    before = db_snapshot()
    response = api.post_json(
        "/api/post-types",
        {"name": "book", "label": "Books", "permalink_pattern": pattern},
        status=422,
    )
    assert_problem(response, 422, "permalink_pattern")
    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("pattern", "permalink"),
    [
        ("/{slug}/", "http://sitemaps.test/dune/"),
        ("/b/{id}/", "http://sitemaps.test/b/{id}/"),
        ("/{type}/{year}/{month}/{day}/{slug}/", "http://sitemaps.test/book/2024/05/01/dune/"),
        ("/shelf/{path}.html", "http://sitemaps.test/shelf/dune.html"),
        ("/{year}/{hour}/{minute}/{second}/{slug}/", "http://sitemaps.test/2024/10/00/00/dune/"),
    ],
)
def test_permalink_pattern_fields(api, pattern, permalink):
    api.post_json(
        "/api/post-types",
        {"name": "book", "label": "Books", "permalink_pattern": pattern},
        status=201,
    )
    post = create_post(
        api, type="book", slug="dune", status="publish", published_at="2024-05-01T10:00:00Z"
    )
    assert post["permalink"] == permalink.replace("{id}", str(post["id"]))


# Post types: changing -----------------------------------------------------------------


def test_patch_post_type_changes_only_given_fields(api):
    api.post_json("/api/post-types", {"name": "book", "label": "Books"}, status=201)

    changed = api.patch_json(
        "/api/post-types/book",
        {"label": "Novels", "noindex": True, "archive_path": "/novels/"},
    ).json

    assert changed == {
        "name": "book",
        "label": "Novels",
        "public": True,
        "noindex": True,
        "hierarchical": False,
        "archive_path": "/novels/",
        "permalink_pattern": "/{type}/{slug}/",
        "builtin": False,
    }
    assert api.get("/api/post-types/book").json == changed

    cleared = api.patch_json("/api/post-types/book", {"archive_path": None, "public": False})
    assert cleared.json["archive_path"] is None
    assert cleared.json["public"] is False
    assert cleared.json["label"] == "Novels"


def test_patch_permalink_pattern_moves_existing_posts(api):
    post = create_post(
        api, type="post", slug="hello", status="publish", published_at="2024-05-01T10:00:00Z"
    )
    assert post["permalink"] == "http://sitemaps.test/2024/05/hello/"

    changed = api.patch_json("/api/post-types/post", {"permalink_pattern": "/blog/{slug}/"})

    assert changed.json["permalink_pattern"] == "/blog/{slug}/"
    assert changed.json["builtin"] is True
    assert api.get(f"/api/posts/{post['id']}").json["permalink"] == (
        "http://sitemaps.test/blog/hello/"
    )


def test_dates_in_permalinks_are_local_to_the_site_and_move_with_its_time_zone(api, app_session):
    """WordPress writes a post's local date in its permalink (``post_date``): published
    at 03:30 UTC on New Year's Day, it is still 2023 in New York."""
    api.patch_json(
        "/api/post-types/post", {"permalink_pattern": "/{year}/{month}/{day}/{hour}/{slug}/"}
    )
    post = create_post(
        api, type="post", slug="hello", status="publish", published_at="2024-01-01T03:30:00Z"
    )
    assert post["permalink"] == "http://sitemaps.test/2024/01/01/03/hello/"
    api.patch_json("/api/settings", {"timezone": "America/New_York"}, status=200)
    moved = api.get(f"/api/posts/{post['id']}").json["permalink"]
    assert moved == "http://sitemaps.test/2023/12/31/22/hello/"
    apply_changes(api)
    assert moved in url_locs(api, "/post-sitemap.xml")
    with app_session.begin():  # the URLs held are the ones made
        assert check(app_session).count == 0


def test_a_time_zone_that_lands_a_post_on_a_page_is_a_409(api, db_snapshot):
    """In New York the post "hello" of 2024-01-01T03:30Z would be /2023/12/hello/, the
    URL of a page at that path."""
    create_post(
        api, type="post", slug="hello", status="publish", published_at="2024-01-01T03:30:00Z"
    )  # /2024/01/hello/ in UTC
    year = create_post(api, type="page", slug="2023", status="publish")
    month = create_post(api, type="page", slug="12", status="publish", parent=year["id"])
    page = create_post(api, type="page", slug="hello", status="publish", parent=month["id"])
    before = db_snapshot()
    response = api.patch_json("/api/settings", {"timezone": "America/New_York"}, expect_errors=True)
    problem = assert_problem(response, 409, "timezone")
    assert f"is already the URL of post {page['id']}" in problem["detail"]
    assert db_snapshot() == before


@pytest.mark.parametrize("pattern", ["", "blog/{slug}/", "/blog/", "/{name}/", "/{slug}?x"])
def test_patch_refuses_unusable_permalink_pattern(api, db_snapshot, pattern):
    before = db_snapshot()
    response = api.patch_json(
        "/api/post-types/post", {"label": "Articles", "permalink_pattern": pattern}, status=422
    )
    assert_problem(response, 422, "permalink_pattern")
    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "article"}, "name"),
        ({"builtin": False}, "builtin"),
        ({"colour": "red"}, "colour"),
        ({"label": ""}, "label"),
        ({"noindex": "true"}, "noindex"),
        ({"archive_path": "news"}, "archive_path"),
        ({"permalink_pattern": None}, "permalink_pattern"),
    ],
)
def test_patch_post_type_refuses_malformed_input(api, db_snapshot, body, field):
    before = db_snapshot()
    assert_problem(api.patch_json("/api/post-types/post", body, status=400), 400, field)
    assert db_snapshot() == before


def test_patch_missing_post_type_is_404(api, db_snapshot):
    before = db_snapshot()
    assert_problem(api.patch_json("/api/post-types/book", {"label": "B"}, status=404), 404)
    assert db_snapshot() == before


def test_turning_hierarchical_off_with_parented_posts_is_422(api, db_snapshot):
    parent = create_post(api, type="page", slug="about")
    create_post(api, type="page", slug="team", parent=parent["id"])
    before = db_snapshot()

    response = api.patch_json(
        "/api/post-types/page",
        {"label": "Flat pages", "permalink_pattern": "/{slug}/", "hierarchical": False},
        status=422,
    )

    assert_problem(response, 422, "hierarchical")
    assert db_snapshot() == before
    assert api.get("/api/post-types/page").json["hierarchical"] is True


def test_turning_hierarchical_off_without_parented_posts(api):
    api.post_json(
        "/api/post-types",
        {"name": "guide", "label": "Guides", "hierarchical": True},
        status=201,
    )
    create_post(api, type="guide", slug="intro")

    changed = api.patch_json("/api/post-types/guide", {"hierarchical": False}).json

    assert changed["hierarchical"] is False
    assert api.get("/api/post-types/guide").json["hierarchical"] is False


# Post types: deleting -----------------------------------------------------------------


def test_delete_custom_post_type(api):
    api.post_json("/api/post-types", {"name": "book", "label": "Books"}, status=201)

    response = api.delete("/api/post-types/book", status=204)

    assert response.body == b""
    assert_problem(api.get("/api/post-types/book", status=404), 404)
    assert [t["name"] for t in api.get("/api/post-types").json["items"]] == ["page", "post"]


@pytest.mark.parametrize("name", ["post", "page"])
def test_delete_builtin_post_type_is_409(api, db_snapshot, name):
    before = db_snapshot()
    assert_problem(api.delete(f"/api/post-types/{name}", status=409), 409)
    assert db_snapshot() == before


def test_delete_post_type_with_posts_is_409(api, db_snapshot):
    api.post_json("/api/post-types", {"name": "book", "label": "Books"}, status=201)
    post = create_post(api, type="book", status="draft")
    before = db_snapshot()

    response = api.delete("/api/post-types/book", status=409)

    assert_problem(response, 409)
    assert "1 post" in response.json["detail"]

    assert db_snapshot() == before
    api.delete(f"/api/posts/{post['id']}", status=204)
    api.delete("/api/post-types/book", status=204)


def test_delete_missing_post_type_is_404(api, db_snapshot):
    before = db_snapshot()
    assert_problem(api.delete("/api/post-types/book", status=404), 404)
    assert db_snapshot() == before


def test_post_types_need_a_token(testapp, db_snapshot):
    before = db_snapshot()
    assert_problem(testapp.get("/api/post-types", status=401), 401)
    assert_problem(
        testapp.post_json("/api/post-types", {"name": "book", "label": "B"}, status=401), 401
    )
    assert db_snapshot() == before


# Taxonomies: reading ------------------------------------------------------------------


def test_list_taxonomies_has_the_builtins(api):
    listing = api.get("/api/taxonomies").json
    assert listing["total"] == 2
    assert (listing["page"], listing["per_page"]) == (1, 50)
    assert listing["items"] == [
        {
            "name": "category",
            "label": "Categories",
            "public": True,
            "noindex": False,
            "hierarchical": True,
            "archive_base": "category",
            "builtin": True,
        },
        {
            "name": "post_tag",
            "label": "Tags",
            "public": True,
            "noindex": False,
            "hierarchical": False,
            "archive_base": "tag",
            "builtin": True,
        },
    ]


def test_list_taxonomies_pages_by_name(api):
    for name in ("genre", "audience", "zone"):
        api.post_json("/api/taxonomies", {"name": name, "label": name.title()}, status=201)

    first = api.get("/api/taxonomies", {"per_page": 2}).json
    third = api.get("/api/taxonomies", {"per_page": 2, "page": 3}).json

    assert [t["name"] for t in first["items"]] == ["audience", "category"]
    assert [t["name"] for t in third["items"]] == ["zone"]
    assert first["total"] == third["total"] == 5


@pytest.mark.parametrize(
    ("params", "field"),
    [({"per_page": 0}, "per_page"), ({"page": -1}, "page"), ({"taxonomy": "x"}, "taxonomy")],
)
def test_list_taxonomies_refuses_bad_query(api, params, field):
    assert_problem(api.get("/api/taxonomies", params, status=400), 400, field)


def test_get_missing_taxonomy_is_404(api):
    assert_problem(api.get("/api/taxonomies/genre", status=404), 404)


# Taxonomies: creating -----------------------------------------------------------------


def test_create_taxonomy_with_defaults(api):
    response = api.post_json("/api/taxonomies", {"name": "genre", "label": "Genres"}, status=201)

    assert response.location == "http://localhost/api/taxonomies/genre"
    assert response.json == {
        "name": "genre",
        "label": "Genres",
        "public": True,
        "noindex": False,
        "hierarchical": False,
        "archive_base": "genre",
        "builtin": False,
    }
    assert api.get(response.location).json == response.json
    term = create_term(api, taxonomy="genre", name="Science Fiction")
    assert term["url"] == "http://sitemaps.test/genre/science-fiction/"


def test_create_taxonomy_with_every_field(api):
    body = {
        "name": "topic_area",
        "label": "Topic areas",
        "public": False,
        "noindex": True,
        "hierarchical": True,
        "archive_base": "topics/all",
    }
    created = api.post_json("/api/taxonomies", body, status=201).json
    assert created == {**body, "builtin": False}

    parent = create_term(api, taxonomy="topic_area", name="Science")
    child = create_term(api, taxonomy="topic_area", name="Physics", parent=parent["id"])
    assert child["url"] == "http://sitemaps.test/topics/all/science/physics/"


def test_taxonomy_archive_base_loses_its_slashes(api):
    created = api.post_json(
        "/api/taxonomies", {"name": "genre", "label": "G", "archive_base": "/kinds/"}, status=201
    ).json
    assert created["archive_base"] == "kinds"
    assert create_term(api, taxonomy="genre", name="Noir")["url"] == (
        "http://sitemaps.test/kinds/noir/"
    )


def test_taxonomy_name_may_be_thirty_two_characters(api):
    name = "t" * 32
    api.post_json("/api/taxonomies", {"name": name, "label": "Long"}, status=201)
    assert api.get(f"/api/taxonomies/{name}").json["archive_base"] == name


def test_duplicate_taxonomy_name_is_409(api, db_snapshot):
    api.post_json("/api/taxonomies", {"name": "genre", "label": "Genres"}, status=201)
    before = db_snapshot()

    for name in ("genre", "category", "post_tag"):
        response = api.post_json("/api/taxonomies", {"name": name, "label": "Again"}, status=409)
        assert_problem(response, 409, "name")

    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "Genre", "label": "G"}, "name"),
        ({"name": "t" * 33, "label": "Too long"}, "name"),
        ({"name": "music-genre", "label": "Dashes"}, "name"),
        ({"name": "", "label": "Empty"}, "name"),
        ({"label": "No name"}, "name"),
        ({"name": "genre"}, "label"),
        ({"name": "genre", "label": ""}, "label"),
        ({"name": "genre", "label": "G", "archive_base": "Genres"}, "archive_base"),
        ({"name": "genre", "label": "G", "archive_base": "a b"}, "archive_base"),
        ({"name": "genre", "label": "G", "archive_base": "k" * 201}, "archive_base"),
        ({"name": "genre", "label": "G", "archive_base": None}, "archive_base"),
        ({"name": "genre", "label": "G", "noindex": "no"}, "noindex"),
        ({"name": "genre", "label": "G", "slug": "genre"}, "slug"),
        ({"name": "genre", "label": "G", "builtin": False}, "builtin"),
    ],
)
def test_create_taxonomy_refuses_malformed_input(api, db_snapshot, body, field):
    before = db_snapshot()
    assert_problem(api.post_json("/api/taxonomies", body, status=400), 400, field)
    assert db_snapshot() == before


# Taxonomies: changing -----------------------------------------------------------------


def test_patch_taxonomy(api):
    api.post_json("/api/taxonomies", {"name": "genre", "label": "Genres"}, status=201)
    term = create_term(api, taxonomy="genre", name="Noir")

    changed = api.patch_json(
        "/api/taxonomies/genre", {"label": "Kinds", "noindex": True, "archive_base": "/kind/"}
    ).json

    assert changed == {
        "name": "genre",
        "label": "Kinds",
        "public": True,
        "noindex": True,
        "hierarchical": False,
        "archive_base": "kind",
        "builtin": False,
    }
    assert api.get("/api/taxonomies/genre").json == changed
    assert api.get(f"/api/terms/{term['id']}").json["url"] == "http://sitemaps.test/kind/noir/"


def test_patch_builtin_taxonomy_archive_base(api):
    tag = create_term(api, taxonomy="post_tag", name="Python")
    api.patch_json("/api/taxonomies/post_tag", {"archive_base": "topic"}, status=200)
    assert api.get(f"/api/terms/{tag['id']}").json["url"] == "http://sitemaps.test/topic/python/"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "kind"}, "name"),
        ({"colour": "red"}, "colour"),
        ({"label": ""}, "label"),
        ({"archive_base": "Kind"}, "archive_base"),
        ({"hierarchical": None}, "hierarchical"),
    ],
)
def test_patch_taxonomy_refuses_malformed_input(api, db_snapshot, body, field):
    before = db_snapshot()
    assert_problem(api.patch_json("/api/taxonomies/category", body, status=400), 400, field)
    assert db_snapshot() == before


def test_patch_missing_taxonomy_is_404(api, db_snapshot):
    before = db_snapshot()
    assert_problem(api.patch_json("/api/taxonomies/genre", {"label": "G"}, status=404), 404)
    assert db_snapshot() == before


def test_turning_taxonomy_hierarchical_off_with_parented_terms_is_422(api, db_snapshot):
    parent = create_term(api, taxonomy="category", name="News")
    create_term(api, taxonomy="category", name="Local", parent=parent["id"])
    before = db_snapshot()

    response = api.patch_json(
        "/api/taxonomies/category",
        {"label": "Sections", "archive_base": "section", "hierarchical": False},
        status=422,
    )

    assert_problem(response, 422, "hierarchical")
    assert db_snapshot() == before


def test_turning_taxonomy_hierarchical_off_without_parented_terms(api):
    create_term(api, taxonomy="category", name="News")
    changed = api.patch_json("/api/taxonomies/category", {"hierarchical": False}).json
    assert changed["hierarchical"] is False


# Taxonomies: deleting -----------------------------------------------------------------


def test_delete_custom_taxonomy(api):
    api.post_json("/api/taxonomies", {"name": "genre", "label": "Genres"}, status=201)

    assert api.delete("/api/taxonomies/genre", status=204).body == b""

    assert_problem(api.get("/api/taxonomies/genre", status=404), 404)
    assert api.get("/api/taxonomies").json["total"] == 2


@pytest.mark.parametrize("name", ["category", "post_tag"])
def test_delete_builtin_taxonomy_is_409(api, db_snapshot, name):
    before = db_snapshot()
    assert_problem(api.delete(f"/api/taxonomies/{name}", status=409), 409)
    assert db_snapshot() == before


def test_delete_taxonomy_with_terms_is_409(api, db_snapshot):
    api.post_json("/api/taxonomies", {"name": "genre", "label": "Genres"}, status=201)
    term = create_term(api, taxonomy="genre", name="Noir")
    before = db_snapshot()

    response = api.delete("/api/taxonomies/genre", status=409)

    assert_problem(response, 409)
    assert "1 term" in response.json["detail"]

    assert db_snapshot() == before
    api.delete(f"/api/terms/{term['id']}", status=204)
    api.delete("/api/taxonomies/genre", status=204)


def test_delete_missing_taxonomy_is_404(api, db_snapshot):
    before = db_snapshot()
    assert_problem(api.delete("/api/taxonomies/genre", status=404), 404)
    assert db_snapshot() == before


@pytest.mark.parametrize("base", ["", "/", "a//b", "//x"])
def test_taxonomy_archive_base_must_be_a_path(api, db_snapshot, base):
    before = db_snapshot()
    response = api.post_json(
        "/api/taxonomies", {"name": "genre", "label": "G", "archive_base": base}, status=400
    )
    assert response.json["errors"][0]["field"] == "archive_base"
    assert db_snapshot() == before


# Permalinks with the post's author or category (WordPress's %author%, %category%) -------


def use_pattern(api, pattern):
    """The posts' permalink pattern."""
    api.patch_json("/api/post-types/post", {"permalink_pattern": pattern}, status=200)


def permalink_of(api, post):
    return api.get(f"/api/posts/{post['id']}").json["permalink"]


def test_category_permalinks_take_the_first_category_with_its_parents(api, app_session):
    """WordPress's %category%: the category with the lowest id, with its parents' slugs;
    a post in none is in the default category's ``uncategorized``."""
    use_pattern(api, "/{category}/{slug}/")
    news = create_term(api, taxonomy="category", name="News")
    sport = create_term(api, taxonomy="category", name="Sport", parent=news["id"])
    tag = create_term(api, taxonomy="post_tag", name="Aardvark")
    both = create_post(
        api, type="post", slug="both", status="publish", terms=[sport["id"], news["id"]]
    )
    child = create_post(
        api, type="post", slug="child", status="publish", terms=[tag["id"], sport["id"]]
    )
    none = create_post(api, type="post", slug="none", status="publish")
    assert both["permalink"] == "http://sitemaps.test/news/both/"
    assert child["permalink"] == "http://sitemaps.test/news/sport/child/"
    assert none["permalink"] == "http://sitemaps.test/uncategorized/none/"

    # A category's new slug moves the posts that hold it, in the API and the sitemap.
    api.patch_json(f"/api/terms/{news['id']}", {"slug": "headlines"}, status=200)
    assert permalink_of(api, child) == "http://sitemaps.test/headlines/sport/child/"
    # So does a post's new category, and a category deleted (its children move up).
    api.patch_json(f"/api/posts/{none['id']}", {"terms": [sport["id"]]}, status=200)
    assert permalink_of(api, none) == "http://sitemaps.test/headlines/sport/none/"
    api.delete(f"/api/terms/{news['id']}", status=204)
    assert permalink_of(api, both) == "http://sitemaps.test/sport/both/"
    assert permalink_of(api, child) == "http://sitemaps.test/sport/child/"
    apply_changes(api)
    assert set(url_locs(api, "/post-sitemap.xml")) >= {
        "http://sitemaps.test/sport/both/",
        "http://sitemaps.test/sport/child/",
        "http://sitemaps.test/sport/none/",
    }
    with app_session.begin():  # the URLs held are the ones made
        assert check(app_session).count == 0


def test_author_permalinks_move_with_the_authors_slug(api, app_session):
    use_pattern(api, "/{author}/{slug}/")
    ada = api.post_json("/api/authors", {"slug": "ada", "name": "Ada"}, status=201).json
    post = create_post(api, type="post", slug="notes", status="publish", author=ada["id"])
    orphan = create_post(api, type="post", slug="alone", status="publish")
    assert post["permalink"] == "http://sitemaps.test/ada/notes/"
    assert orphan["permalink"] == "http://sitemaps.test/alone/"  # no empty segment
    api.patch_json(f"/api/authors/{ada['id']}", {"slug": "lovelace"}, status=200)
    assert permalink_of(api, post) == "http://sitemaps.test/lovelace/notes/"
    apply_changes(api)
    assert "http://sitemaps.test/lovelace/notes/" in url_locs(api, "/post-sitemap.xml")
    with app_session.begin():
        assert check(app_session).count == 0


def test_a_category_slug_that_lands_a_post_on_a_page_is_a_409(api, db_snapshot):
    use_pattern(api, "/{category}/{slug}/")
    news = create_term(api, taxonomy="category", name="News")
    post = create_post(api, type="post", slug="hello", status="publish", terms=[news["id"]])
    about = create_post(api, type="page", slug="about", status="publish")
    page = create_post(api, type="page", slug="hello", status="publish", parent=about["id"])
    before = db_snapshot()
    response = api.patch_json(f"/api/terms/{news['id']}", {"slug": "about"}, expect_errors=True)
    problem = assert_problem(response, 409, "slug")
    assert f"is already the URL of post {page['id']}" in problem["detail"]
    assert f"post {post['id']} would get" in problem["detail"]
    assert db_snapshot() == before
