"""``GET /api/plugins``: the plugins the running application loaded, and those it left out.

The core's suite runs with the installed plugins loaded or with none
(``SITEMAP_SERVER_TEST_PLUGINS=none``): the built-in plugins are checked in both, the
installed ones against what is installed when they are loaded.
"""

import importlib.metadata

from sitemap_server.hookspecs import all_hookspecs
from sitemap_server.plugins import BUILTIN_PLUGINS, get_plugin_manager
from sitemap_server.testing import assert_problem, client, installed_plugins_loaded

CORE_VERSION = importlib.metadata.version("sitemap-server")


def installed_entry_points():
    """The plugins pip installed (the ``sitemap_server`` entry-point group), by name."""
    return sorted(importlib.metadata.entry_points(group="sitemap_server"), key=lambda ep: ep.name)


def plugins_of(app):
    return app.get("/api/plugins", status=200).json["plugins"]


def test_plugins_need_a_token(testapp):
    response = testapp.get("/api/plugins", status=401)
    assert_problem(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_built_in_plugins_come_last_with_the_core_version_and_their_hooks(api):
    listed = plugins_of(api)
    built_in = listed[-len(BUILTIN_PLUGINS) :]
    assert [p["name"] for p in built_in] == list(BUILTIN_PLUGINS)
    for plugin in built_in:
        assert plugin["module"] == plugin["name"]
        assert plugin["kind"] == "built-in"
        assert (plugin["distribution"], plugin["version"]) == ("sitemap-server", CORE_VERSION)
        assert plugin["disabled"] is False
    hooks = {p["name"]: p["hooks"] for p in built_in}
    assert hooks["sitemap_server.providers.posts"] == ["sitemap_providers"]
    assert hooks["sitemap_server.notify.outbox"] == ["sitemap_changed"]


def test_installed_plugins_come_first_when_they_are_loaded(api):
    listed = plugins_of(api)
    installed = [p for p in listed if p["kind"] == "installed"]
    if not installed_plugins_loaded():
        assert installed == []
        return
    expected = installed_entry_points()
    assert listed[: len(expected)] == installed
    for plugin, entry_point in zip(installed, expected, strict=True):
        assert plugin["name"] == entry_point.name
        assert plugin["module"] == entry_point.module
        assert plugin["distribution"] == entry_point.dist.name
        assert plugin["version"] == entry_point.dist.version
        assert plugin["disabled"] is False
        assert plugin["hooks"]
        assert set(plugin["hooks"]) <= set(all_hookspecs())


def test_an_extra_plugin_is_listed_before_the_built_in_ones(app_with, api_token):
    # The settings test_hooks.py uses: the application is built once for both.
    app = client(app_with(**{"sitemap_server.extra_plugins": "sample_plugin"}), api_token)
    listed = plugins_of(app)
    assert [p["name"] for p in listed[-len(BUILTIN_PLUGINS) - 1 :]] == [
        "sample_plugin",
        *BUILTIN_PLUGINS,
    ]
    sample = listed[-len(BUILTIN_PLUGINS) - 1]
    assert sample == {
        "name": "sample_plugin",
        "module": "sample_plugin",
        "kind": "extra",
        "distribution": None,
        "version": None,
        "disabled": False,
        "hooks": sorted(all_hookspecs()),  # it implements every hook
    }


def test_a_disabled_plugin_is_listed_as_disabled_without_hooks(app_with, api_token):
    installed = installed_entry_points()
    assert installed, "the test environment has plugins/video and plugins/news installed"
    disabled = installed[0]
    app = client(app_with(**{"sitemap_server.disabled_plugins": disabled.name}), api_token)
    listed = {p["name"]: p for p in plugins_of(app)}
    assert listed[disabled.name] == {
        "name": disabled.name,
        "module": disabled.module,
        "kind": "installed",
        "distribution": disabled.dist.name,
        "version": disabled.dist.version,
        "disabled": True,
        "hooks": [],
    }
    # The others are loaded as the test configuration says.
    others = {ep.name for ep in installed[1:]}
    loaded = {name for name, p in listed.items() if p["kind"] == "installed" and not p["disabled"]}
    assert loaded == (others if installed_plugins_loaded() else set())


def test_disabling_a_plugin_that_is_not_installed_says_so(caplog):
    """A misspelt name would otherwise leave the plugin on without a word."""
    with caplog.at_level("WARNING", logger="sitemap_server.plugins"):
        get_plugin_manager(disabled=["vidoe"], load_entrypoints=False)
    assert [r.getMessage() for r in caplog.records] == [
        "sitemap_server.disabled_plugins: no installed plugin is named 'vidoe'"
    ]
