"""``/video-sitemap.xml`` as a crawler reads it (S-503, with the S-2xx rules and S-3xx).

Sites are built through the admin API (``api``: posts, terms, settings, and videos through
``POST /api/posts/{id}/videos`` or embedded in a post's content) and read without
credentials (``testapp``). Every document is parsed with lxml and, when it has entries,
validated against the current and the 2009 XSDs (``parse_sitemap``).
"""

from __future__ import annotations

import gzip
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from lxml import etree
from webob import Request
from webtest import TestApp

from sitemap_server.services import posts as post_service
from sitemap_server.testing import (
    SITE_URL,
    apply_changes,
    browser_stylesheet,
    parse_sitemap,
    run_worker,
    xml_parser,
)
from sitemap_server_video import services as video_service
from sitemap_server_video.provider import VideoProvider

SM_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"
NS = {"sm": SM_NS, "video": VIDEO_NS}
VIDEO_SITEMAP = "/video-sitemap.xml"
VIDEO_XSL = "/video-sitemap.xsl"
X_ROBOTS_TAG = "noindex, follow"
W3C_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$")
YOUTUBE_ID = "dQw4w9WgXcQ"
VIMEO_ID = "76979871"

# A video with every field the admin API takes.
FULL_VIDEO: dict[str, Any] = {
    "title": "How to cook pasta",
    "description": "Boil the water, salt it, then the pasta.",
    "caption": "Pasta, step by step",
    "content_url": "https://cdn.example.test/videos/pasta.mp4",
    "player_url": "https://player.example.test/embed/pasta",
    "thumbnail_url": "https://cdn.example.test/videos/pasta.jpg",
    "page_url": "https://videos.example.test/pasta",
    "published_at": "2024-03-01T14:30:15+02:00",
    "duration": 754,
    "view_count": 12345,
    "width": 1280,
    "height": 720,
    "family_friendly": False,
    "uploader": "Chef Ada",
    "uploader_url": f"{SITE_URL}/author/ada/",
}
# The least a listable video needs: a thumbnail and a player (or content) URL.
MINIMAL_VIDEO: dict[str, Any] = {
    "thumbnail_url": "https://cdn.example.test/thumb.jpg",
    "player_url": "https://player.example.test/embed/1",
}


# Reading sitemaps -----------------------------------------------------------------------


def fetch(app: TestApp, path: str) -> etree._Element:
    """A sitemap document: 200, the sitemap headers, valid (when it has entries)."""
    response = app.get(path, status=200)
    assert response.headers["Content-Type"] == "text/xml; charset=UTF-8"
    assert response.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    return parse_sitemap(response.body)


def read_video(element: etree._Element) -> dict[str, Any]:
    """One ``<video:video>`` as {child name: text}; tags as a list, uploader's info apart."""
    found: dict[str, Any] = {}
    for child in element:
        assert etree.QName(child).namespace == VIDEO_NS
        name = etree.QName(child).localname
        if name == "tag":
            found.setdefault("tags", []).append(child.text)
            continue
        assert name not in found, f"two <video:{name}>"
        found[name] = child.text
        if name == "uploader" and child.get("info") is not None:
            found["uploader_info"] = child.get("info")
    return found


def video_urls(app: TestApp, page: int = 1) -> list[dict[str, Any]]:
    """The ``<url>`` entries of a video sitemap page: loc, lastmod and videos."""
    root = fetch(app, f"/video-sitemap{'' if page == 1 else page}.xml")
    assert root.tag == f"{{{SM_NS}}}urlset"
    return [
        {
            "loc": url.findtext("sm:loc", namespaces=NS),
            "lastmod": url.findtext("sm:lastmod", namespaces=NS),
            "videos": [read_video(v) for v in url.iterfind("video:video", namespaces=NS)],
        }
        for url in root.iterfind("sm:url", namespaces=NS)
    ]


def listed(app: TestApp) -> list[str]:
    """The locs of the video sitemap's first page."""
    return [url["loc"] for url in video_urls(app)]


def only_url(app: TestApp) -> dict[str, Any]:
    [url] = video_urls(app)
    return url


def videos_of(app: TestApp) -> list[dict[str, Any]]:
    """The videos of the only ``<url>`` of the video sitemap."""
    return only_url(app)["videos"]


def index(app: TestApp) -> dict[str, str]:
    """``/sitemap_index.xml`` as {sitemap URL: lastmod}."""
    root = fetch(app, "/sitemap_index.xml")
    assert root.tag == f"{{{SM_NS}}}sitemapindex"
    found = {
        s.findtext("sm:loc", namespaces=NS): s.findtext("sm:lastmod", namespaces=NS)
        for s in root.iterfind("sm:sitemap", namespaces=NS)
    }
    assert len(found) == len(root)
    return found


def video_pages_in_index(app: TestApp) -> dict[str, str]:
    return {loc: lastmod for loc, lastmod in index(app).items() if "/video-sitemap" in loc}


def moment(text: str | None) -> datetime:
    assert text is not None
    assert W3C_DATETIME.match(text), text
    return datetime.fromisoformat(text)


def moment_utc(text: str) -> datetime:
    """An API date-time as the sitemaps write it: UTC, whole seconds."""
    return datetime.fromisoformat(text).astimezone(UTC).replace(microsecond=0)


def raw(app: TestApp, path: str, **headers: str) -> Any:
    """What the WSGI application really sends (WebTest would decompress the body)."""
    return Request.blank(path, headers=headers).get_response(app.app)


def stylesheet_of(body: bytes) -> etree._ProcessingInstruction:
    """The ``xml-stylesheet`` instruction, which must come before anything else."""
    root = etree.fromstring(body, xml_parser())
    before_root = list(root.itersiblings(preceding=True))
    assert before_root, "no processing instruction before the root element"
    first = before_root[-1]
    assert isinstance(first, etree._ProcessingInstruction)
    assert first.target == "xml-stylesheet"
    return first


# Building sites -------------------------------------------------------------------------


def at(day: int, hour: int = 12) -> str:
    """A fixed past time, as the API takes it."""
    return f"2024-03-{day:02d}T{hour:02d}:00:00+00:00"


def create_post(api: TestApp, **fields: Any) -> dict[str, Any]:
    body = {
        "type": "post",
        "title": "A post",
        "status": "publish",
        "published_at": at(1),
        "modified_at": at(1, hour=13),
    }
    body.update(fields)
    return api.post_json("/api/posts", body, status=201).json


def update_post(api: TestApp, post: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return api.patch_json(f"/api/posts/{post['id']}", fields, status=200).json


def add_video(api: TestApp, post: dict[str, Any], **fields: Any) -> dict[str, Any]:
    body = {**MINIMAL_VIDEO, **fields}
    return api.post_json(f"/api/posts/{post['id']}/videos", body, status=201).json


def stored(app_session: Any, make: Any, *args: Any) -> int:
    """The id of what ``make`` (a service) stores: text the API refuses with a 400 (a
    character XML cannot carry) still reaches the store other ways (rows written before
    that, a plugin, a script), and must render all the same."""
    with app_session.begin():
        return int(make(app_session, *args).id)


def update_video(api: TestApp, video: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return api.patch_json(f"/api/videos/{video['id']}", fields, status=200).json


def create_term(api: TestApp, name: str, taxonomy: str = "post_tag", **fields: Any) -> dict:
    body = {"taxonomy": taxonomy, "name": name, **fields}
    return api.post_json("/api/terms", body, status=201).json


def update_settings(api: TestApp, **fields: Any) -> None:
    api.patch_json("/api/settings", fields, status=200)


def post_with_video(api: TestApp, slug: str, **fields: Any) -> dict[str, Any]:
    post = create_post(api, slug=slug, title=slug.title(), **fields)
    add_video(api, post, title=f"Video of {slug}")
    return post


def newest(*dates: str) -> str:
    """The latest of API date-times, as a sitemap ``lastmod``."""
    return max(moment_utc(d) for d in dates).isoformat()


# S-503: one <url> per listed post with videos -------------------------------------------


def test_one_url_per_listed_post_with_videos_and_one_video_element_per_video(api, testapp):
    first = create_post(api, slug="first", title="First post")
    second = create_post(api, slug="second", title="Second post", published_at=at(3))
    without = create_post(api, slug="without", title="No video here")
    videos = [add_video(api, first, title=title) for title in ("One", "Two", "Three")]
    only = add_video(api, second, title="Alone", content_url="https://cdn.example.test/a.mp4")

    urls = video_urls(testapp)

    assert [url["loc"] for url in urls] == [first["permalink"], second["permalink"]]
    assert [v["title"] for v in urls[0]["videos"]] == ["One", "Two", "Three"]
    assert [v["title"] for v in urls[1]["videos"]] == ["Alone"]
    # A video added is a change of its post's URL: lastmod is the newest of both.
    assert urls[0]["lastmod"] == newest(
        first["published_at"], first["modified_at"], *(v["modified_at"] for v in videos)
    )
    assert urls[1]["lastmod"] == newest(
        second["published_at"], second["modified_at"], only["modified_at"]
    )
    assert without["permalink"] not in listed(testapp)
    post_sitemap = fetch(testapp, "/post-sitemap.xml")
    assert without["permalink"] in post_sitemap.xpath("//sm:loc/text()", namespaces=NS)


def test_a_translated_post_names_its_translations_in_the_video_sitemap(api, testapp):
    """S-405: the video sitemap's <url> of a post carries the post's alternates, those
    of every listed member of its group (with a video or not), and follows them."""
    en = post_with_video(api, "film", language="en", translation_group="film")
    de = create_post(api, slug="der-film", language="de", translation_group="film")

    def alternates():
        root = fetch(testapp, VIDEO_SITEMAP)
        return {
            url.findtext("sm:loc", namespaces=NS): [
                (link.get("hreflang"), link.get("href"))
                for link in url.iterfind("{http://www.w3.org/1999/xhtml}link")
            ]
            for url in root.iterfind("sm:url", NS)
        }

    assert alternates() == {
        en["permalink"]: [
            ("de", de["permalink"]),
            ("en", en["permalink"]),
            ("x-default", en["permalink"]),
        ]
    }
    update_post(api, de, status="draft")
    assert alternates() == {en["permalink"]: []}


def test_every_field_of_a_fully_described_video(api, testapp):
    tags = [create_term(api, name) for name in ("Pasta", "Cooking")]
    category = create_term(api, "Recipes", taxonomy="category")
    post = create_post(
        api, slug="pasta", title="Pasta night", terms=[t["id"] for t in [*tags, category]]
    )
    add_video(api, post, **FULL_VIDEO)

    url = only_url(testapp)

    assert url["loc"] == post["permalink"] == f"{SITE_URL}/2024/03/pasta/"
    assert url["videos"] == [
        {
            "thumbnail_loc": FULL_VIDEO["thumbnail_url"],
            "title": FULL_VIDEO["title"],
            "description": FULL_VIDEO["caption"],  # the caption comes first (S-503)
            "content_loc": FULL_VIDEO["content_url"],
            "player_loc": FULL_VIDEO["player_url"],
            "duration": "754",
            "view_count": "12345",
            "publication_date": "2024-03-01T12:30:15+00:00",
            "tags": ["Cooking", "Pasta"],  # the post_tag terms, not the category
            "family_friendly": "no",
            "uploader": "Chef Ada",
            "uploader_info": f"{SITE_URL}/author/ada/",
        }
    ]


def test_a_minimal_video_says_only_what_is_known(api, testapp):
    post = create_post(api, slug="minimal", title="Minimal")
    add_video(api, post, content_url="https://cdn.example.test/m.mp4", player_url=None)

    assert videos_of(testapp) == [
        {
            "thumbnail_loc": MINIMAL_VIDEO["thumbnail_url"],
            "title": "Minimal",  # the post's title
            "description": "https://cdn.example.test/m.mp4",
            "content_loc": "https://cdn.example.test/m.mp4",
            "family_friendly": "yes",
        }
    ]


def test_videos_without_thumbnail_are_left_out_and_a_post_with_none_left_is_not_listed(
    api, testapp
):
    post = create_post(api, slug="mixed")
    add_video(api, post, title="No thumbnail", thumbnail_url=None)
    add_video(api, post, title="Listable")
    other = create_post(api, slug="unlistable-only")
    add_video(api, other, title="No thumbnail either", thumbnail_url=None)

    url = only_url(testapp)
    assert url["loc"] == post["permalink"]
    assert [v["title"] for v in url["videos"]] == ["Listable"]


def test_videos_embedded_in_the_content_are_listed_in_order(api, testapp):
    content = (
        f'<p>Watch:</p><iframe src="https://www.youtube.com/embed/{YOUTUBE_ID}"></iframe>'
        '<video src="/media/clip.mp4" poster="/media/clip.jpg"></video>'
        '<video src="/media/no-poster.mp4"></video>'
    )
    post = create_post(api, slug="embeds", title="Embedded videos", content=content)

    url = only_url(testapp)

    assert url["loc"] == post["permalink"]
    assert url["videos"] == [
        {
            "thumbnail_loc": f"https://i.ytimg.com/vi/{YOUTUBE_ID}/hqdefault.jpg",
            "title": "Embedded videos",
            "description": f"https://www.youtube.com/watch?v={YOUTUBE_ID}",
            "player_loc": f"https://www.youtube-nocookie.com/embed/{YOUTUBE_ID}",
            "family_friendly": "yes",
        },
        {
            "thumbnail_loc": f"{SITE_URL}/media/clip.jpg",
            "title": "Embedded videos",
            "description": f"{SITE_URL}/media/clip.mp4",
            "content_loc": f"{SITE_URL}/media/clip.mp4",
            "family_friendly": "yes",
        },
    ]

    # Saved without the embed, the post has no video left and leaves the video sitemap.
    update_post(api, post, content="<p>Nothing to watch any more.</p>")
    assert listed(testapp) == []


def test_title_falls_back_to_the_post_title_and_is_cut_to_100_characters(api, testapp):
    long_post_title = "Post " + "p" * 145
    post = create_post(api, slug="titles", title=long_post_title)
    exactly_100 = "e" * 100
    add_video(api, post, title="Own title")
    add_video(api, post)  # no title: the post's
    add_video(api, post, title="t" * 150)
    add_video(api, post, title=exactly_100)
    add_video(api, post, title="  spaced \n\t out  ")

    titles = [v["title"] for v in videos_of(testapp)]

    assert titles == [
        "Own title",
        long_post_title[:99] + "…",
        "t" * 99 + "…",
        exactly_100,
        "spaced out",
    ]
    assert all(len(title) <= 100 for title in titles)


def test_a_child_page_follows_its_parents_new_slug(api, testapp):
    """A page's permalink holds its ancestors' slugs: renaming one moves the page."""
    grandparent = create_post(api, type="page", slug="grandparent")
    parent = create_post(api, type="page", slug="parent", parent=grandparent["id"])
    child = create_post(api, type="page", slug="child", parent=parent["id"])
    add_video(api, child)
    assert listed(testapp) == [f"{SITE_URL}/grandparent/parent/child/"]

    update_post(api, grandparent, slug="renamed")

    child = api.get(f"/api/posts/{child['id']}").json
    assert child["permalink"] == f"{SITE_URL}/renamed/parent/child/"
    assert child["permalink"] in [
        e.text for e in fetch(testapp, "/page-sitemap.xml").iter(f"{{{SM_NS}}}loc")
    ]
    assert listed(testapp) == [child["permalink"]]


def test_a_video_without_title_follows_the_post_title(api, testapp):
    post = create_post(api, slug="renamed", title="Before")
    add_video(api, post)
    assert [v["title"] for v in videos_of(testapp)] == ["Before"]

    update_post(api, post, title="After")
    assert [v["title"] for v in videos_of(testapp)] == ["After"]


def test_description_is_the_caption_then_the_description_then_the_host_one_then_page_url(
    oembed_api, oembed_server, testapp
):
    api = oembed_api
    oembed_server.answers[f"https://vimeo.com/{VIMEO_ID}"] = {
        "type": "video",
        "title": "Title from Vimeo",
        "thumbnail_url": "https://i.vimeocdn.com/video/1.jpg",
        "description": "What Vimeo says about it",
    }
    content = (
        f'<iframe src="https://player.vimeo.com/video/{VIMEO_ID}"></iframe>'
        f'<iframe src="https://www.youtube.com/embed/{YOUTUBE_ID}"></iframe>'
    )
    post = create_post(api, slug="descriptions", title="Descriptions", content=content)
    run_worker(api)  # the worker fetches after the commit
    add_video(api, post, title="Described", description="Own words", caption="A caption")
    add_video(api, post, title="Captioned", caption="Only a caption")
    add_video(api, post, title="Paged", page_url="https://videos.example.test/paged")

    videos = videos_of(testapp)
    assert [(v["title"], v["description"]) for v in videos] == [
        ("Title from Vimeo", "What Vimeo says about it"),  # the host's description
        ("Descriptions", f"https://www.youtube.com/watch?v={YOUTUBE_ID}"),  # its page
        ("Described", "A caption"),  # the caption wins over the description
        ("Captioned", "Only a caption"),
        ("Paged", "https://videos.example.test/paged"),
    ]

    vimeo_video = api.get(f"/api/posts/{post['id']}/videos").json["items"][0]
    assert vimeo_video["host_description"] == "What Vimeo says about it"
    update_video(api, vimeo_video, description="A description beats the host")
    assert videos_of(testapp)[0]["description"] == "A description beats the host"
    update_video(api, vimeo_video, caption="A caption beats the description")
    assert videos_of(testapp)[0]["description"] == "A caption beats the description"
    update_video(api, vimeo_video, caption=None)
    assert videos_of(testapp)[0]["description"] == "A description beats the host"


def test_the_caption_wins_over_the_description_and_the_page_url_comes_last(api, testapp):
    post = create_post(api, slug="caption-first", title="Caption first")
    page = "https://videos.example.test/"
    add_video(api, post, title="Both", caption="Caption", description="Words", page_url=page + "1")
    add_video(api, post, title="Description", description="Only words", page_url=page + "2")
    add_video(api, post, title="Blank caption", caption=" \n ", description="Words", page_url=page)
    add_video(api, post, title="Neither", page_url=page + "4")

    assert [(v["title"], v["description"]) for v in videos_of(testapp)] == [
        ("Both", "Caption"),
        ("Description", "Only words"),
        ("Blank caption", "Words"),
        ("Neither", page + "4"),
    ]


def test_a_long_description_is_cut_to_2048_characters(api, testapp):
    post = create_post(api, slug="long-description")
    add_video(api, post, description="d" * 5000)

    [video] = videos_of(testapp)
    assert video["description"] == "d" * 2047 + "…"


def test_duration_is_listed_only_from_1_to_28800_seconds(api, testapp):
    post = create_post(api, slug="durations")
    for seconds in (1, 28_800, 28_801, 86_400, None):
        add_video(api, post, title=f"{seconds}", duration=seconds)

    durations = {v["title"]: v.get("duration") for v in videos_of(testapp)}

    assert durations == {
        "1": "1",
        "28800": "28800",
        "28801": None,
        "86400": None,
        "None": None,
    }


def test_view_count_publication_date_and_family_friendly(api, testapp):
    post = create_post(api, slug="counts")
    add_video(
        api,
        post,
        title="Counted",
        view_count=0,
        published_at="2024-03-01T10:00:00.654321+05:30",
    )
    add_video(api, post, title="Adults", view_count=9_007_199_254_740_991, family_friendly=False)

    counted, adults = videos_of(testapp)

    assert counted["view_count"] == "0"
    assert counted["publication_date"] == "2024-03-01T04:30:00+00:00"
    assert W3C_DATETIME.match(counted["publication_date"])
    assert counted["family_friendly"] == "yes"
    assert adults["view_count"] == "9007199254740991"
    assert "publication_date" not in adults
    assert adults["family_friendly"] == "no"


def test_tags_are_the_posts_tag_names_at_most_32(api, testapp):
    tags = [create_term(api, f"tag-{n:02d}") for n in range(40)]
    category = create_term(api, "a-category", taxonomy="category")
    post = create_post(
        api, slug="tagged", terms=[t["id"] for t in reversed(tags)] + [category["id"]]
    )
    add_video(api, post, title="First")
    add_video(api, post, title="Second")
    other_tag = create_term(api, "only-on-the-other-post")
    other = create_post(api, slug="other", terms=[other_tag["id"]])
    add_video(api, other, title="Other")

    first, second = videos_of_post(testapp, post)

    assert first["tags"] == [f"tag-{n:02d}" for n in range(32)]
    assert second["tags"] == first["tags"]
    [other_video] = videos_of_post(testapp, other)
    assert other_video["tags"] == ["only-on-the-other-post"]


def test_a_deleted_tag_leaves_the_videos_tags_renamed_one_is_renamed_there(api, testapp):
    """Found by the model-based test (issue 13): a deleted tag stayed in ``video:tag``
    until the post was saved again; a rebuild has it gone."""
    kept, renamed, deleted = (create_term(api, name) for name in ("kept", "old", "deleted"))
    post = create_post(api, slug="tagged", terms=[kept["id"], renamed["id"], deleted["id"]])
    add_video(api, post)
    assert videos_of_post(testapp, post)[0]["tags"] == ["deleted", "kept", "old"]

    api.delete(f"/api/terms/{deleted['id']}", status=204)
    assert videos_of_post(testapp, post)[0]["tags"] == ["kept", "old"]

    api.patch_json(f"/api/terms/{renamed['id']}", {"name": "new"}, status=200)
    assert videos_of_post(testapp, post)[0]["tags"] == ["kept", "new"]


def test_an_edit_recomputes_the_videos_of_its_tags_not_of_its_category(api, testapp, monkeypatch):
    """A post edit records the post's terms (their sitemaps' dates follow it): the other
    posts with videos in its tag are recomputed (their ``video:tag`` is the tag's name),
    not those in its category, which no video entry shows."""
    category = create_term(api, "Recipes", taxonomy="category")
    tag = create_term(api, "pasta")
    edited = create_post(api, slug="edited", terms=[category["id"], tag["id"]])
    same_tag = create_post(api, slug="same-tag", terms=[tag["id"]])
    same_category = create_post(api, slug="same-category", terms=[category["id"]])
    for post in (edited, same_tag, same_category):
        add_video(api, post)
    assert len(video_urls(testapp)) == 3
    recomputed: list[set[int] | None] = []
    entries = VideoProvider.entries

    def asked(self: Any, ctx: Any, keys: set[int] | None) -> Any:
        recomputed.append(None if keys is None else set(keys))
        return entries(self, ctx, keys)

    monkeypatch.setattr(VideoProvider, "entries", asked)
    update_post(api, edited, title="Edited")
    apply_changes(api)
    assert recomputed == [{edited["id"], same_tag["id"]}]
    assert [videos_of_post(testapp, post)[0]["tags"] for post in (edited, same_tag)] == [
        ["pasta"],
        ["pasta"],
    ]


def videos_of_post(app: TestApp, post: dict[str, Any]) -> list[dict[str, Any]]:
    [url] = [u for u in video_urls(app) if u["loc"] == post["permalink"]]
    return url["videos"]


def test_a_post_without_tags_has_videos_without_tags(api, testapp):
    post = create_post(api, slug="untagged")
    add_video(api, post)
    assert "tags" not in videos_of(testapp)[0]


def test_uploader_info_only_when_the_uploader_url_is_on_the_sites_host(api, testapp):
    post = create_post(api, slug="uploaders")
    add_video(api, post, title="Local", uploader="Ada", uploader_url=f"{SITE_URL}/about/ada/")
    add_video(api, post, title="Foreign", uploader="Bob", uploader_url="https://youtube.test/@bob")
    add_video(api, post, title="Nameless", uploader_url=f"{SITE_URL}/about/nobody/")
    add_video(api, post, title="Plain", uploader="Cy")

    videos = {v["title"]: v for v in videos_of(testapp)}

    assert videos["Local"]["uploader"] == "Ada"
    assert videos["Local"]["uploader_info"] == f"{SITE_URL}/about/ada/"
    assert videos["Foreign"]["uploader"] == "Bob"
    assert "uploader_info" not in videos["Foreign"]
    assert "uploader" not in videos["Nameless"]
    assert "uploader_info" not in videos["Nameless"]
    assert videos["Plain"]["uploader"] == "Cy"
    assert "uploader_info" not in videos["Plain"]


def test_uploader_info_follows_the_site_url_setting(api, testapp):
    post = create_post(api, slug="moved")
    add_video(api, post, uploader="Ada", uploader_url="https://www.example.test/blog/about/ada/")
    assert "uploader_info" not in videos_of(testapp)[0]

    update_settings(api, site_url="https://www.example.test/blog")

    url = only_url(testapp)
    assert url["loc"] == "https://www.example.test/blog/2024/03/moved/"
    assert url["videos"][0]["uploader_info"] == "https://www.example.test/blog/about/ada/"


def test_text_is_escaped_and_characters_xml_cannot_carry_are_removed(api, testapp, app_session):
    tag = create_term(api, "Rock & Roll <3")
    body = {
        "type": "post",
        "status": "publish",
        "published_at": at(1),
        "slug": "escaping",
        "title": "Tom & Jerry's <Best>\x07 Bits",
        "terms": [tag["id"]],
    }
    post = {"id": stored(app_session, post_service.create_post, body)}
    video = {
        **MINIMAL_VIDEO,
        "title": 'Cats & dogs <live> "quoted"\x01\x1f',
        "description": "a < b && c > d ]]> e\x0b\x0c\x1b end",
        "uploader": "R&D <team>\x02",
        "uploader_url": f"{SITE_URL}/team/?a=1&b=2",
        "thumbnail_url": "https://cdn.example.test/t.jpg?w=1&h=2",
    }
    stored(app_session, video_service.create_video, post["id"], video)
    add_video(api, post)  # titled after the post

    response = testapp.get(VIDEO_SITEMAP)
    body = response.body
    for raw_char in (b"\x01", b"\x02", b"\x07", b"\x0b", b"\x0c", b"\x1b", b"\x1f"):
        assert raw_char not in body
    assert b"Cats &amp; dogs &lt;live&gt;" in body
    assert b"?w=1&amp;h=2" in body
    first, second = videos_of(testapp)  # parsed and valid

    assert first["title"] == 'Cats & dogs <live> "quoted"'
    assert first["description"] == "a < b && c > d ]]> e end"
    assert first["uploader"] == "R&D <team>"
    assert first["uploader_info"] == f"{SITE_URL}/team/?a=1&b=2"
    assert first["thumbnail_loc"] == "https://cdn.example.test/t.jpg?w=1&h=2"
    assert first["tags"] == ["Rock & Roll <3"]
    assert second["title"] == "Tom & Jerry's <Best> Bits"


# S-201, S-205: a post the core does not list is not in the video sitemap ----------------


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"status": "draft"}, id="draft"),
        pytest.param({"status": "private"}, id="private-status"),
        pytest.param({"password": "secret"}, id="password"),
        pytest.param({"robots": "noindex"}, id="noindex"),
        pytest.param({"canonical": "http://other.test/elsewhere/"}, id="foreign-canonical"),
        pytest.param({"exclude_from_sitemap": True}, id="excluded-from-sitemap"),
        pytest.param({"published_at": "2999-01-01T00:00:00+00:00"}, id="scheduled"),
    ],
)
def test_a_post_the_rules_exclude_leaves_the_video_sitemap(api, testapp, change):
    kept = post_with_video(api, "kept")
    post = post_with_video(api, "excluded-later")
    assert listed(testapp) == [kept["permalink"], post["permalink"]]

    update_post(api, post, **change)

    assert listed(testapp) == [kept["permalink"]]
    assert len(api.get(f"/api/posts/{post['id']}/videos").json["items"]) == 1


def test_a_post_whose_type_stops_being_public_leaves_the_video_sitemap(api, testapp):
    api.post_json("/api/post-types", {"name": "clip", "label": "Clips"}, status=201)
    kept = post_with_video(api, "kept")
    clip = post_with_video(api, "a-clip", type="clip")
    assert set(listed(testapp)) == {kept["permalink"], clip["permalink"]}

    api.patch_json("/api/post-types/clip", {"public": False}, status=200)

    assert listed(testapp) == [kept["permalink"]]


def test_a_post_set_to_index_in_a_noindexed_type_is_listed(api, testapp):
    api.post_json("/api/post-types", {"name": "clip", "label": "Clips"}, status=201)
    forced = post_with_video(api, "forced", type="clip", robots="index")
    by_default = post_with_video(api, "by-default", type="clip")
    assert set(listed(testapp)) == {forced["permalink"], by_default["permalink"]}

    api.patch_json("/api/post-types/clip", {"noindex": True}, status=200)

    assert listed(testapp) == [forced["permalink"]]


def test_a_scheduled_post_joins_the_video_sitemap_when_it_goes_live(api, testapp, clock):
    kept = post_with_video(api, "kept")
    soon = clock.now().replace(microsecond=0)
    scheduled = post_with_video(api, "scheduled", published_at=soon.isoformat())
    assert listed(testapp) == [kept["permalink"], scheduled["permalink"]]

    later = soon + timedelta(days=365)
    scheduled = update_post(api, scheduled, published_at=later.isoformat())
    assert listed(testapp) == [kept["permalink"]]

    clock.advance(days=400)
    assert listed(testapp) == [kept["permalink"], scheduled["permalink"]]


def test_a_private_site_has_an_empty_video_sitemap_and_no_index_entry(api, testapp):
    post = post_with_video(api, "public-for-now")
    assert listed(testapp) == [post["permalink"]]
    assert video_pages_in_index(testapp)

    update_settings(api, private=True)

    root = fetch(testapp, VIDEO_SITEMAP)
    assert root.tag == f"{{{SM_NS}}}urlset"
    assert len(root) == 0
    assert index(testapp) == {}

    update_settings(api, private=False)
    assert listed(testapp) == [post["permalink"]]


def test_deleting_a_posts_last_video_or_the_post_removes_it(api, testapp):
    first = post_with_video(api, "first")
    second = post_with_video(api, "second")
    [video] = api.get(f"/api/posts/{first['id']}/videos").json["items"]

    api.delete(f"/api/videos/{video['id']}", status=204)
    assert listed(testapp) == [second["permalink"]]

    api.delete(f"/api/posts/{second['id']}", status=204)
    assert listed(testapp) == []


# S-301, S-306: the index ----------------------------------------------------------------


def test_the_index_lists_the_video_sitemap_with_its_newest_lastmod(api, testapp, clock):
    first = post_with_video(api, "first")
    clock.advance(days=1)
    second = post_with_video(api, "second")

    urls = video_urls(testapp)
    assert [u["loc"] for u in urls] == [first["permalink"], second["permalink"]]
    assert moment(urls[1]["lastmod"]) > moment(urls[0]["lastmod"])
    pages = video_pages_in_index(testapp)
    assert list(pages) == [f"{SITE_URL}{VIDEO_SITEMAP}"]
    assert pages[f"{SITE_URL}{VIDEO_SITEMAP}"] == urls[1]["lastmod"]

    # Editing the older post's video makes it the newest: the index follows.
    clock.advance(days=1)
    [video] = api.get(f"/api/posts/{first['id']}/videos").json["items"]
    update_video(api, video, title="Edited")
    urls = video_urls(testapp)
    assert moment(urls[0]["lastmod"]) > moment(urls[1]["lastmod"])
    assert video_pages_in_index(testapp) == {f"{SITE_URL}{VIDEO_SITEMAP}": urls[0]["lastmod"]}


def test_no_index_entry_and_an_empty_video_sitemap_when_no_listed_post_has_videos(api, testapp):
    create_post(api, slug="no-video")
    draft = create_post(api, slug="draft", status="draft")
    add_video(api, draft)
    unlistable = create_post(api, slug="unlistable")
    add_video(api, unlistable, thumbnail_url=None)

    assert f"{SITE_URL}/post-sitemap.xml" in index(testapp)
    assert video_pages_in_index(testapp) == {}
    response = testapp.get(VIDEO_SITEMAP, status=200)
    root = parse_sitemap(response.body)
    assert root.tag == f"{{{SM_NS}}}urlset"
    assert len(root) == 0
    assert root.nsmap.get("video") == VIDEO_NS
    assert stylesheet_of(response.body).get("href") == VIDEO_XSL

    update_post(api, draft, status="publish")
    assert listed(testapp) == [draft["permalink"]]
    assert list(video_pages_in_index(testapp)) == [f"{SITE_URL}{VIDEO_SITEMAP}"]


# S-303, S-304, S-305: pages -------------------------------------------------------------


def test_video_sitemap_pages_hold_entries_per_page_in_post_order(api, testapp):
    update_settings(api, entries_per_page=3)
    posts = [post_with_video(api, f"video-{n}", published_at=at(n)) for n in range(1, 8)]
    create_post(api, slug="no-video")
    permalinks = [p["permalink"] for p in sorted(posts, key=lambda p: p["id"])]

    pages = [video_urls(testapp, n) for n in (1, 2, 3)]

    assert [[u["loc"] for u in page] for page in pages] == [
        permalinks[0:3],
        permalinks[3:6],
        permalinks[6:7],
    ]
    listed_pages = video_pages_in_index(testapp)
    assert list(listed_pages) == [
        f"{SITE_URL}/video-sitemap.xml",
        f"{SITE_URL}/video-sitemap2.xml",
        f"{SITE_URL}/video-sitemap3.xml",
    ]
    for page, lastmod in zip(pages, listed_pages.values(), strict=True):
        assert lastmod == max((u["lastmod"] for u in page), key=moment)

    missing = testapp.get("/video-sitemap4.xml", status=404)
    assert missing.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    assert b"Traceback" not in missing.body
    for path in ("/video-sitemap1.xml", "/video-sitemap01.xml", "/video-sitemap0.xml"):
        redirect = testapp.get(path, status=301)
        assert urlsplit(redirect.location).path == VIDEO_SITEMAP
    assert urlsplit(testapp.get("/video-sitemap02.xml", status=301).location).path == (
        "/video-sitemap2.xml"
    )


def test_an_empty_video_sitemap_has_no_second_page(testapp):
    assert len(fetch(testapp, VIDEO_SITEMAP)) == 0
    testapp.get("/video-sitemap2.xml", status=404)


def test_many_posts_with_videos_in_one_write_are_all_listed_and_follow_their_tag(api, testapp):
    """More posts than one batch of the provider's queries (500), changed in one write:
    an import, then the renaming of the tag they all carry."""
    count = 501
    tag = create_term(api, "bulk")
    lines = [
        json.dumps(
            {
                "post": {
                    "type": "post",
                    "title": f"Bulk {n}",
                    "slug": f"bulk-{n}",
                    "status": "publish",
                    "published_at": at(1),
                    "terms": [tag["id"]],
                    "content": f'<iframe src="https://youtu.be/{n:011d}"></iframe>',
                }
            }
        )
        for n in range(count)
    ]
    api.post(
        "/api/import", "\n".join(lines).encode(), content_type="application/x-ndjson", status=200
    )

    urls = video_urls(testapp)
    assert len(urls) == count
    assert [u["videos"][0]["player_loc"] for u in urls] == [
        f"https://www.youtube-nocookie.com/embed/{n:011d}" for n in range(count)
    ]
    assert {tuple(u["videos"][0]["tags"]) for u in urls} == {("bulk",)}

    api.patch_json(f"/api/terms/{tag['id']}", {"name": "renamed"}, status=200)

    urls = video_urls(testapp)
    assert len(urls) == count
    assert {tuple(u["videos"][0]["tags"]) for u in urls} == {("renamed",)}


# S-307 and HTTP: headers, validators, compression ---------------------------------------


def test_the_video_sitemap_has_the_sitemap_headers_an_etag_and_answers_304(api, testapp):
    post_with_video(api, "headers")
    response = testapp.get(VIDEO_SITEMAP, status=200)
    assert response.headers["Content-Type"] == "text/xml; charset=UTF-8"
    assert response.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    etag = response.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"')

    not_modified = testapp.get(VIDEO_SITEMAP, headers={"If-None-Match": etag}, status=304)
    assert not_modified.body == b""
    assert not_modified.headers["ETag"] == etag
    assert not_modified.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    testapp.get(VIDEO_SITEMAP, headers={"If-None-Match": '"other"'}, status=200)


def test_the_video_sitemap_is_gzipped_when_the_client_accepts_it(api, testapp):
    post_with_video(api, "zipped")
    plain = raw(testapp, VIDEO_SITEMAP)
    assert plain.status_int == 200
    assert plain.content_encoding is None
    assert plain.headers["Vary"] == "Accept-Encoding"

    zipped = raw(testapp, VIDEO_SITEMAP, **{"Accept-Encoding": "gzip"})

    assert zipped.status_int == 200
    assert zipped.content_encoding == "gzip"
    assert zipped.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    assert zipped.headers["Content-Type"] == "text/xml; charset=UTF-8"
    assert gzip.decompress(zipped.body) == plain.body
    assert zipped.headers["ETag"] != plain.headers["ETag"]
    again = raw(
        testapp,
        VIDEO_SITEMAP,
        **{"Accept-Encoding": "gzip", "If-None-Match": zipped.headers["ETag"]},
    )
    assert again.status_int == 304
    assert len(parse_sitemap(gzip.decompress(zipped.body)).findall("sm:url", NS)) == 1


def changed_document(app: TestApp, before: Any) -> bytes:
    """The video sitemap after a write: the old ETag gets the new document."""
    etag = before.headers["ETag"]
    after = app.get(VIDEO_SITEMAP, headers={"If-None-Match": etag}, status=200)
    assert after.headers["ETag"] != etag
    assert after.body != before.body
    app.get(VIDEO_SITEMAP, headers={"If-None-Match": after.headers["ETag"]}, status=304)
    parse_sitemap(after.body)
    return after.body


def test_editing_a_video_changes_the_video_sitemap(api, testapp):
    post = create_post(api, slug="edited")
    video = add_video(api, post, title="Before", duration=60)
    before = testapp.get(VIDEO_SITEMAP)

    update_video(api, video, title="After", duration=61)

    body = changed_document(testapp, before)
    assert b"<video:title>After</video:title>" in body
    assert b"<video:duration>61</video:duration>" in body
    assert b"Before" not in body


def test_changing_the_posts_tags_changes_the_video_sitemap(api, testapp):
    first, second = create_term(api, "first-tag"), create_term(api, "second-tag")
    post = create_post(api, slug="retagged", terms=[first["id"]])
    add_video(api, post)
    before = testapp.get(VIDEO_SITEMAP)
    assert videos_of(testapp)[0]["tags"] == ["first-tag"]

    update_post(api, post, terms=[second["id"]])

    changed_document(testapp, before)
    assert videos_of(testapp)[0]["tags"] == ["second-tag"]

    # Renaming the tag is a change of every video's tag too.
    before = testapp.get(VIDEO_SITEMAP)
    api.patch_json(f"/api/terms/{second['id']}", {"name": "renamed-tag"}, status=200)
    changed_document(testapp, before)
    assert videos_of(testapp)[0]["tags"] == ["renamed-tag"]


def test_a_write_that_changes_no_video_keeps_the_etag(api, testapp):
    post_with_video(api, "stable")
    etag = testapp.get(VIDEO_SITEMAP).headers["ETag"]

    api.post_json("/api/authors", {"slug": "ada", "name": "Ada"}, status=201)

    testapp.get(VIDEO_SITEMAP, headers={"If-None-Match": etag}, status=304)


# S-308: the video XSL -------------------------------------------------------------------


def test_the_video_xsl_is_served_and_the_video_sitemap_points_at_it(api, testapp):
    post_with_video(api, "styled")

    xsl = testapp.get(VIDEO_XSL, status=200)
    assert xsl.content_type == "text/xsl"
    assert xsl.charset.upper() == "UTF-8"
    assert xsl.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    assert etree.QName(etree.fromstring(xsl.body, xml_parser())).localname == "stylesheet"

    instruction = stylesheet_of(testapp.get(VIDEO_SITEMAP).body)
    assert instruction.get("type") == "text/xsl"
    assert instruction.get("href") == VIDEO_XSL
    # The core's documents keep the core's stylesheet.
    assert stylesheet_of(testapp.get("/post-sitemap.xml").body).get("href") == "/main-sitemap.xsl"


def test_the_video_xsl_renders_one_row_per_video(api, testapp):
    first = create_post(api, slug="first", title="First post")
    second = create_post(api, slug="second", title="Second post")
    add_video(api, first, **{**FULL_VIDEO, "title": "Twelve minutes", "duration": 754})
    add_video(api, first, title="Five seconds", duration=5, thumbnail_url="https://t.test/5.jpg")
    add_video(api, second, title="An hour", duration=3600, thumbnail_url="https://t.test/h.jpg")
    add_video(api, second, title="Unknown length", thumbnail_url="https://t.test/u.jpg")

    transform = browser_stylesheet(testapp, VIDEO_XSL)
    html = transform(etree.fromstring(testapp.get(VIDEO_SITEMAP).body, xml_parser()))

    [table] = html.xpath("//table")
    headings = [th.text for th in table.xpath(".//thead//th")]
    assert headings == ["Thumbnail", "Title", "Description", "Duration", "Published"]
    rows = table.xpath(".//tbody/tr")
    found = [
        {
            "img": row.xpath("td[1]//img/@src"),
            "title": "".join(row.xpath("td[2]")[0].itertext()).strip(),
            "link": row.xpath("td[2]//a/@href"),
            "duration": "".join(row.xpath("td[4]")[0].itertext()).strip(),
        }
        for row in rows
    ]
    assert found == [
        {
            "img": [FULL_VIDEO["thumbnail_url"]],
            "title": "Twelve minutes",
            "link": [first["permalink"]],
            "duration": "12:34",
        },
        {
            "img": ["https://t.test/5.jpg"],
            "title": "Five seconds",
            "link": [first["permalink"]],
            "duration": "0:05",
        },
        {
            "img": ["https://t.test/h.jpg"],
            "title": "An hour",
            "link": [second["permalink"]],
            "duration": "60:00",
        },
        {
            "img": ["https://t.test/u.jpg"],
            "title": "Unknown length",
            "link": [second["permalink"]],
            "duration": "",
        },
    ]
    count = "".join(html.xpath("//p[@id='count']")[0].itertext())
    assert " ".join(count.split()) == "This video sitemap contains 2 URLs with 4 videos."
    published = " ".join("".join(rows[0].xpath("td[5]")[0].itertext()).split())
    assert published == "2024-03-01 12:30 (+00:00)"


def test_blank_title_and_description_fall_back_like_missing_ones(api, testapp, app_session):
    post = create_post(api, slug="blank", title="The post's title")
    add_video(api, post, title=" \t\n ", description="  \n ", caption="The caption", uploader="  ")
    nothing_xml_can_carry = {"title": "\x01\x02", "description": "\x03"}
    video = {**MINIMAL_VIDEO, **nothing_xml_can_carry, "page_url": "https://v.test/p"}
    stored(app_session, video_service.create_video, post["id"], video)

    videos = videos_of(testapp)

    assert [(v["title"], v["description"]) for v in videos] == [
        ("The post's title", "The caption"),
        ("The post's title", "https://v.test/p"),
    ]
    assert "uploader" not in videos[0]


def test_the_video_xsl_renders_an_empty_video_sitemap_as_an_empty_table(api, testapp):
    create_post(api, slug="no-video")

    transform = browser_stylesheet(testapp, VIDEO_XSL)
    html = transform(etree.fromstring(testapp.get(VIDEO_SITEMAP).body, xml_parser()))

    [table] = html.xpath("//table")
    assert table.xpath(".//tbody/tr") == []
    count = " ".join("".join(html.xpath("//p[@id='count']")[0].itertext()).split())
    assert count == "This video sitemap contains 0 URLs with 0 videos."
