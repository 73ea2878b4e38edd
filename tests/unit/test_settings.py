"""sitemap_server.settings: defaults, environment overrides, clear failures."""

import pytest

from sitemap_server.settings import SETTINGS, SettingsError, normalize
from sitemap_server.testing import PROJECT_ROOT

BASE = {"sqlalchemy.url": "sqlite://", "sitemap_server.site_url": "https://example.com/"}


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
    ],
)
def test_invalid_values_are_refused_with_the_setting_named(name, value, message):
    with pytest.raises(SettingsError, match=message):
        normalize({**BASE, name: value}, environ={})


def test_ping_presets_and_templates():
    settings = normalize(
        {**BASE, "sitemap_server.ping.targets": "google https://s.test/p?u={sitemap} Google"},
        environ={},
    )
    assert settings["sitemap_server.ping.targets"] == (
        "https://www.google.com/ping?sitemap={sitemap}",
        "https://s.test/p?u={sitemap}",
    )


def test_every_setting_is_documented():
    operations = (PROJECT_ROOT / "docs" / "operations.md").read_text()
    missing = [s.name for s in SETTINGS if f"| `{s.name}` |" not in operations]
    assert not missing, f"docs/operations.md does not list {missing}"
