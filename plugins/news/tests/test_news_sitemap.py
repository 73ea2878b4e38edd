"""``/news-sitemap.xml`` as a crawler reads it (S-504, with the S-2xx rules and S-3xx).

Sites are built through the admin API (``api``: posts, terms, settings, and the news
endpoints) and read without credentials (``testapp``). Every document is parsed with lxml
and, when it has entries, validated against the current and the 2009 XSDs
(``parse_sitemap``). Time moves with ``clock``, never by sleeping.
"""

from __future__ import annotations

import json
import re
import threading
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from sqlalchemy import event
from sqlalchemy.orm import Session
from webtest import TestApp

from sitemap_server.app import site_of_app
from sitemap_server.models import Post
from sitemap_server.services import posts as post_service
from sitemap_server.testing import (
    SITE_URL,
    apply_changes,
    browser_stylesheet,
    parse_sitemap,
    xml_parser,
)
from sitemap_server_news.provider import KEY_IDS, NewsProvider, order_key

SM_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
NS = {"sm": SM_NS, "news": NEWS_NS, "image": IMAGE_NS}
NEWS_SITEMAP = "/news-sitemap.xml"
NEWS_XSL = "/news-sitemap.xsl"
NEWS_IN_INDEX = f"{SITE_URL}{NEWS_SITEMAP}"
X_ROBOTS_TAG = "noindex, follow"
W3C_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$")
WINDOW = timedelta(hours=48)
SECOND = timedelta(seconds=1)


# Reading sitemaps -----------------------------------------------------------------------


def fetch(app: TestApp, path: str, **headers: str) -> Any:
    """A sitemap document: 200, the sitemap headers, valid (when it has entries)."""
    response = app.get(path, headers=headers, status=200)
    assert response.headers["Content-Type"] == "text/xml; charset=UTF-8"
    assert response.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    return parse_sitemap(response.body)


def read_item(url: Any) -> dict[str, Any]:
    """One ``<url>`` of the news sitemap, as {field: text}."""
    [news] = url.findall("news:news", NS)
    [publication] = news.findall("news:publication", NS)
    item: dict[str, Any] = {
        "loc": url.findtext("sm:loc", namespaces=NS),
        "lastmod": url.findtext("sm:lastmod", namespaces=NS),
        "name": publication.findtext("news:name", namespaces=NS),
        "language": publication.findtext("news:language", namespaces=NS),
        "publication_date": news.findtext("news:publication_date", namespaces=NS),
        "title": news.findtext("news:title", namespaces=NS),
        "images": [i.findtext("image:loc", namespaces=NS) for i in url.findall("image:image", NS)],
    }
    for optional in ("genres", "keywords"):
        found = news.findall(f"news:{optional}", NS)
        assert len(found) <= 1
        if found:
            item[optional] = found[0].text
    return item


def news_items(app: TestApp) -> list[dict[str, Any]]:
    root = fetch(app, NEWS_SITEMAP)
    assert root.tag == f"{{{SM_NS}}}urlset"
    return [read_item(url) for url in root.iterfind("sm:url", NS)]


def listed(app: TestApp) -> list[str]:
    return [item["loc"] for item in news_items(app)]


def only_item(app: TestApp) -> dict[str, Any]:
    [item] = news_items(app)
    return item


def index(app: TestApp) -> dict[str, str]:
    """``/sitemap_index.xml`` as {sitemap URL: lastmod}."""
    root = fetch(app, "/sitemap_index.xml")
    assert root.tag == f"{{{SM_NS}}}sitemapindex"
    return {
        s.findtext("sm:loc", namespaces=NS): s.findtext("sm:lastmod", namespaces=NS)
        for s in root.iterfind("sm:sitemap", NS)
    }


def moment(text: str | None) -> datetime:
    assert text is not None
    assert W3C_DATETIME.match(text), text
    return datetime.fromisoformat(text)


def stylesheet_of(body: bytes) -> Any:
    """The ``xml-stylesheet`` instruction before the root element."""
    root = etree.fromstring(body, xml_parser())
    before_root = list(root.itersiblings(preceding=True))
    assert before_root, "no processing instruction before the root element"
    first = before_root[-1]
    assert isinstance(first, etree._ProcessingInstruction)
    assert first.target == "xml-stylesheet"
    return first


# Building sites -------------------------------------------------------------------------


def ago(clock: Any, **delta: float) -> datetime:
    """The application's now minus ``delta``, in whole seconds."""
    return (clock.now() - timedelta(**delta)).replace(microsecond=0)


def move_to(clock: Any, when: datetime) -> None:
    """Stop the application's clock at ``when``: one second before an edge stays one
    second before it however long the requests take."""
    clock.freeze(when)


def create_post(api: TestApp, clock: Any, age: timedelta = timedelta(hours=1), **fields) -> dict:
    """A listed post published (and last modified) ``age`` ago."""
    when = ago(clock, seconds=age.total_seconds()).isoformat()
    body = {
        "type": "post",
        "title": "A story",
        "status": "publish",
        "published_at": when,
        "modified_at": when,
        **fields,
    }
    return api.post_json("/api/posts", body, status=201).json


def update_post(api: TestApp, post: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return api.patch_json(f"/api/posts/{post['id']}", fields, status=200).json


def news_settings(api: TestApp, **fields: Any) -> dict[str, Any]:
    return api.patch_json("/api/news/settings", fields, status=200).json


def post_news(api: TestApp, post: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return api.patch_json(f"/api/posts/{post['id']}/news", fields, status=200).json


def site_settings(api: TestApp, **fields: Any) -> None:
    api.patch_json("/api/settings", fields, status=200)


# Which posts are news -------------------------------------------------------------------


def test_a_recent_post_is_listed_with_its_news_fields(api, testapp, clock):
    site_settings(api, title="The Daily Test", language="en")
    post = create_post(api, clock, timedelta(hours=3), title="Breaking story")
    sent = datetime.fromisoformat(post["published_at"])

    item = only_item(testapp)

    assert item["loc"] == post["permalink"]
    assert moment(item["lastmod"]) == sent
    assert item["name"] == "The Daily Test"
    assert item["language"] == "en"
    assert moment(item["publication_date"]) == sent
    assert item["title"] == "Breaking story"
    assert item["images"] == []
    assert "genres" not in item and "keywords" not in item


def test_a_translated_story_carries_its_language_and_its_translations(api, testapp, clock):
    """S-405 in the news sitemap: news:language is the post's own language when it has no
    news language, and its <url> names its translations as the post sitemap does."""
    site_settings(api, language="en")
    en = create_post(api, clock, title="Story", language="en-GB", translation_group="s")
    br = create_post(api, clock, title="História", language="pt-BR", translation_group="s")
    root = fetch(testapp, NEWS_SITEMAP)
    found = {
        url.findtext("sm:loc", namespaces=NS): (
            url.findtext("news:news/news:publication/news:language", namespaces=NS),
            [
                (link.get("hreflang"), link.get("href"))
                for link in url.iterfind("{http://www.w3.org/1999/xhtml}link")
            ],
        )
        for url in root.iterfind("sm:url", NS)
    }
    links = [("en-GB", en["permalink"]), ("pt-BR", br["permalink"])]
    assert found == {en["permalink"]: ("en", links), br["permalink"]: ("pt", links)}
    post_news(api, br, language="es")  # the post's news language wins
    assert read_languages(testapp)[br["permalink"]] == "es"


def read_languages(app: TestApp) -> dict[str, str]:
    return {item["loc"]: item["language"] for item in news_items(app)}


def test_posts_are_newest_first_by_the_later_of_published_and_modified(api, testapp, clock):
    edited_published = ago(clock, hours=30)
    edited = create_post(
        api,
        clock,
        slug="edited",
        published_at=edited_published.isoformat(),
        modified_at=ago(clock, hours=1).isoformat(),
    )
    older = create_post(api, clock, timedelta(hours=20), slug="older")
    newer = create_post(api, clock, timedelta(hours=2), slug="newer")
    oldest = create_post(api, clock, timedelta(hours=40), slug="oldest")

    items = news_items(testapp)

    assert [i["loc"] for i in items] == [
        edited["permalink"],
        newer["permalink"],
        older["permalink"],
        oldest["permalink"],
    ]
    lastmods = [moment(i["lastmod"]) for i in items]
    assert lastmods == sorted(lastmods, reverse=True)
    # The publication date stays the publication, not the edit.
    assert moment(items[0]["publication_date"]) == edited_published
    assert moment(items[0]["lastmod"]) > moment(items[0]["publication_date"])


def test_old_posts_are_not_news(api, testapp, clock):
    recent = create_post(api, clock, timedelta(hours=47), slug="recent")
    create_post(api, clock, timedelta(hours=49), slug="two-days-old")
    create_post(api, clock, timedelta(days=30), slug="last-month")

    assert listed(testapp) == [recent["permalink"]]
    # The core still lists all three.
    post_sitemap = fetch(testapp, "/post-sitemap.xml")
    assert len(post_sitemap.findall("sm:url", NS)) == 4  # the home page and three posts


def test_a_page_is_news_only_when_the_settings_say_so(api, testapp, clock):
    post = create_post(api, clock, timedelta(hours=2), slug="story")
    page = create_post(api, clock, slug="about", type="page")
    assert listed(testapp) == [post["permalink"]]

    news_settings(api, post_types=["post", "page"])
    assert listed(testapp) == [page["permalink"], post["permalink"]]

    news_settings(api, post_types=["page"])
    assert listed(testapp) == [page["permalink"]]


def test_an_item_moves_with_its_parent_and_its_translation_follows(api, testapp, clock):
    """A parent page's slug is in its children's URLs: a child that is news moves with
    it, and so do the hreflang alternates of the child's translation, neither of them
    written (the maintainer reaches them as the page sitemap does)."""
    news_settings(api, post_types=["page"])
    guides = create_post(api, clock, timedelta(days=30), type="page", slug="guides")
    child = create_post(
        api,
        clock,
        type="page",
        slug="pasta",
        parent=guides["id"],
        language="en",
        translation_group="pasta",
    )
    other = create_post(
        api,
        clock,
        timedelta(hours=2),
        type="page",
        slug="pates",
        parent=guides["id"],
        language="fr",
        translation_group="pasta",
    )
    assert listed(testapp) == [child["permalink"], other["permalink"]]
    update_post(api, guides, slug="recipes")
    moved = [f"{SITE_URL}/recipes/pasta/", f"{SITE_URL}/recipes/pates/"]
    assert listed(testapp) == [f"{SITE_URL}/recipes/", *moved]  # the parent is news now
    root = fetch(testapp, NEWS_SITEMAP)
    alternates = {link.get("href") for link in root.iter("{http://www.w3.org/1999/xhtml}link")}
    assert alternates == set(moved)


def test_a_custom_type_added_to_the_settings_becomes_news(api, testapp, clock):
    api.post_json("/api/post-types", {"name": "story", "label": "Stories"}, status=201)
    story = create_post(api, clock, slug="a-story", type="story")
    post = create_post(api, clock, timedelta(hours=5), slug="a-post")
    assert listed(testapp) == [post["permalink"]]
    assert story["permalink"] in [
        loc.text for loc in fetch(testapp, "/story-sitemap.xml").iterfind("sm:url/sm:loc", NS)
    ]

    news_settings(api, post_types=["post", "story"])

    assert listed(testapp) == [story["permalink"], post["permalink"]]


def test_at_most_1000_newest_posts_are_listed(api, testapp, clock):
    base = ago(clock, minutes=1)
    lines = [
        {
            "post": {
                "id": n,
                "type": "post",
                "title": f"Story {n}",
                "slug": f"story-{n}",
                "status": "publish",
                "published_at": (base - timedelta(minutes=n)).isoformat(),
                "modified_at": (base - timedelta(minutes=n)).isoformat(),
            }
        }
        for n in range(1, 1002)
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines)
    created = api.post(
        "/api/import", body.encode(), content_type="application/x-ndjson", status=200
    ).json
    assert created["created"] == {"post": 1001}

    def slugs() -> list[str]:
        found = []
        for loc in listed(testapp):
            match = re.search(r"/(story-\d+)/$", loc)
            assert match, loc
            found.append(match.group(1))
        return found

    assert slugs() == [f"story-{n}" for n in range(1, 1001)]

    # The newest goes: the 1,001st comes in at the end.
    api.delete("/api/posts/1", status=204)
    assert slugs() == [f"story-{n}" for n in range(2, 1002)]


def test_an_edit_renders_and_writes_the_entry_of_that_story_alone(api, testapp, clock, entry_work):
    """The news sitemap is recomputed whole for an edit of a story (it may move, push the
    oldest out); the stories that come out as they were keep their stored rows."""
    stories = [create_post(api, clock, timedelta(hours=n), slug=f"s{n}") for n in range(1, 6)]
    assert len(listed(testapp)) == 5
    rendered, written = entry_work
    rendered.clear()
    written.clear()
    update_post(api, stories[2], title="Updated story")
    apply_changes(api)
    assert {key % KEY_IDS for name, key in written if name == "news"} == {stories[2]["id"]}
    assert {key % KEY_IDS for name, key in rendered if name == "news"} == {stories[2]["id"]}
    items = news_items(testapp)
    assert [item["loc"].rsplit("/", 2)[-2] for item in items] == ["s3", "s1", "s2", "s4", "s5"]
    assert [item["title"] for item in items] == ["Updated story"] + ["A story"] * 4


# news:publication/name ------------------------------------------------------------------


def test_the_publication_name_is_the_setting_else_the_site_title(api, testapp, clock):
    site_settings(api, title="Site Title")
    create_post(api, clock)
    assert only_item(testapp)["name"] == "Site Title"

    news_settings(api, publication_name="Daily <News> & Co")
    body = testapp.get(NEWS_SITEMAP).body
    assert b"Daily &lt;News&gt; &amp; Co" in body
    assert only_item(testapp)["name"] == "Daily <News> & Co"

    site_settings(api, title="Renamed Site")
    assert only_item(testapp)["name"] == "Daily <News> & Co"

    news_settings(api, publication_name=None)
    assert only_item(testapp)["name"] == "Renamed Site"


def test_a_site_title_change_reaches_the_news_sitemap(api, testapp, clock):
    site_settings(api, title="Before")
    create_post(api, clock, slug="one")
    create_post(api, clock, timedelta(hours=2), slug="two")
    assert [i["name"] for i in news_items(testapp)] == ["Before", "Before"]

    site_settings(api, title="After")

    assert [i["name"] for i in news_items(testapp)] == ["After", "After"]


# news:language --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("site_language", "expected"),
    [
        ("en", "en"),
        ("pt-BR", "pt"),
        ("fr-CA", "fr"),
        ("sr-Latn-RS", "sr"),
        ("zh", "zh-cn"),
        ("zh-CN", "zh-cn"),
        ("zh-TW", "zh-tw"),
        ("zh-Hant", "zh-tw"),
    ],
)
def test_the_language_defaults_to_the_sites(api, testapp, clock, site_language, expected):
    site_settings(api, language=site_language)
    create_post(api, clock)

    assert only_item(testapp)["language"] == expected


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("de", "de"),
        ("pt-BR", "pt"),
        ("en-GB", "en"),
        ("es-419", "es"),
        ("sr-Latn-RS", "sr"),
        ("de-CH-1996", "de"),
        ("zh", "zh-cn"),
        ("zh-cn", "zh-cn"),
        ("zh-Hans", "zh-cn"),
        ("zh-CN", "zh-cn"),
        ("zh-SG", "zh-cn"),
        ("zh-Hans-HK", "zh-cn"),  # the script, not the region, tells the characters
        ("zh-tw", "zh-tw"),
        ("zh-Hant", "zh-tw"),
        ("zh-TW", "zh-tw"),
        ("zh-HK", "zh-tw"),
        ("zh-MO", "zh-tw"),
        ("zh-Hant-CN", "zh-tw"),
        ("zh-x-hant", "zh-cn"),  # private use says nothing Google reads
    ],
)
def test_a_language_tag_is_reduced_to_what_google_news_accepts(api, testapp, clock, tag, expected):
    site_settings(api, language="fr")
    post = create_post(api, clock)

    assert news_settings(api, language=tag)["language"] == tag  # stored as given
    assert only_item(testapp)["language"] == expected

    news_settings(api, language=None)
    assert only_item(testapp)["language"] == "fr"
    assert post_news(api, post, language=tag)["language"] == tag
    assert only_item(testapp)["language"] == expected


def test_the_posts_language_beats_the_news_default_which_beats_the_sites(api, testapp, clock):
    site_settings(api, language="pt-BR")
    own = create_post(api, clock, slug="own")
    other = create_post(api, clock, timedelta(hours=2), slug="other")
    assert [i["language"] for i in news_items(testapp)] == ["pt", "pt"]

    news_settings(api, language="fr")
    assert [i["language"] for i in news_items(testapp)] == ["fr", "fr"]

    post_news(api, own, language="de")
    items = {i["loc"]: i["language"] for i in news_items(testapp)}
    assert items == {own["permalink"]: "de", other["permalink"]: "fr"}

    post_news(api, own, language="zh-tw")
    news_settings(api, language=None)
    items = {i["loc"]: i["language"] for i in news_items(testapp)}
    assert items == {own["permalink"]: "zh-tw", other["permalink"]: "pt"}

    post_news(api, own, language=None)
    assert [i["language"] for i in news_items(testapp)] == ["pt", "pt"]


# news:publication_date, news:title, genres, keywords, images -----------------------------


def test_the_publication_date_is_w3c_with_an_offset(api, testapp, clock):
    sent = ago(clock, hours=5).astimezone(UTC)
    zulu = sent.isoformat().replace("+00:00", "Z")
    tokyo = sent.astimezone(timezone(timedelta(hours=9))).isoformat()
    create_post(api, clock, published_at=zulu, modified_at=tokyo)

    item = only_item(testapp)

    assert W3C_DATETIME.match(item["publication_date"]), item["publication_date"]
    assert moment(item["publication_date"]) == sent
    assert moment(item["lastmod"]) == sent


def test_a_publication_date_given_with_an_offset_names_the_same_moment(api, testapp, clock):
    sent = ago(clock, hours=5).astimezone(UTC)
    offset = sent.astimezone(timezone(timedelta(hours=-5, minutes=-30)))
    create_post(api, clock, published_at=offset.isoformat(), modified_at=offset.isoformat())

    item = only_item(testapp)

    assert W3C_DATETIME.match(item["publication_date"])
    assert moment(item["publication_date"]) == sent


def test_the_title_is_escaped_and_characters_xml_cannot_carry_are_removed(
    api, testapp, clock, app_session
):
    """The API refuses a character XML cannot carry (400); a title stored otherwise (rows
    written before that, a plugin, a script on the services) renders without it."""
    when = ago(clock, seconds=3600).isoformat()
    body = {
        "type": "post",
        "status": "publish",
        "published_at": when,
        "modified_at": when,
        "title": 'Tom & Jerry\'s <Best>\x07 "Bits"\x1f ]]> end',
    }
    assert api.post_json("/api/posts", body, expect_errors=True).status_int == 400
    with app_session.begin():
        post_service.create_post(app_session, body)

    body = testapp.get(NEWS_SITEMAP).body

    assert b"\x07" not in body and b"\x1f" not in body
    assert b"Tom &amp; Jerry" in body
    assert b"&lt;Best&gt;" in body
    assert only_item(testapp)["title"] == 'Tom & Jerry\'s <Best> "Bits" ]]> end'


def test_genres_and_keywords_appear_when_set(api, testapp, clock):
    tagged = create_post(api, clock, slug="tagged")
    plain = create_post(api, clock, timedelta(hours=2), slug="plain")

    post_news(api, tagged, genres=["Blog", "OpEd"], keywords="space, rockets & moons")

    items = {i["loc"]: i for i in news_items(testapp)}
    assert items[tagged["permalink"]]["genres"] == "Blog, OpEd"
    assert items[tagged["permalink"]]["keywords"] == "space, rockets & moons"
    assert "genres" not in items[plain["permalink"]]
    assert "keywords" not in items[plain["permalink"]]
    assert b"rockets &amp; moons" in testapp.get(NEWS_SITEMAP).body

    post_news(api, tagged, genres=[], keywords=None)
    items = {i["loc"]: i for i in news_items(testapp)}
    assert "genres" not in items[tagged["permalink"]]
    assert "keywords" not in items[tagged["permalink"]]


def test_one_image_element_per_image_of_the_post(api, testapp, clock):
    featured = f"{SITE_URL}/uploads/featured.jpg"
    inline = f"{SITE_URL}/uploads/inline.png"
    extra = f"{SITE_URL}/uploads/extra.jpg?w=1&h=2"
    create_post(
        api,
        clock,
        slug="pictures",
        featured_image=featured,
        content='<p>Look</p><img src="/uploads/inline.png">',
        images=[extra],
    )
    create_post(api, clock, timedelta(hours=2), slug="no-pictures")

    items = news_items(testapp)

    assert items[0]["images"] == [featured, inline, extra]
    assert items[1]["images"] == []
    assert b"extra.jpg?w=1&amp;h=2" in testapp.get(NEWS_SITEMAP).body


# Expiry ----------------------------------------------------------------------------------


def test_an_item_leaves_exactly_48_hours_after_its_date(api, testapp, clock):
    sent = ago(clock, hours=1)
    post = create_post(api, clock, published_at=sent.isoformat(), modified_at=sent.isoformat())

    move_to(clock, sent + WINDOW - SECOND)
    response = testapp.get(NEWS_SITEMAP, status=200)
    assert [u.text for u in parse_sitemap(response.body).iterfind("sm:url/sm:loc", NS)] == [
        post["permalink"]
    ]
    etag = response.headers["ETag"]
    testapp.get(NEWS_SITEMAP, headers={"If-None-Match": etag}, status=304)
    assert NEWS_IN_INDEX in index(testapp)

    move_to(clock, sent + WINDOW + SECOND)
    after = testapp.get(NEWS_SITEMAP, headers={"If-None-Match": etag}, status=200)
    assert after.headers["ETag"] != etag
    root = parse_sitemap(after.body)
    assert root.tag == f"{{{SM_NS}}}urlset"
    assert len(root) == 0
    assert NEWS_IN_INDEX not in index(testapp)
    # The core keeps the post.
    assert post["permalink"] in [
        u.text for u in fetch(testapp, "/post-sitemap.xml").iterfind("sm:url/sm:loc", NS)
    ]


def test_items_expire_one_by_one(api, testapp, clock):
    first = ago(clock, hours=10)
    second = first + timedelta(hours=3)
    older = create_post(
        api, clock, slug="older", published_at=first.isoformat(), modified_at=first.isoformat()
    )
    newer = create_post(
        api, clock, slug="newer", published_at=second.isoformat(), modified_at=second.isoformat()
    )
    assert listed(testapp) == [newer["permalink"], older["permalink"]]

    move_to(clock, first + WINDOW + SECOND)
    assert listed(testapp) == [newer["permalink"]]
    assert index(testapp)[NEWS_IN_INDEX] == only_item(testapp)["lastmod"]

    move_to(clock, second + WINDOW + SECOND)
    assert listed(testapp) == []


def test_a_modified_old_post_comes_back_for_48_hours(api, testapp, clock):
    published = ago(clock, days=3)
    post = create_post(
        api, clock, published_at=published.isoformat(), modified_at=published.isoformat()
    )
    assert listed(testapp) == []

    changed = update_post(api, post, title="Updated story")
    modified = datetime.fromisoformat(changed["modified_at"]).replace(microsecond=0)

    item = only_item(testapp)
    assert item["loc"] == post["permalink"]
    assert item["title"] == "Updated story"
    assert moment(item["publication_date"]) == published
    assert abs(moment(item["lastmod"]) - modified) <= SECOND

    move_to(clock, modified + WINDOW - SECOND)
    assert listed(testapp) == [post["permalink"]]
    move_to(clock, modified + WINDOW + SECOND)
    assert listed(testapp) == []


# Exclusions (S-2xx, S-504) ----------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"status": "draft"}, id="draft"),
        pytest.param({"status": "private"}, id="private-status"),
        pytest.param({"password": "secret"}, id="password"),
        pytest.param({"robots": "noindex"}, id="noindex"),
        pytest.param({"canonical": "http://other.test/elsewhere/"}, id="foreign-canonical"),
        pytest.param({"exclude_from_sitemap": True}, id="excluded-from-sitemap"),
    ],
)
def test_a_post_the_rules_exclude_leaves_the_news_sitemap(api, testapp, clock, change):
    kept = create_post(api, clock, timedelta(hours=5), slug="kept")
    post = create_post(api, clock, timedelta(hours=1), slug="excluded-later")
    assert listed(testapp) == [post["permalink"], kept["permalink"]]

    update_post(api, post, **change)

    assert listed(testapp) == [kept["permalink"]]


def test_a_canonical_equal_to_the_permalink_keeps_the_post(api, testapp, clock):
    post = create_post(api, clock, slug="self")
    update_post(api, post, canonical=post["permalink"])

    assert listed(testapp) == [post["permalink"]]


def test_a_noindexed_type_leaves_the_news_sitemap_unless_the_post_says_index(api, testapp, clock):
    api.post_json("/api/post-types", {"name": "story", "label": "Stories"}, status=201)
    news_settings(api, post_types=["story"])
    forced = create_post(
        api, clock, timedelta(hours=2), slug="forced", type="story", robots="index"
    )
    by_default = create_post(api, clock, slug="by-default", type="story")
    assert listed(testapp) == [by_default["permalink"], forced["permalink"]]

    api.patch_json("/api/post-types/story", {"noindex": True}, status=200)

    assert listed(testapp) == [forced["permalink"]]


def test_a_scheduled_post_joins_the_news_when_the_clock_reaches_it(api, testapp, clock):
    kept = create_post(api, clock, timedelta(hours=5), slug="kept")
    post = create_post(api, clock, slug="scheduled")
    assert listed(testapp) == [post["permalink"], kept["permalink"]]

    goes_live = ago(clock, hours=-2)
    update_post(api, post, published_at=goes_live.isoformat())
    assert listed(testapp) == [kept["permalink"]]

    move_to(clock, goes_live - SECOND)
    assert listed(testapp) == [kept["permalink"]]

    move_to(clock, goes_live + SECOND)
    item = news_items(testapp)[0]
    assert item["loc"] == post["permalink"]
    assert moment(item["publication_date"]) == goes_live
    assert listed(testapp) == [post["permalink"], kept["permalink"]]


def test_a_private_site_has_an_empty_news_sitemap_and_no_index_entry(api, testapp, clock):
    post = create_post(api, clock)
    assert listed(testapp) == [post["permalink"]]
    assert NEWS_IN_INDEX in index(testapp)

    site_settings(api, private=True)

    root = fetch(testapp, NEWS_SITEMAP)
    assert root.tag == f"{{{SM_NS}}}urlset"
    assert len(root) == 0
    assert index(testapp) == {}

    site_settings(api, private=False)
    assert listed(testapp) == [post["permalink"]]


def test_a_post_flagged_not_news_is_left_out(api, testapp, clock):
    kept = create_post(api, clock, timedelta(hours=5), slug="kept")
    post = create_post(api, clock, slug="flagged")
    assert listed(testapp) == [post["permalink"], kept["permalink"]]

    post_news(api, post, not_news=True)
    assert listed(testapp) == [kept["permalink"]]
    # Still an ordinary post.
    assert post["permalink"] in [
        u.text for u in fetch(testapp, "/post-sitemap.xml").iterfind("sm:url/sm:loc", NS)
    ]

    post_news(api, post, not_news=False)
    assert listed(testapp) == [post["permalink"], kept["permalink"]]


def test_posts_of_a_term_excluded_from_news_are_left_out(api, testapp, clock):
    sponsored = api.post_json(
        "/api/terms", {"taxonomy": "category", "name": "Sponsored"}, status=201
    ).json
    world = api.post_json("/api/terms", {"taxonomy": "category", "name": "World"}, status=201).json
    kept = create_post(api, clock, timedelta(hours=5), slug="kept", terms=[world["id"]])
    post = create_post(api, clock, slug="advert", terms=[sponsored["id"], world["id"]])
    assert listed(testapp) == [post["permalink"], kept["permalink"]]

    api.patch_json(f"/api/terms/{sponsored['id']}/news", {"exclude": True}, status=200)
    assert listed(testapp) == [kept["permalink"]]

    # A post that joins the term later leaves too; one that leaves it comes back.
    update_post(api, kept, terms=[world["id"], sponsored["id"]])
    assert listed(testapp) == []
    update_post(api, post, terms=[world["id"]])
    assert listed(testapp) == [post["permalink"]]

    api.patch_json(f"/api/terms/{sponsored['id']}/news", {"exclude": False}, status=200)
    assert set(listed(testapp)) == {post["permalink"], kept["permalink"]}


def test_deleting_a_term_excluded_from_news_brings_its_posts_back(api, testapp, clock):
    """A deleted term's links go with it: its posts are changed too (issue 13)."""
    sponsored = api.post_json(
        "/api/terms", {"taxonomy": "post_tag", "name": "Sponsored"}, status=201
    ).json
    post = create_post(api, clock, slug="advert", terms=[sponsored["id"]])
    api.patch_json(f"/api/terms/{sponsored['id']}/news", {"exclude": True}, status=200)
    assert listed(testapp) == []

    api.delete(f"/api/terms/{sponsored['id']}", status=204)
    assert listed(testapp) == [post["permalink"]]


def test_a_type_removed_from_the_news_types_leaves(api, testapp, clock):
    news_settings(api, post_types=["post", "page"])
    page = create_post(api, clock, timedelta(hours=3), slug="about", type="page")
    post = create_post(api, clock, slug="story")
    assert listed(testapp) == [post["permalink"], page["permalink"]]

    news_settings(api, post_types=["page"])
    assert listed(testapp) == [page["permalink"]]

    news_settings(api, post_types=[])
    assert listed(testapp) == []
    assert NEWS_IN_INDEX not in index(testapp)


def test_deleting_a_post_removes_it(api, testapp, clock):
    kept = create_post(api, clock, timedelta(hours=2), slug="kept")
    post = create_post(api, clock, slug="deleted")
    assert listed(testapp) == [post["permalink"], kept["permalink"]]

    api.delete(f"/api/posts/{post['id']}", status=204)

    assert listed(testapp) == [kept["permalink"]]


# The index (S-301, S-306, S-504) ----------------------------------------------------------


def test_the_index_lists_the_news_sitemap_with_its_newest_lastmod_only_while_non_empty(
    api, testapp, clock
):
    response = testapp.get(NEWS_SITEMAP, status=200)
    root = parse_sitemap(response.body)
    assert len(root) == 0
    assert root.nsmap.get("news") == NEWS_NS
    assert NEWS_IN_INDEX not in index(testapp)

    create_post(api, clock, timedelta(hours=20), slug="older")
    assert index(testapp)[NEWS_IN_INDEX] == news_items(testapp)[0]["lastmod"]

    newer = create_post(api, clock, timedelta(hours=2), slug="newer")
    items = news_items(testapp)
    assert items[0]["loc"] == newer["permalink"]
    assert index(testapp)[NEWS_IN_INDEX] == items[0]["lastmod"]
    assert moment(items[0]["lastmod"]) > moment(items[1]["lastmod"])

    post_news(api, newer, not_news=True)
    assert index(testapp)[NEWS_IN_INDEX] == only_item(testapp)["lastmod"]
    assert moment(index(testapp)[NEWS_IN_INDEX]) < moment(items[0]["lastmod"])


def test_no_news_sitemap_in_the_index_when_only_old_posts_exist(api, testapp, clock):
    create_post(api, clock, timedelta(days=5), slug="old")

    listed_sitemaps = index(testapp)
    assert f"{SITE_URL}/post-sitemap.xml" in listed_sitemaps
    assert NEWS_IN_INDEX not in listed_sitemaps
    assert listed(testapp) == []


def test_the_news_sitemap_has_no_second_page(api, testapp, clock):
    create_post(api, clock)
    testapp.get("/news-sitemap2.xml", status=404)


# The news XSL (S-308) ----------------------------------------------------------------------


def test_the_news_xsl_is_served_and_the_news_sitemap_points_at_it(api, testapp, clock):
    create_post(api, clock)

    xsl = testapp.get(NEWS_XSL, status=200)
    assert xsl.content_type == "text/xsl"
    assert xsl.headers["X-Robots-Tag"] == X_ROBOTS_TAG
    assert etree.QName(etree.fromstring(xsl.body, xml_parser())).localname == "stylesheet"

    instruction = stylesheet_of(testapp.get(NEWS_SITEMAP).body)
    assert instruction.get("type") == "text/xsl"
    assert instruction.get("href") == NEWS_XSL
    assert stylesheet_of(testapp.get("/post-sitemap.xml").body).get("href") == "/main-sitemap.xsl"


def test_the_news_xsl_renders_one_row_per_article(api, testapp, clock):
    site_settings(api, language="en")
    first_sent = ago(clock, hours=6)
    second_sent = ago(clock, hours=1)
    first = create_post(
        api,
        clock,
        slug="first",
        title="First & foremost",
        published_at=first_sent.isoformat(),
        modified_at=first_sent.isoformat(),
    )
    second = create_post(
        api,
        clock,
        slug="second",
        title="Second story",
        published_at=second_sent.isoformat(),
        modified_at=second_sent.isoformat(),
    )
    post_news(api, first, language="fr")

    transform = browser_stylesheet(testapp, NEWS_XSL)
    html = transform(etree.fromstring(testapp.get(NEWS_SITEMAP).body, xml_parser()))

    [table] = html.xpath("//table")
    assert [th.text for th in table.xpath(".//thead//th")] == ["Title", "Language", "Published"]
    rows = [
        {
            "title": "".join(row.xpath("td[1]")[0].itertext()).strip(),
            "link": row.xpath("td[1]//a/@href"),
            "language": "".join(row.xpath("td[2]")[0].itertext()).strip(),
            "date": " ".join("".join(row.xpath("td[3]")[0].itertext()).split()),
        }
        for row in table.xpath(".//tbody/tr")
    ]
    assert rows == [
        {
            "title": "Second story",
            "link": [second["permalink"]],
            "language": "en",
            "date": second_sent.strftime("%Y-%m-%d %H:%M (+00:00)"),
        },
        {
            "title": "First & foremost",
            "link": [first["permalink"]],
            "language": "fr",
            "date": first_sent.strftime("%Y-%m-%d %H:%M (+00:00)"),
        },
    ]
    count = " ".join("".join(html.xpath("//p[@id='count']")[0].itertext()).split())
    assert count.startswith("This news sitemap contains 2 URLs")


def test_the_news_xsl_renders_an_empty_news_sitemap_as_an_empty_table(testapp):
    transform = browser_stylesheet(testapp, NEWS_XSL)
    html = transform(etree.fromstring(testapp.get(NEWS_SITEMAP).body, xml_parser()))

    [table] = html.xpath("//table")
    assert table.xpath(".//tbody/tr") == []


def test_a_site_language_change_reaches_the_news_sitemap(api, testapp, clock):
    site_settings(api, language="en")
    create_post(api, clock)
    assert only_item(testapp)["language"] == "en"

    site_settings(api, language="es-MX")

    assert only_item(testapp)["language"] == "es"


def test_an_empty_site_title_falls_back_to_the_sites_host(api, testapp, clock):
    site_settings(api, title="")
    create_post(api, clock)

    assert only_item(testapp)["name"] == "sitemaps.test"


def test_a_post_published_recently_but_modified_long_ago_is_news(api, testapp, clock):
    published = ago(clock, hours=2)
    post = create_post(
        api,
        clock,
        published_at=published.isoformat(),
        modified_at=ago(clock, days=10).isoformat(),
    )

    item = only_item(testapp)
    assert item["loc"] == post["permalink"]
    assert moment(item["lastmod"]) == published


def test_an_old_post_republished_now_becomes_news(api, testapp, clock):
    old = ago(clock, days=10)
    post = create_post(api, clock, published_at=old.isoformat(), modified_at=old.isoformat())
    assert listed(testapp) == []

    now = ago(clock, minutes=1)
    update_post(api, post, published_at=now.isoformat(), modified_at=old.isoformat())

    item = only_item(testapp)
    assert item["loc"] == post["permalink"]
    assert moment(item["publication_date"]) == now


# ETags: a write that changes nothing of the news keeps the document -----------------------


def test_the_news_sitemap_answers_304_to_its_etag(api, testapp, clock):
    create_post(api, clock)
    etag = testapp.get(NEWS_SITEMAP).headers["ETag"]

    testapp.get(NEWS_SITEMAP, headers={"If-None-Match": etag}, status=304)
    testapp.get(NEWS_SITEMAP, headers={"If-None-Match": '"other"'}, status=200)


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(lambda api, ids: api.patch_json("/api/news/settings", {}), id="empty-patch"),
        pytest.param(
            lambda api, ids: api.patch_json("/api/news/settings", {"post_types": ["post"]}),
            id="same-post-types",
        ),
        pytest.param(
            lambda api, ids: api.patch_json(f"/api/terms/{ids['term']}/news", {"exclude": False}),
            id="term-not-excluded-again",
        ),
        pytest.param(
            lambda api, ids: api.patch_json(
                f"/api/posts/{ids['old']}", {"title": "Edited", "modified_at": ids["old_date"]}
            ),
            id="old-post-edited",
        ),
    ],
)
def test_a_write_that_changes_no_news_keeps_the_etag(api, testapp, clock, write):
    news_settings(api, publication_name="Fixed Name", language="en")
    term = api.post_json("/api/terms", {"taxonomy": "category", "name": "C"}, status=201).json
    create_post(api, clock, slug="fresh", terms=[term["id"]])
    old = create_post(api, clock, timedelta(days=5), slug="old")
    first = testapp.get(NEWS_SITEMAP)
    etag = first.headers["ETag"]

    write(api, {"term": term["id"], "old": old["id"], "old_date": old["modified_at"]})

    testapp.get(NEWS_SITEMAP, headers={"If-None-Match": etag}, status=304)
    assert testapp.get(NEWS_SITEMAP).body == first.body


def test_a_write_that_changes_the_news_changes_the_etag(api, testapp, clock):
    post = create_post(api, clock)
    etag = testapp.get(NEWS_SITEMAP).headers["ETag"]

    post_news(api, post, keywords="new keywords")

    after = testapp.get(NEWS_SITEMAP, headers={"If-None-Match": etag}, status=200)
    assert after.headers["ETag"] != etag
    testapp.get(NEWS_SITEMAP, headers={"If-None-Match": after.headers["ETag"]}, status=304)


def test_a_news_settings_change_rebuilds_the_news_sitemap_alone(api, testapp, clock):
    """The plugin asks the engine to rebuild its own sitemap (``refresh_provider``): the
    news sitemap changes (and so the index, which dates it), every other sitemap keeps
    its ETag (a crawler's 304)."""
    create_post(api, clock)
    others = ("/post-sitemap.xml", "/sitemaps/post-sitemap.html")
    etags = {path: testapp.get(path, status=200).headers["ETag"] for path in others}
    news_etag = testapp.get(NEWS_SITEMAP).headers["ETag"]

    response = api.patch_json("/api/news/settings", {"publication_name": "The Other Paper"})

    assert int(response.headers["Sitemap-Change"]) > 0
    assert only_item(testapp)["name"] == "The Other Paper"
    assert testapp.get(NEWS_SITEMAP).headers["ETag"] != news_etag
    for path, etag in etags.items():
        testapp.get(path, headers={"If-None-Match": etag}, status=304)


# Keys, and rows that go while the news is computed (issue 29) ---------------------------


# Naive bounds, as hypothesis takes them; the values drawn are aware (UTC).
ANY_DATE = st.datetimes(
    min_value=datetime(1000, 1, 1),  # noqa: DTZ001
    max_value=datetime(9998, 12, 31),  # noqa: DTZ001
    timezones=st.just(UTC),
)
ANY_ID = st.integers(min_value=1, max_value=2**31 - 1)


@settings(max_examples=300, deadline=None)
@given(first=ANY_DATE, second=ANY_DATE, first_id=ANY_ID, second_id=ANY_ID)
def test_a_key_fits_64_bits_names_its_post_and_orders_newest_first(
    first, second, first_id, second_id
):
    """Any date the API takes, any post id: the key is a positive signed 64-bit integer
    that gives back the post's id, and a newer item (within 1970 to 2106) comes first."""
    key = order_key(first, first_id)
    assert 0 < key < 2**63
    assert key % KEY_IDS == first_id
    other = order_key(second, second_id)
    if (first, first_id) != (second, second_id):
        assert key != other or first.replace(microsecond=0) != second.replace(microsecond=0)
    epoch, end = datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC), datetime(2106, 1, 1, tzinfo=UTC)
    if (
        epoch <= second < end
        and epoch <= first < end
        and int(first.timestamp()) > int(second.timestamp())
    ):
        assert key < other


def test_posts_whose_ids_differ_by_a_billion_are_both_news(api, testapp, clock):
    """Ids up to 2^31 - 1 are taken: post 1,000,000,007 published one second after post
    7 used to get post 7's key (a pass that failed on every write after it)."""
    when = ago(clock, hours=2)
    small = create_post(
        api, clock, id=7, slug="small", published_at=when.isoformat(), modified_at=when.isoformat()
    )
    later = (when + SECOND).isoformat()
    large = create_post(
        api, clock, id=1_000_000_007, slug="large", published_at=later, modified_at=later
    )
    assert listed(testapp) == [large["permalink"], small["permalink"]]
    update_post(api, small, title="Edited", modified_at=later)
    assert {item["title"] for item in news_items(testapp)} == {"A story", "Edited"}


def test_a_post_deleted_while_the_news_is_computed_is_left_out(api, testapp, clock, monkeypatch):
    """PostgreSQL runs each statement of a pass on the commits made before it: a post
    deleted (and committed) between the news's read of the stored entries and its read
    of the posts used to fail the pass, and the request that ran it (500). SQLite's
    maintainer holds the database's write lock, so there no delete can come between."""
    sessions = site_of_app(testapp.app).sessions
    if sessions.kw["bind"].dialect.name != "postgresql":
        pytest.skip("SQLite: no write can commit while the maintainer's pass runs")
    kept = create_post(api, clock, slug="kept")
    gone = create_post(api, clock, slug="gone")
    assert set(listed(testapp)) == {kept["permalink"], gone["permalink"]}
    update_post(api, gone, title="Changed")  # the next pass recomputes its item
    deleted: list[int] = []
    computing = threading.Event()
    entries = NewsProvider.entries

    def news_entries(self: Any, ctx: Any, keys: Any) -> Any:
        computing.set()
        try:
            yield from entries(self, ctx, keys)
        finally:
            computing.clear()

    def delete_meanwhile(state: Any) -> None:
        # The news's read of the posts, after its read of the stored entries.
        described = getattr(state.statement, "column_descriptions", None) or []
        if deleted or not computing.is_set() or not any(d.get("entity") is Post for d in described):
            return
        deleted.append(gone["id"])
        with sessions() as other, other.begin():  # another transaction, committed now
            post_service.delete_post(other, other.get_one(Post, gone["id"]))

    monkeypatch.setattr(NewsProvider, "entries", news_entries)
    event.listen(Session, "do_orm_execute", delete_meanwhile)
    try:
        response = testapp.get(NEWS_SITEMAP, status=200)
    finally:
        event.remove(Session, "do_orm_execute", delete_meanwhile)
    assert deleted == [gone["id"]]
    assert gone["permalink"] not in [
        u.text for u in parse_sitemap(response.body).iterfind("sm:url/sm:loc", NS)
    ]
    assert listed(testapp) == [kept["permalink"]]
