"""The plain reference (``tests/reference.py``) against sites written out by hand, and the
served sitemaps against it (issue 13).

The reference is what the model-based test trusts; these tests are what it rests on: for a
small site every URL, date and image is written here from the spec, and both the reference
and the server must give exactly that.
"""

from datetime import UTC, datetime

import pytest
from reference import Sitemaps, Url, differences, expected, served

from sitemap_server.demo import seed_demo
from sitemap_server.models.meta import utcnow
from sitemap_server.testing import SITE_URL


def specified(app_session):
    with app_session.begin():
        return expected(app_session, SITE_URL, utcnow())


def assert_served_as_specified(testapp, app_session):
    want = specified(app_session)
    assert differences(want, served(testapp, SITE_URL)) == []
    return want


def at(text):
    return datetime.fromisoformat(text).astimezone(UTC)


MARCH = "2024-03-01T12:00:00+00:00"
APRIL = "2024-04-01T12:00:00+00:00"
MAY = "2024-05-01T12:00:00+00:00"


def post(api, title, published_at=MARCH, **fields):
    body = {
        "type": "post",
        "title": title,
        "status": "publish",
        "published_at": published_at,
        "modified_at": published_at,
        **fields,
    }
    return api.post_json("/api/posts", body).json


def test_a_small_site_written_out_by_hand(api, testapp, app_session):
    api.patch_json("/api/settings", {"allowed_image_hosts": ["cdn.example.net"]})
    alice = api.post_json("/api/authors", {"slug": "alice", "name": "Alice"}).json["id"]
    hidden = api.post_json(
        "/api/authors", {"slug": "hidden", "name": "Hidden", "noindex": True}
    ).json["id"]
    world = api.post_json("/api/terms", {"taxonomy": "category", "name": "World"}).json["id"]
    europe = api.post_json(
        "/api/terms", {"taxonomy": "category", "name": "Europe", "parent": world}
    ).json["id"]
    quiet = api.post_json(
        "/api/terms", {"taxonomy": "post_tag", "name": "Quiet", "noindex": True}
    ).json["id"]
    api.post_json("/api/terms", {"taxonomy": "post_tag", "name": "Empty"})
    content = (
        '<p><img src="photo.jpg"><img src="/a.jpg" srcset="/a.jpg 480w, /a-big.jpg 1200w">'
        '<img src="https://cdn.example.net/c.png"><img src="https://elsewhere.test/e.png"></p>'
    )
    first = post(
        api,
        "First",
        MARCH,
        author=alice,
        terms=[europe, quiet],
        featured_image="/a.jpg",
        content=content,
        parts=2,
    )
    post(api, "Second", APRIL, author=hidden, modified_at=MAY)
    for excluded in (
        {"status": "draft"},
        {"password": "secret"},
        {"robots": "noindex"},
        {"canonical": "http://elsewhere.test/copy/"},
        {"exclude_from_sitemap": True},
        {"published_at": "2099-01-01T00:00:00+00:00", "modified_at": MAY},
    ):
        post(
            api, "Left out", **{"published_at": MAY, "author": alice, "terms": [europe], **excluded}
        )
    about = api.post_json(
        "/api/posts",
        {"type": "page", "title": "About", "status": "publish", "published_at": MARCH},
    ).json

    first_url = f"{SITE_URL}/2024/03/first/"
    assert first["permalink"] == first_url
    want = Sitemaps(
        index={
            f"{SITE_URL}/post-sitemap.xml": at(MAY),
            f"{SITE_URL}/page-sitemap.xml": at(about["modified_at"]),
            f"{SITE_URL}/author-sitemap.xml": at(MARCH),
            f"{SITE_URL}/category-sitemap.xml": at(MARCH),
        },
        documents={
            "/post-sitemap.xml": [
                Url(f"{SITE_URL}/", at(MAY)),  # S-206: the home page, first
                Url(
                    first_url,
                    at(MARCH),
                    (
                        f"{SITE_URL}/a.jpg",  # featured; the content's /a.jpg only once
                        f"{first_url}photo.jpg",  # relative to the post
                        f"{SITE_URL}/a-big.jpg",  # the widest of the srcset
                        "https://cdn.example.net/c.png",  # an allowed CDN
                    ),
                ),
                Url(f"{first_url}2/", at(MARCH)),  # S-207: part 2, right after
                Url(f"{SITE_URL}/2024/04/second/", at(MAY)),
            ],
            "/page-sitemap.xml": [Url(about["permalink"], at(about["modified_at"]))],
            # Hidden is noindexed (S-202).
            "/author-sitemap.xml": [Url(f"{SITE_URL}/author/alice/", at(MARCH))],
            # World has no post of its own, but Europe has (S-203); the tags are empty or
            # noindexed: no post_tag sitemap.
            "/category-sitemap.xml": [
                Url(f"{SITE_URL}/category/world/", at(MARCH)),
                Url(f"{SITE_URL}/category/world/europe/", at(MARCH)),
            ],
        },
    )
    got = specified(app_session)
    assert differences(want, got) == []
    assert got == want
    assert differences(want, served(testapp, SITE_URL)) == []


def test_a_static_front_page_and_a_posts_page(api, testapp, app_session):
    home = post(api, "Home", MARCH, type="page", content='<img src="/home.jpg">')
    blog = post(api, "Blog", MARCH, type="page")
    post(api, "News", APRIL)
    api.patch_json(
        "/api/settings",
        {"front_page": "page", "front_page_id": home["id"], "posts_page_id": blog["id"]},
    )

    want = assert_served_as_specified(testapp, app_session)
    assert want.documents["/page-sitemap.xml"] == [
        Url(f"{SITE_URL}/", at(APRIL), (f"{SITE_URL}/home.jpg",)),  # S-206, once
        Url(blog["permalink"], at(APRIL)),  # dated by the newest post
    ]
    assert want.documents["/post-sitemap.xml"] == [Url(f"{SITE_URL}/2024/04/news/", at(APRIL))]


def test_pages_of_entries_per_page(api, testapp, app_session):
    api.patch_json("/api/settings", {"entries_per_page": 2})
    for day in range(1, 6):
        post(api, f"Day {day}", f"2024-03-0{day}T12:00:00+00:00")

    want = assert_served_as_specified(testapp, app_session)
    assert [len(want.documents[f"/post-sitemap{n}.xml"]) for n in ("", 2, 3)] == [2, 2, 2]
    assert want.index[f"{SITE_URL}/post-sitemap3.xml"] == at("2024-03-05T12:00:00+00:00")


def test_a_private_site_lists_nothing(api, testapp, app_session):
    post(api, "Hello")
    api.patch_json("/api/settings", {"private": True})

    assert assert_served_as_specified(testapp, app_session) == Sitemaps(index={}, documents={})


@pytest.mark.parametrize("per_page", [1000, 7])
def test_the_demo_site_is_served_as_specified(app_session, api, testapp, per_page):
    with app_session.begin():
        seed_demo(app_session, posts=60)
    api.patch_json("/api/settings", {"entries_per_page": per_page})

    want = assert_served_as_specified(testapp, app_session)
    assert sum(len(urls) for urls in want.documents.values()) > 60


def test_a_difference_is_named(api, testapp, app_session):
    post(api, "Hello")
    want = specified(app_session)
    want.documents["/post-sitemap.xml"].append(Url(f"{SITE_URL}/missing/", at(MARCH)))
    want.index[f"{SITE_URL}/post-sitemap.xml"] = at(APRIL)

    assert differences(want, served(testapp, SITE_URL)) == [
        f"index: {SITE_URL}/post-sitemap.xml: expected {at(APRIL)}, served {at(MARCH)}",
        f"/post-sitemap.xml: {SITE_URL}/missing/ expected, not served",
    ]
