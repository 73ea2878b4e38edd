"""The site: one object built from the settings, which the application, its sessions and
its requests share, and no fallback without it."""

from __future__ import annotations

import pytest
from pyramid.scripting import prepare

from sitemap_server.app import make_app, site_of_app
from sitemap_server.models import SITE_KEY, site_of
from sitemap_server.services import posts as post_service
from sitemap_server.site import Site
from sitemap_server.sitemaps.engine import engine_of


def test_a_site_reads_its_settings_and_its_sessions_carry_it(clean_database, app_settings):
    given = {**app_settings, "sitemap_server.max_page_bytes": "100000"}
    site = Site(given)
    try:
        with site.sessions() as session:
            assert site_of(session) is site
            assert engine_of(session) is site.engine
        assert site.site_url == app_settings["sitemap_server.site_url"]
        assert site.max_page_bytes == 100_000
        assert site.settings["sitemap_server.max_staleness"] == 0
        # Read, not written back: the settings given are as they were.
        assert given["sitemap_server.max_page_bytes"] == "100000"
        assert site.plugins.get_plugin("sitemap_server.providers.posts") is not None
    finally:
        site.close()


def test_the_application_holds_the_site_under_one_registry_key(clean_database, app_settings):
    site = Site(app_settings)
    try:
        app = make_app(site)
        ours = [key for key in app.registry if str(key).startswith(("sitemap_server", "db"))]
        assert ours == [SITE_KEY]
        assert site_of_app(app) is site
        with site.sessions() as session:
            assert site_of(session) is site
        # A request reaches it as request.site.
        env = prepare(registry=app.registry)
        try:
            assert env["request"].site is site
        finally:
            env["closer"]()
    finally:
        site.close()


def test_the_write_path_refuses_a_session_without_a_site(dbsession):
    """Before, such a session quietly ran with every installed plugin loaded (whatever
    ``disabled_plugins`` said) and recorded no notification."""
    with pytest.raises(LookupError, match="not made by a site"):
        site_of(dbsession)
    with pytest.raises(LookupError, match="not made by a site"):
        post_service.create_post(dbsession, {"type": "post", "title": "Orphan"})
    dbsession.rollback()
