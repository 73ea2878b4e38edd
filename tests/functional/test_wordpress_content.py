"""WordPress-shaped content comes in as WordPress keeps it (issue 30).

Unicode slugs are stored decoded and in NFC, and percent-encoded (UTF-8, upper-case hex)
in every URL: the API's permalink, ``<loc>``, hreflang alternates and ``explain``. A slug
made from a title is WordPress's: tags and entities out, other scripts' letters kept.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

import pytest

from sitemap_server.testing import SITE_URL, assert_problem, fetch_sitemap, url_locs

JAN = "2024-01-15T10:00:00+00:00"
NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "xhtml": "http://www.w3.org/1999/xhtml"}


def page(api, **fields):
    """A published page; ``slug=None`` leaves the slug to be made from the title."""
    body = {"type": "page", "status": "publish", "published_at": JAN, "title": "Page", **fields}
    body = {name: value for name, value in body.items() if value is not None or name != "slug"}
    return api.post_json("/api/posts", body, status=201).json


@pytest.mark.parametrize("slug", ["über-uns", "日本語のページ", "привет-мир", "café_2"])
def test_a_unicode_slug_is_kept_as_text_and_percent_encoded_in_urls(api, testapp, slug):
    made = page(api, slug=slug)
    assert made["slug"] == slug
    assert made["permalink"] == f"{SITE_URL}/{quote(slug)}/"
    assert made["permalink"] in url_locs(testapp, "/page-sitemap.xml")
    assert api.get(f"/api/posts/{made['id']}").json["slug"] == slug
    # explain finds it by the encoded URL and by the IRI a person would paste.
    for url in (made["permalink"], f"{SITE_URL}/{slug}/"):
        found = api.get("/api/explain", params={"url": url}, status=200).json
        assert (found["subject"]["kind"], found["subject"]["id"]) == ("post", made["id"])
        assert (found["url"], found["listed"]) == (made["permalink"], True)


def test_a_slug_given_decomposed_is_stored_composed(api):
    decomposed = unicodedata.normalize("NFD", "über-uns")
    assert decomposed != "über-uns"
    made = page(api, slug=decomposed)
    assert made["slug"] == "über-uns"
    # ... and is then the same slug as the composed one.
    response = api.post_json(
        "/api/posts",
        {"type": "page", "title": "Again", "slug": "über-uns"},
        expect_errors=True,
    )
    assert_problem(response, 409, "slug")


@pytest.mark.parametrize("slug", ["Über-uns", "über uns", "-über", "über/uns", "über%20uns", "🙂"])
def test_a_slug_that_is_not_one_is_a_400_naming_it(api, db_snapshot, slug):
    before = db_snapshot()
    body = {"type": "page", "title": "Page", "slug": slug}
    response = api.post_json("/api/posts", body, expect_errors=True)
    problem = assert_problem(response, 400, "slug")
    assert "lower-case letters of any script" in problem["errors"][0]["message"]
    assert db_snapshot() == before


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("日本語のページ", "日本語のページ"),
        ("Tricky <b>bold</b>", "tricky-bold"),
        ("Über uns", "uber-uns"),
        ("Fish &amp; Chips", "fish-chips"),
    ],
)
def test_a_slug_made_from_a_title_is_wordpresss(api, title, slug):
    assert page(api, title=title)["slug"] == slug


def test_terms_and_authors_take_unicode_slugs_too(api, testapp):
    author = api.post_json("/api/authors", {"slug": "józef", "name": "Józef"}, status=201).json
    term = api.post_json(
        "/api/terms", {"taxonomy": "category", "name": "Reisen", "slug": "straßen"}, status=201
    ).json
    post = {"type": "post", "status": "publish", "published_at": JAN, "title": "Weg"}
    api.post_json("/api/posts", {**post, "author": author["id"], "terms": [term["id"]]})
    assert f"{SITE_URL}/author/j%C3%B3zef/" in url_locs(testapp, "/author-sitemap.xml")
    assert f"{SITE_URL}/category/stra%C3%9Fen/" in url_locs(testapp, "/category-sitemap.xml")
    assert term["url"] == f"{SITE_URL}/category/stra%C3%9Fen/"


def test_hreflang_alternates_carry_the_encoded_urls(api, testapp):
    api.patch_json("/api/settings", {"languages": ["de", "ja"]}, status=200)
    de = page(api, slug="über-uns", language="de", translation_group="about")
    ja = page(api, slug="私たちについて", language="ja", translation_group="about")
    root = fetch_sitemap(testapp, "/page-sitemap.xml")
    links = {
        url.findtext("s:loc", namespaces=NS): sorted(
            (link.get("hreflang"), link.get("href")) for link in url.iterfind("xhtml:link", NS)
        )
        for url in root.iterfind("s:url", NS)
    }
    expected = sorted([("de", de["permalink"]), ("ja", ja["permalink"])])
    assert [href for _, href in expected] == sorted(
        [f"{SITE_URL}/%C3%BCber-uns/", f"{SITE_URL}/{quote('私たちについて')}/"]
    )
    assert links[de["permalink"]][:2] == expected or set(expected) <= set(links[de["permalink"]])


# Slugs unique among siblings (WordPress's rule for hierarchical types) -----------------


def test_pages_under_different_parents_may_share_a_slug(api, testapp):
    about, services = page(api, slug="about"), page(api, slug="services")
    team = [page(api, slug="team", parent=parent["id"]) for parent in (about, services)]
    assert [p["permalink"] for p in team] == [
        f"{SITE_URL}/about/team/",
        f"{SITE_URL}/services/team/",
    ]
    assert {p["permalink"] for p in team} <= set(url_locs(testapp, "/page-sitemap.xml"))
    # A slug made from a title is also free under another parent: no "-2".
    made = page(api, title="Team", parent=services["id"], slug=None)
    assert made["slug"] == "team-2"  # under services, where "team" is taken
    assert page(api, title="Team")["slug"] == "team"  # at the top, where it is free


def test_a_slug_taken_among_siblings_is_a_409_that_changes_nothing(api, db_snapshot):
    about = page(api, slug="about")
    page(api, slug="team", parent=about["id"])
    before = db_snapshot()
    for body in ({"slug": "team", "parent": about["id"]}, {"slug": "about"}):
        response = api.post_json(
            "/api/posts", {"type": "page", "title": "T", **body}, expect_errors=True
        )
        assert "already taken" in assert_problem(response, 409, "slug")["detail"]
    assert db_snapshot() == before


def test_a_move_under_a_parent_with_a_child_of_that_slug_is_a_409(api, testapp, db_snapshot):
    about, services = page(api, slug="about"), page(api, slug="services")
    page(api, slug="team", parent=about["id"])
    moving = page(api, slug="team", parent=services["id"])
    before = db_snapshot()
    response = api.patch_json(
        f"/api/posts/{moving['id']}", {"parent": about["id"]}, expect_errors=True
    )
    assert "already taken" in assert_problem(response, 409, "parent")["detail"]
    # To the top, where no "team" is, it may go.
    assert db_snapshot() == before
    moved = api.patch_json(f"/api/posts/{moving['id']}", {"parent": None}, status=200).json
    assert moved["permalink"] == f"{SITE_URL}/team/"
    assert moved["permalink"] in url_locs(testapp, "/page-sitemap.xml")


def test_a_type_that_is_not_hierarchical_keeps_slugs_unique_in_it(api):
    post = {"type": "post", "title": "Hello", "slug": "hello"}
    api.post_json("/api/posts", post, status=201)
    assert_problem(api.post_json("/api/posts", post, expect_errors=True), 409, "slug")


def test_an_import_brings_pages_of_one_slug_under_different_parents(api, testapp):
    import json

    lines = [
        {"post": {"id": 501, "type": "page", "title": "About", "status": "publish"}},
        {"post": {"id": 502, "type": "page", "title": "Services", "status": "publish"}},
        {"post": {"type": "page", "title": "Team", "parent": 501, "status": "publish"}},
        {"post": {"type": "page", "title": "Team", "parent": 502, "status": "publish"}},
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    api.post("/api/import", body, content_type="application/x-ndjson", status=200)
    locs = url_locs(testapp, "/page-sitemap.xml")
    assert {f"{SITE_URL}/about/team/", f"{SITE_URL}/services/team/"} <= set(locs)
