"""``sitemap-server explain`` and ``GET /api/explain``: why a URL is listed or not (S-406,
issue 13). Every URL of the demo site is explained as the served sitemaps have it; every
post, term and author they leave out gets its reasons, from the engine's own rules."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from sitemap_server.demo import seed_demo
from sitemap_server.testing import (
    SITE_URL,
    SITEMAP_NS,
    assert_problem,
    client,
    fetch_sitemap,
    installed_plugins_loaded,
)

NS = {"s": SITEMAP_NS}
JAN = "2024-01-10T12:00:00+00:00"


# Helpers --------------------------------------------------------------------------------


def explain(api, **query):
    return api.get("/api/explain", params=query, status=200).json


def reason(rule, requirement, text):
    return {"rule": rule, "requirement": requirement, "reason": text}


def rules(explanation):
    return [r["rule"] for r in explanation["reasons"]]


def create_post(api, **fields):
    body = {"type": "post", "title": "A post", "status": "publish", "published_at": JAN}
    return api.post_json("/api/posts", {**body, **fields}, status=201).json


def served(testapp):
    """Every ``<loc>`` of every document the index lists: {loc: [(document, lastmod)]}."""
    found: dict[str, list[tuple[str, str | None]]] = {}
    index = fetch_sitemap(testapp, "/sitemap_index.xml")
    for document in index.iterfind("s:sitemap", NS):
        url = document.findtext("s:loc", namespaces=NS)
        root = fetch_sitemap(testapp, url.removeprefix(SITE_URL))
        for entry in root.iterfind("s:url", NS):
            loc = entry.findtext("s:loc", namespaces=NS)
            found.setdefault(loc, []).append((url, entry.findtext("s:lastmod", namespaces=NS)))
    return found


@pytest.fixture
def demo(app_session):
    """The demo site (100 posts: every special case of demo.SPECIAL_CASES)."""
    with app_session.begin():
        seed_demo(app_session, posts=100)


# Every URL of the demo site -------------------------------------------------------------


def test_every_url_the_demo_serves_is_explained_as_listed_in_that_document(demo, api, testapp):
    urls = served(testapp)
    assert len(urls) > 150
    kinds = set()
    for loc, documents in urls.items():
        explanation = explain(api, url=loc)
        kinds.add(explanation["subject"]["kind"])
        assert explanation["listed"] is True, explanation
        assert explanation["reasons"] == [] and explanation["note"] is None, explanation
        listings = {(s["document"], s["lastmod"]) for s in explanation["sitemaps"]}
        # The same URL in several sitemaps (a post with videos): each of them, exactly.
        assert listings == set(documents), loc
        assert all(s["lastmod_source"] for s in explanation["sitemaps"])
    assert {"home", "post", "term", "author", "archive"} <= kinds


def test_every_document_the_index_lists_is_explained_with_its_date(demo, api, testapp):
    index = fetch_sitemap(testapp, "/sitemap_index.xml")
    for document in index.iterfind("s:sitemap", NS):
        url = document.findtext("s:loc", namespaces=NS)
        explanation = explain(api, url=url)
        assert explanation["subject"]["kind"] == "sitemap"
        assert explanation["listed"] is True
        [listing] = explanation["sitemaps"]
        assert listing["document"] == f"{SITE_URL}/sitemap_index.xml"
        assert listing["lastmod"] == document.findtext("s:lastmod", namespaces=NS)


def expected_post_rules(post, settings, now):
    """What leaves a post out, read from its fields (S-201, S-206), independently of the
    rules' code."""
    found = []
    if post["status"] not in ("publish", "future"):
        found.append("status")
    if post["password"]:
        found.append("password")
    if post["robots"] == "noindex":
        found.append("noindex")
    if post["exclude_from_sitemap"]:
        found.append("exclude_from_sitemap")
    if post["published_at"] is None or datetime.fromisoformat(post["published_at"]) > now:
        found.append("scheduled")
    if settings["front_page"] == "page" and post["id"] == settings["front_page_id"]:
        found.append("front_page")
    if post["canonical"] and post["canonical"] != post["permalink"]:
        found.append("canonical")
    return found


def test_every_post_term_and_author_of_the_demo_is_listed_or_says_why(demo, api, testapp):
    urls = served(testapp)
    settings = api.get("/api/settings").json
    now = datetime.now(UTC)
    posts = api.get("/api/posts", params={"per_page": 500}).json["items"]
    left_out = {}
    for post in posts:
        explanation = explain(api, post=post["id"])
        assert explanation["url"] == post["permalink"]
        # The answer and the sitemaps agree, both ways.
        assert explanation["listed"] == (post["permalink"] in urls), explanation
        assert rules(explanation) == expected_post_rules(post, settings, now), post
        if not explanation["listed"]:
            left_out[post["title"]] = rules(explanation)
            assert all(r["requirement"].startswith("S-2") for r in explanation["reasons"])
    assert left_out["Scheduled for tomorrow"] == ["scheduled"]
    assert left_out["Coming soon"] == ["scheduled"]  # status future: scheduled, as WordPress
    assert left_out["Home"] == ["front_page"]
    assert sorted(map(tuple, left_out.values())) == sorted(
        [
            ("front_page",),  # the static front page is the home page
            ("noindex",),  # the privacy policy
            ("status",),  # the draft page
            *[("status",)] * 4,  # draft, private, pending, trash
            ("password",),
            ("noindex",),
            ("canonical",),
            ("exclude_from_sitemap",),
            ("scheduled",),
            ("scheduled",),  # status future
        ]
    )

    for kind, items in (
        ("term", api.get("/api/terms", params={"per_page": 500}).json["items"]),
        ("author", api.get("/api/authors", params={"per_page": 500}).json["items"]),
    ):
        for item in items:
            explanation = explain(api, **{kind: item["id"]})
            url = item["url"]
            assert explanation["url"] == url
            assert explanation["listed"] == (url in urls), explanation
            assert explanation["listed"] != bool(explanation["reasons"]), explanation
            if item["noindex"]:
                assert f"{kind}_noindex" in rules(explanation)
    archive = explain(api, term=next(t["id"] for t in items_named(api, "Archive")))
    assert rules(archive) == ["term_noindex", "listed_posts"]
    guest = next(a for a in api.get("/api/authors").json["items"] if a["slug"] == "guest")
    assert rules(explain(api, author=guest["id"])) == ["author_noindex"]


def items_named(api, name):
    terms = api.get("/api/terms", params={"per_page": 500}).json["items"]
    return [t for t in terms if t["name"] == name]


def test_the_home_page_posts_page_and_parts_say_where_their_date_comes_from(demo, api, testapp):
    home = explain(api, url=f"{SITE_URL}/")
    assert home["subject"] == {"kind": "home"}
    [listing] = home["sitemaps"]
    assert listing["sitemap"] == "page"  # a static front page: the page sitemap (S-206)
    newest = int(listing["lastmod_source"].rsplit("post ", 1)[1])
    assert listing["lastmod_source"].startswith("home page: the newest lastmod")
    dated_by = explain(api, post=newest)["sitemaps"][0]
    assert dated_by["lastmod"] == listing["lastmod"]

    blog = explain(api, url=f"{SITE_URL}/blog/")
    assert blog["sitemaps"][0]["lastmod_source"].startswith("posts page: the newest lastmod")
    assert blog["sitemaps"][0]["lastmod"] == listing["lastmod"]

    parted = next(
        p for p in api.get("/api/posts", params={"per_page": 500}).json["items"] if p["parts"] > 1
    )
    part = explain(api, url=parted["permalink"] + "3/")
    assert part["subject"]["id"] == parted["id"] and part["subject"]["part"] == 3
    assert part["listed"] is True


# Hand-made cases ------------------------------------------------------------------------


def test_a_draft_with_a_password_in_a_noindexed_type_gives_all_three_reasons(api):
    api.post_json("/api/post-types", {"name": "memo", "label": "Memos", "noindex": True})
    memo = create_post(api, type="memo", status="draft", password="secret")

    explanation = explain(api, post=memo["id"])
    assert explanation["listed"] is False
    assert explanation["sitemaps"] == []
    assert explanation["reasons"] == [
        reason(
            "status",
            "S-201",
            "its status is draft; only published and scheduled (future) posts are listed",
        ),
        reason("password", "S-201", "it is protected by a password"),
        reason(
            "type_noindex", "S-201", "its type 'memo' is noindexed and the post is not set to index"
        ),
    ]
    # The same post set to "index" and published: listed, in a noindexed type (S-201).
    api.patch_json(
        f"/api/posts/{memo['id']}", {"status": "publish", "password": None, "robots": "index"}
    )
    assert explain(api, post=memo["id"])["sitemaps"][0]["document"] == (
        f"{SITE_URL}/memo-sitemap.xml"
    )


def test_a_scheduled_post_says_until_when_and_is_listed_once_it_is_due(api, clock):
    tomorrow = (clock.now() + timedelta(days=1)).replace(microsecond=0)
    post = create_post(api, title="Soon", published_at=tomorrow.isoformat())

    explanation = explain(api, url=post["permalink"])
    assert explanation["subject"]["id"] == post["id"]
    assert explanation["reasons"] == [
        reason(
            "scheduled",
            "S-201",
            f"it is dated in the future: scheduled until {tomorrow.isoformat()}",
        )
    ]
    clock.advance(days=2)
    explanation = explain(api, url=post["permalink"])
    assert explanation["listed"] is True
    assert explanation["sitemaps"][0]["lastmod"] == tomorrow.isoformat()


def test_terms_and_authors_without_listed_posts(api):
    parent = api.post_json("/api/terms", {"taxonomy": "category", "name": "World"}).json
    child = api.post_json(
        "/api/terms", {"taxonomy": "category", "name": "Europe", "parent": parent["id"]}
    ).json
    tag = api.post_json("/api/terms", {"taxonomy": "post_tag", "name": "Lonely"}).json
    quiet = api.post_json("/api/authors", {"slug": "quiet", "name": "Quiet"}).json
    hidden = api.post_json("/api/authors", {"slug": "hidden", "name": "H", "noindex": True}).json
    create_post(api, author=hidden["id"])
    create_post(api, status="draft", author=quiet["id"], terms=[tag["id"]])

    assert explain(api, term=parent["id"])["reasons"] == [
        reason("listed_posts", "S-203", "no listed post is in it nor in the terms below it")
    ]
    assert explain(api, term=tag["id"])["reasons"][0]["reason"] == "no listed post is in it"
    assert explain(api, author=quiet["id"])["reasons"] == [
        reason("listed_posts", "S-202", "none of its posts is listed")
    ]
    assert explain(api, author=hidden["id"])["reasons"] == [
        reason("author_noindex", "S-202", "its author archive is noindexed")
    ]
    # A post in the child lists the child and, through it, the parent (S-203).
    create_post(api, title="Paris", terms=[child["id"]], published_at=JAN)
    world = explain(api, url=parent["url"])
    assert world["listed"] is True
    assert world["sitemaps"][0]["lastmod_source"].endswith(
        "the newest lastmod of the listed posts in it and in the terms below it: post 3"
    )


def test_types_taxonomies_canonicals_and_long_urls(api):
    api.post_json("/api/post-types", {"name": "internal", "label": "Internal", "public": False})
    internal = create_post(api, type="internal", title="Inside")
    api.post_json("/api/taxonomies", {"name": "topic", "label": "Topics", "archive_base": "topic"})
    api.patch_json("/api/taxonomies/topic", {"noindex": True})
    topic = api.post_json("/api/terms", {"taxonomy": "topic", "name": "Birds"}).json
    elsewhere = create_post(
        api,
        title="Copied",
        canonical="https://other.example/original/",
        exclude_from_sitemap=True,
        terms=[topic["id"]],
    )
    long = create_post(api, title="Long", path="/" + "b" * 2026 + "/")

    assert explain(api, post=internal["id"])["reasons"] == [
        reason("type_public", "S-201", "its type 'internal' is not public")
    ]
    assert rules(explain(api, term=topic["id"])) == ["taxonomy_noindex", "listed_posts"]
    assert explain(api, post=elsewhere["id"])["reasons"] == [
        reason("exclude_from_sitemap", "S-201", 'it is flagged "exclude from sitemap"'),
        reason(
            "canonical",
            "S-201",
            "its canonical URL is https://other.example/original/, not its own URL",
        ),
    ]
    assert explain(api, post=long["id"])["reasons"] == [
        reason("url", "S-208", "its URL is longer than 2047 characters")
    ]
    # Asked by its URL, too long as it is.
    assert explain(api, url=long["permalink"])["subject"]["id"] == long["id"]


def test_a_private_site_lists_nothing_and_says_so(api):
    post = create_post(api, title="Public post")
    assert explain(api, post=post["id"])["listed"] is True
    api.patch_json("/api/settings", {"private": True})

    explanation = explain(api, post=post["id"])
    assert explanation["listed"] is False
    assert explanation["sitemaps"] == []
    assert explanation["reasons"] == [
        reason(
            "private",
            "S-205",
            'the site is private ("discourage search engines"): every sitemap is empty',
        )
    ]
    assert rules(explain(api, url=f"{SITE_URL}/post-sitemap.xml")) == ["private"]


def test_an_archive_that_is_not_listed_and_an_empty_sitemap(api):
    api.post_json(
        "/api/post-types",
        {"name": "event", "label": "Events", "archive_path": "/events/", "noindex": True},
    )
    explanation = explain(api, url=f"{SITE_URL}/events/")
    assert explanation["subject"] == {"kind": "archive", "type": "event"}
    assert rules(explanation) == ["type_noindex", "listed_posts"]
    empty = explain(api, url=f"{SITE_URL}/post-sitemap.xml")
    assert empty["reasons"][0]["requirement"] == "S-306"
    assert rules(explain(api, url=f"{SITE_URL}/post-sitemap2.xml")) == ["empty"]
    create_post(api)
    assert explain(api, url=f"{SITE_URL}/post-sitemap999999999.xml")["reasons"] == [
        reason("pages", "S-304", "the post sitemap has 1 page(s)")
    ]


# Plugins, by name -----------------------------------------------------------------------


@pytest.fixture
def sample_api(app_with, clean_database, api_token):
    """The application with the sample plugin (tests/sample_plugin), signed in."""
    return client(app_with(**{"sitemap_server.extra_plugins": "sample_plugin"}), api_token)


def test_a_plugins_exclusions_are_named_by_plugin(sample_api):
    secret = create_post(sample_api, title="Plans [hide]", slug="secret-plans")
    dropped = create_post(sample_api, title="Dropped", path="/drop-me/now/")

    assert explain(sample_api, post=secret["id"])["reasons"] == [
        reason(
            "plugin:sample_plugin",
            "S-502",
            "the plugin sample_plugin leaves it out (its sitemap_exclusion_criteria)",
        ),
        reason(
            "plugin:sample_plugin",
            "S-502",
            "the plugin sample_plugin leaves it out (its sitemap_exclude)",
        ),
    ]
    assert explain(sample_api, url=dropped["permalink"])["reasons"] == [
        reason(
            "plugin:sample_plugin",
            "S-502",
            "the plugin sample_plugin drops its entry (its sitemap_entry)",
        )
    ]
    ghost = sample_api.post_json("/api/authors", {"slug": "ghost", "name": "Ghost [hide]"}).json
    create_post(sample_api, title="By the ghost", author=ghost["id"])
    assert rules(explain(sample_api, author=ghost["id"])) == ["plugin:sample_plugin"]
    # The plugin's own sitemap lists what the core lists, under its own URLs.
    bookmark = create_post(sample_api, title="Bookmark this", slug="kept")
    assert explain(sample_api, url=f"{SITE_URL}/bookmarks/kept/")["subject"] == {
        "kind": "entry",
        "sitemap": "bookmarks",
        "id": bookmark["id"],
    }


# The plugins that ship beside the core: their sitemaps say where their dates come from.
with_plugins = pytest.mark.skipif(
    not installed_plugins_loaded(), reason="the video and news plugins are not loaded"
)
VIDEO = {
    "thumbnail_url": "https://cdn.example.test/thumb.jpg",
    "player_url": "https://player.example.test/embed/1",
}


def sources(explanation):
    """{sitemap: (lastmod, lastmod_source)} of each sitemap that lists the URL."""
    return {s["sitemap"]: (s["lastmod"], s["lastmod_source"]) for s in explanation["sitemaps"]}


@with_plugins
def test_a_video_entry_is_dated_by_its_post_or_by_the_video_changed_since(api, clock):
    post = create_post(api, title="Cooking", modified_at=JAN)
    clock.advance(hours=1)
    video = api.post_json(f"/api/posts/{post['id']}/videos", VIDEO, status=201).json
    found = sources(explain(api, post=post["id"]))
    dated_by_video = (
        "the later of the post's lastmod in the post sitemap and its videos' modified "
        f"times (video {video['id']}'s modified time)"
    )
    assert found["post"][0] == JAN
    assert found["video"][1] == dated_by_video
    assert datetime.fromisoformat(found["video"][0]) == datetime.fromisoformat(
        video["modified_at"]
    ).replace(microsecond=0)

    clock.advance(hours=1)
    api.patch_json(f"/api/posts/{post['id']}", {"title": "Cooking again"})
    found = sources(explain(api, post=post["id"]))
    assert found["video"] == (
        found["post"][0],
        "the later of the post's lastmod in the post sitemap and its videos' modified "
        "times (the post's lastmod)",
    )

    # A static front page's videos are listed as the home page's (S-206).
    front = create_post(api, type="page", title="Welcome", modified_at=JAN)
    clock.advance(hours=1)
    on_front = api.post_json(f"/api/posts/{front['id']}/videos", VIDEO, status=201).json
    api.patch_json("/api/settings", {"front_page": "page", "front_page_id": front["id"]})
    assert sources(explain(api, url=f"{SITE_URL}/"))["video"][1] == (
        "the later of the home page's lastmod in the page sitemap and the front page's "
        f"videos' modified times (video {on_front['id']}'s modified time)"
    )


@with_plugins
def test_a_news_entry_is_dated_by_its_post(api, clock):
    hour_ago = (clock.now() - timedelta(hours=1)).replace(microsecond=0).isoformat()
    post = create_post(api, title="Breaking", published_at=hour_ago, modified_at=hour_ago)
    found = sources(explain(api, post=post["id"]))
    assert found["news"] == (found["post"][0], "the post's lastmod in the post sitemap")
    assert found["post"][0] == hour_ago


# The command and the endpoint -----------------------------------------------------------


def test_the_command_prints_where_and_why_and_exits_accordingly(api, cli):
    listed = create_post(api, title="Hello", slug="hello")
    draft = create_post(api, title="Later", slug="later", status="draft")

    status, out, _err = cli("explain", listed["permalink"])
    assert status == 0
    assert out.splitlines() == [
        f"{SITE_URL}/2024/01/hello/",
        f"  post {listed['id']} (post): 'Hello'",
        f"  listed in the post sitemap, page 1: {SITE_URL}/post-sitemap.xml",
        f"    lastmod {JAN}: the later of the post's modified and published times",
    ]
    status, out, _err = cli("explain", "post", draft["id"])
    assert status == 1
    assert out.splitlines()[2:] == [
        "  not listed:",
        "    S-201 status: its status is draft; only published and scheduled (future) posts"
        " are listed",
    ]
    assert cli("explain", f"post:{draft['id']}")[1] == out

    status, out, _err = cli("explain", "/2024/01/hello/", "--json")
    assert status == 0
    assert json.loads(out) == explain(api, url=listed["permalink"])

    status, out, err = cli("explain", f"{SITE_URL}/nothing/here/")
    assert (status, out) == (2, "")
    assert "no post, page, term, author, archive or sitemap of this site has this URL" in err
    assert cli("explain", "post", "999")[2] == "sitemap-server: there is no post 999\n"
    assert cli("explain", "video", "12")[0] == 2
    assert cli("explain", "post", 2**40)[2] == f"sitemap-server: there is no post {2**40}\n"


def test_the_endpoint_needs_a_token_and_one_valid_question(api, testapp):
    create_post(api, title="Hello", slug="hello")
    testapp.get("/api/explain", params={"post": 1}, status=401)

    assert_problem(api.get("/api/explain", status=400), 400, "url")
    assert_problem(api.get("/api/explain", params={"post": 1, "term": 1}, status=400), 400, "term")
    assert_problem(api.get("/api/explain", params={"post": "abc"}, status=400), 400)
    assert_problem(api.get("/api/explain", params={"url": "ftp://x/"}, status=400), 400)
    assert_problem(api.get("/api/explain", params={"url": "/a\x00b/"}, status=400), 400)
    assert_problem(api.get("/api/explain", params={"colour": "red"}, status=400), 400)

    body = assert_problem(
        api.get("/api/explain", params={"url": f"{SITE_URL}/nowhere/"}, status=404), 404
    )
    assert "no post, page, term, author" in body["detail"]
    assert_problem(api.get("/api/explain", params={"term": 99}, status=404), 404)
    assert_problem(
        api.get("/api/explain", params={"url": "https://elsewhere.example/"}, status=404), 404
    )
