"""Two of Yoast's site settings: the author sitemap switched off, and the list of excluded
posts (S-106, S-201, S-202, S-203, S-402, S-406).

Written through the admin API (``api``) and read as a crawler would (``testapp``, parsed
and validated); after each change the stored sitemaps equal a rebuild (``check``) and the
plain reference (``tests/reference.py``).
"""

from __future__ import annotations

import pytest
from reference import differences, expected, served
from sqlalchemy import select

from sitemap_server.models import SitemapEntry, SitemapPage, SitemapVersion
from sitemap_server.models.meta import utcnow
from sitemap_server.models.site import MAX_EXCLUDED_POSTS
from sitemap_server.sitemaps.check import check
from sitemap_server.testing import (
    SITE_URL,
    SITEMAP_NS,
    assert_not_found,
    assert_problem,
    fetch_sitemap,
    index_locs,
    url_locs,
)

NS = {"s": SITEMAP_NS}
AUTHOR_SITEMAP = f"{SITE_URL}/author-sitemap.xml"
OLD = "2024-01-10T12:00:00+00:00"
NEW = "2024-06-01T08:00:00+00:00"


# Helpers --------------------------------------------------------------------------------


def create_author(api, slug):
    return api.post_json("/api/authors", {"slug": slug, "name": slug.title()}, status=201).json


def create_post(api, title, date=OLD, **fields):
    body = {
        "type": "post",
        "title": title,
        "status": "publish",
        "published_at": date,
        "modified_at": date,
        **fields,
    }
    return api.post_json("/api/posts", body, status=201).json


def settings(api, **change):
    return api.patch_json("/api/settings", change, status=200).json


def lastmods(testapp, path):
    """{loc: lastmod} of the sitemap at ``path``."""
    root = fetch_sitemap(testapp, path)
    return {
        url.findtext("s:loc", namespaces=NS): url.findtext("s:lastmod", namespaces=NS)
        for url in root.iterfind("s:url", NS)
    }


def assert_consistent(app_session, testapp):
    """S-406: the stored sitemaps equal a rebuild, and what is served equals the reference."""
    testapp.get("/sitemap_index.xml")  # applies the change log (max_staleness is 0)
    with app_session.begin():
        assert check(app_session).differences == []
        want = expected(app_session, SITE_URL, utcnow())
    assert differences(want, served(testapp, SITE_URL)) == []


def explain(api, **query):
    return api.get("/api/explain", params=query, status=200).json


def rules(explanation):
    return [reason["rule"] for reason in explanation["reasons"]]


@pytest.fixture
def site(api):
    """Two authors: ``solo`` writes one post (the newest, tagged), ``jane`` an older one in
    the same tag, and a page."""
    solo, jane = create_author(api, "solo"), create_author(api, "jane")
    tag = api.post_json("/api/terms", {"taxonomy": "post_tag", "name": "Food"}, status=201).json
    newest = create_post(api, "Newest", NEW, author=solo["id"], terms=[tag["id"]])
    older = create_post(api, "Older", OLD, author=jane["id"], terms=[tag["id"]])
    page = create_post(api, "About", OLD, type="page")
    return {"solo": solo, "jane": jane, "tag": tag, "newest": newest, "older": older, "page": page}


# The author sitemap, off and on again -----------------------------------------------------


def test_the_author_sitemap_is_on_by_default(api, site, testapp):
    assert api.get("/api/settings").json["author_sitemap"] is True
    assert AUTHOR_SITEMAP in index_locs(testapp)
    assert url_locs(testapp, "/author-sitemap.xml") == [site["solo"]["url"], site["jane"]["url"]]


def test_turned_off_the_author_sitemap_answers_404_and_leaves_the_index(
    api, site, testapp, app_session
):
    index_before = index_locs(testapp)

    assert settings(api, author_sitemap=False)["author_sitemap"] is False

    assert_not_found(testapp, "/author-sitemap.xml")
    assert_not_found(testapp, "/author-sitemap2.xml")
    locs = index_locs(testapp)  # still a valid index (parsed and checked against the XSDs)
    assert locs == [loc for loc in index_before if loc != AUTHOR_SITEMAP]
    assert f"{SITE_URL}/post-sitemap.xml" in locs
    # Nothing of it is stored any more, as a rebuild would leave it.
    with app_session.begin():
        for table in (SitemapEntry, SitemapPage, SitemapVersion):
            assert app_session.scalars(select(table).where(table.provider == "author")).all() == []
    assert_consistent(app_session, testapp)


def test_turned_on_again_the_author_sitemap_is_back_as_it_was(api, site, testapp, app_session):
    before = lastmods(testapp, "/author-sitemap.xml")
    settings(api, author_sitemap=False)
    assert_not_found(testapp, "/author-sitemap.xml")

    settings(api, author_sitemap=True)

    assert AUTHOR_SITEMAP in index_locs(testapp)
    assert lastmods(testapp, "/author-sitemap.xml") == before
    assert_consistent(app_session, testapp)


def test_writes_while_the_author_sitemap_is_off_are_in_it_when_it_is_on(
    api, site, testapp, app_session
):
    settings(api, author_sitemap=False)
    late = create_author(api, "late")
    create_post(api, "Late", NEW, author=late["id"])
    api.patch_json(f"/api/authors/{site['jane']['id']}", {"noindex": True})
    assert_not_found(testapp, "/author-sitemap.xml")
    assert_consistent(app_session, testapp)

    settings(api, author_sitemap=True)

    assert url_locs(testapp, "/author-sitemap.xml") == [site["solo"]["url"], late["url"]]
    assert_consistent(app_session, testapp)


def test_explain_says_the_author_sitemap_is_off(api, site, testapp, cli):
    settings(api, author_sitemap=False)

    by_id = explain(api, author=site["solo"]["id"])
    by_url = explain(api, url=site["solo"]["url"])
    for explanation in (by_id, by_url):
        assert explanation["listed"] is False
        assert rules(explanation) == ["author_sitemap"]
        assert explanation["reasons"][0]["requirement"] == "S-202"
    document = explain(api, url=AUTHOR_SITEMAP)
    assert document["subject"]["sitemap"] == "author"
    assert (document["listed"], rules(document)) == (False, ["author_sitemap"])
    status, out, _err = cli("explain", "author", site["solo"]["id"])
    assert status == 1
    assert "S-202 author_sitemap: the site settings turn the author sitemap off" in out


# Excluded posts ---------------------------------------------------------------------------


def test_an_excluded_post_leaves_its_sitemap_its_author_and_its_terms_dates(
    api, site, testapp, app_session
):
    tag_url = site["tag"]["url"]
    assert lastmods(testapp, "/post_tag-sitemap.xml")[tag_url].startswith("2024-06-01")

    changed = settings(api, excluded_post_ids=[site["newest"]["id"]])

    assert changed["excluded_post_ids"] == [site["newest"]["id"]]
    posts = lastmods(testapp, "/post-sitemap.xml")
    assert site["newest"]["permalink"] not in posts
    assert site["older"]["permalink"] in posts
    # The home page (first in the post sitemap) is dated by the newest listed post.
    assert posts[f"{SITE_URL}/"] == OLD
    # Its author had no other post: no longer listed (S-202).
    assert url_locs(testapp, "/author-sitemap.xml") == [site["jane"]["url"]]
    # The tag is dated by its listed posts only (S-402).
    assert lastmods(testapp, "/post_tag-sitemap.xml")[tag_url] == OLD
    assert_consistent(app_session, testapp)


def test_a_post_taken_off_the_list_is_listed_again(api, site, testapp, app_session):
    before = {
        path: lastmods(testapp, path) for path in ("/post-sitemap.xml", "/author-sitemap.xml")
    }
    settings(api, excluded_post_ids=[site["newest"]["id"], site["page"]["id"]])
    assert site["page"]["permalink"] not in url_locs(testapp, "/page-sitemap.xml")

    assert settings(api, excluded_post_ids=[])["excluded_post_ids"] == []

    assert {path: lastmods(testapp, path) for path in before} == before
    assert site["page"]["permalink"] in url_locs(testapp, "/page-sitemap.xml")
    assert_consistent(app_session, testapp)


def test_the_list_is_replaced_whole_sorted_and_without_duplicates(api, site):
    older, newest = site["older"]["id"], site["newest"]["id"]
    assert settings(api, excluded_post_ids=[older, newest, older])["excluded_post_ids"] == sorted(
        [older, newest]
    )
    assert settings(api, excluded_post_ids=[newest])["excluded_post_ids"] == [newest]
    assert settings(api, title="Other")["excluded_post_ids"] == [newest]  # left as it was
    assert api.get("/api/settings").json["excluded_post_ids"] == [newest]


def test_ids_of_no_post_are_kept_and_apply_to_the_post_made_with_one(
    api, site, testapp, app_session
):
    """As in Yoast: an id is accepted whether or not a post has it."""
    assert settings(api, excluded_post_ids=[4242])["excluded_post_ids"] == [4242]

    made = create_post(api, "Made later", NEW, id=4242)

    assert made["permalink"] not in url_locs(testapp, "/post-sitemap.xml")
    assert_consistent(app_session, testapp)
    # Deleted, it leaves the list: nothing made later inherits its exclusion (issue 30).
    api.delete("/api/posts/4242", status=204)
    assert api.get("/api/settings").json["excluded_post_ids"] == []
    again = create_post(api, "Made again", NEW, id=4242)
    assert again["permalink"] in url_locs(testapp, "/post-sitemap.xml")
    assert_consistent(app_session, testapp)


def test_a_change_of_the_list_refreshes_only_what_it_affects(api, site, testapp):
    """The posts that came in or went out of the list are recorded as changed posts:
    sitemaps they are not part of keep their version (a crawler's ETag still matches)."""
    etag = testapp.get("/page-sitemap.xml").headers["ETag"]
    post_etag = testapp.get("/post-sitemap.xml").headers["ETag"]

    settings(api, excluded_post_ids=[site["older"]["id"]])

    testapp.get("/page-sitemap.xml", headers={"If-None-Match": etag}, status=304)
    assert testapp.get("/post-sitemap.xml").headers["ETag"] != post_etag


def test_explain_names_the_excluded_posts_rule(api, site, cli):
    settings(api, excluded_post_ids=[site["older"]["id"]])

    for explanation in (
        explain(api, post=site["older"]["id"]),
        explain(api, url=site["older"]["permalink"]),
    ):
        assert explanation["listed"] is False
        assert explanation["reasons"] == [
            {
                "rule": "excluded_post_ids",
                "requirement": "S-201",
                "reason": "its id is in the site's excluded posts (settings: excluded_post_ids)",
            }
        ]
    # Its author has no other post: the author says so.
    assert rules(explain(api, author=site["jane"]["id"])) == ["listed_posts"]
    status, out, _err = cli("explain", "post", site["older"]["id"])
    assert status == 1
    assert "S-201 excluded_post_ids: its id is in the site's excluded posts" in out


def test_the_bound_is_the_schemas(api):
    spec = api.get("/api/openapi.json").json
    field = spec["components"]["schemas"]["SettingsUpdate"]["properties"]["excluded_post_ids"]
    assert field["maxItems"] == MAX_EXCLUDED_POSTS
    ids = list(range(1, MAX_EXCLUDED_POSTS + 1))
    assert settings(api, excluded_post_ids=ids)["excluded_post_ids"] == ids


# Bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"excluded_post_ids": ["12"]}, "excluded_post_ids/0"),
        ({"excluded_post_ids": [12, "40"]}, "excluded_post_ids/1"),
        ({"excluded_post_ids": [-1]}, "excluded_post_ids/0"),
        ({"excluded_post_ids": [0]}, "excluded_post_ids/0"),
        ({"excluded_post_ids": [1.5]}, "excluded_post_ids/0"),
        ({"excluded_post_ids": [True]}, "excluded_post_ids/0"),
        ({"excluded_post_ids": [None]}, "excluded_post_ids/0"),
        ({"excluded_post_ids": [[12]]}, "excluded_post_ids/0"),
        ({"excluded_post_ids": [2**31]}, "excluded_post_ids/0"),
        ({"excluded_post_ids": "12"}, "excluded_post_ids"),
        ({"excluded_post_ids": 12}, "excluded_post_ids"),
        ({"excluded_post_ids": None}, "excluded_post_ids"),
        ({"excluded_post_ids": {"12": True}}, "excluded_post_ids"),
        ({"excluded_post_ids": list(range(1, MAX_EXCLUDED_POSTS + 2))}, "excluded_post_ids"),
        ({"author_sitemap": "no"}, "author_sitemap"),
        ({"author_sitemap": 0}, "author_sitemap"),
        ({"author_sitemap": None}, "author_sitemap"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_changes_nothing(
    api, site, db_snapshot, body, field
):
    settings(api, excluded_post_ids=[site["page"]["id"]])
    before = db_snapshot()

    response = api.patch_json("/api/settings", {"title": "Changed", **body}, status=400)

    assert_problem(response, 400, field)
    assert db_snapshot() == before
    found = api.get("/api/settings").json
    assert (found["title"], found["author_sitemap"]) == ("My Site", True)
    assert found["excluded_post_ids"] == [site["page"]["id"]]
