"""Every hook, proven through HTTP with a plugin that implements them all (S-501, S-502).

The plugin is ``tests/sample_plugin``, registered by dotted name through the setting
``sitemap_server.extra_plugins``; the site is built through the admin API of an application
made with it. There is one test (or more) named after each hook, and tests that fail when
a hook has no docstring, no section in ``docs/hooks.md`` or no test here. Then the plugin
manager itself: misspelt hooks, disabled entry points, built-in plugins.
"""

import inspect
import logging
from pathlib import Path
from types import SimpleNamespace

import pluggy
import pytest
import sample_plugin
from lxml import etree
from sqlalchemy import create_engine
from sqlalchemy import inspect as inspect_db
from webtest import TestApp

from sitemap_server import hookspecs, migrations, plugins
from sitemap_server.app import main, site_of_app
from sitemap_server.cli import main as cli_main
from sitemap_server.demo import seed_demo
from sitemap_server.models import Post
from sitemap_server.notify.worker import Worker
from sitemap_server.settings import SettingsError
from sitemap_server.sitemaps import chain
from sitemap_server.sitemaps.entries import Entry
from sitemap_server.testing import PROJECT_ROOT, SCHEMAS_DIR, SITE_URL, apply_changes, client

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NS = {"s": SITEMAP_NS}
SCHEMAS = SCHEMAS_DIR
HOOKS_MD = PROJECT_ROOT / "docs" / "hooks.md"
JAN = "2024-01-10T12:00:00+00:00"
JUN = "2024-06-10T12:00:00+00:00"


# Fixtures and helpers -------------------------------------------------------------------


@pytest.fixture
def plugin_app(app_with):
    """The application with the sample plugin."""
    return app_with(**{"sitemap_server.extra_plugins": "sample_plugin"})


@pytest.fixture
def sample(plugin_app, clean_database):
    """The plugin application through WebTest, without credentials; fresh plugin records."""
    sample_plugin.reset()
    return client(plugin_app)


@pytest.fixture
def sample_api(sample, api_token):
    """The plugin application, signed in with a bearer token."""
    sample.authorization = ("Bearer", api_token)
    return sample


def create_post(api, **fields):
    body = {"type": "post", "status": "publish", "published_at": JAN, "modified_at": JAN}
    return api.post_json("/api/posts", {**body, **fields}, status=201).json


def create_author(api, slug, name=None):
    body = {"slug": slug, "name": name or slug.title()}
    return api.post_json("/api/authors", body, status=201).json


def urlset(app, path):
    """(the parsed document, {loc: lastmod or None}) of a sitemap."""
    response = app.get(path, status=200)
    root = etree.fromstring(response.body)
    entries = {
        url.findtext("s:loc", namespaces=NS): url.findtext("s:lastmod", namespaces=NS)
        for url in root.iterfind("s:url", NS)
    }
    return root, entries


def index_locs(app):
    root = etree.fromstring(app.get("/sitemap_index.xml", status=200).body)
    return [loc.text for loc in root.iterfind("s:sitemap/s:loc", NS)]


def assert_valid_urlset(root):
    schema = etree.XMLSchema(etree.parse(str(SCHEMAS / "sitemap-with-hreflang.xsd")))
    assert schema.validate(root), schema.error_log


def post_url(slug, month="01"):
    return f"{SITE_URL}/2024/{month}/{slug}/"


# sitemap_providers ----------------------------------------------------------------------


def test_sitemap_providers_adds_a_sitemap_to_the_index(sample_api, testapp):
    create_post(sample_api, title="Bookmark: Pyramid", slug="pyramid")
    create_post(sample_api, title="An ordinary post", slug="ordinary")

    # First in the index (its ``order``), though refreshed after the post types.
    assert index_locs(sample_api)[0] == f"{SITE_URL}/bookmarks-sitemap.xml"
    root, entries = urlset(sample_api, "/bookmarks-sitemap.xml")
    assert entries == {f"{SITE_URL}/bookmarks/pyramid/": JAN}
    assert_valid_urlset(root)
    # Without the plugin there is no such sitemap.
    assert f"{SITE_URL}/bookmarks-sitemap.xml" not in index_locs(testapp)
    testapp.get("/bookmarks-sitemap.xml", status=404)


def test_sitemap_providers_entries_follow_writes(sample_api):
    post = create_post(sample_api, title="Not yet", slug="later")
    assert urlset(sample_api, "/bookmarks-sitemap.xml")[1] == {}

    sample_api.patch_json(f"/api/posts/{post['id']}", {"title": "Bookmark now"}, status=200)
    assert list(urlset(sample_api, "/bookmarks-sitemap.xml")[1]) == [f"{SITE_URL}/bookmarks/later/"]

    sample_api.delete(f"/api/posts/{post['id']}", status=204)
    assert urlset(sample_api, "/bookmarks-sitemap.xml")[1] == {}


# sitemap_configure ----------------------------------------------------------------------


def test_sitemap_configure_adds_a_route_and_view(sample, testapp):
    response = sample.get("/sample-plugin/ping", status=200)
    assert response.text == "pong"
    assert response.content_type == "text/plain"
    testapp.get("/sample-plugin/ping", status=404)


# A provider's stylesheet, and sitemap_xsl ----------------------------------------------


@pytest.mark.parametrize("path", [sample_plugin.XSL_PATH, sample_plugin.EXTRA_XSL_PATH])
def test_sitemap_xsl_and_a_providers_stylesheet_are_served(sample, testapp, path):
    """The bookmarks sitemap carries its stylesheet (``Provider.xsl_asset``); the same
    file is served at another path through ``sitemap_xsl``."""
    response = sample.get(path, status=200)
    assert response.content_type == "text/xsl"
    assert response.headers["X-Robots-Tag"] == "noindex, follow"
    expected = Path(sample_plugin.__file__).with_name("sample-sitemap.xsl").read_bytes()
    assert response.body == expected
    etree.XSLT(etree.fromstring(response.body))  # a real stylesheet
    assert sample.get(path, headers={"If-None-Match": response.etag}, status=304)
    testapp.get(path, status=404)
    sample.get("/no-such-sitemap.xsl", status=404)


def test_sitemap_xsl_is_named_by_the_provider(sample_api):
    create_post(sample_api, title="Bookmark", slug="styled")
    body = sample_api.get("/bookmarks-sitemap.xml", status=200).text
    assert f'<?xml-stylesheet type="text/xsl" href="{sample_plugin.XSL_PATH}"?>' in body
    # The core's own sitemaps keep the core's stylesheet.
    assert 'href="/main-sitemap.xsl"' in sample_api.get("/post-sitemap.xml").text
    # The page for people is made with it, on the server.
    page = sample_api.get("/sitemaps/bookmarks-sitemap.html", status=200)
    assert "<title>Bookmarks sitemap</title>" in page.text
    assert f"{SITE_URL}/bookmarks/styled/" in page.text


# sitemap_namespaces ---------------------------------------------------------------------


def test_sitemap_namespaces_declared_on_every_urlset(sample_api, testapp):
    create_post(sample_api, title="Bookmark", slug="first")
    author = create_author(sample_api, "jane")
    create_post(sample_api, title="Hello", slug="hello", author=author["id"])

    for path in ("/post-sitemap.xml", "/author-sitemap.xml", "/bookmarks-sitemap.xml"):
        root, entries = urlset(sample_api, path)
        assert entries, path
        assert root.nsmap[sample_plugin.NAMESPACE_PREFIX] == sample_plugin.NAMESPACE, path
        assert root.nsmap["image"] == "http://www.google.com/schemas/sitemap-image/1.1"
        assert_valid_urlset(root)
    # Only on urlsets, and only with the plugin.
    index = etree.fromstring(sample_api.get("/sitemap_index.xml").body)
    assert sample_plugin.NAMESPACE_PREFIX not in index.nsmap
    root, _ = urlset(testapp, "/post-sitemap.xml")
    assert sample_plugin.NAMESPACE_PREFIX not in root.nsmap


# sitemap_exclusion_criteria -------------------------------------------------------------


def test_sitemap_exclusion_criteria_unlist_everywhere(sample_api):
    author = create_author(sample_api, "jane")
    create_post(sample_api, title="Old news", slug="old", author=author["id"])
    secret = create_post(
        sample_api,
        title="Bookmark secret",
        slug="secret-plans",
        author=author["id"],
        published_at=JUN,
        modified_at=JUN,
    )

    posts = urlset(sample_api, "/post-sitemap.xml")[1]
    assert post_url("old") in posts
    assert post_url("secret-plans", "06") not in posts
    # Shared by every provider: the author's date ignores the post, and so does the plugin's.
    assert urlset(sample_api, "/author-sitemap.xml")[1] == {f"{SITE_URL}/author/jane/": JAN}
    assert urlset(sample_api, "/bookmarks-sitemap.xml")[1] == {}
    # The home page takes its date from the listed posts only.
    assert posts[f"{SITE_URL}/"] == JAN

    sample_api.patch_json(
        f"/api/posts/{secret['id']}", {"slug": "plans", "modified_at": JUN}, status=200
    )
    posts = urlset(sample_api, "/post-sitemap.xml")[1]
    assert posts[post_url("plans", "06")] == JUN
    assert urlset(sample_api, "/author-sitemap.xml")[1] == {f"{SITE_URL}/author/jane/": JUN}
    assert list(urlset(sample_api, "/bookmarks-sitemap.xml")[1]) == [f"{SITE_URL}/bookmarks/plans/"]


def test_sitemap_exclusion_criteria_only_apply_with_the_plugin(sample_api, testapp):
    create_post(sample_api, title="Secret", slug="secret-sauce")
    assert post_url("secret-sauce") not in urlset(sample_api, "/post-sitemap.xml")[1]
    # The core application alone (same database) lists it once its entries are recomputed.
    testapp.authorization = sample_api.authorization
    testapp.patch_json("/api/settings", {"entries_per_page": 999}, status=200)
    assert post_url("secret-sauce") in urlset(testapp, "/post-sitemap.xml")[1]


# sitemap_exclude ------------------------------------------------------------------------


def test_sitemap_exclude_leaves_out_posts_and_authors(sample_api):
    jane = create_author(sample_api, "jane")
    ghost = create_author(sample_api, "ghost", name="Ghost [hide]")
    create_post(sample_api, title="Visible", slug="visible", author=jane["id"])
    hidden = create_post(
        sample_api,
        title="Draft thoughts [hide]",
        slug="thoughts",
        author=jane["id"],
        published_at=JUN,
        modified_at=JUN,
    )
    create_post(sample_api, title="By the ghost", slug="ghostly", author=ghost["id"])

    posts = urlset(sample_api, "/post-sitemap.xml")[1]
    assert post_url("visible") in posts
    assert post_url("ghostly") in posts
    assert post_url("thoughts", "06") not in posts
    # jane is listed, dated by her listed post only; the ghost author is left out.
    assert urlset(sample_api, "/author-sitemap.xml")[1] == {f"{SITE_URL}/author/jane/": JAN}

    sample_api.patch_json(
        f"/api/posts/{hidden['id']}", {"title": "Thoughts", "modified_at": JUN}, status=200
    )
    sample_api.patch_json(f"/api/authors/{ghost['id']}", {"name": "Ghost"}, status=200)
    assert post_url("thoughts", "06") in urlset(sample_api, "/post-sitemap.xml")[1]
    assert urlset(sample_api, "/author-sitemap.xml")[1] == {
        f"{SITE_URL}/author/jane/": JUN,
        f"{SITE_URL}/author/ghost/": JAN,
    }


def test_sitemap_exclude_is_asked_about_each_candidate(sample_api):
    """firstresult: the plugin's None lets the candidate through, True stops it."""
    manager = site_of_app(sample_api.app).plugins
    assert manager.hook.sitemap_exclude.spec.opts["firstresult"]
    create_post(sample_api, title="Plain", slug="plain")
    assert post_url("plain") in urlset(sample_api, "/post-sitemap.xml")[1]


# sitemap_entry --------------------------------------------------------------------------


def test_sitemap_entry_drops_and_rewrites(sample_api):
    create_post(sample_api, title="Keep", slug="keep")
    create_post(sample_api, title="Drop", slug="drop-me")
    create_post(sample_api, title="Rewrite", slug="rewrite-me", parts=2)

    posts = urlset(sample_api, "/post-sitemap.xml")[1]
    assert post_url("keep") in posts
    assert not [loc for loc in posts if "drop-me" in loc or "rewrite-me" in loc]
    assert post_url("rewritten") in posts
    assert f"{post_url('rewritten')}2/" in posts  # every part goes through the hook


def test_sitemap_entry_receives_kind_and_item(sample_api):
    author = create_author(sample_api, "jane")
    create_post(sample_api, title="Bookmark", slug="marked", author=author["id"])
    apply_changes(sample_api)

    calls = set(sample_plugin.ENTRY_CALLS)
    assert ("post", "Post", "/2024/01/marked/") in calls
    assert ("post", None, "/") in calls  # the home page is made from no row
    assert ("author", "Author", "/author/jane/") in calls
    assert ("bookmark", "Post", "/bookmarks/marked/") in calls


def test_sitemap_entry_implementation_may_take_some_arguments():
    """As with any pluggy hook, an implementation may declare a subset of the arguments."""

    class PathOnly:
        @hookspecs.hookimpl
        def sitemap_entry(self, entry):
            return None if entry.path.endswith("/gone/") else entry

    class Provider:
        kind = "post"

    manager = plugins.get_plugin_manager(load_entrypoints=False)
    manager.register(PathOnly())
    ctx = SimpleNamespace(site=SimpleNamespace(plugins=manager))
    entries = [Entry(key=1, path="/kept/", lastmod=None), Entry(key=2, path="/gone/", lastmod=None)]
    kept = list(chain.filtered(ctx, Provider(), entries))
    assert [entry.path for entry in kept] == ["/kept/"]


def entry_chain(*registered: object) -> list[str]:
    """The order ``registered`` (each a plugin whose ``sitemap_entry`` appends its
    ``name`` to the entry's path) ran in, as the stored entry shows it."""
    manager = plugins.get_plugin_manager(load_entrypoints=False)
    for plugin in registered:
        manager.register(plugin)
    # filter_entry reads the site's plugins, and hands the site to each implementation.
    site = SimpleNamespace(plugins=manager)
    entry, _changed_by = chain.filter_entry(site, "post", Entry(key=1, path="/", lastmod=None))
    assert entry is not None
    return entry.path.strip("/").split("/")


def appending(name: str, **marks: bool) -> object:
    class Appending:
        @hookspecs.hookimpl(**marks)
        def sitemap_entry(self, entry):
            return Entry(key=entry.key, path=f"{entry.path}{name}/", lastmod=entry.lastmod)

    plugin = Appending()
    plugin.__class__.__name__ = name
    return plugin


def test_the_sitemap_entry_chain_runs_in_pluggys_order():
    """As pluggy calls any hook: tryfirst first, then the last registered first,
    trylast last."""
    assert entry_chain(appending("a"), appending("b"), appending("c")) == ["c", "b", "a"]
    late = appending("late", trylast=True)
    early = appending("early", tryfirst=True)
    assert entry_chain(late, appending("a"), early, appending("b")) == ["early", "b", "a", "late"]


@pytest.mark.parametrize("hook", plugins.CALLED_ONE_BY_ONE)
@pytest.mark.parametrize("mark", ["wrapper", "hookwrapper"])
def test_a_wrapper_on_a_hook_called_one_at_a_time_is_refused_at_start_up(hook, mark):
    def wrap(self, **_arguments):
        return (yield)

    wrapping = type("Wrapping", (), {hook: hookspecs.hookimpl(**{mark: True})(wrap)})
    manager = plugins.get_plugin_manager(load_entrypoints=False)
    manager.register(wrapping(), name="wrapping")
    with pytest.raises(pluggy.PluginValidationError, match=f"'wrapping': {hook} cannot be a"):
        plugins.refuse_wrappers(manager)


def test_a_wrapper_on_a_hook_pluggy_calls_wraps_it():
    seen = []

    class Wrapping:
        @hookspecs.hookimpl(wrapper=True)
        def sitemap_namespaces(self):
            found = yield
            seen.append(found)
            return found

    manager = plugins.get_plugin_manager(load_entrypoints=False)
    manager.register(Wrapping())
    plugins.refuse_wrappers(manager)
    assert manager.hook.sitemap_namespaces(site=None) == seen[0]


# sitemap_content_changed ----------------------------------------------------------------


def test_sitemap_content_changed_gets_the_ids_in_the_transaction(sample_api):
    post = create_post(sample_api, title="Tracked", slug="tracked")
    calls = sample_plugin.CHANGE_CALLS
    assert [call["posts"] for call in calls] == [{post["id"]}]
    assert calls[0]["in_transaction"]
    assert calls[0]["titles"] == {post["id"]: "Tracked"}  # the uncommitted row, seen

    sample_plugin.reset()
    author = create_author(sample_api, "jane")
    assert [(call["authors"], call["posts"]) for call in calls] == [({author["id"]}, set())]

    sample_plugin.reset()
    sample_api.patch_json("/api/settings", {"title": "New title"}, status=200)
    assert [(call["everything"], call["site"]) for call in calls] == [(False, True)]

    sample_plugin.reset()
    sample_api.patch_json("/api/settings", {"site_url": "http://elsewhere.test"}, status=200)
    assert [call["everything"] for call in calls] == [True]


def test_sitemap_content_changed_failure_rolls_back_the_write(sample_api):
    create_post(sample_api, title="Before", slug="before")
    sitemap = sample_api.get("/post-sitemap.xml").body

    response = sample_api.post_json(
        "/api/posts", {"type": "post", "title": sample_plugin.FAIL_TITLE}, status=500
    )
    assert response.content_type == "application/problem+json"
    # The hook ran inside the writing transaction: its failure undid the write.
    titles = [item["title"] for item in sample_api.get("/api/posts").json["items"]]
    assert titles == ["Before"]
    assert sample_api.get("/post-sitemap.xml").body == sitemap


# sitemap_changed ------------------------------------------------------------------------


def sitemap_calls():
    return {sitemap: urls for sitemap, urls, _ in sample_plugin.SITEMAP_CALLS}


def test_sitemap_changed_names_the_urls_added_updated_and_removed(sample_api):
    create_post(sample_api, title="First", slug="first", published_at=JAN)
    apply_changes(sample_api)
    sample_plugin.reset()
    post = create_post(sample_api, title="Hello", slug="hello", modified_at=JUN)
    apply_changes(sample_api)  # the maintainer calls the hook, in its transaction
    calls = sitemap_calls()
    assert calls["post"][post_url("hello")] == "added"
    assert calls["post"][f"{SITE_URL}/"] == "updated"  # the home page's date moved
    assert all(in_transaction for *_, in_transaction in sample_plugin.SITEMAP_CALLS)

    sample_plugin.reset()
    later = "2024-07-01T00:00:00+00:00"
    sample_api.patch_json(f"/api/posts/{post['id']}", {"modified_at": later}, status=200)
    apply_changes(sample_api)
    assert sitemap_calls()["post"][post_url("hello")] == "updated"

    sample_plugin.reset()
    sample_api.delete(f"/api/posts/{post['id']}", status=204)
    apply_changes(sample_api)
    assert sitemap_calls()["post"][post_url("hello")] == "removed"


def test_sitemap_documents_changed_names_the_documents_a_pass_changed(sample_api):
    """In the maintainer's transaction, the cache tags of the pages, the index and the
    feed a new post changed; nothing for a draft; ``sitemaps`` alone for a setting every
    document shows."""
    create_post(sample_api, title="First", slug="first", published_at=JAN)
    apply_changes(sample_api)
    sample_plugin.reset()
    create_post(sample_api, title="Hello", slug="hello", modified_at=JUN)
    apply_changes(sample_api)
    ((tags, in_transaction),) = sample_plugin.DOCUMENT_CALLS
    assert in_transaction
    assert {"doc:post-sitemap", "index", "doc:sitemap.atom"} <= set(tags)
    assert "doc:page-sitemap" not in tags and tags == sorted(tags)

    sample_plugin.reset()
    create_post(sample_api, title="Draft", slug="draft", status="draft")
    apply_changes(sample_api)
    assert sample_plugin.DOCUMENT_CALLS == []

    sample_api.patch_json("/api/settings", {"title": "Renamed"}, status=200)
    apply_changes(sample_api)
    assert sample_plugin.DOCUMENT_CALLS == [(["sitemaps"], True)]


def test_sitemap_changed_not_called_when_no_sitemap_changes(sample_api):
    draft = create_post(sample_api, title="Draft", slug="draft", status="draft")
    apply_changes(sample_api)
    sample_plugin.reset()
    sample_api.patch_json(f"/api/posts/{draft['id']}", {"title": "Still a draft"}, status=200)
    assert apply_changes(sample_api) == 1  # the post, recorded and applied
    assert sample_plugin.SITEMAP_CALLS == []


def test_sitemap_changed_for_a_rebuild_and_the_site_going_public(sample_api):
    create_post(sample_api, title="Hello", slug="hello")
    create_post(sample_api, type="page", title="About", slug="about")
    sample_api.patch_json("/api/settings", {"private": True}, status=200)
    apply_changes(sample_api)
    sample_plugin.reset()
    sample_api.patch_json("/api/settings", {"private": False}, status=200)
    apply_changes(sample_api)
    assert sitemap_calls() == {"*": None}  # every sitemap appears at once

    sample_plugin.reset()
    sample_api.patch_json("/api/settings", {"site_url": "http://elsewhere.test"}, status=200)
    apply_changes(sample_api)
    assert sitemap_calls() == {"*": None}  # a new site URL: every URL is new

    sample_plugin.reset()
    sample_api.patch_json("/api/post-types/page", {"noindex": True}, status=200)
    apply_changes(sample_api)
    # A small site is compared URL by URL, even when rebuilt as a whole.
    assert sitemap_calls()["page"] == {"http://elsewhere.test/about/": "removed"}


# sitemap_seed_demo ----------------------------------------------------------------------


def test_sitemap_seed_demo_adds_the_plugins_content_to_the_demo_site(sample, plugin_app):
    with site_of_app(plugin_app).sessions() as session, session.begin():
        summary = seed_demo(session, posts=5)

    # Once, after the core's content, in the seeding transaction.
    [(posts_before, in_transaction)] = sample_plugin.SEED_CALLS
    assert in_transaction
    assert summary.startswith(f"demo site seeded: {posts_before} posts and pages")
    # The change it recorded is recorded with the demo's: one refresh for everything.
    [refresh] = sample_plugin.CHANGE_CALLS
    assert len(refresh["posts"]) == posts_before
    [bookmark] = [i for i, title in refresh["titles"].items() if title.startswith("Bookmark")]
    assert refresh["titles"][bookmark] == sample_plugin.DEMO_BOOKMARK
    with site_of_app(plugin_app).sessions() as session:
        slug = session.get_one(Post, bookmark).slug
    # Listed as the post sitemap lists the post, with its date.
    [lastmod] = [
        m for loc, m in urlset(sample, "/post-sitemap.xml")[1].items() if f"/{slug}/" in loc
    ]
    root, entries = urlset(sample, "/bookmarks-sitemap.xml")
    assert entries == {f"{SITE_URL}/bookmarks/{slug}/": lastmod}
    assert_valid_urlset(root)


# sitemap_migrations ---------------------------------------------------------------------


@pytest.fixture
def sample_manager():
    # Installed plugins (plugins/*) are left out: this is about the sample plugin alone.
    return plugins.from_settings(
        {
            "sitemap_server.extra_plugins": ("sample_plugin",),
            "sitemap_server.load_entrypoints": False,
        }
    )


def test_sitemap_migrations_version_locations(sample_manager):
    assert migrations.plugin_version_locations(sample_manager) == [str(sample_plugin.VERSIONS)]
    # The installed plugins: the sample plugin is not one of them.
    installed = plugins.get_plugin_manager()
    assert str(sample_plugin.VERSIONS) not in migrations.plugin_version_locations(installed)


def test_sitemap_migrations_create_the_plugins_tables(sample_manager, ini_file, tmp_path):
    scratch = create_engine(f"sqlite:///{tmp_path / 'scratch.sqlite'}")
    try:
        with scratch.begin() as connection:
            migrations.upgrade(ini_file, sample_manager, connection=connection)
        tables = set(inspect_db(scratch).get_table_names())
    finally:
        scratch.dispose()
    assert {"sample_bookmark_clicks", "posts", "sitemap_entries"} <= tables
    heads = set(migrations.current_heads(ini_file, sample_manager))
    assert "sample_0001" in heads
    core_only = plugins.from_settings({"sitemap_server.load_entrypoints": False})
    assert heads - {"sample_0001"} == set(migrations.current_heads(ini_file, core_only))


def test_sitemap_migrations_applied_by_the_migrate_command(ini_file, tmp_path, capsys):
    database = tmp_path / "migrated.sqlite"
    config = tmp_path / "plugin.ini"
    text = ini_file.read_text()
    lines = [
        f"sqlalchemy.url = sqlite:///{database}" if line.startswith("sqlalchemy.url") else line
        for line in text.splitlines()
    ]
    lines.insert(lines.index("[app:main]") + 1, "sitemap_server.extra_plugins = sample_plugin")
    config.write_text("\n".join(lines) + "\n")
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        assert cli_main(["--config", str(config), "migrate"]) == 0
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    assert "sample_0001" in capsys.readouterr().out
    scratch = create_engine(f"sqlite:///{database}")
    try:
        assert "sample_bookmark_clicks" in inspect_db(scratch).get_table_names()
    finally:
        scratch.dispose()


# sitemap_openapi ------------------------------------------------------------------------


def test_sitemap_openapi_adds_to_the_document(sample, testapp):
    document = sample.get("/api/openapi.json", status=200).json
    operation = document["paths"]["/api/sample"]["get"]
    assert operation["operationId"] == "getSample"
    assert "SampleGreeting" in document["components"]["schemas"]
    assert {"name": "sample", "description": "The sample plugin"} in document["tags"]
    assert "/api/posts" in document["paths"]  # merged into the core's, not instead of it
    assert "/api/sample" not in testapp.get("/api/openapi.json").json["paths"]


def test_sitemap_openapi_requests_are_validated_like_the_cores(sample_api):
    assert sample_api.get("/api/sample").json == {"plugin": "sample", "greeting": "hello"}
    assert sample_api.get("/api/sample", {"greeting": "hi"}).json["greeting"] == "hi"

    too_long = sample_api.get("/api/sample", {"greeting": "x" * 11}, status=400)
    assert "greeting" in [error["field"] for error in too_long.json["errors"]]
    unknown = sample_api.get("/api/sample", {"colour": "red"}, status=400)
    assert "colour" in [error["field"] for error in unknown.json["errors"]]
    sample_api.authorization = None
    sample_api.get("/api/sample", status=401)


# sitemap_settings -----------------------------------------------------------------------


def test_sitemap_settings_are_read_and_checked_at_start_up(app_with, app_settings):
    """A plugin's setting is typed in the settings, and a bad value stops the start."""
    app = app_with(
        **{
            "sitemap_server.extra_plugins": "sample_plugin",
            sample_plugin.WEBHOOK_URL: " https://hooks.test/sitemaps ",
        }
    )
    assert app.registry.settings[sample_plugin.WEBHOOK_URL] == "https://hooks.test/sitemaps"
    bad = {
        **app_settings,
        "sitemap_server.extra_plugins": "sample_plugin",
        sample_plugin.WEBHOOK_URL: "ftp://hooks.test/",
    }
    with pytest.raises(SettingsError, match=r"setting sample_plugin\.webhook_url='ftp://"):
        main({}, **bad)


# sitemap_channels -----------------------------------------------------------------------


def test_sitemap_channels_adds_a_channel_the_worker_sends_through(
    app_with, api_token, search_engine, clean_database
):
    """The sample plugin's webhook channel gets each burst like pings and IndexNow do: sent
    by the worker, retried, recorded and listed."""
    hook = f"{search_engine.url}/hook"
    app = app_with(
        **{"sitemap_server.extra_plugins": "sample_plugin", sample_plugin.WEBHOOK_URL: hook}
    )
    api = client(app, api_token)
    worker = Worker(site_of_app(app))
    search_engine.answer("/hook", 503, 200)
    create_post(api, title="Hooked", slug="hooked")
    worker.maintain()

    [first] = worker.run_once(force=True)
    assert (first["channel"], first["outcome"], first["http_status"]) == (
        sample_plugin.WEBHOOK,
        "retry",
        503,
    )
    [second] = worker.run_once(force=True)
    assert (second["channel"], second["outcome"]) == (sample_plugin.WEBHOOK, "sent")

    sent = search_engine.received("/hook", "POST")
    assert len(sent) == 2
    assert "post" in sent[-1]["body"]["sitemaps"]
    assert post_url("hooked") in sent[-1]["body"]["urls"]
    state = api.get("/api/notifications").json
    assert state["targets"][sample_plugin.WEBHOOK] == hook
    assert (state["targets"]["ping"], state["targets"]["indexnow"]) == ([], None)
    [shown] = state["notifications"]
    assert (shown["channel"], shown["status"], shown["attempts"]) == (
        sample_plugin.WEBHOOK,
        "sent",
        2,
    )


# Every hook documented and tested -------------------------------------------------------


HOOKS = hookspecs.all_hookspecs()


def test_all_hookspecs_are_the_managers_hooks():
    manager = plugins.get_plugin_manager(load_entrypoints=False)
    known = {name for name in vars(manager.hook) if not name.startswith("_")}
    assert set(HOOKS) == known
    assert len(HOOKS) >= 10


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_hook_has_a_docstring(name):
    function = HOOKS[name]
    doc = inspect.getdoc(function)
    assert doc, f"hook {name} has no docstring"
    for parameter in inspect.signature(function).parameters:
        assert f":param {parameter}:" in doc, f"{name}: no :param {parameter}: line"
    opts = getattr(function, f"{hookspecs.PROJECT}_spec")
    if opts.get("firstresult"):
        assert "first" in doc, f"{name} stops at the first result: say so"
    if inspect.signature(function).return_annotation not in (None, "None"):
        assert ":return:" in doc, f"{name}: no :return: line"


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_hook_has_a_section_in_docs(name):
    assert f"\n## `{name}(" in HOOKS_MD.read_text(encoding="utf-8"), (
        f"docs/hooks.md has no section for {name}: run "
        "python -m sitemap_server.hookspecs > docs/hooks.md"
    )


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_each_hook_has_an_example_that_registers(name):
    """The example in a hook's docstring (and so in docs/hooks.md) defines an
    implementation pluggy accepts for that hook: its name and arguments are the spec's."""
    from types import SimpleNamespace

    from sitemap_server import plugin

    _text, code = hookspecs.split_example(getattr(hookspecs, name))
    assert code, f"{name} has no example (an Example:: block in its docstring)"
    namespace = dict(vars(plugin))
    exec(compile(code, f"<example of {name}>", "exec"), namespace)
    manager = plugins.get_plugin_manager(load_entrypoints=False)
    manager.register(SimpleNamespace(**{name: namespace[name]}), name="example")
    manager.check_pending()
    plugins.refuse_wrappers(manager)
    assert "example" in [impl.plugin_name for impl in getattr(manager.hook, name).get_hookimpls()]


def test_docs_hooks_md_is_up_to_date():
    assert HOOKS_MD.read_text(encoding="utf-8") == hookspecs.hook_docs(), (
        "docs/hooks.md is out of date: run python -m sitemap_server.hookspecs > docs/hooks.md"
    )


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_hook_has_a_test(name):
    tests = [
        key
        for key, value in globals().items()
        if callable(value) and (key == f"test_{name}" or key.startswith(f"test_{name}_"))
    ]
    assert tests, f"no test_{name}… in {Path(__file__).name}"


def test_sample_plugin_implements_every_hook(sample_manager):
    callers = sample_manager.get_hookcallers(sample_manager.get_plugin("sample_plugin"))
    assert {caller.name for caller in callers or ()} == set(HOOKS)


# The plugin manager ---------------------------------------------------------------------


def test_misspelt_hook_fails_at_start_up(app_settings):
    settings = {**app_settings, "sitemap_server.extra_plugins": "sample_plugin.misspelt"}
    with pytest.raises(pluggy.PluginValidationError, match="sitemap_provider"):
        main({}, **settings)


def test_builtin_plugins_registered_by_name():
    for load_entrypoints in (True, False):
        manager = plugins.get_plugin_manager(load_entrypoints=load_entrypoints)
        for name in plugins.BUILTIN_PLUGINS:
            plugin = manager.get_plugin(name)
            assert plugin is not None and plugin.__name__ == name
    providers = {impl.plugin_name for impl in manager.hook.sitemap_providers.get_hookimpls()}
    assert {
        "sitemap_server.providers.posts",
        "sitemap_server.providers.authors",
        "sitemap_server.providers.taxonomies",
    } <= providers


@pytest.fixture
def installed_sample(tmp_path, monkeypatch):
    """The sample plugin installed as a distribution with an entry point named "sample"."""
    dist = tmp_path / "sitemap_server_sample-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: sitemap-server-sample\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text("[sitemap_server]\nsample = sample_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "sample"


def test_entry_point_plugins_are_loaded(installed_sample):
    manager = plugins.get_plugin_manager()
    assert manager.get_plugin(installed_sample) is sample_plugin
    # Without entry points (tests of the core): only the built-in plugins.
    manager = plugins.get_plugin_manager(load_entrypoints=False)
    assert manager.get_plugin(installed_sample) is None


def test_disabled_entry_point_is_blocked(installed_sample):
    manager = plugins.get_plugin_manager(disabled=[installed_sample])
    assert manager.is_blocked(installed_sample)
    assert manager.get_plugin(installed_sample) is None
    assert sample_plugin not in manager.get_plugins()


def test_disabled_by_setting(installed_sample, app_settings, engine):
    loading = {**app_settings, "sitemap_server.load_entrypoints": "true"}
    settings = {**loading, "sitemap_server.disabled_plugins": "video, sample"}
    app = main({}, **settings)
    try:
        manager = site_of_app(app).plugins
        assert manager.is_blocked("sample") and manager.is_blocked("video")
        assert sample_plugin not in manager.get_plugins()
        TestApp(app).get("/sample-plugin/ping", status=404)
    finally:
        site_of_app(app).close()
    enabled = main({}, **loading)
    try:
        TestApp(enabled).get("/sample-plugin/ping", status=200)
    finally:
        site_of_app(enabled).close()
