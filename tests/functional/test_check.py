"""``sitemap-server check [--repair]``: the stored sitemaps against a rebuild from the
content (issue 13), and the writes that left them apart."""

import json

import pytest
from sqlalchemy import delete, select, update

from sitemap_server.demo import seed_demo
from sitemap_server.models import SitemapEntry, SitemapPage
from sitemap_server.sitemaps.check import check
from sitemap_server.testing import SITE_URL, SITEMAP_NS, fetch_sitemap, url_locs

NS = {"s": SITEMAP_NS}


@pytest.fixture
def run_check(cli):
    """``sitemap-server check`` on the test database: (exit status, stdout, stderr)."""
    return lambda *args: cli("check", *args)


def differences(app_session):
    """What ``check`` finds, as (provider, where, field) triples; nothing is changed."""
    with app_session.begin():
        report = check(app_session)
    return [(d.provider, d.where, d.field) for d in report.differences]


def test_the_demo_site_is_what_its_content_implies(app_session, run_check):
    with app_session.begin():
        seed_demo(app_session, posts=60)
    status, out, _err = run_check()
    assert status == 0
    assert out.startswith("the stored sitemaps are what the content implies (")


def test_a_damaged_entry_is_reported_and_repaired(app_session, api, testapp, run_check):
    posts = [
        api.post_json("/api/posts", {"type": "post", "title": title, "status": "publish"}).json
        for title in ("First", "Second", "Third")
    ]
    listed = url_locs(testapp, "/post-sitemap.xml")
    path = posts[1]["permalink"].removeprefix(SITE_URL)
    with app_session.begin():
        app_session.execute(
            delete(SitemapEntry).where(SitemapEntry.provider == "post", SitemapEntry.path == path)
        )
        app_session.execute(
            update(SitemapPage).where(SitemapPage.provider == "post").values(entries=7)
        )

    status, out, err = run_check("--json")
    assert status == 1
    found = json.loads(out)
    assert found["count"] == 2, found
    assert found["repaired"] is False
    assert {
        (d["provider"], d["where"], d["field"], d["stored"], d["expected"])
        for d in found["differences"]
    } == {
        ("post", f"{path} (key 2, part 1)", "listed", False, True),
        ("post", "page 1", "entries", 7, 4),  # the three posts and the home page
    }
    assert run_check()[0] == 1  # a check changes nothing

    status, _out, err = run_check("--repair")
    assert status == 1
    assert "2 difference(s) repaired" in err
    status, out, _err = run_check()
    assert status == 0, out
    with app_session.begin():
        entries = select(SitemapPage.entries).where(SitemapPage.provider == "post")
        assert app_session.scalar(entries) == 4
    assert url_locs(testapp, "/post-sitemap.xml") == listed


# The writes that left the stored sitemaps apart from a rebuild (issue 13) --------------


def test_deleting_a_parent_page_moves_its_children(app_session, api, testapp):
    parent = api.post_json(
        "/api/posts", {"type": "page", "title": "Parent", "status": "publish"}
    ).json
    child = api.post_json(
        "/api/posts",
        {"type": "page", "title": "Child", "status": "publish", "parent": parent["id"]},
    ).json
    api.delete(f"/api/posts/{parent['id']}", status=204)

    moved = api.get(f"/api/posts/{child['id']}").json["permalink"]
    assert moved == f"{SITE_URL}/child/"
    assert moved in url_locs(testapp, "/page-sitemap.xml")
    assert differences(app_session) == []


def test_deleting_a_term_of_a_hierarchical_taxonomy_unlists_it(app_session, api, testapp):
    term = api.post_json("/api/terms", {"taxonomy": "category", "name": "Gone"}).json
    api.post_json(
        "/api/posts", {"type": "post", "title": "In it", "status": "publish", "terms": [term["id"]]}
    )
    api.delete(f"/api/terms/{term['id']}", status=204)

    assert differences(app_session) == []


@pytest.mark.parametrize("front", ["posts", "page"])
def test_deleting_the_newest_post_dates_the_home_page_from_the_others(
    app_session, api, testapp, front
):
    if front == "page":
        home = api.post_json("/api/posts", page("Home", "2024-01-01T12:00:00+00:00")).json
        blog = api.post_json("/api/posts", page("Blog", "2024-01-01T12:00:00+00:00")).json
        settings = {"front_page": "page", "front_page_id": home["id"], "posts_page_id": blog["id"]}
        api.patch_json("/api/settings", settings)
    api.post_json("/api/posts", post("Old", "2024-03-01T12:00:00+00:00"))
    newest = api.post_json("/api/posts", post("New", "2024-03-05T12:00:00+00:00")).json
    api.delete(f"/api/posts/{newest['id']}", status=204)

    assert differences(app_session) == []


def post(title, published_at, **fields):
    return {
        "type": "post",
        "title": title,
        "status": "publish",
        "published_at": published_at,
        **fields,
    }


def page(title, published_at):
    return post(title, published_at, type="page")


def test_a_parent_category_whose_posts_are_in_its_children_is_listed(app_session, api, testapp):
    parent = api.post_json("/api/terms", {"taxonomy": "category", "name": "World"}).json
    child = api.post_json(
        "/api/terms", {"taxonomy": "category", "name": "Europe", "parent": parent["id"]}
    ).json
    api.post_json(
        "/api/posts",
        {"type": "post", "title": "Paris", "status": "publish", "terms": [child["id"]]},
    )

    listed = url_locs(testapp, "/category-sitemap.xml")
    assert f"{SITE_URL}/category/world/" in listed
    assert f"{SITE_URL}/category/world/europe/" in listed
    assert differences(app_session) == []


def test_deleting_a_scheduled_post_forgets_its_time(app_session, api):
    """Found by the model-based test: the provider kept waiting for the deleted post."""
    scheduled = api.post_json("/api/posts", post("Later", "2099-01-01T00:00:00+00:00")).json
    api.delete(f"/api/posts/{scheduled['id']}", status=204)

    assert differences(app_session) == []


def test_a_write_after_a_scheduled_post_went_live_brings_it_in(app_session, api, clock):
    """Found by the model-based test: a write after the post's time, before any request,
    moved the sitemap's next due time past it, so the post was never listed."""
    now = api.post_json("/api/posts", post("Now", "2024-03-01T12:00:00+00:00")).json
    api.post_json("/api/posts", post("Later", "2099-01-01T00:00:00+00:00"))
    clock.advance(days=365 * 80)
    api.patch_json(f"/api/posts/{now['id']}", {"title": "Now, edited"})

    assert differences(app_session) == []


def test_a_newest_post_on_a_later_page_dates_the_first_page_too(app_session, api, testapp):
    """Found by the plain reference: the new post is on page 3, and the home page it dates
    is on page 1, whose date in the index stayed that of its older entries."""
    api.patch_json("/api/settings", {"entries_per_page": 2})
    for day in range(1, 6):
        api.post_json("/api/posts", post(f"Day {day}", f"2024-03-0{day}T12:00:00+00:00"))

    index = fetch_sitemap(testapp, "/sitemap_index.xml")
    dates = {
        s.findtext("s:loc", namespaces=NS): s.findtext("s:lastmod", namespaces=NS)
        for s in index.iterfind("s:sitemap", NS)
    }
    assert dates[f"{SITE_URL}/post-sitemap.xml"] == "2024-03-05T12:00:00+00:00"
    assert differences(app_session) == []
