"""Each entry rendered once, when it changes (issue 17): what a crawler sees of it.

The maintainer stores each entry's ``<url>`` element with the entry, and each page's
``<sitemap>`` element with the page; a page is its frame around the stored fragments, and
the index its frame around the pages'. These tests change what a fragment depends on (the site's
time zone, the site URL, the template that rendered it) and read the documents back: no
answer may show a fragment rendered for something that is no longer true.
"""

from __future__ import annotations

from sqlalchemy import select, update

from sitemap_server.models import SitemapEntry, SitemapPage, SitemapVersion
from sitemap_server.sitemaps.check import check
from sitemap_server.sitemaps.maintenance import output_of
from sitemap_server.sitemaps.rendering import SITE_MARK, render_key, settings_key
from sitemap_server.testing import SITE_URL, SITEMAP_NS, client, fetch_sitemap

NS = {"s": SITEMAP_NS}
URL_TEMPLATE = "sitemap_server:templates/url.pt"


def create_post(api, slug, **fields):
    body = {
        "type": "post",
        "title": slug.title(),
        "slug": slug,
        "status": "publish",
        "published_at": "2024-05-01T10:00:00+00:00",
        "modified_at": "2024-05-01T10:00:00+00:00",
        **fields,
    }
    return api.post_json("/api/posts", body, status=201).json


def entries(testapp, path="/post-sitemap.xml", element="s:url"):
    """{loc: lastmod} of a document, parsed and validated."""
    root = fetch_sitemap(testapp, path)
    return {
        url.findtext("s:loc", namespaces=NS): url.findtext("s:lastmod", namespaces=NS)
        for url in root.iterfind(element, NS)
    }


def test_a_fragment_is_stored_with_its_entry_and_the_site_url_marked(api, testapp, dbsession):
    post = create_post(api, "hello")
    assert entries(testapp)[post["permalink"]] == "2024-05-01T10:00:00+00:00"
    path = post["permalink"].removeprefix(SITE_URL)
    xml, size = dbsession.execute(
        select(SitemapEntry.xml, SitemapEntry.size).where(
            SitemapEntry.provider == "post", SitemapEntry.path == path
        )
    ).one()
    assert xml.startswith(f"<url>\n<loc>{SITE_MARK}{path}</loc>")
    assert SITE_URL not in xml
    # The bytes it takes in a page, with the site URL in.
    assert size == len(xml.replace(SITE_MARK, SITE_URL).encode())


def test_a_time_zone_change_renders_every_date_again(api, testapp):
    post = create_post(api, "hello")
    assert entries(testapp)[post["permalink"]] == "2024-05-01T10:00:00+00:00"

    index = entries(testapp, "/sitemap_index.xml", "s:sitemap")
    assert index[f"{SITE_URL}/post-sitemap.xml"] == "2024-05-01T10:00:00+00:00"

    api.patch_json("/api/settings", {"timezone": "Europe/Berlin"}, status=200)

    assert entries(testapp)[post["permalink"]] == "2024-05-01T12:00:00+02:00"
    index = entries(testapp, "/sitemap_index.xml", "s:sitemap")
    assert index[f"{SITE_URL}/post-sitemap.xml"] == "2024-05-01T12:00:00+02:00"


def test_a_new_site_url_in_the_ini_file_is_in_every_page_at_once(
    api, app_with, api_token, clean_database
):
    """Fragments hold no site URL: a process started with another one serves it, with
    nothing rebuilt."""
    post = create_post(api, "hello")
    moved = client(app_with(**{"sitemap_server.site_url": "https://moved.example/blog"}))
    path = post["permalink"].removeprefix(SITE_URL)
    assert list(entries(moved)) == [
        "https://moved.example/blog/",
        f"https://moved.example/blog{path}",
    ]
    index = entries(moved, "/sitemap_index.xml", "s:sitemap")
    assert "https://moved.example/blog/post-sitemap.xml" in index
    assert not [loc for loc in index if not loc.startswith("https://moved.example/blog/")]


def test_fragments_of_another_template_are_rendered_again_before_a_page_is_served(
    api, testapp, dbsession, app_session
):
    """An upgrade that changes a provider's template: its stored fragments are stale, and
    the provider is rebuilt whole before the first page of it is served."""
    post = create_post(api, "hello")
    entries(testapp)
    dbsession.execute(
        update(SitemapEntry)
        .where(SitemapEntry.provider == "post")
        .values(xml="<url><loc>stale</loc></url>")
    )
    dbsession.execute(
        update(SitemapPage).where(SitemapPage.provider == "post").values(xml="<sitemap/>")
    )
    dbsession.execute(
        update(SitemapVersion)
        .where(SitemapVersion.provider == "post")
        .values(rendered_with="an older template")
    )
    dbsession.commit()

    assert list(entries(testapp)) == [f"{SITE_URL}/", post["permalink"]]
    assert f"{SITE_URL}/post-sitemap.xml" in entries(testapp, "/sitemap_index.xml", "s:sitemap")
    rendered_with = dbsession.scalar(
        select(SitemapVersion.rendered_with).where(SitemapVersion.provider == "post")
    )
    assert rendered_with == render_key(URL_TEMPLATE, settings_key(output_of(app_session)))


def test_check_finds_a_fragment_that_says_something_else(api, testapp, app_session):
    create_post(api, "hello")
    entries(testapp)  # the write applied
    with app_session.begin():
        app_session.execute(
            update(SitemapEntry)
            .where(SitemapEntry.provider == "post", SitemapEntry.key > 0)
            .values(xml="<url><loc>stale</loc></url>")
        )
    with app_session.begin():
        report = check(app_session)
    assert [(d.provider, d.field) for d in report.differences] == [("post", "xml")]


def test_check_finds_an_index_entry_that_says_something_else(api, testapp, app_session):
    create_post(api, "hello")
    entries(testapp)  # the write applied
    with app_session.begin():
        app_session.execute(
            update(SitemapPage).where(SitemapPage.provider == "post").values(xml="<sitemap/>")
        )
    with app_session.begin():
        report = check(app_session)
    assert [(d.provider, d.where, d.field) for d in report.differences] == [
        ("post", "page 1", "xml")
    ]


def test_a_page_of_more_than_5000_entries_is_read_in_batches_and_says_the_same(
    api, testapp, monkeypatch
):
    """Large pages go through a server-side cursor (PostgreSQL), small ones are fetched
    at once: the same document either way."""
    import json

    from sitemap_server.sitemaps import views
    from sitemap_server.testing import forget_rendered

    api.patch_json("/api/settings", {"entries_per_page": 6000}, status=200)
    lines = [
        json.dumps(
            {"post": {"type": "post", "title": f"P{n}", "slug": f"p{n}", "status": "publish"}}
        )
        for n in range(views.STREAMED_ENTRIES + 1)
    ]
    api.post("/api/import", "\n".join(lines), content_type="application/x-ndjson", status=200)

    streamed = testapp.get("/post-sitemap.xml", status=200).body
    assert len(entries(testapp)) == views.STREAMED_ENTRIES + 2  # and the home page
    monkeypatch.setattr(views, "STREAMED_ENTRIES", 10**9)
    forget_rendered(testapp.app)
    assert testapp.get("/post-sitemap.xml", status=200).body == streamed
