"""Images in ``<picture>`` and in term descriptions, as a crawler reads them (S-403, S-404).

Content is written through the admin API; the sitemaps are fetched, validated against the
XSDs (``fetch_sitemap``) and their ``image:loc`` read. A ``<source srcset>`` of a
``<picture>`` offers an image as ``<img srcset>`` does (its largest candidate); a
``<source>`` of a ``<video>`` or an ``<audio>`` does not. A term's description (a category
banner) gives the images of the term's ``<url>``, by the same rules as a post's content.
"""

from __future__ import annotations

from typing import Any

import pytest
from reference import differences, expected, served

from sitemap_server.models.meta import utcnow
from sitemap_server.sitemaps.check import check
from sitemap_server.testing import SITE_URL, fetch_sitemap
from sitemap_server.testing.hostile import check_everything

NS = {
    "s": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
}
CDN = "cdn.example.net"
MARCH = "2024-03-01T12:00:00+00:00"
BANNER = (
    '<p>All our news.</p><picture><source type="image/avif" srcset="/banners/news.avif">'
    '<source type="image/webp" srcset="/banners/news-800.webp 800w, /banners/news-1600.webp '
    '1600w"><img src="/banners/news.jpg" alt=""></picture>'
)
BANNER_IMAGES = [
    f"{SITE_URL}/banners/news.avif",
    f"{SITE_URL}/banners/news-1600.webp",
    f"{SITE_URL}/banners/news.jpg",
]
# What an attacker (or a careless editor) puts in HTML: junk srcset candidates, scripts as
# URLs, <source> where it offers no image, media files, a bad host.
HOSTILE_HTML = (
    '<picture><source srcset="javascript:alert(1) 2x"><source srcset="http://[::1/x.png 3x">'
    '<source srcset="junk junk junk, ,,, /ok-source.jpg 1x, /bad.jpg 9q, /zero.jpg 0w">'
    '<source media="(min-width: 1px)" srcset=" , ">'
    '<img src="javascript:alert(2)" srcset="data:image/png;base64,AAAA 1x, /ok-img.jpg 2x">'
    "</picture>"
    '<source srcset="/outside-picture.jpg"><div><source srcset="/in-div.jpg"></div>'
    '<video poster="/poster.jpg"><source src="/clip.mp4" srcset="/clip.jpg" type="video/mp4">'
    '</video><audio><source src="/song.mp3"></audio>'
    '<picture><video><source srcset="/video-in-picture.jpg"></video></picture>'
    '<img src="http://127.0.0.1:6611:80/x.png"><img src="https://elsewhere.test/e.png">'
    '<PICTURE><SOURCE SRCSET="/upper.jpg"></PICTURE>'
)
HOSTILE_IMAGES = [
    f"{SITE_URL}/ok-source.jpg",
    f"{SITE_URL}/ok-img.jpg",
    f"{SITE_URL}/upper.jpg",
]


def create(api: Any, path: str, **body: Any) -> dict[str, Any]:
    return api.post_json(path, body, status=201).json


def create_term(api: Any, name: str, taxonomy: str = "category", **fields: Any) -> dict[str, Any]:
    return create(api, "/api/terms", taxonomy=taxonomy, name=name, **fields)


def create_post(api: Any, slug: str, **fields: Any) -> dict[str, Any]:
    return create(
        api,
        "/api/posts",
        type="post",
        title=slug.title(),
        slug=slug,
        status="publish",
        published_at=MARCH,
        **fields,
    )


def images_of(testapp: Any, sitemap: str, loc: str) -> list[str]:
    """The ``image:loc`` values of the ``<url>`` of ``loc`` in the sitemap at ``sitemap``."""
    root = fetch_sitemap(testapp, sitemap)
    [url] = [u for u in root.iterfind("s:url", NS) if u.findtext("s:loc", namespaces=NS) == loc]
    return [image.text for image in url.iterfind("image:image/image:loc", NS)]


def assert_rebuild_agrees(app_session: Any) -> None:
    """The stored sitemaps are what a full rebuild gives (S-406)."""
    with app_session.begin():
        assert check(app_session).differences == []


def assert_served_as_specified(testapp: Any, app_session: Any) -> None:
    """What a crawler reads is what the plain reference (``tests/reference.py``) gives."""
    with app_session.begin():
        want = expected(app_session, SITE_URL, utcnow())
    assert differences(want, served(testapp, SITE_URL)) == []


# <picture> ---------------------------------------------------------------------------------


def test_each_source_of_a_picture_is_an_image_of_the_post(api, testapp):
    api.patch_json("/api/settings", {"allowed_image_hosts": [CDN]})
    content = (
        BANNER + '<picture><source media="(min-width: 800px)" '
        f'srcset="https://{CDN}/wide.jpg 1x, https://{CDN}/wide@2x.jpg 2x">'
        '<source srcset="narrow.jpg"><source srcset="/banners/news.avif">'
        '<img src="https://elsewhere.test/fallback.jpg"></picture>'
    )
    post = create_post(api, "gallery", content=content)

    assert images_of(testapp, "/post-sitemap.xml", post["permalink"]) == [
        *BANNER_IMAGES,
        f"https://{CDN}/wide@2x.jpg",  # the largest candidate, on an allowed CDN
        f"{post['permalink']}narrow.jpg",  # relative to the post
        # the avif again: once; the fallback is on a host images may not come from
    ]


def test_sources_that_are_no_image_and_junk_are_left_out(api, testapp, app_session):
    post = create_post(api, "hostile", content=HOSTILE_HTML)

    assert images_of(testapp, "/post-sitemap.xml", post["permalink"]) == HOSTILE_IMAGES
    check_everything(testapp)
    assert_rebuild_agrees(app_session)


# Term descriptions -----------------------------------------------------------------------------


def test_a_category_banner_is_an_image_of_the_category(api, testapp, app_session):
    news = create_term(api, "News", description=BANNER)
    create_post(api, "hello", terms=[news["id"]])

    assert images_of(testapp, "/category-sitemap.xml", news["url"]) == BANNER_IMAGES
    assert_served_as_specified(testapp, app_session)


@pytest.mark.parametrize(("taxonomy", "base"), [("post_tag", "tag"), ("topic", "topic")])
def test_tags_and_custom_taxonomies_show_theirs_too(api, testapp, taxonomy, base):
    if taxonomy == "topic":
        create(api, "/api/taxonomies", name="topic", label="Topics")
    term = create_term(api, "Novels", taxonomy, description='<img src="cover.jpg">')
    create_post(api, "hello", terms=[term["id"]])

    assert term["url"] == f"{SITE_URL}/{base}/novels/"
    # Relative to the term's archive, where the description is shown.
    assert images_of(testapp, f"/{taxonomy}-sitemap.xml", term["url"]) == [
        f"{SITE_URL}/{base}/novels/cover.jpg"
    ]


def test_editing_the_description_changes_the_images(api, testapp, app_session):
    news = create_term(api, "News")
    create_post(api, "hello", terms=[news["id"]])
    assert images_of(testapp, "/category-sitemap.xml", news["url"]) == []

    api.patch_json(f"/api/terms/{news['id']}", {"description": BANNER}, status=200)
    assert images_of(testapp, "/category-sitemap.xml", news["url"]) == BANNER_IMAGES
    assert_rebuild_agrees(app_session)

    changed = '<img src="/banners/news.jpg"><img src="/banners/new.png">'
    api.patch_json(f"/api/terms/{news['id']}", {"description": changed}, status=200)
    assert images_of(testapp, "/category-sitemap.xml", news["url"]) == [
        f"{SITE_URL}/banners/news.jpg",
        f"{SITE_URL}/banners/new.png",
    ]

    api.patch_json(f"/api/terms/{news['id']}", {"description": ""}, status=200)
    assert images_of(testapp, "/category-sitemap.xml", news["url"]) == []
    assert_rebuild_agrees(app_session)
    assert_served_as_specified(testapp, app_session)


def test_a_child_terms_description_leaves_its_parent_alone(api, testapp):
    world = create_term(api, "World", description='<img src="/world.jpg">')
    europe = create_term(api, "Europe", parent=world["id"])
    create_post(api, "hello", terms=[europe["id"]])

    api.patch_json(f"/api/terms/{europe['id']}", {"description": '<img src="/europe.jpg">'})
    assert images_of(testapp, "/category-sitemap.xml", world["url"]) == [f"{SITE_URL}/world.jpg"]
    assert images_of(testapp, "/category-sitemap.xml", europe["url"]) == [f"{SITE_URL}/europe.jpg"]


def test_allowed_image_hosts_apply_to_terms(api, testapp, app_session):
    news = create_term(api, "News", description=f'<img src="https://{CDN}/banner.jpg">')
    create_post(api, "hello", terms=[news["id"]])
    assert images_of(testapp, "/category-sitemap.xml", news["url"]) == []

    api.patch_json("/api/settings", {"allowed_image_hosts": [CDN]}, status=200)
    assert images_of(testapp, "/category-sitemap.xml", news["url"]) == [f"https://{CDN}/banner.jpg"]
    assert_served_as_specified(testapp, app_session)


def test_a_hostile_description_breaks_nothing(api, testapp, app_session):
    news = create_term(api, "News", description=HOSTILE_HTML)
    create_post(api, "hello", terms=[news["id"]])

    assert images_of(testapp, "/category-sitemap.xml", news["url"]) == HOSTILE_IMAGES
    check_everything(testapp)
    assert_rebuild_agrees(app_session)


def test_a_description_with_more_than_a_thousand_images_lists_a_thousand(api, testapp):
    pictures = "".join(f'<picture><source srcset="/{n}.webp"></picture>' for n in range(1001))
    news = create_term(api, "News", description=pictures)
    create_post(api, "hello", terms=[news["id"]])

    images = images_of(testapp, "/category-sitemap.xml", news["url"])
    assert len(images) == 1000
    assert images[-1] == f"{SITE_URL}/999.webp"
