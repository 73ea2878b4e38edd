"""Multilingual sitemaps (S-405): the listed members of a translation group name each other.

A post (of any type) or a term carries a language and a translation group; in its
``<url>`` each listed member of its group gets an ``<xhtml:link rel="alternate"
hreflang="..." href="..."/>``, itself included, then ``x-default``. A member that is not
listed (a draft, noindexed, with a foreign canonical) is in nobody's alternates, so the
annotations are always reciprocal. Every document is validated against the XSDs (with the
XHTML link declared) by ``fetch_sitemap``.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_server.sitemaps.check import check
from sitemap_server.testing import SITE_URL, SITEMAP_NS, assert_problem, fetch_sitemap

XHTML = "http://www.w3.org/1999/xhtml"
NS = {"s": SITEMAP_NS, "xhtml": XHTML}


def page(api, slug, language, group="about", **fields):
    body = {
        "type": "page",
        "title": slug.title(),
        "slug": slug,
        "status": "publish",
        "published_at": "2024-05-01T10:00:00+00:00",
        "language": language,
        "translation_group": group,
        **fields,
    }
    return api.post_json("/api/posts", body, status=201).json


def alternates(testapp, path="/page-sitemap.xml"):
    """{loc: [(hreflang, href), ...]} of a document, parsed and validated."""
    root = fetch_sitemap(testapp, path)
    return {
        url.findtext("s:loc", namespaces=NS): [
            (link.get("hreflang"), link.get("href"))
            for link in url.iterfind("xhtml:link", NS)
            if link.get("rel") == "alternate"
        ]
        for url in root.iterfind("s:url", NS)
    }


def assert_reciprocal(found):
    """Every URL with alternates is among its own, and each alternate lists the same."""
    for loc, links in found.items():
        if not links:
            continue
        hrefs = {href for hreflang, href in links if hreflang != "x-default"}
        assert loc in hrefs, (loc, links)
        for href in hrefs:
            assert found.get(href) == links, (loc, href)


def test_each_member_names_every_member_itself_included_and_x_default(api, testapp):
    en = page(api, "about", "en")
    de = page(api, "ueber-uns", "de")
    br = page(api, "sobre", "pt-BR")
    found = alternates(testapp)
    want = [
        ("de", de["permalink"]),
        ("en", en["permalink"]),
        ("pt-BR", br["permalink"]),
        ("x-default", en["permalink"]),  # the site's language
    ]
    for post in (en, de, br):
        assert found[post["permalink"]] == want
    assert_reciprocal(found)


def test_a_new_member_is_named_by_the_members_already_served(api, testapp):
    en = page(api, "about", "en")
    assert alternates(testapp)[en["permalink"]] == []
    de = page(api, "ueber-uns", "de")
    assert alternates(testapp)[en["permalink"]] == [
        ("de", de["permalink"]),
        ("en", en["permalink"]),
        ("x-default", en["permalink"]),
    ]
    excluded = page(api, "a-propos", "fr")
    api.patch_json("/api/settings", {"excluded_post_ids": [excluded["id"]]}, status=200)
    found = alternates(testapp)
    assert [h for h, _ in found[en["permalink"]]] == ["de", "en", "x-default"]
    assert_reciprocal(found)


def test_the_document_declares_the_xhtml_namespace(api, testapp):
    page(api, "about", "en")
    page(api, "ueber-uns", "de")
    body = testapp.get("/page-sitemap.xml").text
    assert f'xmlns:xhtml="{XHTML}"' in body
    assert '<xhtml:link rel="alternate" hreflang="de" href="' in body


def test_the_page_for_people_shows_each_rows_translations(api, testapp):
    from lxml import html

    en = page(api, "about", "en")
    de = page(api, "ueber-uns", "de")
    solo = page(api, "alone", "fr", group="alone")
    doc = html.fromstring(testapp.get("/sitemaps/page-sitemap.html", status=200).body)
    rows = {
        row.xpath("string(td[@class='url']/a/@href)"): [
            (a.text, a.get("href")) for a in row.xpath("td[@class='translations']/a")
        ]
        for row in doc.xpath("//table[@id='urls']/tbody/tr")
    }
    links = [("de", de["permalink"]), ("en", en["permalink"]), ("x-default", en["permalink"])]
    assert rows[en["permalink"]] == rows[de["permalink"]] == links
    assert rows[solo["permalink"]] == []
    assert doc.xpath("string(//table[@id='urls']/thead/tr/th[2])") == "Translations"


def test_a_member_that_is_not_listed_is_in_nobodys_alternates(api, testapp):
    en = page(api, "about", "en")
    de = page(api, "ueber-uns", "de")
    fr = page(api, "a-propos", "fr", status="draft")
    es = page(api, "acerca", "es", robots="noindex")
    it = page(api, "chi-siamo", "it", canonical="https://elsewhere.example/chi-siamo/")
    found = alternates(testapp)
    assert set(found) >= {en["permalink"], de["permalink"]}
    for post in (fr, es, it):
        assert post["permalink"] not in found
    assert [h for h, _ in found[en["permalink"]]] == ["de", "en", "x-default"]
    assert_reciprocal(found)
    # Published, it joins everyone's alternates.
    api.patch_json(f"/api/posts/{fr['id']}", {"status": "publish"}, status=200)
    found = alternates(testapp)
    assert [h for h, _ in found[en["permalink"]]] == ["de", "en", "fr", "x-default"]
    assert_reciprocal(found)


def test_a_group_with_one_listed_member_has_no_alternates(api, testapp):
    en = page(api, "about", "en")
    de = page(api, "ueber-uns", "de")
    api.patch_json(f"/api/posts/{de['id']}", {"status": "draft"}, status=200)
    assert alternates(testapp)[en["permalink"]] == []


def test_a_new_url_of_one_member_moves_its_link_in_every_member(api, testapp):
    en = page(api, "about", "en")
    de = page(api, "ueber-uns", "de")
    moved = api.patch_json(f"/api/posts/{de['id']}", {"slug": "wir"}, status=200).json
    found = alternates(testapp)
    assert ("de", moved["permalink"]) in found[en["permalink"]]
    assert de["permalink"] not in found
    assert_reciprocal(found)


def test_leaving_a_group_and_joining_another_updates_both(api, testapp):
    en = page(api, "about", "en")
    de = page(api, "ueber-uns", "de")
    contact = page(api, "contact", "en", group="contact")
    kontakt = page(api, "kontakt", "fr", group="contact")
    api.patch_json(f"/api/posts/{de['id']}", {"translation_group": "contact"}, status=200)
    found = alternates(testapp)
    assert found[en["permalink"]] == []
    assert [h for h, _ in found[contact["permalink"]]] == ["de", "en", "fr", "x-default"]
    assert ("de", de["permalink"]) in found[kontakt["permalink"]]
    assert_reciprocal(found)


def test_deleting_a_member_removes_it_from_the_others(api, testapp):
    en = page(api, "about", "en")
    de = page(api, "ueber-uns", "de")
    fr = page(api, "a-propos", "fr")
    api.delete(f"/api/posts/{fr['id']}", status=204)
    found = alternates(testapp)
    assert [h for h, _ in found[en["permalink"]]] == ["de", "en", "x-default"]
    assert [h for h, _ in found[de["permalink"]]] == ["de", "en", "x-default"]


def test_x_default_follows_the_setting_and_needs_a_listed_member(api, testapp):
    en = page(api, "about", "en")
    de = page(api, "ueber-uns", "de")
    api.patch_json("/api/settings", {"languages": ["en", "de"], "x_default_language": "de"})
    assert alternates(testapp)[en["permalink"]][-1] == ("x-default", de["permalink"])
    api.patch_json(f"/api/posts/{de['id']}", {"robots": "noindex"}, status=200)
    assert alternates(testapp)[en["permalink"]] == []  # one listed member: no set at all
    api.patch_json("/api/settings", {"languages": [], "x_default_language": "fr"})
    api.patch_json(f"/api/posts/{de['id']}", {"robots": "default"}, status=200)
    assert [h for h, _ in alternates(testapp)[en["permalink"]]] == ["de", "en"]  # no fr


def test_posts_of_another_type_are_another_group(api, testapp):
    page(api, "about", "en")
    other = api.post_json(
        "/api/posts",
        {
            "type": "post",
            "title": "Hallo",
            "status": "publish",
            "language": "de",
            "translation_group": "about",
        },
        status=201,
    ).json
    assert alternates(testapp, "/post-sitemap.xml")[other["permalink"]] == []


def test_terms_of_a_group_name_each_other(api, testapp):
    def term(name, language):
        created = api.post_json(
            "/api/terms",
            {"taxonomy": "category", "name": name, "language": language, "translation_group": "n"},
            status=201,
        ).json
        api.post_json(
            "/api/posts",
            {"type": "post", "title": name, "status": "publish", "terms": [created["id"]]},
            status=201,
        )
        return created

    news = term("News", "en")
    neues = term("Neues", "de")
    found = alternates(testapp, "/category-sitemap.xml")
    want = [("de", neues["url"]), ("en", news["url"]), ("x-default", news["url"])]
    assert found[news["url"]] == want and found[neues["url"]] == want
    api.patch_json(f"/api/terms/{neues['id']}", {"noindex": True}, status=200)
    assert alternates(testapp, "/category-sitemap.xml")[news["url"]] == []


# Bad input ------------------------------------------------------------------------------


def test_bad_languages_and_groups_are_refused_naming_the_field(api, db_snapshot):
    en = page(api, "about", "en")
    before = db_snapshot()
    for body, field, status in (
        ({"language": "english"}, "language", 400),
        ({"language": "EN"}, "language", 400),
        ({"language": "pt_BR"}, "language", 400),
        ({"language": "en-" + "x" * 40}, "language", 400),
        ({"translation_group": "no spaces"}, "translation_group", 400),
        ({"translation_group": "g" * 65}, "translation_group", 400),
        ({"language": None}, "language", 422),  # still in a group
        ({"language": "de", "translation_group": 7}, "translation_group", 400),
    ):
        response = api.patch_json(f"/api/posts/{en['id']}", body, status=status)
        assert_problem(response, status, field)
    assert db_snapshot() == before


def test_two_posts_of_one_language_in_a_group_is_a_conflict(api, db_snapshot):
    page(api, "about", "en")
    before = db_snapshot()
    response = api.post_json(
        "/api/posts",
        {"type": "page", "title": "Again", "language": "en", "translation_group": "about"},
        status=409,
    )
    assert_problem(response, 409, "translation_group")
    assert db_snapshot() == before


def test_a_language_the_site_does_not_name_is_refused(api, db_snapshot):
    api.patch_json("/api/settings", {"languages": ["en", "de"]}, status=200)
    before = db_snapshot()
    response = api.post_json(
        "/api/posts", {"type": "page", "title": "Salut", "language": "fr"}, status=422
    )
    assert_problem(response, 422, "language")
    response = api.patch_json("/api/settings", {"x_default_language": "fr"}, status=422)
    assert_problem(response, 422, "x_default_language")
    response = api.patch_json("/api/settings", {"languages": ["en", "EN!"]}, status=400)
    assert_problem(response, 400, "languages/1")
    assert db_snapshot() == before


def test_an_edit_that_leaves_the_language_alone_is_not_refused_for_it(api):
    """The site dropped a language its posts and terms still carry: editing something
    else of them still works (only a PATCH naming a language or group is checked)."""
    api.patch_json("/api/settings", {"languages": ["en", "fr"]}, status=200)
    salut = page(api, "salut", "fr")
    term = api.post_json(
        "/api/terms", {"taxonomy": "category", "name": "Voyage", "language": "fr"}, status=201
    ).json
    api.patch_json("/api/settings", {"languages": ["en"]}, status=200)
    edited = api.patch_json(f"/api/posts/{salut['id']}", {"title": "Bonjour"}, status=200).json
    assert (edited["title"], edited["language"]) == ("Bonjour", "fr")
    api.patch_json(f"/api/terms/{term['id']}", {"name": "Voyages"}, status=200)
    response = api.patch_json(f"/api/posts/{salut['id']}", {"language": "fr"}, status=422)
    assert_problem(response, 422, "language")


def test_an_import_carries_languages_and_groups(api, testapp):
    import json

    lines = [
        {"post": {"type": "page", "title": "A", "slug": "a", "status": "publish",
                  "language": "en", "translation_group": "a"}},
        {"post": {"type": "page", "title": "B", "slug": "b", "status": "publish",
                  "language": "de", "translation_group": "a"}},
    ]  # fmt: skip
    api.post("/api/import", "\n".join(map(json.dumps, lines)),
             content_type="application/x-ndjson", status=200)  # fmt: skip
    found = alternates(testapp)
    assert [h for h, _ in found[f"{SITE_URL}/a/"]] == ["de", "en", "x-default"]
    again = {"post": {"type": "page", "title": "C", "language": "de", "translation_group": "a"}}
    response = api.post(
        "/api/import", json.dumps(again), content_type="application/x-ndjson", expect_errors=True
    )
    assert response.status_int in (400, 409)
    assert "translation_group" in response.text


# Any sequence of edits: reciprocal, and what a rebuild makes -------------------------------

LANGUAGES = ["en", "de", "fr"]
edits = st.lists(
    st.tuples(
        st.integers(0, 3),  # which of four pages
        st.sampled_from(["status", "robots", "group", "language", "slug"]),
        st.integers(0, 5),
    ),
    min_size=1,
    max_size=12,
)
RUNS = itertools.count()


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(edits=edits)
def test_any_edits_leave_reciprocal_alternates_equal_to_a_rebuild(api, testapp, app_session, edits):
    # Each example has pages and groups of its own (the database is not reset between
    # examples): all of them stay reciprocal and as a rebuild makes them.
    run = next(RUNS)
    groups = [f"r{run}-a", f"r{run}-b", None]
    ids = [page(api, f"r{run}-{n}", LANGUAGES[n % 3], groups[n % 2])["id"] for n in range(4)]
    for which, field, value in edits:
        body = {
            "status": {"status": ["publish", "draft"][value % 2]},
            "robots": {"robots": ["default", "noindex"][value % 2]},
            "group": {"translation_group": groups[value % 3]},
            "language": {"language": LANGUAGES[value % 3]},
            "slug": {"slug": f"r{run}-{which}-{value}"},
        }[field]
        if field == "group" and body["translation_group"] is None:
            body["language"] = None
        api.patch_json(f"/api/posts/{ids[which]}", body, expect_errors=True)
        assert_reciprocal(alternates(testapp))  # served after each edit
    with app_session.begin():
        report = check(app_session)
    assert report.differences == []
