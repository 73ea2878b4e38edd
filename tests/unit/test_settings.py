"""sitemap_server.settings: defaults, environment overrides, clear failures."""

import pytest

from sitemap_server.plugins import declared_settings, get_plugin_manager
from sitemap_server.settings import SETTINGS, SettingsError, normalize
from sitemap_server.site import Site
from sitemap_server.testing import PROJECT_ROOT

BASE = {"sqlalchemy.url": "sqlite://", "sitemap_server.site_url": "https://example.com/"}


def read(settings, environ=None):
    """``settings`` as the application reads them: the core's, then its plugins' own."""
    environ = {} if environ is None else environ
    return Site(settings, environ).settings


def test_defaults_are_parsed_and_site_url_loses_its_trailing_slash():
    settings = normalize(dict(BASE), environ={})
    assert settings["sitemap_server.site_url"] == "https://example.com"
    assert settings["sitemap_server.api.max_body_bytes"] == 2 * 1024 * 1024
    assert settings["sitemap_server.api.validate_responses"] is False


def test_environment_wins_over_the_ini_file():
    environ = {
        "SITEMAP_SERVER_DATABASE_URL": "postgresql+psycopg://db/sitemaps",
        "SITEMAP_SERVER_SITE_URL": "https://www.example.org/blog",
    }
    settings = normalize(dict(BASE), environ=environ)
    assert settings["sqlalchemy.url"] == "postgresql+psycopg://db/sitemaps"
    assert settings["sitemap_server.site_url"] == "https://www.example.org/blog"


def test_an_empty_ini_value_falls_back_to_the_environment():
    settings = normalize(
        {"sqlalchemy.url": "", "sitemap_server.site_url": ""},
        environ={
            "SITEMAP_SERVER_DATABASE_URL": "sqlite://",
            "SITEMAP_SERVER_SITE_URL": "http://x.test",
        },
    )
    assert settings["sqlalchemy.url"] == "sqlite://"


def test_a_missing_required_setting_names_its_environment_variable():
    with pytest.raises(SettingsError, match="SITEMAP_SERVER_DATABASE_URL"):
        normalize({"sitemap_server.site_url": "http://x.test"}, environ={})


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("sitemap_server.site_url", "example.com", "absolute http"),
        ("sitemap_server.site_url", "https://example.com/?a=1", "query string"),
        ("sitemap_server.api.max_body_bytes", "0", "positive"),
        ("sitemap_server.api.max_body_bytes", "lots", "max_body_bytes"),
        ("sitemap_server.ping.targets", "https://search.test/ping", "{sitemap}"),
        ("sitemap_server.ping.targets", "bing", "neither a preset"),
        ("sitemap_server.ping.targets", "ftp://search.test/?s={sitemap}", "http"),
        ("sitemap_server.indexnow.key", "short", "8 to 128"),
        ("sitemap_server.indexnow.key", "a key with spaces", "8 to 128"),
        ("sitemap_server.indexnow.batch_size", "10001", "10000"),
        ("sitemap_server.notify.quiet_seconds", "-1", "0 or more"),
        ("sitemap_server.notify.timeout_seconds", "0", "positive"),
        ("sitemap_server.notify.lease_seconds", "20", "more than twice"),
        ("sitemap_server.cache.s_maxage", "-1", "0 or a positive"),
        ("sitemap_server.cache.stale_if_error", "a day", "stale_if_error"),
        ("sitemap_server.cache.tag_headers", "Surrogate-Key Cache:Tag", "not an HTTP header"),
    ],
)
def test_invalid_values_are_refused_with_the_setting_named(name, value, message):
    with pytest.raises(SettingsError, match=message):
        read({**BASE, name: value})


def test_ping_presets_and_templates():
    settings = read(
        {**BASE, "sitemap_server.ping.targets": "google https://s.test/p?u={sitemap} Google"}
    )
    assert settings["sitemap_server.ping.targets"] == (
        "https://www.google.com/ping?sitemap={sitemap}",
        "https://s.test/p?u={sitemap}",
    )


def test_every_setting_is_documented():
    """The core's, and those its built-in plugins declare (ping, IndexNow)."""
    built_in = declared_settings(get_plugin_manager(load_entrypoints=False))
    assert {s.name for s in built_in} >= {"sitemap_server.ping.targets"}
    operations = (PROJECT_ROOT / "docs" / "operations.md").read_text()
    missing = [s.name for s in (*SETTINGS, *built_in) if f"| `{s.name}` |" not in operations]
    assert not missing, f"docs/operations.md does not list {missing}"


def test_a_plugins_setting_is_read_like_the_cores():
    """The environment wins over the file, and a bad value names the setting."""
    settings = read(
        {**BASE, "sitemap_server.indexnow.batch_size": "500"},
        environ={"SITEMAP_SERVER_INDEXNOW_KEY": "a1b2c3d4e5f6"},
    )
    assert settings["sitemap_server.indexnow.key"] == "a1b2c3d4e5f6"
    assert settings["sitemap_server.indexnow.batch_size"] == 500
    assert settings["sitemap_server.indexnow.endpoint"] == "https://api.indexnow.org/indexnow"
    with pytest.raises(SettingsError, match=r"indexnow\.key='short': must be 8 to 128"):
        read(dict(BASE), environ={"SITEMAP_SERVER_INDEXNOW_KEY": "short"})


def test_a_setting_declared_twice_is_refused():
    from sitemap_server.plugin import Setting, hookimpl, positive_int

    class Copycat:
        @hookimpl
        def sitemap_settings(self):
            return [Setting("sitemap_server.indexnow.batch_size", "5", positive_int)]

    manager = get_plugin_manager(load_entrypoints=False)
    manager.register(Copycat())
    with pytest.raises(SettingsError, match=r"indexnow\.batch_size is declared twice"):
        declared_settings(manager)
