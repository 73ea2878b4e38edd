# mypy: disable-error-code="empty-body"
"""Every hook a sitemap-server plugin can implement.

A plugin is a module or object with functions marked ``@sitemap_server.hookimpl`` whose
names are the hooks below; it is found through the ``sitemap_server`` entry-point group.
The built-in sitemaps (post types, authors, taxonomies) are plugins too, registered
through these same hooks. Hooks are always called with keyword arguments, and every hook
called once the site is built is given it as ``site`` (``sitemap_server.plugin.Site``:
its settings, plugins, database and sitemap engine), as Datasette hands ``datasette`` to
its hooks; an implementation names only the arguments it uses.

``docs/hooks.md`` is generated from these docstrings (``python -m sitemap_server.hookspecs``);
a test fails when a hook has no docstring, no entry in that file, or no test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from pyramid.config import Configurator
    from sqlalchemy import ColumnElement
    from sqlalchemy.orm import Session

    from .notify.channels import Channel
    from .settings import Setting
    from .site import Site
    from .sitemaps.changes import ContentChanges, UrlChange
    from .sitemaps.entries import Entry
    from .sitemaps.providers import Provider

PROJECT = "sitemap_server"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# Hooks whose implementations the core calls one at a time, in pluggy's own order (to
# chain them, or to name the plugin that answered): a wrapper there would wrap nothing.
CALLED_ONE_BY_ONE = (
    "sitemap_entry",
    "sitemap_exclusion_criteria",
    "sitemap_exclude",
    "sitemap_migrations",
)


def implementations(
    manager: pluggy.PluginManager, hook: str
) -> Iterator[tuple[str, Callable[..., Any]]]:
    """The implementations of ``hook`` in the order pluggy calls them (``tryfirst`` ones
    first, then the last registered first, ``trylast`` ones last), for a caller that
    calls them one at a time (the hooks of ``CALLED_ONE_BY_ONE``: chained, or answers
    named after their plugin): (plugin name, a function that calls it with keyword
    arguments, passing each the ones it names, as pluggy does)."""
    # No wrappers: plugins.refuse_wrappers refuses them at start-up.
    for impl in reversed(getattr(manager.hook, hook).get_hookimpls()):
        yield impl.plugin_name, partial(_call, impl)


def _call(impl: pluggy.HookImpl, **arguments: Any) -> Any:
    return impl.function(*(arguments[name] for name in impl.argnames))


@hookspec
def sitemap_providers(session: Session, site: Site) -> list[Provider]:
    """Return the sitemap providers this plugin contributes.

    Called with a session to read from whenever the set of sitemaps may have changed: in
    every write that refreshes the sitemaps, and on the first request after the site
    version moved (settings, post types, taxonomies). Each provider becomes the documents
    ``/{name}-sitemap.xml``, ``/{name}-sitemap2.xml`` … and their entries in the index, at
    its ``order``; it carries its stylesheet (``xsl``, the URL its documents name, and
    ``xsl_asset``, the file served there), and one that reads what the post types' sitemaps
    list (``ListedPosts``) says so with ``depends_on = ("post",)``: it is refreshed after
    them, whatever its place in the index, and asked which of its keys a change reaches
    (``affected_keys``) once they are, so it reads what crawlers will be served.

    A stylesheet need only make its table: it imports the core's
    (``<xsl:import href="main-sitemap.xsl"/>``, the path the core serves it at, read from
    there by browsers and the server alike) and gives its root element's templates
    (``match="sitemap:urlset"``, and ``mode="title"`` for the page's title); the page
    around them (the site's name, a private site's notice, the rows' filter box, the
    style; ``style-extra`` for rules of its own) and the named templates (``about``,
    ``other-view``, ``filter``, ``href``, ``date``) are the core's.

    A ``Provider`` computes its entries (``entries``) and the keys a change reaches
    (``affected_keys``). ``explain_lastmod(ctx, entry)`` says in words where the date of
    one of its stored entries (a ``StoredEntry``) comes from: the ``lastmod_source``
    that ``sitemap-server explain`` prints, by default "computed by the {name} sitemap's
    provider" (the video plugin's names the post or the video that dates an entry).
    Its docstrings say the rest.

    :param session: a database session (read only).
    :param site: the site (its settings, plugins, database and sitemap engine).
    :return: a list of providers (may be empty). All results are combined.

    Example::

        @hookimpl
        def sitemap_providers(session):
            return [PodcastProvider()]  # a Provider: name, kind, entries(ctx, keys)
    """


@hookspec
def sitemap_configure(config: Configurator, site: Site) -> None:
    """Let the plugin configure the Pyramid application.

    Called once at start-up, after the core's routes. Add routes and views (admin
    endpoints, an XSL file as a static view) here.

    :param config: the Pyramid ``Configurator``.
    :param site: the site (its settings, plugins, database and sitemap engine).

    Example::

        @hookimpl
        def sitemap_configure(config):
            config.add_route("podcasts", "/api/podcasts")
            config.scan("sitemap_server_podcasts.api")
    """


@hookspec
def sitemap_xsl(site: Site) -> dict[str, str]:
    """Register XSL stylesheets served by the application, beside the providers' own.

    Called once at start-up. A provider's stylesheet is best carried by the provider
    (``xsl`` and ``xsl_asset``): one place, served while the provider is. This hook is for
    a stylesheet no provider carries, and for plugins written before providers did; the
    paths it returns are served without asking the database.

    :param site: the site (its settings, plugins, database and sitemap engine).
    :return: a mapping of URL path (``/podcast-print.xsl``) to a Pyramid asset spec
        (``sitemap_server_podcasts:static/print.xsl``). Every path is served with
        ``X-Robots-Tag: noindex, follow``.

    Example::

        @hookimpl
        def sitemap_xsl():
            return {"/podcast-print.xsl": "sitemap_server_podcasts:static/print.xsl"}
    """


@hookspec
def sitemap_namespaces(site: Site) -> dict[str, str]:
    """Add XML namespaces to every ``<urlset>``.

    Called once at start-up.

    :param site: the site (its settings, plugins, database and sitemap engine).
    :return: a mapping of prefix to namespace URI, e.g.
        ``{"video": "http://www.google.com/schemas/sitemap-video/1.1"}``.

    Example::

        @hookimpl
        def sitemap_namespaces():
            return {"podcast": "https://podcasts.example/schemas/1.0"}
    """


@hookspec
def sitemap_exclusion_criteria(kind: str, site: Site) -> list[ColumnElement[bool]]:
    """Add SQL criteria that every listed row of ``kind`` must meet.

    Called whenever the listed-criteria of a content kind are built; the criteria are
    shared by every provider, core or plugin, that lists that kind. This is the fast path:
    prefer it to ``sitemap_exclude``. Each implementation is asked on its own, and its
    criteria are one rule named after its plugin: ``sitemap-server explain`` names the
    plugin whose criteria leave a row out.

    :param kind: ``"post"``, ``"author"`` or ``"term"``.
    :param site: the site (its settings, plugins, database and sitemap engine).
    :return: SQLAlchemy boolean expressions over the ``Post``, ``Author`` or ``Term``
        model; a row is listed only if all of them are true. All results are combined.

    Example::

        @hookimpl
        def sitemap_exclusion_criteria(kind):
            if kind == "post":
                return [Post.title.not_like("[test]%")]
            return []
    """


@hookspec(firstresult=True)
def sitemap_exclude(kind: str, item: Any, site: Site) -> bool | None:
    """Decide in Python whether one candidate row is left out (the slow path).

    Called for every candidate that passed the SQL criteria, when entries are
    (re)computed after a change, so only for rules SQL cannot express; and by
    ``sitemap-server explain``, which names the plugin that said so, for any row.

    :param kind: ``"post"``, ``"author"`` or ``"term"``.
    :param item: the candidate row (``Post``, ``Author`` or ``Term``).
    :param site: the site (its settings, plugins, database and sitemap engine).
    :return: ``True`` to leave it out. Stops at the first non-None result.

    Example::

        @hookimpl
        def sitemap_exclude(kind, item):
            if kind == "author" and item.slug.endswith("-bot"):
                return True
            return None  # no opinion: the next plugin, or listed
    """


@hookspec
def sitemap_entry(kind: str, entry: Entry, item: Any, site: Site) -> Entry | None:
    """Change or drop one entry before it is stored.

    Called for each entry a provider computes, in the order pluggy calls any hook
    (``tryfirst`` implementations first, then the last registered first, ``trylast``
    ones last); each implementation receives the entry the previous one returned. A
    wrapper cannot implement it: the plugin manager refuses one at start-up.

    After the last implementation, the core makes every entry fit for a document
    (``sitemaps/xml.py``, ``EntryRules``, through ``content/sanitize.py``), whoever made
    it, so a plugin need not remember to: the path must be a path on the site, each
    image an http(s) URL on the site (its scheme, host and port) or an allowed image
    host (any port), and in ``extra``
    every string loses the characters XML 1.0 cannot carry, while the strings under a
    URL key (``loc``, ``url``, ``href``, ``src`` or a name ending in ``_loc``, ``_url``,
    ``_href``, ``_src``) are written as absolute http(s) URLs in normal form
    (percent-encoded, IDNA host, valid port, under 2,048 characters). What cannot be
    made fit is left out with one log line naming the entry: an image alone, the whole
    entry for its path, a URL of ``extra`` or a number that is not finite (a template
    may need the value, so the entry is not stored without it). A provider that must
    keep the entry without an unusable URL leaves that URL out itself (the video
    plugin's ``video_fields`` does).

    :param kind: the provider's content kind (``"post"``, ``"author"``, ``"term"`` or a
        plugin's own).
    :param entry: the entry so far (path, lastmod, images, extra, alternates).
    :param item: the row it was made from (``Post``, ``Author``, ``Term``, a plugin's own);
        ``None`` for an entry made from no row (the home page, an archive).
    :param site: the site (its settings, plugins, database and sitemap engine).
    :return: the entry (changed or not), or ``None`` to drop it.

    Example::

        @hookimpl(tryfirst=True)
        def sitemap_entry(kind, entry, item):
            if kind == "post" and item is not None and item.slug.startswith("tmp-"):
                return None
            return entry
    """


@hookspec
def sitemap_content_changed(session: Session, changes: ContentChanges, site: Site) -> None:
    """React to a content change, inside the writing transaction.

    Called after each write of the admin API, the import and the CLI, before commit, so
    whatever the plugin writes is committed or rolled back with the change itself. The core
    has just recorded the change in the change log (``sitemap_changes``); the maintainer
    applies the log to the sitemaps after commit, in transactions of its own (within about
    half a second with a worker running). A plugin records a change of its own rows with
    ``engine_of(session).record(session, posts={…})``, which calls this hook again with
    it. Keep it cheap: it runs in every write.

    :param session: the writing session.
    :param changes: what changed (post, author, term ids; types; settings).
    :param site: the site (its settings, plugins, database and sitemap engine).

    Example::

        @hookimpl
        def sitemap_content_changed(session, changes):
            if changes.posts:  # record what to do; the worker does it after commit
                session.add(Reindex(post_ids=sorted(changes.posts)))
    """


@hookspec
def sitemap_changed(
    session: Session, sitemap: str, urls: list[UrlChange] | None, site: Site
) -> None:
    """A sitemap's content changed, inside the maintainer's transaction.

    Called when the maintainer, applying the change log, has refreshed a provider's
    entries and they differ from before (a listed URL created, updated, unlisted or
    deleted); an edit that changes no sitemap (a draft) calls nothing. Whatever the plugin
    writes is committed with the new entries, or rolled back with them (the changes then
    stay in the log and are applied again). The core records notifications for search
    engines with it (S-601); a plugin could purge a CDN.

    :param session: the maintainer's session.
    :param sitemap: the provider's name, or ``"*"`` for the whole site (it stopped being
        private).
    :param urls: the absolute URLs that were added, updated or removed, or ``None`` when
        the sitemap was rebuilt as a whole without comparing them (a site-wide change).
    :param site: the site (its settings, plugins, database and sitemap engine).

    Example::

        @hookimpl
        def sitemap_changed(session, sitemap, urls):
            urls = [change.url for change in urls] if urls is not None else ["/*"]
            session.add(CdnPurge(sitemap=sitemap, urls=urls))
    """


@hookspec
def sitemap_documents_changed(session: Session, tags: list[str], site: Site) -> None:
    """Documents changed, inside the maintainer's transaction: what a cache in front must
    forget.

    Called at the end of each pass of the maintainer that changed a document a crawler
    reads, with the cache tags every answer carries (S-314): ``doc:post-sitemap2`` (that
    document, in every form, with its page for people), ``provider:post`` (every page of
    a sitemap rebuilt whole), ``index`` (every part of the index), ``doc:sitemap.atom``,
    ``doc:robots.txt``, or ``sitemaps`` alone (every document: the site's settings, its
    URL or its privacy changed). A page whose bytes did not change is not named. What
    the plugin writes is committed with the change, or rolled back with it. The core
    records a purge for each configured purge channel (``notify/purge.py``).

    :param session: the maintainer's session.
    :param tags: the tags of the documents that changed, sorted.
    :param site: the site (its settings, plugins, database and sitemap engine).

    Example::

        @hookimpl
        def sitemap_documents_changed(session, tags):
            session.add(WarmUp(tags=tags))
    """


@hookspec
def sitemap_seed_demo(session: Session, site: Site) -> None:
    """Add this plugin's own demo content to the demo site.

    Called once by ``sitemap-server seed-demo``, in its transaction, after the core has
    made the demo's content (posts, pages, authors, terms) and before the one refresh of
    every sitemap: what the plugin writes through the services is refreshed with the
    rest, and its ``sitemap_content_changed`` sees the core's content then. The demo must
    work without internet: make no network request, and queue none for after the commit.

    :param session: the seeding session.
    :param site: the site (its settings, plugins, database and sitemap engine).

    Example::

        @hookimpl
        def sitemap_seed_demo(session):
            session.add(Podcast(title="Episode 1", audio_path="/audio/episode-1.mp3"))
    """


@hookspec
def sitemap_migrations() -> list[str]:
    """Return the Alembic version directories of the plugin's own tables.

    Called by ``sitemap-server migrate``, which upgrades the core, then each plugin's
    revisions as a stream of their own with its own version table
    (``alembic_version_{plugin name}``): installing a plugin and migrating creates its
    tables, and uninstalling it leaves the core's migrations untouched. The plugin's first
    revision has ``down_revision = None`` and may rely on the core's tables existing. A
    bare ``alembic`` command sees only the core's directory.

    :return: absolute directory paths.

    Example::

        @hookimpl
        def sitemap_migrations():
            return [str(Path(__file__).parent / "migrations")]
    """


@hookspec
def sitemap_openapi(site: Site) -> dict[str, Any]:
    """Add paths and schemas to the admin API's OpenAPI document.

    Called once at start-up. Requests to the added paths are validated like the core's.

    :param site: the site (its settings, plugins, database and sitemap engine).
    :return: a fragment with ``paths`` and ``components`` to merge into the document.

    Example::

        @hookimpl
        def sitemap_openapi():
            document = files("sitemap_server_podcasts").joinpath("openapi.yaml")
            return yaml.safe_load(document.read_text())
    """


@hookspec
def sitemap_settings() -> list[Setting]:
    """Declare the settings this plugin reads.

    Called once at start-up, after the core's own settings are read. Each declared
    setting is read from the application's ini section like the core's: its environment
    variable wins over the file, an empty value takes the default, and a missing or
    invalid one stops the server with a message that names it. The plugin then finds the
    typed value in ``site_of(session).settings[name]``, never a raw string. Name them
    after the plugin (``sitemap_server_podcasts.feed_url``), and list them in the plugin's
    README: a name the core or another plugin already declares is refused at start-up.

    :return: ``Setting(name, default, parse, env=None, doc="", documents=False)``
        objects; ``parse`` turns the text into the value or raises ``ValueError`` saying
        what is wrong (the plugin API has ``positive_int``, ``positive_float``,
        ``seconds``, ``boolean``, ``names``, ``http_url``, and ``optional(parse)`` for one
        that may be empty); ``default`` is text too, ``None`` when the setting is
        required. ``documents=True`` for a setting whose value changes what the stored
        sitemaps hold (a publication name the news sitemap prints): a start with another
        value rebuilds them, as one with another site URL does.

    Example::

        @hookimpl
        def sitemap_settings():
            return [Setting("sitemap_server_podcasts.per_feed", "50", positive_int)]
    """


@hookspec
def sitemap_channels(settings: dict[str, Any], site: Site) -> list[Channel]:
    """Return the notification channels this plugin contributes.

    Called once at start-up, and by each worker, with the normalised settings (the
    plugin's own, from ``sitemap_settings``, among them). A channel is one kind of
    message the worker sends over HTTP, with a durable outbox behind it: each message is
    claimed, sent after commit, retried with backoff, recorded per attempt and listed by
    ``GET /api/notifications``. A channel says what a burst of sitemap changes becomes
    (pings and IndexNow submissions are the core's two channels), or is fed by the
    plugin's own writes through ``send_later`` (the video plugin's oEmbed fetches); see
    ``sitemap_server.notify.channels.Channel``. Return a channel even when it is not
    configured (``enabled`` false): it then sends nothing, and what it had queued is
    cancelled.

    :param settings: the application's settings, typed.
    :param site: the site (its settings, plugins, database and sitemap engine).
    :return: ``Channel`` objects with names unique across plugins.

    Example::

        @hookimpl
        def sitemap_channels(settings):
            return [WebhookChannel(settings["sitemap_server_hooks.url"])]
    """


def hook_docs() -> str:
    """docs/hooks.md, made from the docstrings above."""
    import inspect

    lines = [
        "# Hooks",
        "",
        "Generated from `sitemap_server/hookspecs.py` by "
        "`python -m sitemap_server.hookspecs > docs/hooks.md`; do not edit by hand.",
        "",
        "Implement a hook with a function of the same name marked "
        "`@hookimpl`, in a module registered under the `sitemap_server` "
        "entry-point group. Hooks are called with keyword arguments; every hook called "
        "once the site is built is also given `site` (`sitemap_server.plugin.Site`: its "
        "settings, plugins, database and sitemap engine), and an implementation names only "
        "the arguments it uses.",
        "",
        "A plugin imports from `sitemap_server.plugin` and from nothing else of the core: "
        "that module is the plugin API (`hookimpl`, `Provider`, `Entry`, `BuildContext`, "
        "`ContentChanges`, `ListedPosts` (what the post types' sitemaps list), "
        "`engine_of(session).record` (the one way to record a change), the models a "
        "plugin reads, the sanitizer, the admin API's view helpers; its docstring lists "
        "them), and the rest of the core may change between versions. "
        "`tests/unit/test_plugin_door.py` holds the two plugins that ship with the core, "
        "and the tests' sample plugin, to it; `plugins/video` and `plugins/news` are worked "
        "examples, and `tests/sample_plugin` is a small one that implements every hook.",
        "",
        "**Order.** Every hook runs its implementations in the order pluggy calls them: "
        "`tryfirst` ones first, then the last registered first (the core's built-in "
        "plugins are registered before the installed ones, which come in entry-point "
        "order, then `sitemap_server.extra_plugins`), `trylast` ones last. Hooks that "
        "return lists combine every result in that order; `sitemap_exclude` stops at the "
        "first answer that is not None; `sitemap_entry` is a chain in that order. "
        "`sitemap_entry`, `sitemap_exclusion_criteria`, `sitemap_exclude` and "
        "`sitemap_migrations` are called one implementation at a time (to chain them or "
        "to name the plugin that answered), so a wrapper (`wrapper=True` or "
        "`hookwrapper=True`) on them is refused at start-up; on every other hook "
        "pluggy's wrappers work as pluggy documents.",
        "",
        "Each hook below ends with an example; its names (`hookimpl`, `Post`, …) come from "
        "`from sitemap_server.plugin import ...`, and a test registers every example with "
        "a plugin manager, so its name and arguments are the hook's.",
        "",
    ]
    for name, function in all_hookspecs().items():
        signature = str(inspect.signature(function)).replace("'", "")
        text, code = split_example(function)
        lines += [f"## `{name}{signature}`", "", text, ""]
        if code:
            lines += ["Example:", "", "```python", code, "```", ""]
    return "\n".join(lines)


EXAMPLE = "\n\nExample::\n"


def split_example(function: Any) -> tuple[str, str]:
    """A hook's docstring without its example, and the example's code (dedented)."""
    import inspect
    import textwrap

    text, _, code = inspect.cleandoc(function.__doc__ or "").partition(EXAMPLE)
    return text, textwrap.dedent(code).strip("\n")


def all_hookspecs() -> dict[str, Any]:
    return {
        name: value
        for name, value in globals().items()
        if name.startswith("sitemap_") and callable(value)
    }


if __name__ == "__main__":
    print(hook_docs(), end="")
