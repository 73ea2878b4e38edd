"""A write costs what it changes (issue 30): a label, an empty post type or taxonomy, or
a setting no document shows rebuilds no sitemap; a change that moves what is listed
rebuilds them.

Observed from the stored entries: one is marked (its stored fragment rewritten, as no
rebuild would write it); a rebuild of its sitemap replaces it, a write that rebuilds
nothing leaves it."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from sitemap_server.models import SitemapEntry
from sitemap_server.testing import apply_changes, url_locs

JAN = "2024-01-15T10:00:00+00:00"
MARK = "<url><loc>marked</loc></url>"


@pytest.fixture
def marked(api, testapp, dbsession):
    """A site whose stored post and category entries carry the mark; whether they still
    do after what the test writes and the maintainer applies."""
    term = api.post_json("/api/terms", {"taxonomy": "category", "name": "Travel"}).json
    body = {"type": "post", "status": "publish", "title": "Hi", "published_at": JAN}
    api.post_json("/api/posts", {**body, "terms": [term["id"]]}, status=201)
    url_locs(testapp, "/post-sitemap.xml")  # applied and stored
    dbsession.execute(update(SitemapEntry).values(xml=MARK))
    dbsession.commit()

    def still(provider: str) -> bool:
        apply_changes(api)
        dbsession.expire_all()
        found = dbsession.scalars(
            select(SitemapEntry.xml).where(SitemapEntry.provider == provider)
        ).all()
        dbsession.commit()
        return bool(found) and all(xml == MARK for xml in found)

    return still


def test_a_label_rebuilds_nothing(api, marked):
    api.patch_json("/api/post-types/post", {"label": "Articles"}, status=200)
    api.patch_json("/api/taxonomies/category", {"label": "Topics"}, status=200)
    assert marked("post") and marked("category")


def test_an_empty_type_or_taxonomy_rebuilds_nothing_else(api, testapp, marked, dbsession):
    body = {"name": "book", "label": "Books", "archive_path": "/books/"}
    api.post_json("/api/post-types", body, status=201)
    api.post_json("/api/taxonomies", {"name": "genre", "label": "Genres"}, status=201)
    assert marked("post") and marked("category")
    # Its first post lists it, as if it had been there all along.
    post = {"type": "book", "status": "publish", "title": "Dune", "published_at": JAN}
    api.post_json("/api/posts", post, status=201)
    assert "http://sitemaps.test/book/dune/" in url_locs(testapp, "/book-sitemap.xml")
    api.delete(f"/api/posts/{api.get('/api/posts?type=book').json['items'][0]['id']}")
    api.delete("/api/post-types/book", status=204)
    api.delete("/api/taxonomies/genre", status=204)
    assert marked("post") and marked("category")
    testapp.get("/book-sitemap.xml", status=404)
    providers = set(dbsession.scalars(select(SitemapEntry.provider)))
    assert "book" not in providers and "genre" not in providers


def test_a_setting_no_document_shows_rebuilds_nothing(api, marked):
    api.patch_json("/api/settings", {"title": "Another title"}, status=200)
    assert marked("post") and marked("category")


def test_a_change_of_what_is_listed_rebuilds(api, marked):
    api.patch_json("/api/post-types/post", {"permalink_pattern": "/blog/{slug}/"}, status=200)
    assert not marked("post")


def test_entries_recomputed_as_they_were_are_neither_rendered_nor_written(api, testapp, entry_work):
    """A parent's descendants are recomputed when it changes (their URLs hold its slug);
    those that come out as they were keep their stored rows and fragments: only the
    entries a crawler sees change are rendered and written."""
    body = {"type": "page", "status": "publish", "published_at": JAN}
    parent = api.post_json("/api/posts", {**body, "title": "Guides"}, status=201).json
    children = {
        api.post_json(
            "/api/posts", {**body, "title": f"Part {n}", "parent": parent["id"]}, status=201
        ).json["id"]
        for n in range(3)
    }
    apply_changes(api)
    rendered, written = entry_work
    rendered.clear()
    written.clear()
    api.patch_json(f"/api/posts/{parent['id']}", {"title": "All the guides"}, status=200)
    apply_changes(api)
    pages = {key for provider, key in written if provider == "page"}
    assert parent["id"] in pages  # its lastmod moved
    assert not children & pages
    assert not children & {key for provider, key in rendered if provider == "page"}
    # A slug the children's URLs hold: every one of them is rendered and written again.
    rendered.clear()
    written.clear()
    api.patch_json(f"/api/posts/{parent['id']}", {"slug": "guides-2"}, status=200)
    apply_changes(api)
    assert children <= {key for provider, key in written if provider == "page"}
    assert children <= {key for provider, key in rendered if provider == "page"}
    assert "http://sitemaps.test/guides-2/part-0/" in url_locs(testapp, "/page-sitemap.xml")
