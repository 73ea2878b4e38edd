"""The application context: what the whole application takes from its configuration.

``main()`` and every command build one ``AppContext`` from the normalised settings; the
sessions they make carry it (``models.get_session_factory``) and a request reaches it
through its session or the registry. There is one key and no fallback: a session made
without a context fails with a message that says so, instead of quietly running with
every installed plugin and no configuration.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import pluggy
from sqlalchemy.orm import Session

from .settings import MAX_PAGE_BYTES, normalize

# Where a session's ``info`` and the Pyramid registry hold it.
CONTEXT_KEY = "sitemap_server.context"
DEFAULT_SITE_URL = "http://localhost"


@dataclass(frozen=True)
class AppContext:
    plugins: pluggy.PluginManager
    # The ini file's ``sitemap_server.site_url`` (one stored through the API wins over
    # it: ``models.site.site_url_of``).
    site_url: str = DEFAULT_SITE_URL
    # The largest page, in bytes (``sitemap_server.max_page_bytes``).
    max_page_bytes: int = MAX_PAGE_BYTES
    # Every setting, normalised, the plugins' own (``sitemap_settings``) with the core's.
    settings: MutableMapping[str, Any] = field(default_factory=dict)
    # The plugins' settings that change documents (``Setting.documents``), by name.
    document_settings: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_settings(
        cls, settings: MutableMapping[str, Any], environ: Mapping[str, str] | None = None
    ) -> AppContext:
        """The context ``settings`` (normalised, ``settings.normalize``) describe; their
        plugin manager if they hold one already (``main()`` puts it there). The settings
        the plugins declare are read here, overridden by ``environ`` (``os.environ``)."""
        from .plugins import PLUGIN_MANAGER, declared_settings, from_settings

        plugins = settings.get(PLUGIN_MANAGER) or from_settings(dict(settings))
        settings[PLUGIN_MANAGER] = plugins
        # The plugins' own settings (the core's were read before its plugins were known).
        declared = declared_settings(plugins)
        normalize(settings, environ, declared=declared)
        return cls(
            plugins=plugins,
            site_url=str(settings.get("sitemap_server.site_url") or DEFAULT_SITE_URL),
            max_page_bytes=int(settings.get("sitemap_server.max_page_bytes") or MAX_PAGE_BYTES),
            settings=settings,
            document_settings={s.name: settings.get(s.name) for s in declared if s.documents},
        )

    def output_settings(self, site_url: str) -> dict[str, Any]:
        """What the stored documents were built with besides the content and the stored
        settings: the site URL in effect (``site_url``: the stored one, else the ini
        file's), the page size and the plugins' document settings. Rebuilt when a start
        finds them changed (``sitemaps.rendering.render_key``)."""
        return {
            "site_url": site_url,
            "max_page_bytes": self.max_page_bytes,
            **{name: _plain(value) for name, value in sorted(self.document_settings.items())},
        }


def _plain(value: Any) -> Any:
    """A setting's value as JSON keeps it (a tuple of names becomes a list)."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def context_of(session: Session) -> AppContext:
    """The context ``session`` was made with."""
    found = session.info.get(CONTEXT_KEY)
    if found is None:
        raise LookupError(
            "this session has no application context: make it with "
            "models.get_session_factory(engine, AppContext.from_settings(settings))"
        )
    return found


def plugins_of(session: Session) -> pluggy.PluginManager:
    """The plugin manager of the context ``session`` was made with."""
    return context_of(session).plugins
