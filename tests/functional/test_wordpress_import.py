"""``sitemap-server import-wordpress`` (S-706): real WordPress exports, as WordPress wrote them.

The fixtures (``../shared/fixtures/wordpress``, see its SOURCES.md) were written by
WordPress and by its theme review team, not by us. A test reads each with lxml on its
own (not with the importer's reader) and compares what the sitemaps list with what the
export says: every published item whose link is a path lists at exactly that link, on
this site's host.
"""

from __future__ import annotations

import gzip
import io
import sys
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote, urlsplit
from zoneinfo import ZoneInfo

import pytest
from lxml import etree
from sqlalchemy import select

from sitemap_server.models import Author, Post, Term
from sitemap_server.sitemaps import changes
from sitemap_server.testing import PROJECT_ROOT, SITE_URL, index_locs, url_locs

FIXTURES = PROJECT_ROOT.parent / "shared" / "fixtures" / "wordpress"
CONTENT = "{http://purl.org/rss/1.0/modules/content/}encoded"
THEME_UNIT_TEST = FIXTURES / "themeunittestdata.wordpress.xml"
BLOCKS = FIXTURES / "64-block-test-data.xml"
THEME_PREVIEW = FIXTURES / "theme-preview.xml"


def normal(url: str) -> str:
    """A URL as compared here: percent-escapes decoded, NFC."""
    return unicodedata.normalize("NFC", unquote(url))


def exported(path: Path) -> list[dict[str, str]]:
    """The export's items: link, type, status, password, id, content (the ``wp:`` fields
    by their local name: the exports use both the http and the https namespace)."""
    items = []
    for item in etree.parse(str(path)).iter("item"):
        fields = {etree.QName(child).localname: child.text or "" for child in item}
        items.append(
            {
                "link": fields.get("link", ""),
                "type": fields.get("post_type", ""),
                "status": fields.get("status", ""),
                "password": fields.get("post_password", ""),
                "id": fields.get("post_id", ""),
                "content": item.findtext(CONTENT) or "",
            }
        )
    return items


def served_links(path: Path) -> set[str]:
    """The links of the export's published posts and pages that are paths (not a plain
    ``/?p=12``), on this site, and those of their later parts (``<!--nextpage-->``: part
    *n* is ``{link}{n}/``, S-103). A link WordPress wrote with ``//`` after its host (one
    page of the theme unit test data) is the path it resolves to, with one."""
    found = set()
    for item in exported(path):
        link = urlsplit(item["link"])
        served = item["status"] == "publish" and not item["password"]
        if served and item["type"] in ("post", "page") and not link.query:
            url = SITE_URL + "/" + link.path.lstrip("/")
            found.add(normal(url))
            for part in range(2, item["content"].count("<!--nextpage-->") + 2):
                found.add(normal(f"{url}{part}/"))
    return found


def listed(app, *sitemaps: str) -> set[str]:
    """Every ``<loc>`` of every page of the given sitemaps (``post``, ``page``)."""
    locs = set()
    for index_loc in index_locs(app):
        name = index_loc.rsplit("/", 1)[-1]
        if name.split("-sitemap")[0] in sitemaps:
            locs.update(url_locs(app, "/" + name))
    return {normal(loc) for loc in locs} - {normal(SITE_URL + "/")}


def import_export(cli, path: Path) -> str:
    status, out, err = cli("import-wordpress", "--quiet", path)
    assert status == 0, err
    return out


def test_the_fixtures_are_there():
    assert {p.name for p in FIXTURES.glob("*.xml")} == {
        THEME_UNIT_TEST.name,
        BLOCKS.name,
        THEME_PREVIEW.name,
    }


@pytest.mark.parametrize("fixture", [THEME_UNIT_TEST, BLOCKS], ids=lambda p: p.name)
def test_every_published_item_is_listed_at_its_wordpress_link(cli, testapp, fixture):
    import_export(cli, fixture)
    expected = served_links(fixture)
    assert len(expected) > 50
    assert listed(testapp, "post", "page") == expected


def test_the_theme_unit_test_data_imports_as_wordpress_exported_it(cli, testapp, dbsession):
    out = import_export(cli, THEME_UNIT_TEST)
    assert out.splitlines()[0] == "read 186 items; imported 2 author, 79 post, 182 term"
    assert "70 nav_menu_item (not content)" in out
    assert "37 attachment (an image of its post)" in out
    assert "post permalinks: /{year}/{month}/{day}/{slug}/ reproduces" in out
    assert "page permalinks: /{path}/ reproduces 20 of 21 sampled links" in out

    # WordPress's ids are kept, so are hierarchy, statuses and decoded Unicode slugs.
    greek = dbsession.get(Post, 1811)
    assert (greek.type, greek.parent_id, greek.slug) == ("page", 1809, "επίπεδο-2")
    scheduled = dbsession.scalars(select(Post).where(Post.status == "future")).one()
    assert scheduled.slug == "scheduled"
    assert scheduled.published_at.year == 2030
    assert dbsession.scalars(select(Post.status).where(Post.id == 1164)).one() == "draft"
    # The scheduled post and the draft are not listed.
    locs = listed(testapp, "post", "page")
    assert not any("scheduled" in loc or "1164" in loc for loc in locs)
    # Terms keep their hierarchy; authors are those of the export.
    names = set(dbsession.scalars(select(Author.slug)))
    assert {"themedemos", "themereviewteam"} <= names
    child = dbsession.scalars(select(Term).where(Term.slug == "child-category-01")).one()
    assert dbsession.get(Term, child.parent_id).slug == "parent-category"


def test_attachments_become_images_of_their_post(cli, dbsession):
    import_export(cli, THEME_UNIT_TEST)
    expected: dict[int, set[str]] = {}
    for item in etree.parse(str(THEME_UNIT_TEST)).iter("item"):
        fields = {etree.QName(child).localname: child.text or "" for child in item}
        if fields.get("post_type") == "attachment" and fields.get("post_parent", "0") != "0":
            expected.setdefault(int(fields["post_parent"]), set()).add(fields["attachment_url"])
    posts = {post.id: post for post in dbsession.scalars(select(Post))}
    with_parent = {parent: urls for parent, urls in expected.items() if parent in posts}
    assert sum(map(len, with_parent.values())) >= 20
    for parent, urls in with_parent.items():
        assert urls <= set(posts[parent].images), parent


def test_plain_permalinks_are_reported_not_kept(cli, testapp):
    out = import_export(cli, THEME_PREVIEW)
    assert out.splitlines()[0] == "read 7 items; imported 1 author, 7 post, 9 term"
    assert "7 links that are no path here (plain /?p=…, //…)" in out
    assert served_links(THEME_PREVIEW) == set()
    # Listed all the same, at the URLs of the site's structure.
    assert len(listed(testapp, "post")) == 7


def test_a_gzipped_export_imports_the_same(cli, tmp_path):
    packed = tmp_path / "export.xml.gz"
    packed.write_bytes(gzip.compress(BLOCKS.read_bytes()))
    out = import_export(cli, packed)
    assert out.splitlines()[0] == "read 72 items; imported 2 author, 62 post, 11 term"


# Hostile and broken files: a clear error, and nothing changed --------------------------

BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE rss [
  <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
  <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
  <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
  <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
]>
<rss version="2.0" xmlns:wp="https://wordpress.org/export/1.2/"><channel>
<item><title>&d;</title><wp:post_id>1</wp:post_id><wp:post_type>post</wp:post_type>
<wp:status>publish</wp:status></item></channel></rss>
"""
EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE rss [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<rss version="2.0"><channel><item><title>&secret;</title></item></channel></rss>
"""


def cut(path: Path, fraction: float) -> bytes:
    data = path.read_bytes()
    return data[: int(len(data) * fraction)]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (BOMB, "has a DTD"),
        (EXTERNAL, "has a DTD"),
        (cut(BLOCKS, 0.5), "not well-formed XML"),
        (b"<urlset><url/></urlset>", "not <rss>"),
        (b"<rss><item/></rss>", "where <channel> was expected"),
        (b"", "not well-formed XML"),
        (gzip.compress(b"<rss><channel><item>"), "not well-formed XML"),
    ],
    ids=["entity bomb", "external entity", "truncated", "a sitemap", "no channel", "empty", "gzip"],
)
def test_a_file_that_is_no_export_is_refused_and_nothing_changes(
    cli, tmp_path, db_snapshot, content, message
):
    path = tmp_path / "export.xml"
    path.write_bytes(content)
    before = db_snapshot()
    status, _out, err = cli("import-wordpress", "--quiet", path)
    assert status == 2
    assert message in err
    assert "nothing was changed" in err
    assert "Traceback" not in err
    assert db_snapshot() == before


def test_a_missing_file_exits_2(cli, tmp_path):
    status, _out, err = cli("import-wordpress", tmp_path / "nowhere.xml")
    assert status == 2
    assert "no such file" in err


# Exports made here, for what the fixtures do not hold -----------------------------------


def wxr(*items: str, version: str = "1.2", channel: str = "") -> bytes:
    """A WXR document of ``items`` (``item(...)``), of the site https://blog.example."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"
  xmlns:dc="http://purl.org/dc/elements/1.1/"
  xmlns:wp="http://wordpress.org/export/{version}/">
<channel>
<title>Blog</title><link>https://blog.example</link>
<wp:base_blog_url>https://blog.example</wp:base_blog_url>
{channel}
{"".join(items)}
</channel></rss>""".encode()


def item(
    post_id: int,
    link: str,
    *,
    post_type: str = "post",
    status: str = "publish",
    parent: int = 0,
    date: str = "2024-03-01 10:00:00",
    date_gmt: str | None = None,
    meta: dict[str, str] | None = None,
    terms: str = "",
    title: str = "A title",
    extra: str = "",
) -> str:
    slug = link.rstrip("/").rsplit("/", 1)[-1]
    postmeta = "".join(
        f"<wp:postmeta><wp:meta_key>{key}</wp:meta_key>"
        f"<wp:meta_value><![CDATA[{value}]]></wp:meta_value></wp:postmeta>"
        for key, value in (meta or {}).items()
    )
    return f"""<item><title>{title}</title><link>https://blog.example{link}</link>
<dc:creator>ada</dc:creator><content:encoded><![CDATA[<p>Text</p>]]></content:encoded>
<wp:post_id>{post_id}</wp:post_id><wp:post_date>{date}</wp:post_date>
<wp:post_date_gmt>{date if date_gmt is None else date_gmt}</wp:post_date_gmt>
<wp:post_name>{slug}</wp:post_name>
<wp:status>{status}</wp:status><wp:post_parent>{parent}</wp:post_parent>
<wp:post_type>{post_type}</wp:post_type>{terms}{postmeta}{extra}</item>
"""


def import_bytes(cli, tmp_path, content: bytes) -> tuple[int, str, str]:
    path = tmp_path / "export.xml"
    path.write_bytes(content)
    return cli("import-wordpress", "--quiet", path)


def test_yoast_noindex_and_canonical_decide_what_is_listed(cli, tmp_path, testapp):
    status, _out, err = import_bytes(
        cli,
        tmp_path,
        wxr(
            item(1, "/plain/"),
            item(2, "/hidden/", meta={"_yoast_wpseo_meta-robots-noindex": "1"}),
            item(3, "/elsewhere/", meta={"_yoast_wpseo_canonical": "https://other.example/x"}),
            item(4, "/itself/", meta={"_yoast_wpseo_canonical": "http://sitemaps.test/itself/"}),
            item(5, "/not-a-url/", meta={"_yoast_wpseo_canonical": "javascript:alert(1)"}),
            version="1.0",
        ),
    )
    assert status == 0, err
    assert listed(testapp, "post") == {
        f"{SITE_URL}/plain/",
        f"{SITE_URL}/itself/",
        f"{SITE_URL}/not-a-url/",
    }


def test_children_before_parents_and_custom_types_and_taxonomies(cli, tmp_path, testapp, dbsession):
    genre = '<category domain="genre" nicename="poetry"><![CDATA[Poetry]]></category>'
    status, out, err = import_bytes(
        cli,
        tmp_path,
        wxr(
            item(12, "/book/collected/sonnets/", post_type="book", parent=11, terms=genre),
            item(11, "/book/collected/", post_type="book"),
            item(13, "/book/lost/", post_type="book", parent=99),
            item(
                14,
                "/2024/03/01/with-picture/",
                meta={"_thumbnail_id": "15"},
            ),
            item(
                15,
                "/2024/03/01/with-picture/pic/",
                post_type="attachment",
                status="inherit",
                parent=14,
                extra="<wp:attachment_url>https://blog.example/pic.jpg</wp:attachment_url>",
            ),
        ),
    )
    assert status == 0, err
    assert "book permalinks: /{type}/{path}/ reproduces 3 of 3" in out
    assert "1 parent not in the export: imported without it" in out
    assert dbsession.get(Post, 12).parent_id == 11
    assert [t.slug for t in dbsession.get(Post, 12).terms] == ["poetry"]
    assert dbsession.get(Post, 14).featured_image == "https://blog.example/pic.jpg"
    assert listed(testapp, "book") == {
        f"{SITE_URL}/book/collected/",
        f"{SITE_URL}/book/collected/sonnets/",
        f"{SITE_URL}/book/lost/",
    }


def test_an_item_the_site_cannot_take_is_named_by_its_line(cli, tmp_path, db_snapshot):
    before = db_snapshot()
    content = wxr(item(1, "/fine/"), item(2, "/too-long/", title="x" * 1001))
    lines = content.decode().splitlines()
    second_item = next(n for n, line in enumerate(lines, 1) if "x" * 1001 in line)
    status, _out, err = import_bytes(cli, tmp_path, content)
    assert status == 1
    assert f"line {second_item}: post/title" in err
    assert "nothing was changed" in err
    assert db_snapshot() == before


def test_continue_on_error_leaves_out_what_fails_and_names_it(cli, tmp_path, testapp):
    content = wxr(
        item(1, "/fine/"),
        item(2, "/too-long/", title="x" * 1001),
        # Its slug is its own, but WordPress's link for it is post 1's URL.
        item(3, "/fine/", date="2020-01-01 10:00:00"),
        item(4, "/also-fine/"),
        item(5, "/parent/", post_type="page", title="y" * 1001),
        item(6, "/parent/child/", post_type="page", parent=5),
    )
    lines = content.decode().splitlines()

    def line_of(text: str) -> int:
        return next(n for n, line in enumerate(lines, 1) if text in line)

    status, out, err = import_bytes(cli, tmp_path, content)
    assert status == 1 and "nothing was changed" in err
    path = tmp_path / "export.xml"
    status, out, err = cli("import-wordpress", "--quiet", "--continue-on-error", path)
    assert status == 0, err
    assert "left out, failed: 4 items" in out
    assert f"line {line_of('x' * 1001)}: post/title" in out
    assert f"line {line_of('y' * 1001)}: post/title" in out  # a post of type page
    assert f"line {line_of('/parent/child/')}: parent: unknown post 5" in out
    third = [n for n, line in enumerate(lines, 1) if "example/fine/</link>" in line][1]
    assert f"line {third}: slug: /fine/ is also the URL post 1" in out
    assert listed(testapp, "post", "page") == {f"{SITE_URL}/fine/", f"{SITE_URL}/also-fine/"}


# Importing again -----------------------------------------------------------------------


@pytest.mark.parametrize("fixture", [THEME_UNIT_TEST, BLOCKS], ids=lambda p: p.name)
def test_importing_the_same_export_again_changes_nothing(cli, db_snapshot, fixture):
    import_export(cli, fixture)
    before = db_snapshot()
    out = import_export(cli, fixture)
    assert out.splitlines()[0].endswith("imported nothing")
    assert " 0 post updated" in out.splitlines()[1]
    # Not a row: no change recorded, no sitemap or page of one rebuilt, nothing to announce.
    assert db_snapshot() == before


def test_a_newer_export_changes_what_changed_in_place(cli, tmp_path, testapp, dbsession):
    first = wxr(item(1, "/kept/"), item(2, "/renamed/", title="Old title"))
    status, _out, err = import_bytes(cli, tmp_path, first)
    assert status == 0, err
    newer = wxr(
        item(1, "/kept/"),
        item(2, "/renamed/", title="New title"),
        item(3, "/added/"),
    )
    status, out, err = import_bytes(cli, tmp_path, newer)
    assert status == 0, err
    assert out.splitlines()[0] == "read 3 items; imported 1 post"
    assert "1 post updated, 1 unchanged" in out
    assert dbsession.get(Post, 2).title == "New title"
    assert listed(testapp, "post") == {f"{SITE_URL}/{s}/" for s in ("kept", "renamed", "added")}


def test_an_id_taken_here_gives_the_item_another_and_its_children_follow(
    cli, tmp_path, api, dbsession
):
    taken = api.post_json("/api/posts", {"type": "page", "title": "Ours", "slug": "ours"}).json
    export = wxr(
        item(taken["id"], "/theirs/", post_type="page"),
        item(taken["id"] + 1000, "/theirs/child/", post_type="page", parent=taken["id"]),
    )
    status, out, err = import_bytes(cli, tmp_path, export)
    assert status == 0, err
    assert "1 WordPress id taken here: another id given" in out
    theirs = dbsession.scalars(select(Post).where(Post.slug == "theirs")).one()
    assert theirs.id != taken["id"]
    assert dbsession.get(Post, taken["id"] + 1000).parent_id == theirs.id
    # Again: the same objects, unchanged.
    status, out, err = import_bytes(cli, tmp_path, export)
    assert "0 post updated, 2 unchanged" in out


# POST /api/import ----------------------------------------------------------------------


def test_the_api_imports_an_export_and_again_changes_nothing(api, testapp, db_snapshot):
    body = BLOCKS.read_bytes()
    report = api.post("/api/import", body, content_type="application/xml", status=200).json
    assert report["imported"] == {"author": 2, "post": 62, "term": 11}
    assert report["permalinks"]["post"]["pattern"] == "/{slug}/"
    assert listed(testapp, "post", "page") == served_links(BLOCKS)
    before = db_snapshot()
    packed = gzip.compress(body)
    again = api.post("/api/import", packed, content_type="application/gzip", status=200).json
    assert again["imported"] == {}
    assert again["unchanged"]["post"] == 62
    assert db_snapshot() == before


def test_the_api_dry_runs_and_prunes(api, testapp, db_snapshot):
    first = wxr(item(1, "/kept/"), item(2, "/gone/"))
    before = db_snapshot()
    dry = api.post("/api/import?dry_run=true", first, content_type="application/xml").json
    assert dry["dry_run"] is True and dry["imported"]["post"] == 2
    assert db_snapshot() == before
    assert (
        "Sitemap-Change"
        not in api.post("/api/import?dry_run=true", first, content_type="application/xml").headers
    )
    assert api.post("/api/import", first, content_type="application/xml").json["dry_run"] is False
    newer = wxr(item(1, "/kept/"))
    kept = api.post("/api/import", newer, content_type="application/xml").json
    assert kept["pruned"] == {}
    pruned = api.post("/api/import?prune=true", newer, content_type="application/xml").json
    assert pruned["pruned"] == {"post": 1}
    assert listed(testapp, "post") == {f"{SITE_URL}/kept/"}


@pytest.mark.parametrize(
    ("query", "content_type", "status", "message"),
    [
        ("?dry_run=yes", "application/xml", 400, "dry_run"),
        ("?prune=true", "application/x-ndjson", 422, "prune"),
        ("?force=true", "application/xml", 400, "force"),
        ("?prune=true&prune=false", "application/xml", 400, "prune"),
    ],
)
def test_the_api_refuses_an_unknown_or_bad_flag(
    api, db_snapshot, query, content_type, status, message
):
    before = db_snapshot()
    response = api.post(
        f"/api/import{query}", wxr(item(1, "/x/")), content_type=content_type, expect_errors=True
    )
    assert response.status_int == status
    assert message in response.json["detail"]
    assert db_snapshot() == before


def test_the_api_refuses_a_file_that_is_no_export(api, db_snapshot):
    before = db_snapshot()
    response = api.post("/api/import", BOMB, content_type="text/xml", status=422)
    assert "has a DTD" in response.json["detail"]
    response = api.post("/api/import", cut(BLOCKS, 0.3), content_type="text/xml", status=422)
    assert response.json["errors"][0]["line"] > 1
    assert db_snapshot() == before


def test_a_dry_run_says_what_would_change_and_changes_nothing(cli, tmp_path, db_snapshot):
    before = db_snapshot()
    status, out, err = cli("import-wordpress", "--quiet", "--dry-run", BLOCKS)
    assert status == 0, err
    assert out.splitlines()[0] == "dry run: this is what the import would do; nothing was changed"
    assert out.splitlines()[1] == "read 72 items; imported 2 author, 62 post, 11 term"
    assert db_snapshot() == before


def test_prune_deletes_what_the_newer_export_no_longer_has(cli, tmp_path, testapp, dbsession):
    tag = '<category domain="post_tag" nicename="old-tag"><![CDATA[Old tag]]></category>'
    first = wxr(
        item(1, "/kept/"),
        item(2, "/dropped/", terms=tag),
        item(3, "/about/", post_type="page"),
        item(4, "/about/team/", post_type="page", parent=3),
    )
    status, _out, err = import_bytes(cli, tmp_path, first)
    assert status == 0, err
    newer = wxr(item(1, "/kept/"))
    # Without --prune nothing is deleted.
    status, out, err = import_bytes(cli, tmp_path, newer)
    assert status == 0, err
    assert listed(testapp, "post", "page") == {
        f"{SITE_URL}/{path}/" for path in ("kept", "dropped", "about", "about/team")
    }
    path = tmp_path / "export.xml"
    status, out, err = cli("import-wordpress", "--quiet", "--prune", path)
    assert status == 0, err
    assert "deleted, no longer in the export: 3 post, 1 term" in out
    assert listed(testapp, "post", "page") == {f"{SITE_URL}/kept/"}
    assert dbsession.scalars(select(Term).where(Term.slug == "old-tag")).first() is None
    # The same export with --prune again: nothing more to do.
    status, out, err = cli("import-wordpress", "--quiet", "--prune", path)
    assert "deleted" not in out


def test_a_newer_export_of_thousands_of_items_updates_remakes_and_prunes(
    cli, tmp_path, testapp, api
):
    """More items than the import reads at once (it looks up what earlier imports made a
    window of items at a time): an item changed, one deleted here since and those gone
    from the export are each found, whichever window they are in."""
    count = 2500
    first = wxr(*(item(n, f"/post-{n}/") for n in range(1, count + 1)))
    status, _out, err = import_bytes(cli, tmp_path, first)
    assert status == 0, err
    api.delete(f"/api/posts/{1500}", status=204)  # deleted here: the export makes it again
    kept = range(1, count - 200 + 1)  # the last 200 are gone from the newer export
    newer = wxr(
        *(item(n, f"/post-{n}/", title="Changed" if n == 2222 else "A title") for n in kept)
    )
    status, out, err = import_bytes(cli, tmp_path, newer)
    assert status == 0, err
    assert "imported 1 post" in out
    assert "1 post updated, 2298 unchanged" in out
    path = tmp_path / "export.xml"
    status, out, err = cli("import-wordpress", "--quiet", "--prune", path)
    assert status == 0, err
    assert "0 post updated, 2300 unchanged" in out
    assert "deleted, no longer in the export: 200 post" in out
    assert listed(testapp, "post") == {f"{SITE_URL}/post-{n}/" for n in kept}
    assert api.get("/api/posts/2222").json["title"] == "Changed"


# Instants across a year, at hours where the local day is another than UTC's somewhere.
INSTANTS = [
    datetime(2023, month, day, hour, 30, tzinfo=UTC)
    for month, day, hour in [
        (1, 1, 3),
        (3, 12, 9),
        (4, 2, 16),
        (6, 30, 23),
        (10, 5, 1),
        (12, 31, 20),
    ]
]


def dated_export(zone: str) -> tuple[bytes, set[str]]:
    """Posts with WordPress's links of ``/%year%/%monthnum%/%day%/%hour%/%postname%/``:
    local dates in ``zone``, as WordPress writes them."""
    items, links = [], set()
    for n, instant in enumerate(INSTANTS, start=1):
        local = instant.astimezone(ZoneInfo(zone))
        link = local.strftime(f"/%Y/%m/%d/%H/post-{n}/")
        items.append(
            item(
                n,
                link,
                date=local.strftime("%Y-%m-%d %H:%M:%S"),
                date_gmt=instant.strftime("%Y-%m-%d %H:%M:%S"),
            )
        )
        links.add(f"{SITE_URL}{link}")
    return wxr(*items), links


@pytest.mark.parametrize("zone", ["America/Denver", "Australia/Adelaide", "Asia/Kathmandu"])
def test_dated_links_are_made_in_the_time_zone_of_the_export(cli, tmp_path, api, testapp, zone):
    """WordPress writes local dates in links: the import finds the zone that gives every
    exported date (summer time, half and quarter hours), makes it the site's (it has no
    posts), and the structure then makes every link; no post keeps an exported path."""
    content, links = dated_export(zone)
    status, out, err = import_bytes(cli, tmp_path, content)
    assert status == 0, err
    assert "(6 of 6 exported dates), the export's, is now the site's (was UTC)" in out
    assert "post permalinks: /{year}/{month}/{day}/{hour}/{slug}/ reproduces 6 of 6" in out
    assert "exported path" not in out
    found = ZoneInfo(api.get("/api/settings").json["timezone"])
    assert [i.astimezone(found).utcoffset() for i in INSTANTS] == [
        i.astimezone(ZoneInfo(zone)).utcoffset() for i in INSTANTS
    ]
    assert all(p["path"] is None for p in api.get("/api/posts").json["items"])
    assert listed(testapp, "post") == links


def test_a_site_with_posts_keeps_its_time_zone_and_the_posts_their_links(
    cli, tmp_path, api, testapp
):
    api.post_json("/api/posts", {"type": "page", "title": "Ours", "status": "publish"}, status=201)
    content, links = dated_export("America/Denver")
    status, out, err = import_bytes(cli, tmp_path, content)
    assert status == 0, err
    assert "time zone: the site's, UTC, not the export's" in out
    assert api.get("/api/settings").json["timezone"] == "UTC"
    # Those whose local date is UTC's are made by the structure; the others keep theirs.
    assert listed(testapp, "post") == links


CATEGORIES = "".join(
    f"<wp:category><wp:term_id>{term_id}</wp:term_id><wp:category_nicename>{slug}"
    f"</wp:category_nicename><wp:category_parent>{parent}</wp:category_parent>"
    f"<wp:cat_name>{slug.title()}</wp:cat_name></wp:category>"
    for term_id, slug, parent in [(3, "aside", ""), (5, "news", ""), (7, "sport", "news")]
)


def in_categories(*slugs: str) -> str:
    return "".join(
        f'<category domain="category" nicename="{slug}"><![CDATA[{slug.title()}]]></category>'
        for slug in slugs
    )


def test_category_and_author_links_are_found_and_made(cli, tmp_path, testapp):
    """WordPress's %category% is the post's category of the lowest id, with its parents
    (a post in none is in ``uncategorized``); %author% its author's slug."""
    content = wxr(
        item(1, "/news/sport/post-1/", terms=in_categories("sport")),
        item(2, "/aside/post-2/", terms=in_categories("news", "aside")),
        item(3, "/uncategorized/post-3/"),
        item(4, "/news/post-4/", terms=in_categories("news")),
        channel=CATEGORIES,
    )
    status, out, err = import_bytes(cli, tmp_path, content)
    assert status == 0, err
    assert "post permalinks: /{category}/{slug}/ reproduces 4 of 4 sampled links" in out
    assert "exported path" not in out
    assert listed(testapp, "post") == {
        f"{SITE_URL}{path}"
        for path in [
            "/news/sport/post-1/",
            "/aside/post-2/",
            "/uncategorized/post-3/",
            "/news/post-4/",
        ]
    }


def test_a_large_import_records_its_changes_in_parts(cli, tmp_path, testapp, monkeypatch):
    """A bulk write records what it holds back every ``HELD_POSTS`` posts (a million
    posts' ids were the largest object of an import): every part reaches the sitemaps."""
    monkeypatch.setattr(changes, "HELD_POSTS", 3)
    status, _out, err = import_bytes(
        cli, tmp_path, wxr(*(item(n, f"/post-{n}/") for n in range(1, 11)))
    )
    assert status == 0, err
    assert listed(testapp, "post") == {f"{SITE_URL}/post-{n}/" for n in range(1, 11)}


def test_author_links_are_found_and_made(cli, tmp_path, testapp):
    content = wxr(*(item(n, f"/writers/ada/post-{n}/") for n in range(1, 4)))
    status, out, err = import_bytes(cli, tmp_path, content)
    assert status == 0, err
    assert "post permalinks: /writers/{author}/{slug}/ reproduces 3 of 3 sampled links" in out
    assert listed(testapp, "post") == {f"{SITE_URL}/writers/ada/post-{n}/" for n in range(1, 4)}


def test_a_structure_given_is_used_and_the_links_it_misses_are_counted(cli, testapp):
    status, out, err = cli(
        "import-wordpress", "--quiet", "--permalinks", "/%postname%/", THEME_UNIT_TEST
    )
    assert status == 0, err
    # Seven posts have a link of one segment, but five of those were renamed by hand in
    # the export (link /wp-6-1-theme-block-category/, post_name theme-block-category):
    # two are made by the pattern; the others keep their exported path, so every URL is
    # still WordPress's.
    assert "post permalinks: /{slug}/ reproduces 2 of 57 sampled links" in out
    assert listed(testapp, "post", "page") == served_links(THEME_UNIT_TEST)


@pytest.mark.parametrize(
    ("structure", "message"),
    [
        ("/%pagename%/%postname%/", "%pagename% cannot be part of a permalink here"),
        ("/%year%/", "must contain {slug}, {path} or {id}"),
    ],
)
def test_a_structure_that_cannot_be_expressed_is_refused(cli, db_snapshot, structure, message):
    before = db_snapshot()
    status, _out, err = cli("import-wordpress", "--permalinks", structure, BLOCKS)
    assert status == 2
    assert message in err
    assert db_snapshot() == before


def test_on_a_terminal_a_progress_bar_counts_bytes_and_items(cli, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    status, out, _err = cli("import-wordpress", THEME_UNIT_TEST)
    assert status == 0
    assert out.startswith("read 186 items")
    progress = terminal.getvalue()
    size = 2 * THEME_UNIT_TEST.stat().st_size  # read twice: a survey, then the import
    assert "importing: 100%" in progress
    assert f"{size / 1e6:.2f}M/{size / 1e6:.2f}M" in progress
