"""The application context: one object a session carries, and no fallback without it."""

from __future__ import annotations

import pytest

from sitemap_server.context import CONTEXT_KEY, AppContext, context_of, plugins_of
from sitemap_server.models import get_session_factory
from sitemap_server.plugins import PLUGIN_MANAGER
from sitemap_server.services import posts as post_service
from sitemap_server.settings import normalize


def test_a_session_made_from_settings_carries_their_context(clean_database, app_settings):
    settings = dict(normalize({**app_settings, "sitemap_server.max_page_bytes": "100000"}))
    made = AppContext.from_settings(settings)
    with get_session_factory(clean_database, made)() as session:
        context = context_of(session)
        assert context is made
        assert context.plugins is settings[PLUGIN_MANAGER] is plugins_of(session)
        assert context.site_url == app_settings["sitemap_server.site_url"]
        assert context.max_page_bytes == 100_000
        assert context.settings["sitemap_server.max_staleness"] == 0


def test_the_application_holds_one_context_on_its_registry(wsgi_app):
    context = wsgi_app.registry[CONTEXT_KEY]
    with wsgi_app.registry["dbsession_factory"]() as session:
        assert context_of(session) is context
    assert wsgi_app.registry.settings[PLUGIN_MANAGER] is context.plugins


def test_the_write_path_refuses_a_session_without_a_context(dbsession):
    """Before, such a session quietly ran with every installed plugin loaded (whatever
    ``disabled_plugins`` said) and recorded no notification."""
    with pytest.raises(LookupError, match="no application context"):
        plugins_of(dbsession)
    with pytest.raises(LookupError, match="no application context"):
        post_service.create_post(dbsession, {"type": "post", "title": "Orphan"})
    dbsession.rollback()
