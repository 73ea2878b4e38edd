"""The posts endpoints of the admin API (S-102, S-103, S-701, S-703), through WebTest.

Posts are created through the API under test; authors, terms, post types and settings are
arranged directly in the database so that these tests only depend on ``/api/posts``.
Every rejected request is checked to have left the database exactly as it was.
"""

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from sitemap_server.models import Author, Post, PostType, SiteSettings, Term, post_terms

SITE = "http://sitemaps.test"
LONG_URL = "http://example.com/" + "a" * 2029  # 2,048 characters: one too many


# Helpers --------------------------------------------------------------------------------


def create_post(api, **fields):
    body = {"type": "post", "title": "A post", **fields}
    return api.post_json("/api/posts", body, status=201).json


def create_page(api, **fields):
    return create_post(api, type="page", **fields)


def fields_of(response):
    """The fields an error response names, in order."""
    return [error.get("field") for error in response.json["errors"]]


def parse(text):
    return datetime.fromisoformat(text)


def add_author(dbsession, slug="jane"):
    author = Author(slug=slug, name=slug.title(), noindex=False)
    dbsession.add(author)
    dbsession.commit()
    return author.id


def add_term(dbsession, slug, taxonomy="category"):
    term = Term(taxonomy=taxonomy, slug=slug, name=slug.title(), description="", noindex=False)
    dbsession.add(term)
    dbsession.commit()
    return term.id


def add_post_type(dbsession, name, pattern, hierarchical=False):
    dbsession.add(
        PostType(
            name=name,
            label=name.title(),
            public=True,
            noindex=False,
            hierarchical=hierarchical,
            archive_path=None,
            permalink_pattern=pattern,
            builtin=False,
        )
    )
    dbsession.commit()


def assert_rejected(response, status, field=None):
    """A problem-details response with ``status`` that names ``field`` (when given)."""
    assert response.status_int == status
    assert response.content_type == "application/problem+json"
    assert response.json["status"] == status
    if field is not None:
        assert field in fields_of(response), response.json


@pytest.fixture
def existing(api, dbsession):
    """Some stored content, so that a half-written change would show in a snapshot."""
    author = add_author(dbsession)
    term = add_term(dbsession, "news")
    post = create_post(api, title="Taken", slug="taken", author=author, terms=[term])
    page = create_page(api, title="About", slug="about")
    return {"author": author, "term": term, "post": post["id"], "page": page["id"]}


# Create ---------------------------------------------------------------------------------


def test_create_returns_the_post_and_its_location(api):
    response = api.post_json("/api/posts", {"type": "post", "title": "Hello"}, status=201)

    post = response.json
    assert response.content_type == "application/json"
    assert response.location == f"http://localhost/api/posts/{post['id']}"
    assert api.get(response.location, status=200).json == post


def test_create_fills_in_defaults(api):
    before = datetime.now(UTC)
    post = create_post(api, title="Defaults")
    after = datetime.now(UTC)

    assert post["status"] == "draft"
    assert post["slug"] == "defaults"
    assert post["published_at"] is None
    assert before - timedelta(seconds=1) <= parse(post["modified_at"]) <= after
    assert post["password"] is None
    assert post["author"] is None
    assert post["parent"] is None
    assert post["content"] == ""
    assert post["featured_image"] is None
    assert post["images"] == []
    assert post["robots"] == "default"
    assert post["canonical"] is None
    assert post["exclude_from_sitemap"] is False
    assert post["parts"] == 1
    assert post["path"] is None
    assert post["terms"] == []


def test_create_stores_every_field(api, dbsession):
    author = add_author(dbsession)
    news, sport = add_term(dbsession, "news"), add_term(dbsession, "sport", "post_tag")
    body = {
        "type": "post",
        "title": "Everything",
        "slug": "every-thing",
        "status": "pending",
        "password": "secret",
        "author": author,
        "content": "<p>Hi <img src='/a.jpg'></p>",
        "featured_image": "https://cdn.example.com/f.jpg",
        "images": ["/uploads/b.png", "https://example.com/c.gif"],
        "published_at": "2024-01-02T03:04:05+00:00",
        "modified_at": "2024-02-03T04:05:06+00:00",
        "robots": "noindex",
        "canonical": "https://example.com/elsewhere/",
        "exclude_from_sitemap": True,
        "parts": 3,
        "language": "pt-BR",
        "translation_group": "every-4711",
        "terms": [sport, news],
    }

    post = api.post_json("/api/posts", body, status=201).json

    expected = {k: v for k, v in body.items() if k not in ("author", "terms")}
    assert {k: post[k] for k in expected} == expected
    assert post["author"] == author
    assert post["terms"] == sorted([news, sport])
    row = dbsession.get(Post, post["id"])
    assert row.password == "secret"
    assert row.modified_at == datetime(2024, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert sorted(t.id for t in row.terms) == sorted([news, sport])


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Héllo Wörld", "hello-world"),
        ("  Hello,   World!  ", "hello-world"),
        ("Ça va? 100%", "ca-va-100"),
        ("!!!", "post"),
        ("", "post"),
    ],
)
def test_create_makes_the_slug_from_the_title(api, title, slug):
    assert create_post(api, title=title)["slug"] == slug


def test_a_taken_automatic_slug_gets_a_number(api):
    slugs = [create_post(api, title="Héllo Wörld")["slug"] for _ in range(3)]

    assert slugs == ["hello-world", "hello-world-2", "hello-world-3"]


def test_automatic_slugs_are_unique_per_type(api):
    assert create_post(api, title="Contact")["slug"] == "contact"
    assert create_page(api, title="Contact")["slug"] == "contact"


def test_a_custom_type_without_title_gets_its_name_as_slug(api, dbsession):
    add_post_type(dbsession, "case_study", "/cases/{slug}/")

    assert create_post(api, type="case_study", title="")["slug"] == "case-study"


@pytest.mark.parametrize("status", ["publish", "private", "future"])
def test_dated_statuses_get_a_publication_time(api, status):
    before = datetime.now(UTC)
    post = create_post(api, status=status)
    after = datetime.now(UTC)

    published = parse(post["published_at"])
    assert before - timedelta(seconds=1) <= published <= after
    assert parse(post["modified_at"]) == published


@pytest.mark.parametrize("status", ["draft", "pending", "trash"])
def test_undated_statuses_have_no_publication_time(api, status):
    assert create_post(api, status=status)["published_at"] is None


def test_modified_at_defaults_to_the_publication_time(api):
    post = create_post(api, status="publish", published_at="2021-06-07T08:09:10Z")

    assert post["published_at"] == "2021-06-07T08:09:10+00:00"
    assert post["modified_at"] == "2021-06-07T08:09:10+00:00"


def test_times_with_an_offset_are_stored_in_utc(api, dbsession):
    post = create_post(
        api,
        status="publish",
        published_at="2024-05-01T01:30:00+05:30",
        modified_at="2024-05-01T12:00:00-04:00",
    )

    assert post["published_at"] == "2024-04-30T20:00:00+00:00"
    assert post["modified_at"] == "2024-05-01T16:00:00+00:00"
    # The permalink's month is the UTC month, not the one the client wrote.
    assert post["permalink"] == f"{SITE}/2024/04/a-post/"
    row = dbsession.get(Post, post["id"])
    assert row.published_at == datetime(2024, 4, 30, 20, 0, tzinfo=UTC)


def test_create_with_an_explicit_id(api):
    response = api.post_json("/api/posts", {"id": 500, "type": "post", "title": "Five"})

    assert response.status_int == 201
    assert response.json["id"] == 500
    assert response.location == "http://localhost/api/posts/500"
    assert api.get("/api/posts/500").json["title"] == "Five"
    # Ids handed out later do not collide with the explicit one (PostgreSQL's sequence).
    assert create_post(api, title="Next")["id"] > 500


def test_an_empty_password_is_no_password(api):
    assert create_post(api, password="")["password"] is None


def test_the_same_slug_may_be_used_by_another_type(api):
    create_post(api, slug="shared")

    assert create_page(api, slug="shared")["slug"] == "shared"


# Read -----------------------------------------------------------------------------------


def test_read_a_post(api):
    post = create_post(api, title="Read me", status="publish")

    response = api.get(f"/api/posts/{post['id']}", status=200)

    assert response.content_type == "application/json"
    assert response.json == post


def test_read_a_missing_post(api):
    response = api.get("/api/posts/12345", status=404)

    assert_rejected(response, 404)


def test_the_api_needs_a_token(testapp, api, db_snapshot):
    post = create_post(api)
    before = db_snapshot()

    testapp.get("/api/posts", status=401)
    testapp.get(f"/api/posts/{post['id']}", status=401)
    testapp.post_json("/api/posts", {"type": "post", "title": "x"}, status=401)
    testapp.patch_json(f"/api/posts/{post['id']}", {"title": "x"}, status=401)
    testapp.delete(f"/api/posts/{post['id']}", status=401)

    assert db_snapshot() == before


# Update ---------------------------------------------------------------------------------


def test_patch_changes_only_the_given_fields(api, dbsession):
    author = add_author(dbsession)
    term = add_term(dbsession, "news")
    post = create_post(
        api,
        title="Before",
        status="publish",
        author=author,
        terms=[term],
        content="<p>Body</p>",
        published_at="2024-01-01T00:00:00Z",
        canonical="https://example.com/x",
    )

    changed = api.patch_json(f"/api/posts/{post['id']}", {"title": "After"}, status=200).json

    assert changed["title"] == "After"
    untouched = set(post) - {"title", "modified_at"}
    assert {k: changed[k] for k in untouched} == {k: post[k] for k in untouched}
    assert api.get(f"/api/posts/{post['id']}").json == changed


def test_patch_bumps_modified_at(api):
    post = create_post(api, modified_at="2020-01-01T00:00:00Z")

    before = datetime.now(UTC)
    changed = api.patch_json(f"/api/posts/{post['id']}", {"content": "new"}).json
    after = datetime.now(UTC)

    assert before - timedelta(seconds=1) <= parse(changed["modified_at"]) <= after


def test_patch_keeps_an_explicit_modified_at(api):
    post = create_post(api)

    changed = api.patch_json(
        f"/api/posts/{post['id']}", {"title": "x", "modified_at": "2022-03-04T05:06:07+01:00"}
    ).json

    assert changed["modified_at"] == "2022-03-04T04:06:07+00:00"


def test_patch_normalises_the_publication_time_to_utc(api):
    post = create_post(api, status="publish", published_at="2024-01-01T00:00:00Z")

    changed = api.patch_json(
        f"/api/posts/{post['id']}", {"published_at": "2024-07-01T00:30:00+02:00"}
    ).json

    assert changed["published_at"] == "2024-06-30T22:30:00+00:00"
    assert changed["permalink"] == f"{SITE}/2024/06/a-post/"


def test_publishing_a_draft_dates_it(api):
    post = create_post(api)
    assert post["published_at"] is None

    before = datetime.now(UTC)
    changed = api.patch_json(f"/api/posts/{post['id']}", {"status": "publish"}).json

    assert changed["status"] == "publish"
    assert parse(changed["published_at"]) >= before - timedelta(seconds=1)


def test_patch_replaces_the_terms(api, dbsession):
    news, sport, tech = (add_term(dbsession, s) for s in ("news", "sport", "tech"))
    post = create_post(api, terms=[news, sport])

    changed = api.patch_json(f"/api/posts/{post['id']}", {"terms": [tech, news]}).json
    assert changed["terms"] == sorted([tech, news])

    emptied = api.patch_json(f"/api/posts/{post['id']}", {"terms": []}).json
    assert emptied["terms"] == []
    linked = dbsession.scalars(
        select(post_terms.c.term_id).where(post_terms.c.post_id == post["id"])
    )
    assert list(linked) == []


def test_patch_without_terms_keeps_them(api, dbsession):
    news = add_term(dbsession, "news")
    post = create_post(api, terms=[news])

    assert api.patch_json(f"/api/posts/{post['id']}", {"title": "x"}).json["terms"] == [news]


def test_patch_an_empty_password_removes_it(api, dbsession):
    post = create_post(api, password="secret")
    assert post["password"] == "secret"

    changed = api.patch_json(f"/api/posts/{post['id']}", {"password": ""}).json

    assert changed["password"] is None
    dbsession.expire_all()
    assert dbsession.get(Post, post["id"]).password is None


def test_patch_can_clear_nullable_fields(api, dbsession):
    author = add_author(dbsession)
    parent = create_page(api, title="Parent")
    page = create_page(
        api,
        title="Child",
        parent=parent["id"],
        author=author,
        featured_image="/f.jpg",
        canonical="https://example.com/",
        path="/somewhere/",
    )

    changed = api.patch_json(
        f"/api/posts/{page['id']}",
        {"parent": None, "author": None, "featured_image": None, "canonical": None, "path": None},
    ).json

    assert [changed[k] for k in ("parent", "author", "featured_image", "canonical", "path")] == [
        None
    ] * 5
    assert changed["permalink"] == f"{SITE}/child/"


def test_patch_may_keep_its_own_slug(api):
    post = create_post(api, slug="mine")

    assert api.patch_json(f"/api/posts/{post['id']}", {"slug": "mine"}).json["slug"] == "mine"


def test_patch_moves_a_page_under_another(api):
    about = create_page(api, title="About")
    team = create_page(api, title="Team")

    changed = api.patch_json(f"/api/posts/{team['id']}", {"parent": about["id"]}).json

    assert changed["parent"] == about["id"]
    assert changed["permalink"] == f"{SITE}/about/team/"


# Delete ---------------------------------------------------------------------------------


def test_delete_a_post(api, dbsession):
    news = add_term(dbsession, "news")
    post = create_post(api, terms=[news])

    response = api.delete(f"/api/posts/{post['id']}", status=204)

    assert response.body == b""
    api.get(f"/api/posts/{post['id']}", status=404)
    api.delete(f"/api/posts/{post['id']}", status=404)
    assert dbsession.get(Post, post["id"]) is None
    assert list(dbsession.execute(select(post_terms))) == []
    # The term itself stays.
    assert dbsession.get(Term, news) is not None


def test_delete_moves_children_to_the_parent(api, dbsession):
    about = create_page(api, title="About")
    team = create_page(api, title="Team", parent=about["id"])
    jane = create_page(api, title="Jane", parent=team["id"])
    joe = create_page(api, title="Joe", parent=team["id"])

    api.delete(f"/api/posts/{team['id']}", status=204)

    for child in (jane, joe):
        moved = api.get(f"/api/posts/{child['id']}").json
        assert moved["parent"] == about["id"]
        assert moved["permalink"] == f"{SITE}/about/{child['slug']}/"


def test_delete_a_top_level_page_makes_its_children_top_level(api):
    about = create_page(api, title="About")
    team = create_page(api, title="Team", parent=about["id"])

    api.delete(f"/api/posts/{about['id']}", status=204)

    moved = api.get(f"/api/posts/{team['id']}").json
    assert moved["parent"] is None
    assert moved["permalink"] == f"{SITE}/team/"


def test_delete_clears_the_site_settings_that_named_the_page(api, dbsession):
    home = create_page(api, title="Home")
    blog = create_page(api, title="Blog")
    other = create_page(api, title="Other")
    settings = dbsession.get(SiteSettings, 1)
    settings.front_page = "page"
    settings.front_page_id = home["id"]
    settings.posts_page_id = blog["id"]
    dbsession.commit()

    api.delete(f"/api/posts/{other['id']}", status=204)
    dbsession.expire_all()
    assert (settings.front_page_id, settings.posts_page_id) == (home["id"], blog["id"])

    api.delete(f"/api/posts/{home['id']}", status=204)
    api.delete(f"/api/posts/{blog['id']}", status=204)

    dbsession.expire_all()
    assert settings.front_page_id is None
    assert settings.posts_page_id is None
    shown = api.get("/api/settings").json
    assert (shown["front_page_id"], shown["posts_page_id"]) == (None, None)


# List -----------------------------------------------------------------------------------


def test_list_is_newest_id_first_with_defaults(api):
    ids = [create_post(api, title=f"Post {n}")["id"] for n in range(3)]

    listing = api.get("/api/posts", status=200).json

    assert [p["id"] for p in listing["items"]] == ids[::-1]
    assert (listing["page"], listing["per_page"], listing["total"]) == (1, 50, 3)
    assert listing["items"][0] == api.get(f"/api/posts/{ids[-1]}").json


def test_list_of_nothing(api):
    assert api.get("/api/posts").json == {"items": [], "page": 1, "per_page": 50, "total": 0}


def test_list_pages(api):
    ids = [create_post(api, title=f"Post {n}")["id"] for n in range(5)]
    newest_first = ids[::-1]

    pages = [api.get("/api/posts", params={"page": n, "per_page": 2}).json for n in (1, 2, 3, 4)]

    assert [[p["id"] for p in page["items"]] for page in pages] == [
        newest_first[0:2],
        newest_first[2:4],
        newest_first[4:5],
        [],
    ]
    assert {(page["per_page"], page["total"]) for page in pages} == {(2, 5)}
    assert [page["page"] for page in pages] == [1, 2, 3, 4]


def test_list_accepts_500_per_page(api):
    create_post(api)

    listing = api.get("/api/posts", params={"per_page": 500}).json

    assert (listing["per_page"], listing["total"], len(listing["items"])) == (500, 1, 1)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"per_page": 501}, "per_page"),
        ({"per_page": 0}, "per_page"),
        ({"per_page": "ten"}, "per_page"),
        ({"page": 0}, "page"),
        ({"page": "last"}, "page"),
        ({"type": "Not A Type"}, "type"),
        ({"status": "published"}, "status"),
        ({"author": "jane"}, "author"),
        ({"term": 0}, "term"),
        ({"parent": "x"}, "parent"),
        ({"modified_since": "yesterday"}, "modified_since"),
        ({"modified_since": "2024-05-01T12:00:00"}, "modified_since"),
        ({"colour": "red"}, "colour"),
    ],
    ids=lambda v: repr(v) if isinstance(v, dict) else None,
)
def test_list_rejects_bad_parameters(api, existing, db_snapshot, params, field):
    before = db_snapshot()

    response = api.get("/api/posts", params=params, status=400)

    assert_rejected(response, 400, field)
    assert db_snapshot() == before


def test_list_filters_by_type_and_status(api):
    draft = create_post(api, title="Draft")
    published = create_post(api, title="Published", status="publish")
    page = create_page(api, title="Page", status="publish")

    def ids(**params):
        return [p["id"] for p in api.get("/api/posts", params=params).json["items"]]

    assert ids(type="post") == [published["id"], draft["id"]]
    assert ids(type="page") == [page["id"]]
    assert ids(status="publish") == [page["id"], published["id"]]
    assert ids(type="post", status="draft") == [draft["id"]]
    assert ids(type="unknown_type") == []
    assert api.get("/api/posts", params={"status": "publish"}).json["total"] == 2


def test_list_filters_by_author(api, dbsession):
    jane, joe = add_author(dbsession, "jane"), add_author(dbsession, "joe")
    by_jane = create_post(api, author=jane)
    create_post(api, author=joe)
    create_post(api)

    listing = api.get("/api/posts", params={"author": jane}).json

    assert [p["id"] for p in listing["items"]] == [by_jane["id"]]
    assert listing["total"] == 1


def test_list_filters_by_term(api, dbsession):
    news, sport = add_term(dbsession, "news"), add_term(dbsession, "sport")
    both = create_post(api, terms=[news, sport])
    only_news = create_post(api, terms=[news])
    create_post(api, terms=[sport])
    create_post(api)

    listing = api.get("/api/posts", params={"term": news}).json

    assert [p["id"] for p in listing["items"]] == [only_news["id"], both["id"]]
    assert listing["total"] == 2


def test_list_filters_by_parent(api):
    about = create_page(api, title="About")
    team = create_page(api, title="Team", parent=about["id"])
    history = create_page(api, title="History", parent=about["id"])
    create_page(api, title="Grandchild", parent=team["id"])

    listing = api.get("/api/posts", params={"parent": about["id"]}).json

    assert [p["id"] for p in listing["items"]] == [history["id"], team["id"]]
    assert listing["total"] == 2


def test_list_filters_by_modification_time(api):
    create_post(api, title="Old", modified_at="2024-01-01T00:00:00Z")
    edge = create_post(api, title="Edge", modified_at="2024-03-01T10:00:00Z")
    new = create_post(api, title="New", modified_at="2024-06-01T00:00:00Z")

    def ids(since):
        listing = api.get("/api/posts", params={"modified_since": since}).json
        return [p["id"] for p in listing["items"]]

    assert ids("2024-03-01T10:00:00Z") == [new["id"], edge["id"]]
    # The same instant written with an offset: "at or after" includes the edge post.
    assert ids("2024-03-01T12:00:00+02:00") == [new["id"], edge["id"]]
    assert ids("2024-03-01T10:00:01+00:00") == [new["id"]]
    assert ids("2025-01-01T00:00:00Z") == []


# Permalinks (S-103) ---------------------------------------------------------------------


def test_post_permalink_uses_year_month_and_slug(api):
    post = create_post(
        api, title="Hello World", status="publish", published_at="2023-11-30T23:30:00Z"
    )

    assert post["permalink"] == f"{SITE}/2023/11/hello-world/"


def test_a_draft_permalink_uses_its_modification_date(api):
    post = create_post(api, title="Draft", modified_at="2019-02-03T00:00:00Z")

    assert post["permalink"] == f"{SITE}/2019/02/draft/"


def test_nested_page_permalinks_follow_the_parents(api):
    about = create_page(api, title="About")
    team = create_page(api, title="Team", parent=about["id"])
    jane = create_page(api, title="Jane Doe", parent=team["id"])

    assert about["permalink"] == f"{SITE}/about/"
    assert team["permalink"] == f"{SITE}/about/team/"
    assert jane["permalink"] == f"{SITE}/about/team/jane-doe/"


def test_renaming_a_parent_changes_the_child_permalink(api):
    about = create_page(api, title="About")
    team = create_page(api, title="Team", parent=about["id"])

    api.patch_json(f"/api/posts/{about['id']}", {"slug": "company"})

    assert api.get(f"/api/posts/{team['id']}").json["permalink"] == f"{SITE}/company/team/"


def test_an_explicit_path_wins_over_the_pattern(api):
    post = create_post(api, title="Landing", status="publish", path="/special/landing/")

    assert post["permalink"] == f"{SITE}/special/landing/"


def test_an_explicit_path_is_percent_encoded(api):
    post = create_post(api, path="/café/münchen/")

    assert post["permalink"] == f"{SITE}/caf%C3%A9/m%C3%BCnchen/"
    # Stored in normal form, so that each URL has one spelling (issue 30).
    assert post["path"] == "/caf%C3%A9/m%C3%BCnchen/"


def test_custom_post_type_pattern(api, dbsession):
    add_post_type(dbsession, "product", "/shop/{id}-{slug}/")

    post = create_post(api, type="product", title="Red Shoes", id=42)

    assert post["permalink"] == f"{SITE}/shop/42-red-shoes/"


def test_custom_post_type_with_every_pattern_field(api, dbsession):
    add_post_type(dbsession, "event", "/{type}/{year}/{month}/{day}/{slug}/")

    post = create_post(
        api, type="event", title="Launch", status="publish", published_at="2024-02-09T10:00:00Z"
    )

    assert post["permalink"] == f"{SITE}/event/2024/02/09/launch/"


def test_custom_post_type_default_pattern(api):
    api.post_json("/api/post-types", {"name": "recipe", "label": "Recipes"}, status=201)

    post = create_post(api, type="recipe", title="Apple Pie")

    assert post["permalink"] == f"{SITE}/recipe/apple-pie/"


def test_hierarchical_custom_post_type_uses_the_path(api, dbsession):
    add_post_type(dbsession, "doc", "/docs/{path}/", hierarchical=True)
    guide = create_post(api, type="doc", title="Guide")

    install = create_post(api, type="doc", title="Install", parent=guide["id"])

    assert install["permalink"] == f"{SITE}/docs/guide/install/"


def test_permalink_keeps_the_site_path_prefix(api, dbsession):
    settings = dbsession.get(SiteSettings, 1)
    settings.site_url = "https://example.com/blog"
    dbsession.commit()

    page = create_page(api, title="About")

    assert page["permalink"] == "https://example.com/blog/about/"


# Bad input (S-703): each rejected, naming the field, changing nothing ------------------

SCHEMA_PROBLEMS = {
    # wrong types
    "title not a string": ({"title": 5}, "title"),
    "title null": ({"title": None}, "title"),
    "status not a string": ({"status": 1}, "status"),
    "author a string": ({"author": "1"}, "author"),
    "parent a float": ({"parent": 1.5}, "parent"),
    "exclude_from_sitemap a string": ({"exclude_from_sitemap": "yes"}, "exclude_from_sitemap"),
    "parts a string": ({"parts": "2"}, "parts"),
    "terms not a list": ({"terms": 1}, "terms"),
    "terms item a string": ({"terms": ["news"]}, "terms/0"),
    "terms repeated": ({"terms": [1, 1]}, "terms"),
    "images not a list": ({"images": "/a.jpg"}, "images"),
    "content a list": ({"content": ["<p>"]}, "content"),
    "id a string": ({"id": "7"}, "id"),
    "id zero": ({"id": 0}, "id"),
    "id too large": ({"id": 2**31}, "id"),
    # unknown and missing fields
    "unknown field": ({"colour": "red"}, "colour"),
    "modified not a field": ({"modified": "2024-01-01T00:00:00Z"}, "modified"),
    "type missing": ({"type": ...}, "type"),
    "title missing": ({"title": ...}, "title"),
    # bad enums and patterns
    "status not in enum": ({"status": "published"}, "status"),
    "robots not in enum": ({"robots": "nofollow"}, "robots"),
    "type not a name": ({"type": "Blog Post"}, "type"),
    "slug with capitals": ({"slug": "Hello-World"}, "slug"),
    "slug with a slash": ({"slug": "a/b"}, "slug"),
    "slug empty": ({"slug": ""}, "slug"),
    # URLs and paths
    "canonical not a URL": ({"canonical": "not a url"}, "canonical"),
    "canonical relative": ({"canonical": "/about/"}, "canonical"),
    "canonical ftp": ({"canonical": "ftp://example.com/file"}, "canonical"),
    "canonical 2048 chars": ({"canonical": LONG_URL}, "canonical"),
    "canonical with a space": ({"canonical": "http://example.com/a b"}, "canonical"),
    "featured_image javascript": ({"featured_image": "javascript:alert(1)"}, "featured_image"),
    "featured_image relative": ({"featured_image": "images/a.jpg"}, "featured_image"),
    "featured_image protocol-relative": (
        {"featured_image": "//cdn.example.com/a.jpg"},
        "featured_image",
    ),
    "featured_image 2048 chars": ({"featured_image": LONG_URL}, "featured_image"),
    "featured_image a number": ({"featured_image": 1}, "featured_image"),
    "images item bad": ({"images": ["/ok.jpg", "ftp://x.test/a.jpg"]}, "images/1"),
    "path relative": ({"path": "about/"}, "path"),
    "path with a query": ({"path": "/about/?x=1"}, "path"),
    # times
    "published_at naive": ({"published_at": "2024-05-01T12:00:00"}, "published_at"),
    "modified_at naive": ({"modified_at": "2024-05-01T12:00:00"}, "modified_at"),
    "published_at a date only": ({"published_at": "2024-05-01"}, "published_at"),
    "published_at not a time": ({"published_at": "yesterday"}, "published_at"),
    "modified_at null": ({"modified_at": None}, "modified_at"),
    # limits
    "parts 0": ({"parts": 0}, "parts"),
    "parts 1001": ({"parts": 1001}, "parts"),
    "title 1001 chars": ({"title": "t" * 1001}, "title"),
    "slug 201 chars": ({"slug": "s" * 201}, "slug"),
    "password 256 chars": ({"password": "p" * 256}, "password"),
    "images 1001 items": ({"images": ["/a.jpg"] * 1001}, "images"),
}


def body_with(changes, base):
    body = {**base, **changes}
    return {k: v for k, v in body.items() if v is not ...}


@pytest.mark.parametrize(("changes", "field"), SCHEMA_PROBLEMS.values(), ids=SCHEMA_PROBLEMS)
def test_create_rejects_bad_input(api, existing, db_snapshot, changes, field):
    body = body_with(changes, {"type": "post", "title": "Fine"})
    before = db_snapshot()

    response = api.post_json("/api/posts", body, status=400)

    assert_rejected(response, 400, field)
    assert db_snapshot() == before


PATCH_SCHEMA_PROBLEMS = {
    name: case
    for name, case in SCHEMA_PROBLEMS.items()
    if case[1] not in ("type", "id") and "missing" not in name
}


@pytest.mark.parametrize(
    ("changes", "field"), PATCH_SCHEMA_PROBLEMS.values(), ids=PATCH_SCHEMA_PROBLEMS
)
def test_patch_rejects_bad_input(api, existing, db_snapshot, changes, field):
    before = db_snapshot()

    response = api.patch_json(f"/api/posts/{existing['post']}", changes, status=400)

    assert_rejected(response, 400, field)
    assert db_snapshot() == before


@pytest.mark.parametrize("field", ["type", "id", "permalink"])
def test_patch_refuses_fields_that_cannot_change(api, existing, db_snapshot, field):
    value = {"type": "page", "id": 999, "permalink": "http://sitemaps.test/x/"}[field]
    before = db_snapshot()

    response = api.patch_json(f"/api/posts/{existing['post']}", {field: value}, status=400)

    assert_rejected(response, 400, field)
    assert db_snapshot() == before


@pytest.mark.parametrize(
    "raw",
    [
        b'{"type": "post", "title": "Unclosed"',
        b"{'type': 'post'}",
        b'{"type": "post", "title": "x",}',
        b"\xff\xfe not utf-8",
        b"[" * 100_000,
    ],
    ids=["unclosed", "single quotes", "trailing comma", "not utf-8", "deeply nested"],
)
def test_malformed_json_is_rejected(api, existing, db_snapshot, raw):
    before = db_snapshot()

    created = api.post("/api/posts", raw, content_type="application/json", status=400)
    patched = api.patch(
        f"/api/posts/{existing['post']}", raw, content_type="application/json", status=400
    )

    assert_rejected(created, 400)
    assert_rejected(patched, 400)
    assert db_snapshot() == before


@pytest.mark.parametrize(
    "raw", [b"[]", b'"post"', b"null", b"42"], ids=["list", "string", "null", "number"]
)
def test_a_body_that_is_not_an_object_is_rejected(api, existing, db_snapshot, raw):
    before = db_snapshot()

    created = api.post("/api/posts", raw, content_type="application/json", status=400)
    patched = api.patch(
        f"/api/posts/{existing['post']}", raw, content_type="application/json", status=400
    )

    assert_rejected(created, 400)
    assert_rejected(patched, 400)
    assert db_snapshot() == before


def test_an_empty_body_is_rejected(api, existing, db_snapshot):
    before = db_snapshot()

    response = api.post("/api/posts", b"", content_type="application/json", status=400)

    assert_rejected(response, 400)
    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("content_type", "raw"),
    [
        ("text/plain", b'{"type": "post", "title": "x"}'),
        ("application/x-www-form-urlencoded", b"type=post&title=x"),
        ("application/xml", b"<post><type>post</type></post>"),
    ],
)
def test_a_wrong_content_type_is_rejected(api, existing, db_snapshot, content_type, raw):
    before = db_snapshot()

    created = api.post("/api/posts", raw, content_type=content_type, status=415)
    patched = api.patch(
        f"/api/posts/{existing['post']}", raw, content_type=content_type, status=415
    )

    assert_rejected(created, 415)
    assert_rejected(patched, 415)
    assert db_snapshot() == before


# Rules the database knows about: unknown references, conflicts, cycles ----------------


def test_unknown_type(api, existing, db_snapshot):
    before = db_snapshot()

    response = api.post_json("/api/posts", {"type": "recipe", "title": "Pie"}, status=422)

    assert_rejected(response, 422, "type")
    assert db_snapshot() == before


@pytest.mark.parametrize("method", ["post", "patch"])
def test_unknown_author(api, existing, db_snapshot, method):
    before = db_snapshot()

    response = send(api, method, existing, {"author": 999}, status=422)

    assert_rejected(response, 422, "author")
    assert db_snapshot() == before


@pytest.mark.parametrize("method", ["post", "patch"])
def test_unknown_term_is_named_by_position(api, existing, db_snapshot, method):
    before = db_snapshot()

    response = send(api, method, existing, {"terms": [existing["term"], 998, 999]}, status=422)

    assert_rejected(response, 422)
    assert fields_of(response) == ["terms/1", "terms/2"]
    assert db_snapshot() == before


def send(api, method, existing, changes, status):
    """Create a post with ``changes``, or apply them to the existing one."""
    if method == "post":
        body = {"type": "post", "title": "New", **changes}
        return api.post_json("/api/posts", body, status=status)
    return api.patch_json(f"/api/posts/{existing['post']}", changes, status=status)


@pytest.mark.parametrize("method", ["post", "patch"])
def test_unknown_parent(api, existing, db_snapshot, method):
    before = db_snapshot()

    if method == "post":
        body = {"type": "page", "title": "Orphan", "parent": 999}
        response = api.post_json("/api/posts", body, status=422)
    else:
        response = api.patch_json(f"/api/posts/{existing['page']}", {"parent": 999}, status=422)

    assert_rejected(response, 422, "parent")
    assert db_snapshot() == before


@pytest.mark.parametrize("method", ["post", "patch"])
def test_parent_on_a_type_that_is_not_hierarchical(api, existing, db_snapshot, method):
    other = create_post(api, title="Other")["id"]
    before = db_snapshot()

    response = send(api, method, existing, {"parent": other}, status=422)

    assert_rejected(response, 422, "parent")
    assert db_snapshot() == before


@pytest.mark.parametrize("method", ["post", "patch"])
def test_parent_of_another_type(api, existing, db_snapshot, method):
    before = db_snapshot()

    if method == "post":
        body = {"type": "page", "title": "Child", "parent": existing["post"]}
        response = api.post_json("/api/posts", body, status=422)
    else:
        response = api.patch_json(
            f"/api/posts/{existing['page']}", {"parent": existing["post"]}, status=422
        )

    assert_rejected(response, 422, "parent")
    assert db_snapshot() == before


def test_a_page_cannot_become_the_child_of_its_own_child(api, db_snapshot):
    top = create_page(api, title="Top")
    middle = create_page(api, title="Middle", parent=top["id"])
    bottom = create_page(api, title="Bottom", parent=middle["id"])
    before = db_snapshot()

    for descendant in (middle, bottom):
        response = api.patch_json(
            f"/api/posts/{top['id']}", {"parent": descendant["id"]}, status=422
        )
        assert_rejected(response, 422, "parent")

    assert db_snapshot() == before
    assert api.get(f"/api/posts/{top['id']}").json["parent"] is None


def test_a_page_cannot_be_its_own_parent(api, existing, db_snapshot):
    before = db_snapshot()

    response = api.patch_json(
        f"/api/posts/{existing['page']}", {"parent": existing["page"]}, status=422
    )

    assert_rejected(response, 422, "parent")
    assert db_snapshot() == before


@pytest.mark.parametrize("method", ["post", "patch"])
def test_duplicate_slug(api, existing, db_snapshot, method):
    if method == "patch":
        existing = {**existing, "post": create_post(api, title="Other")["id"]}
    before = db_snapshot()

    response = send(api, method, existing, {"slug": "taken"}, status=409)

    assert_rejected(response, 409, "slug")
    assert db_snapshot() == before


def test_a_rejected_patch_keeps_none_of_its_changes(api, existing, db_snapshot):
    other = create_post(api, title="Other")
    before = db_snapshot()

    # Author and title are valid; the slug is taken: nothing may be kept.
    response = api.patch_json(
        f"/api/posts/{other['id']}",
        {"title": "Changed", "author": existing["author"], "slug": "taken"},
        status=409,
    )

    assert_rejected(response, 409, "slug")
    assert db_snapshot() == before
    assert api.get(f"/api/posts/{other['id']}").json == other


def test_id_already_taken(api, existing, db_snapshot):
    before = db_snapshot()

    response = api.post_json(
        "/api/posts", {"id": existing["page"], "type": "post", "title": "Clash"}, status=409
    )

    assert_rejected(response, 409, "id")
    assert db_snapshot() == before


# The id in the URL ----------------------------------------------------------------------


@pytest.mark.parametrize("post_id", ["abc", "1.5", "0", "-1", "2147483648"])
@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_a_bad_id_in_the_url(api, existing, db_snapshot, method, post_id):
    before = db_snapshot()

    if method == "patch":
        response = api.patch_json(f"/api/posts/{post_id}", {"title": "x"}, status=400)
    else:
        response = getattr(api, method)(f"/api/posts/{post_id}", status=400)

    assert_rejected(response, 400, "id")
    assert db_snapshot() == before


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_a_missing_post(api, existing, db_snapshot, method):
    before = db_snapshot()

    if method == "patch":
        response = api.patch_json("/api/posts/999", {"title": "x"}, status=404)
    else:
        response = getattr(api, method)("/api/posts/999", status=404)

    assert_rejected(response, 404)
    assert db_snapshot() == before


def test_a_method_the_collection_does_not_take(api, existing, db_snapshot):
    before = db_snapshot()

    response = api.delete("/api/posts", status=405)

    assert_rejected(response, 405)
    assert response.headers["Allow"] == "GET, POST"
    assert db_snapshot() == before
