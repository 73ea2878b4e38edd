"""Identity is never reused (issue 30): a deleted post's, term's or author's id is never
given to a new object, on either database, and nothing that named it passes to another."""

from __future__ import annotations

import pytest

from sitemap_server.testing import url_locs

JAN = "2024-01-15T10:00:00+00:00"

CREATES = {
    "posts": {"type": "post", "status": "publish", "title": "Newest", "published_at": JAN},
    "terms": {"taxonomy": "category", "name": "Newest"},
    "authors": {"slug": "newest", "name": "Newest"},
}


@pytest.mark.parametrize("collection", sorted(CREATES))
def test_the_newest_objects_id_is_not_given_again_after_its_delete(api, collection):
    made = [api.post_json(f"/api/{collection}", CREATES[collection], status=201).json]
    api.delete(f"/api/{collection}/{made[0]['id']}", status=204)
    again = api.post_json(f"/api/{collection}", CREATES[collection], status=201).json
    assert again["id"] > made[0]["id"]
    api.get(f"/api/{collection}/{made[0]['id']}", status=404)


def test_a_new_post_does_not_inherit_a_deleted_posts_exclusion(api, testapp):
    """The case reported: the deleted post's id stayed in ``excluded_post_ids`` and the
    new post that got its id was never listed."""
    excluded = api.post_json("/api/posts", CREATES["posts"], status=201).json
    api.patch_json("/api/settings", {"excluded_post_ids": [excluded["id"]]}, status=200)
    api.delete(f"/api/posts/{excluded['id']}", status=204)
    assert api.get("/api/settings").json["excluded_post_ids"] == []
    body = {**CREATES["posts"], "title": "Listed", "slug": "listed"}
    new = api.post_json("/api/posts", body, status=201).json
    assert new["id"] != excluded["id"]
    assert new["permalink"] in url_locs(testapp, "/post-sitemap.xml")


def test_settings_naming_a_deleted_page_forget_it(api):
    page = api.post_json(
        "/api/posts", {**CREATES["posts"], "type": "page", "title": "Home"}, status=201
    ).json
    api.patch_json("/api/settings", {"front_page": "page", "front_page_id": page["id"]}, status=200)
    api.delete(f"/api/posts/{page['id']}", status=204)
    assert api.get("/api/settings").json["front_page_id"] is None
