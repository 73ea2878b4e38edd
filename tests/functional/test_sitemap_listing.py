"""Which URLs the sitemaps list, and what each entry says (S-201 … S-208, S-401 … S-404).

Every site is built through the admin API (``api``) and the sitemaps are read as a crawler
would (``testapp``, no credentials), parsed with lxml, and every non-empty document is
validated against both the current and the 2009 sitemaps.org XSDs. Empty documents
(S-205, S-306) are checked for well-formedness, root element and namespace only, since the
XSDs demand at least one entry.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

import pytest
from lxml import etree
from sqlalchemy import update

from sitemap_server.models import SitemapEntry
from sitemap_server.services import posts as post_service
from sitemap_server.testing import apply_changes, parse_sitemap

SITE = "http://sitemaps.test"
SM_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
NS = {"sm": SM_NS, "image": IMAGE_NS}
# The published XSDs are test data kept outside the package (see their SOURCES.md).
W3C_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$")
HOME = f"{SITE}/"


# Reading sitemaps -----------------------------------------------------------------------


class Entry(NamedTuple):
    loc: str
    lastmod: str | None
    images: list[str]


def fetch(testapp, path: str) -> etree._Element:
    """GET a sitemap document: 200, XML, well-formed; valid against both XSDs if non-empty."""
    response = testapp.get(path, status=200)
    assert response.content_type in ("text/xml", "application/xml")
    assert response.headers["X-Robots-Tag"] == "noindex, follow"
    return parse_sitemap(response.body)


def urlset(testapp, name: str, page: int = 1) -> list[Entry]:
    """The entries of ``/{name}-sitemap{page}.xml``, in document order."""
    root = fetch(testapp, f"/{name}-sitemap{'' if page == 1 else page}.xml")
    assert root.tag == f"{{{SM_NS}}}urlset"
    return [
        Entry(
            loc=url.findtext("sm:loc", namespaces=NS),
            lastmod=url.findtext("sm:lastmod", namespaces=NS),
            images=[i.text for i in url.iterfind("image:image/image:loc", namespaces=NS)],
        )
        for url in root.iterfind("sm:url", namespaces=NS)
    ]


def locs(testapp, name: str) -> list[str]:
    return [e.loc for e in urlset(testapp, name)]


def sitemap_index(testapp) -> dict[str, str | None]:
    """``/sitemap_index.xml`` as {sitemap URL: lastmod}, in document order."""
    root = fetch(testapp, "/sitemap_index.xml")
    assert root.tag == f"{{{SM_NS}}}sitemapindex"
    found = {
        s.findtext("sm:loc", namespaces=NS): s.findtext("sm:lastmod", namespaces=NS)
        for s in root.iterfind("sm:sitemap", namespaces=NS)
    }
    assert len(found) == len(root), "a sitemap is listed twice in the index"
    return found


def every_entry(testapp) -> list[Entry]:
    """The entries of every sitemap page the index lists."""
    entries: list[Entry] = []
    for loc in sitemap_index(testapp):
        assert loc.startswith(SITE + "/")
        root_path = loc[len(SITE) :]
        name, _, number = root_path[1:].removesuffix(".xml").partition("-sitemap")
        entries.extend(urlset(testapp, name, int(number or 1)))
    return entries


def assert_empty(testapp, path: str, root_name: str = "urlset") -> None:
    root = fetch(testapp, path)
    assert root.tag == f"{{{SM_NS}}}{root_name}"
    assert len(root) == 0


def moment(text: str | None) -> datetime:
    assert text is not None
    assert W3C_DATETIME.match(text), text
    return datetime.fromisoformat(text)


# Building sites -------------------------------------------------------------------------


def at(day: int, hour: int = 12) -> str:
    """A fixed past time, as the API takes it."""
    return f"2024-03-{day:02d}T{hour:02d}:00:00+00:00"


def create_post(api, **fields) -> dict:
    body = {"type": "post", "title": "A post", "status": "publish", "published_at": at(1)}
    body.update(fields)
    return api.post_json("/api/posts", body, status=201).json


def create_page(api, **fields) -> dict:
    return create_post(api, type="page", **fields)


def update_post(api, post: dict, **fields) -> dict:
    return api.patch_json(f"/api/posts/{post['id']}", fields, status=200).json


def create_author(api, slug: str, **fields) -> dict:
    body = {"slug": slug, "name": slug.title(), **fields}
    return api.post_json("/api/authors", body, status=201).json


def create_term(api, slug: str, taxonomy: str = "category", **fields) -> dict:
    body = {"taxonomy": taxonomy, "slug": slug, "name": slug.title(), **fields}
    return api.post_json("/api/terms", body, status=201).json


def create_post_type(api, name: str, **fields) -> dict:
    body = {"name": name, "label": name.title(), **fields}
    return api.post_json("/api/post-types", body, status=201).json


def create_taxonomy(api, name: str, **fields) -> dict:
    body = {"name": name, "label": name.title(), **fields}
    return api.post_json("/api/taxonomies", body, status=201).json


def update_settings(api, **fields) -> dict:
    return api.patch_json("/api/settings", fields, status=200).json


# S-201: posts ---------------------------------------------------------------------------


def test_only_published_public_indexable_posts_are_listed(api, testapp):
    listed = create_post(api, slug="listed", published_at=at(2))
    forced_index = create_post(api, slug="forced-index", robots="index")
    self_canonical = create_post(api, slug="self-canonical", published_at=at(5))
    self_canonical = update_post(
        api, self_canonical, canonical=self_canonical["permalink"], modified_at=at(5)
    )
    hidden = [
        create_post(api, slug=status, status=status)
        for status in ("draft", "pending", "private", "trash")
    ]
    hidden += [
        create_post(api, slug="locked", password="secret"),
        create_post(api, slug="noindexed", robots="noindex"),
        create_post(api, slug="elsewhere", canonical="http://other.test/elsewhere/"),
        create_post(api, slug="canonical-to-other-post", canonical=listed["permalink"]),
        create_post(api, slug="excluded", exclude_from_sitemap=True),
        create_post(api, slug="not-yet", published_at="2999-01-01T00:00:00+00:00"),
    ]

    listed_locs = [
        HOME,
        listed["permalink"],
        forced_index["permalink"],
        self_canonical["permalink"],
    ]
    assert locs(testapp, "post") == listed_locs
    everywhere = {e.loc for e in every_entry(testapp)}
    for post in hidden:
        assert post["permalink"] not in everywhere, post["slug"]


def test_a_password_removed_or_status_published_lists_the_post(api, testapp):
    """The same post goes in once the rule that kept it out no longer applies."""
    draft = create_post(api, slug="soon", status="draft")
    locked = create_post(api, slug="locked", password="secret")
    assert locs(testapp, "post") == []

    update_post(api, draft, status="publish")
    update_post(api, locked, password="")
    assert locs(testapp, "post") == [HOME, draft["permalink"], locked["permalink"]]


def test_non_public_and_noindexed_types_have_no_sitemap(api, testapp):
    create_post(api, slug="visible")
    create_post_type(api, "internal", public=False)
    create_post_type(api, "hidden", noindex=True, archive_path="/hidden/")
    internal = create_post(api, type="internal", slug="secret-thing", robots="index")
    hidden = create_post(api, type="hidden", slug="by-default")

    for name in ("internal", "hidden"):
        response = testapp.get(f"/{name}-sitemap.xml", status=404)
        assert response.headers["X-Robots-Tag"] == "noindex, follow"
    index = sitemap_index(testapp)
    assert f"{SITE}/internal-sitemap.xml" not in index
    assert f"{SITE}/hidden-sitemap.xml" not in index
    everywhere = {e.loc for e in every_entry(testapp)}
    assert internal["permalink"] not in everywhere
    assert hidden["permalink"] not in everywhere


def test_a_post_set_to_index_is_listed_inside_a_noindexed_type(api, testapp):
    # S-201: the post's own robots setting wins over its type's default; the type then
    # has a sitemap (S-101 holds for every type without such a post), without its archive.
    create_post_type(api, "hidden", noindex=True, archive_path="/hidden/")
    create_post(api, type="hidden", slug="by-default")
    forced = create_post(api, type="hidden", slug="forced", robots="index")
    assert locs(testapp, "hidden") == [forced["permalink"]]
    assert f"{SITE}/hidden-sitemap.xml" in sitemap_index(testapp)

    update_post(api, forced, robots="default")
    testapp.get("/hidden-sitemap.xml", status=404)
    assert f"{SITE}/hidden-sitemap.xml" not in sitemap_index(testapp)


def test_a_custom_public_type_gets_its_own_sitemap(api, testapp):
    create_post_type(api, "product")
    product = create_post(api, type="product", slug="widget")
    assert product["permalink"] == f"{SITE}/product/widget/"
    assert locs(testapp, "product") == [product["permalink"]]
    assert f"{SITE}/product-sitemap.xml" in sitemap_index(testapp)


# S-202: authors -------------------------------------------------------------------------


def test_authors_are_listed_only_with_a_listed_post_and_an_indexable_archive(api, testapp):
    alice = create_author(api, "alice")
    bob = create_author(api, "bob")
    carol = create_author(api, "carol", noindex=True)
    dave = create_author(api, "dave")
    create_author(api, "erin")  # no posts at all
    create_post(api, slug="alice-old", author=alice["id"], published_at=at(2))
    create_post(api, slug="alice-new", author=alice["id"], published_at=at(3), modified_at=at(9, 8))
    create_post(api, slug="alice-draft", author=alice["id"], status="draft", modified_at=at(20))
    create_post(api, slug="bob-draft", author=bob["id"], status="draft")
    create_post(api, slug="bob-pending", author=bob["id"], status="pending")
    create_post(api, slug="carol-post", author=carol["id"])
    create_post(api, slug="dave-noindex", author=dave["id"], robots="noindex")

    entries = urlset(testapp, "author")
    assert [e.loc for e in entries] == [alice["url"]]
    assert alice["url"] == f"{SITE}/author/alice/"
    assert moment(entries[0].lastmod) == moment("2024-03-09T08:00:00+00:00")


def test_an_author_of_one_listed_post_takes_its_lastmod(api, testapp):
    author = create_author(api, "solo")
    post = create_post(api, slug="only", author=author["id"], published_at=at(4, 15))
    [entry] = urlset(testapp, "author")
    assert entry.loc == author["url"]
    [post_entry] = [e for e in urlset(testapp, "post") if e.loc == post["permalink"]]
    assert entry.lastmod == post_entry.lastmod
    assert moment(entry.lastmod) == moment(at(4, 15))


# S-203: terms ---------------------------------------------------------------------------


def test_terms_are_listed_only_when_indexable_with_a_listed_post(api, testapp):
    news = create_term(api, "news")
    create_term(api, "empty")
    drafts_only = create_term(api, "drafts-only")
    hidden = create_term(api, "hidden", noindex=True)
    moved = create_term(api, "moved", canonical="http://other.test/category/moved/")
    itself = create_term(api, "itself")
    itself = api.patch_json(f"/api/terms/{itself['id']}", {"canonical": itself["url"]}).json
    tag = create_term(api, "python", taxonomy="post_tag")
    create_term(api, "unused-tag", taxonomy="post_tag")

    create_post(api, slug="one", terms=[news["id"], hidden["id"], moved["id"], tag["id"]])
    create_post(api, slug="two", terms=[itself["id"]], published_at=at(6))
    create_post(api, slug="three", terms=[drafts_only["id"]], status="draft")
    create_post(api, slug="four", terms=[drafts_only["id"]], robots="noindex")

    assert locs(testapp, "category") == [f"{SITE}/category/news/", f"{SITE}/category/itself/"]
    assert locs(testapp, "post_tag") == [f"{SITE}/tag/python/"]
    [news_entry, itself_entry] = urlset(testapp, "category")
    assert moment(news_entry.lastmod) == moment(at(1))
    assert moment(itself_entry.lastmod) == moment(at(6))


def test_non_public_and_noindexed_taxonomies_have_no_sitemap(api, testapp):
    create_taxonomy(api, "internal_tax", public=False)
    create_taxonomy(api, "quiet_tax", noindex=True)
    create_taxonomy(api, "genre")
    terms = [
        create_term(api, "a", taxonomy="internal_tax"),
        create_term(api, "b", taxonomy="quiet_tax"),
        create_term(api, "c", taxonomy="genre"),
    ]
    create_post(api, slug="tagged", terms=[t["id"] for t in terms])

    testapp.get("/internal_tax-sitemap.xml", status=404)
    testapp.get("/quiet_tax-sitemap.xml", status=404)
    assert locs(testapp, "genre") == [terms[2]["url"]]
    everywhere = {e.loc for e in every_entry(testapp)}
    assert terms[0]["url"] not in everywhere
    assert terms[1]["url"] not in everywhere


def test_a_parent_category_is_dated_by_its_childrens_newer_posts(api, testapp):
    parent = create_term(api, "parent")
    child = create_term(api, "child", parent=parent["id"])
    grandchild = create_term(api, "grandchild", parent=child["id"])
    create_post(api, slug="old", terms=[parent["id"]], published_at=at(2))
    create_post(api, slug="middle", terms=[child["id"]], published_at=at(5))
    create_post(api, slug="newest", terms=[grandchild["id"]], published_at=at(8))

    entries = {e.loc: e.lastmod for e in urlset(testapp, "category")}
    assert list(entries) == [
        f"{SITE}/category/parent/",
        f"{SITE}/category/parent/child/",
        f"{SITE}/category/parent/child/grandchild/",
    ]
    assert [moment(d) for d in entries.values()] == [moment(at(8))] * 3

    # A newer post in the child moves the parent's date, not the grandchild's.
    create_post(api, slug="later", terms=[child["id"]], published_at=at(12))
    entries = {e.loc: e.lastmod for e in urlset(testapp, "category")}
    assert [moment(d) for d in entries.values()] == [moment(at(12))] * 2 + [moment(at(8))]


# S-205: a private site ------------------------------------------------------------------


def test_a_private_site_serves_empty_sitemaps(api, testapp):
    author = create_author(api, "writer")
    term = create_term(api, "topic")
    tag = create_term(api, "tagged", taxonomy="post_tag")
    create_post(api, slug="post", author=author["id"], terms=[term["id"], tag["id"]])
    create_page(api, slug="about")
    known = ["post", "page", "author", "category", "post_tag"]
    assert sorted(sitemap_index(testapp)) == sorted(f"{SITE}/{n}-sitemap.xml" for n in known)

    update_settings(api, private=True)

    assert_empty(testapp, "/sitemap_index.xml", "sitemapindex")
    for name in known:
        assert_empty(testapp, f"/{name}-sitemap.xml")
    robots = testapp.get("/robots.txt", status=200).text
    assert "Disallow: /\n" in robots
    assert "Sitemap:" not in robots

    update_settings(api, private=False)
    assert len(sitemap_index(testapp)) == len(known)
    assert f"Sitemap: {SITE}/sitemap_index.xml" in testapp.get("/robots.txt").text


# S-206: the home page -------------------------------------------------------------------


def test_latest_posts_home_is_the_first_entry_of_the_post_sitemap(api, testapp):
    create_post(api, slug="older", published_at=at(3))
    create_post(api, slug="newer", published_at=at(7))
    create_page(api, slug="about")

    posts = urlset(testapp, "post")
    assert posts[0].loc == HOME
    assert moment(posts[0].lastmod) == moment(at(7))
    assert [e.loc for e in every_entry(testapp)].count(HOME) == 1


def test_home_and_archive_dates_follow_every_write(api, testapp):
    """Regression: the home page and a type archive took the date the newest post had
    before the write that changed it (they were computed before the new entries were
    stored), so a new post left them one change behind and an unlisted one kept them."""
    create_post_type(api, "product", archive_path="/products/")
    create_post(api, slug="older", published_at=at(3))
    newer = create_post(api, slug="newer", published_at=at(7))
    create_post(api, type="product", slug="a", published_at=at(4))
    b = create_post(api, type="product", slug="b", published_at=at(6))

    [home, *_] = urlset(testapp, "post")
    assert (home.loc, moment(home.lastmod)) == (HOME, moment(at(7)))
    [archive, *_] = urlset(testapp, "product")
    assert (archive.loc, moment(archive.lastmod)) == (f"{SITE}/products/", moment(at(6)))

    update_post(api, newer, status="draft")
    update_post(api, b, status="draft")
    assert moment(urlset(testapp, "post")[0].lastmod) == moment(at(3))
    assert moment(urlset(testapp, "product")[0].lastmod) == moment(at(4))


def test_static_front_page_home_is_the_first_entry_of_the_page_sitemap(api, testapp):
    front = create_page(api, slug="welcome", published_at=at(2))
    blog = create_page(api, slug="blog", published_at=at(2))
    about = create_page(api, slug="about", published_at=at(4))
    create_post(api, slug="article", published_at=at(10))
    update_settings(api, front_page="page", front_page_id=front["id"], posts_page_id=blog["id"])

    pages = urlset(testapp, "page")
    assert pages[0].loc == HOME
    assert [e.loc for e in pages[1:]] == [blog["permalink"], about["permalink"]]
    # The posts page is dated by the newest post it shows (S-402).
    assert moment(pages[1].lastmod) == moment(at(10))
    assert locs(testapp, "post") == [f"{SITE}/2024/03/article/"]

    everything = [e.loc for e in every_entry(testapp)]
    assert everything.count(HOME) == 1
    assert everything.count(blog["permalink"]) == 1
    assert front["permalink"] not in everything

    # Back to the latest posts: the home page moves to the post sitemap, the page returns.
    update_settings(api, front_page="posts", front_page_id=None, posts_page_id=None)
    assert locs(testapp, "post")[0] == HOME
    assert HOME not in locs(testapp, "page")
    assert front["permalink"] in locs(testapp, "page")


def test_a_static_front_page_lends_its_images_to_the_home_page(api, testapp):
    front = create_page(
        api, slug="welcome", featured_image="/uploads/hero.jpg", content='<img src="/a.png">'
    )
    create_post(api, slug="article", featured_image="/uploads/article.jpg")
    update_settings(api, front_page="page", front_page_id=front["id"])
    [home] = [e for e in urlset(testapp, "page") if e.loc == HOME]
    assert home.images == [f"{SITE}/uploads/hero.jpg", f"{SITE}/a.png"]
    # Its edits reach the home entry.
    update_post(api, front, featured_image=None)
    [home] = [e for e in urlset(testapp, "page") if e.loc == HOME]
    assert home.images == [f"{SITE}/a.png"]
    # Showing the latest posts again: the home page has no images of its own.
    update_settings(api, front_page="posts", front_page_id=None)
    assert urlset(testapp, "post")[0].images == []


# S-207: multi-part posts ----------------------------------------------------------------


def test_each_part_of_a_multi_part_post_follows_it(api, testapp):
    before = create_post(api, slug="before")
    serial = create_post(api, slug="x", parts=3, published_at=at(6))
    after = create_post(api, slug="after")
    create_page(api, slug="guide", parts=2)

    base = serial["permalink"]
    assert locs(testapp, "post") == [
        HOME,
        before["permalink"],
        base,
        f"{base}2/",
        f"{base}3/",
        after["permalink"],
    ]
    assert locs(testapp, "page") == [f"{SITE}/guide/", f"{SITE}/guide/2/"]
    dates = {e.loc: e.lastmod for e in urlset(testapp, "post")}
    assert dates[f"{base}3/"] == dates[base]


# S-208: every loc ------------------------------------------------------------------------


def test_every_loc_is_absolute_on_the_site_short_and_without_fragment(api, testapp, caplog):
    author = create_author(api, "author")
    term = create_term(api, "term")
    longest = "/" + "a" * 2025 + "/"  # the URL is 2,047 characters: the longest allowed
    too_long = "/" + "b" * 2026 + "/"  # 2,048: one too many
    fits = create_post(api, slug="fits", path=longest, author=author["id"])
    with caplog.at_level(logging.WARNING, logger="sitemap_server"):
        create_post(api, slug="too-long", path=too_long, terms=[term["id"]])
        apply_changes(api)  # the maintainer leaves it out, with a log line
    assert any("longer than 2047" in r.getMessage() for r in caplog.records)
    create_post(api, slug="normal", terms=[term["id"]], featured_image="/img/a.jpg")

    entries = every_entry(testapp)
    assert fits["permalink"] in [e.loc for e in entries]
    assert len(fits["permalink"]) == 2047
    for loc in [e.loc for e in entries] + [i for e in entries for i in e.images]:
        assert loc.startswith(SITE + "/")
        assert len(loc) < 2048
        assert "#" not in loc
    assert not [e for e in entries if "bbbb" in e.loc]


# S-401, S-402: lastmod ------------------------------------------------------------------


def test_a_post_is_dated_by_the_later_of_modified_and_published(api, testapp):
    edited = create_post(
        api, slug="edited", published_at="2024-03-01T10:00:00+02:00", modified_at=at(5, 9)
    )
    backdated = create_post(api, slug="backdated", published_at=at(8), modified_at=at(2))

    dates = {e.loc: e.lastmod for e in urlset(testapp, "post")}
    assert moment(dates[edited["permalink"]]) == moment(at(5, 9))
    assert moment(dates[backdated["permalink"]]) == moment(at(8))
    assert dates[HOME] == dates[backdated["permalink"]]
    for value in dates.values():
        assert value.endswith("+00:00")


def test_index_lastmod_is_the_newest_lastmod_inside_each_sitemap(api, testapp):
    author = create_author(api, "writer")
    category = create_term(api, "cat")
    tag = create_term(api, "tag", taxonomy="post_tag")
    create_post(api, slug="p1", author=author["id"], terms=[category["id"]], published_at=at(3))
    create_post(api, slug="p2", terms=[tag["id"]], published_at=at(11, 7))
    create_page(api, slug="about", published_at=at(13))
    create_page(api, slug="team", published_at=at(4))
    create_post_type(api, "product")
    create_post(api, type="product", slug="widget", published_at=at(2))

    index = sitemap_index(testapp)
    assert list(index) == [
        f"{SITE}/post-sitemap.xml",
        f"{SITE}/page-sitemap.xml",
        f"{SITE}/product-sitemap.xml",
        f"{SITE}/author-sitemap.xml",
        f"{SITE}/category-sitemap.xml",
        f"{SITE}/post_tag-sitemap.xml",
    ]
    expected = {"post": at(11, 7), "page": at(13), "product": at(2), "author": at(3)}
    expected |= {"category": at(3), "post_tag": at(11, 7)}
    for name, newest in expected.items():
        entries = urlset(testapp, name)
        assert index[f"{SITE}/{name}-sitemap.xml"] == max(e.lastmod for e in entries)
        assert moment(index[f"{SITE}/{name}-sitemap.xml"]) == moment(newest)


def test_a_page_in_the_index_follows_its_posts_dates_forward_and_back(api, testapp):
    """A page's date is the newest of its entries' whichever way an edit moves one."""
    update_settings(api, entries_per_page=2)
    posts = [create_post(api, slug=f"p{day}", published_at=at(day)) for day in (1, 2, 3, 4)]
    second = f"{SITE}/post-sitemap2.xml"  # posts 2 and 3 (page 1: the home page, post 1)
    assert moment(sitemap_index(testapp)[second]) == moment(at(3))

    update_post(api, posts[1], modified_at=at(9))
    index = sitemap_index(testapp)
    assert moment(index[second]) == moment(at(9))
    assert moment(index[f"{SITE}/post-sitemap.xml"]) == moment(at(9))  # the home page's

    update_post(api, posts[1], modified_at=at(1))  # back: dated by its publication again
    index = sitemap_index(testapp)
    assert moment(index[second]) == moment(at(3))
    assert moment(index[f"{SITE}/post-sitemap.xml"]) == moment(at(4))
    for page in (1, 2, 3):
        entries = urlset(testapp, "post", page)
        assert index[f"{SITE}/post-sitemap{'' if page == 1 else page}.xml"] == max(
            e.lastmod for e in entries
        )


# S-403: images ---------------------------------------------------------------------------


def test_images_of_a_post(api, testapp):
    update_settings(api, allowed_image_hosts=["CDN.example.com"])
    content = (
        '<p><img src="/uploads/inline.jpg" alt="">'
        '<img src="/uploads/small.jpg" '
        'srcset="/uploads/s-300.jpg 300w, /uploads/s-1200.jpg 1200w, /uploads/s-600.jpg 600w">'
        '<img src="relative/pic.png">'
        '<img src="https://cdn.example.com/remote.jpg">'
        '<img src="https://elsewhere.example.org/hotlinked.jpg">'
        '<img src="/uploads/featured.jpg">'
        '<img src="data:image/png;base64,AAAA"></p>'
    )
    post = create_post(
        api,
        slug="gallery",
        featured_image="/uploads/featured.jpg",
        content=content,
        images=["/uploads/extra.jpg", "https://other.example.net/x.jpg", "/uploads/inline.jpg"],
    )

    [entry] = [e for e in urlset(testapp, "post") if e.loc == post["permalink"]]
    assert entry.images == [
        f"{SITE}/uploads/featured.jpg",
        f"{SITE}/uploads/inline.jpg",
        f"{SITE}/uploads/small.jpg",
        f"{SITE}/uploads/s-1200.jpg",
        f"{post['permalink']}relative/pic.png",
        "https://cdn.example.com/remote.jpg",
        f"{SITE}/uploads/extra.jpg",
    ]


def test_density_descriptors_pick_the_largest_candidate(api, testapp):
    post = create_post(
        api, slug="retina", content='<img srcset="/a-1x.jpg 1x, /a-3x.jpg 3x, /a-2x.jpg 2x">'
    )
    [entry] = [e for e in urlset(testapp, "post") if e.loc == post["permalink"]]
    assert entry.images == [f"{SITE}/a-3x.jpg"]


# S-404: text that could break the XML ----------------------------------------------------


def test_special_characters_are_escaped_and_invalid_ones_removed(api, testapp, app_session):
    """The API refuses characters XML cannot carry (400); rows stored otherwise (before
    that, by a plugin or a script on the services) are rendered without them."""
    title = "Fish & Chips <b>\"quoted\" 'single'\x01\x0b ]]> end"
    body = {
        "type": "post",
        "status": "publish",
        "published_at": at(1),
        "slug": "fish",
        "title": title,
        "path": "/fish&chips/'quoted'/",
        "featured_image": "/img.php?a=1&b=2",
        "content": '<img src="/pic&amp;frame.jpg"><img src="/con\x01trol\x1f.jpg">',
    }
    assert api.post_json("/api/posts", body, expect_errors=True).status_int == 400
    with app_session.begin():
        post_id = post_service.create_post(app_session, body).id
    post = api.get(f"/api/posts/{post_id}").json
    assert post["permalink"] == f"{SITE}/fish&chips/'quoted'/"

    body = testapp.get("/post-sitemap.xml").body
    assert b"fish&amp;chips/&apos;quoted&apos;/" in body or b"fish&amp;chips/'quoted'/" in body
    assert b"\x01" not in body and b"\x1f" not in body
    [entry] = [e for e in urlset(testapp, "post") if e.loc == post["permalink"]]
    assert entry.images == [
        f"{SITE}/img.php?a=1&b=2",
        f"{SITE}/pic&frame.jpg",
        f"{SITE}/control.jpg",
    ]


# S-306: empty sitemaps -------------------------------------------------------------------


def test_a_type_that_lists_nothing_is_empty_and_left_out_of_the_index(api, testapp):
    create_post_type(api, "product")
    create_post_type(api, "event")
    create_post(api, type="event", slug="draft-event", status="draft")
    create_post(api, slug="listed")

    for name in ("product", "event", "page", "post_tag", "category", "author"):
        assert_empty(testapp, f"/{name}-sitemap.xml")
    assert list(sitemap_index(testapp)) == [f"{SITE}/post-sitemap.xml"]


def test_an_empty_site_has_an_empty_index(testapp):
    assert_empty(testapp, "/sitemap_index.xml", "sitemapindex")
    assert_empty(testapp, "/post-sitemap.xml")


# Edits propagate -------------------------------------------------------------------------


def test_a_post_made_draft_or_deleted_leaves_every_sitemap(api, testapp):
    author = create_author(api, "writer")
    term = create_term(api, "topic")
    keep = create_post(api, slug="keep", published_at=at(2))
    going = create_post(
        api, slug="going", author=author["id"], terms=[term["id"]], published_at=at(9)
    )
    assert locs(testapp, "author") == [author["url"]]
    assert locs(testapp, "category") == [term["url"]]

    update_post(api, going, status="draft")
    assert locs(testapp, "post") == [HOME, keep["permalink"]]
    assert moment(urlset(testapp, "post")[0].lastmod) == moment(at(2))
    assert_empty(testapp, "/author-sitemap.xml")
    assert_empty(testapp, "/category-sitemap.xml")
    assert list(sitemap_index(testapp)) == [f"{SITE}/post-sitemap.xml"]

    update_post(api, going, status="publish", modified_at=at(15))
    assert going["permalink"] in locs(testapp, "post")
    assert moment(urlset(testapp, "author")[0].lastmod) == moment(at(15))

    api.delete(f"/api/posts/{going['id']}", status=204)
    assert going["permalink"] not in {e.loc for e in every_entry(testapp)}
    assert_empty(testapp, "/author-sitemap.xml")
    assert_empty(testapp, "/category-sitemap.xml")


def test_changing_a_posts_author_moves_the_author_dates(api, testapp):
    first = create_author(api, "first")
    second = create_author(api, "second")
    create_post(api, slug="first-old", author=first["id"], published_at=at(3))
    moving = create_post(api, slug="moving", author=first["id"], published_at=at(10))
    create_post(api, slug="second-old", author=second["id"], published_at=at(5))
    dates = {e.loc: e.lastmod for e in urlset(testapp, "author")}
    assert moment(dates[first["url"]]) == moment(at(10))
    assert moment(dates[second["url"]]) == moment(at(5))

    update_post(api, moving, author=second["id"], modified_at=at(10))
    dates = {e.loc: e.lastmod for e in urlset(testapp, "author")}
    assert moment(dates[first["url"]]) == moment(at(3))
    assert moment(dates[second["url"]]) == moment(at(10))
    index = sitemap_index(testapp)
    assert moment(index[f"{SITE}/author-sitemap.xml"]) == moment(at(10))


def test_an_edit_dates_its_author_and_terms_from_its_post_alone(api, testapp, dbsession):
    """An edit dates its post now, and with it its author and terms, without reading the
    other posts they have (``sitemaps/newest.py``): on a site whose every post has one
    author and one category that read cost more than the rest of the write.

    What was read shows through one older post whose stored entry is given a date in the
    future: only a read of every post of the author or category finds it."""
    author = create_author(api, "writer")
    parent = create_term(api, "travel")
    child = create_term(api, "europe", parent=parent["id"])
    tag = create_term(api, "trains", taxonomy="post_tag")
    linked = {"author": author["id"], "terms": [child["id"], tag["id"]]}
    older = create_post(api, slug="older", published_at=at(2), **linked)
    newer = create_post(api, slug="newer", published_at=at(5), **linked)
    locs(testapp, "post")  # applied
    hidden = datetime(2099, 1, 1, tzinfo=UTC)
    dbsession.execute(
        update(SitemapEntry)
        .where(SitemapEntry.provider == "post", SitemapEntry.key == older["id"])
        .values(lastmod=hidden)
    )
    dbsession.commit()
    grouped = [(author["url"], "author"), (parent["url"], "category"), (child["url"], "category")]
    grouped.append((tag["url"], "post_tag"))

    def dates() -> dict[str, datetime]:
        found = {}
        for name in ("author", "category", "post_tag"):
            found.update({e.loc: moment(e.lastmod) for e in urlset(testapp, name)})
        return {url: found[url] for url, _name in grouped}

    update_post(api, newer, title="Edited")
    edited = {e.loc: moment(e.lastmod) for e in urlset(testapp, "post")}[newer["permalink"]]
    assert edited > moment(at(5))
    assert dates() == {url: edited for url, _name in grouped}
    # Dated back before the edit, the post no longer dates them: they are read again.
    update_post(api, newer, modified_at=at(6))
    assert dates() == {url: hidden for url, _name in grouped}


def test_a_term_moved_out_takes_its_posts_dates_with_it_even_unlisted(api, testapp):
    """A child category dates its parent with its posts, listed itself or not; moved out
    (no post written), its posts date the parent no more. Found by the model-based test:
    a noindexed child, which has no stored entry, moved without the parent noticing."""
    parent = create_term(api, "travel")
    child = create_term(api, "europe", parent=parent["id"])
    create_post(api, slug="own", terms=[parent["id"]], published_at=at(2))
    create_post(api, slug="child", terms=[child["id"]], published_at=at(9))
    dates = {e.loc: e.lastmod for e in urlset(testapp, "category")}
    assert moment(dates[parent["url"]]) == moment(at(9))
    api.patch_json(f"/api/terms/{child['id']}", {"noindex": True}, status=200)
    assert moment(urlset(testapp, "category")[0].lastmod) == moment(at(9))
    api.patch_json(f"/api/terms/{child['id']}", {"parent": None}, status=200)
    [entry] = urlset(testapp, "category")
    assert (entry.loc, moment(entry.lastmod)) == (parent["url"], moment(at(2)))


def test_noindexing_an_author_or_term_later_removes_it(api, testapp):
    author = create_author(api, "writer")
    term = create_term(api, "topic")
    create_post(api, slug="post", author=author["id"], terms=[term["id"]])

    api.patch_json(f"/api/authors/{author['id']}", {"noindex": True}, status=200)
    api.patch_json(f"/api/terms/{term['id']}", {"noindex": True}, status=200)
    assert_empty(testapp, "/author-sitemap.xml")
    assert_empty(testapp, "/category-sitemap.xml")


@pytest.mark.parametrize(
    "change",
    [{"password": "secret"}, {"robots": "noindex"}, {"exclude_from_sitemap": True}],
)
def test_an_edit_that_unlists_a_post_removes_it(api, testapp, change):
    post = create_post(api, slug="post")
    assert post["permalink"] in locs(testapp, "post")
    update_post(api, post, **change)
    assert_empty(testapp, "/post-sitemap.xml")


# Scheduled posts: listed when their time comes, with no write --------------------------


@pytest.mark.parametrize("status", ["publish", "future"])
def test_a_scheduled_post_is_listed_from_its_publication_time(api, testapp, clock, status):
    """``future`` is WordPress's scheduled post (its cron publishes it at its date):
    listed exactly as ``publish`` with a future date is."""
    author = create_author(api, "ada")
    live_at = clock.now() + timedelta(hours=1)
    post = create_post(
        api, slug="soon", status=status, author=author["id"], published_at=live_at.isoformat()
    )
    url = post["permalink"]
    before = testapp.get("/post-sitemap.xml", status=200)
    assert url not in locs(testapp, "post")
    assert f"{SITE}/author/ada/" not in locs(testapp, "author")
    index_before = sitemap_index(testapp)

    clock.advance(minutes=59)
    assert url not in locs(testapp, "post")
    # A crawler holding the old ETag still gets it confirmed.
    testapp.get("/post-sitemap.xml", headers={"If-None-Match": before.headers["ETag"]}, status=304)

    clock.advance(minutes=1, seconds=1)
    entries = {e.loc: e for e in urlset(testapp, "post")}
    assert url in entries
    # Dated by its publication, the later of the two (S-402).
    assert moment(entries[url].lastmod) == live_at.replace(microsecond=0)
    assert f"{SITE}/author/ada/" in locs(testapp, "author")
    # ...and no longer 304: the document changed although nobody wrote anything.
    testapp.get("/post-sitemap.xml", headers={"If-None-Match": before.headers["ETag"]}, status=200)
    index_after = sitemap_index(testapp)
    assert f"{SITE}/author-sitemap.xml" in index_after
    assert index_after != index_before


def test_scheduled_posts_go_live_one_after_the_other(api, testapp, clock):
    now = clock.now()
    first = create_post(api, slug="first", published_at=(now + timedelta(hours=1)).isoformat())
    second = create_post(api, slug="second", published_at=(now + timedelta(hours=2)).isoformat())
    assert {first["permalink"], second["permalink"]}.isdisjoint(locs(testapp, "post"))
    clock.advance(hours=1, seconds=1)
    listed = locs(testapp, "post")
    assert first["permalink"] in listed and second["permalink"] not in listed
    clock.advance(hours=1)
    assert {first["permalink"], second["permalink"]} <= set(locs(testapp, "post"))


def test_a_rescheduled_or_unpublished_post_is_not_listed_at_its_old_time(api, testapp, clock):
    now = clock.now()
    later = create_post(api, slug="later", published_at=(now + timedelta(hours=1)).isoformat())
    draft = create_post(api, slug="draft", published_at=(now + timedelta(hours=1)).isoformat())
    later = update_post(api, later, published_at=(now + timedelta(days=1)).isoformat())
    draft = update_post(api, draft, status="draft")
    clock.advance(hours=2)
    listed = locs(testapp, "post")
    assert later["permalink"] not in listed and draft["permalink"] not in listed
    clock.advance(days=1)
    listed = locs(testapp, "post")
    assert later["permalink"] in listed and draft["permalink"] not in listed


def test_a_scheduled_post_goes_live_in_its_categories_and_tags(api, testapp, clock):
    news = create_term(api, "news")
    create_post(
        api,
        slug="soon",
        terms=[news["id"]],
        published_at=(clock.now() + timedelta(minutes=5)).isoformat(),
    )
    assert f"{SITE}/category/news/" not in {e.loc for e in every_entry(testapp)}
    clock.advance(minutes=5)
    assert f"{SITE}/category/news/" in locs(testapp, "category")
