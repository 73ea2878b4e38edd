"""The plugin manager: built-in plugins, then installed ones, minus the disabled ones."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pluggy

from . import hookspecs
from .hookspecs import PROJECT

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

PLUGIN_MANAGER = "sitemap_server.plugin_manager"

# Built-in features register through the same hooks as external plugins.
BUILTIN_PLUGINS = (
    "sitemap_server.sitemaps.maintenance",
    "sitemap_server.providers.posts",
    "sitemap_server.providers.authors",
    "sitemap_server.providers.taxonomies",
    "sitemap_server.notify.outbox",
)


def get_plugin_manager(
    disabled: Iterable[str] = (), load_entrypoints: bool = True
) -> pluggy.PluginManager:
    """A plugin manager with every hook checked against its spec.

    :param disabled: entry-point names of installed plugins to leave out.
    :param load_entrypoints: False to load only the built-in plugins (tests of the core).
    """
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(hookspecs)
    for name in BUILTIN_PLUGINS:
        manager.register(importlib.import_module(name), name=name)
    for name in disabled:
        manager.set_blocked(name)
    if load_entrypoints:
        manager.load_setuptools_entrypoints(PROJECT)
    # A misspelt hook in any plugin fails here, at start-up, not silently never runs.
    manager.check_pending()
    return manager


def from_settings(settings: dict[str, Any]) -> pluggy.PluginManager:
    """The manager for an application or command, as its settings say."""
    manager = get_plugin_manager(
        disabled=settings.get("sitemap_server.disabled_plugins", ()),
        load_entrypoints=settings.get("sitemap_server.load_entrypoints", True),
    )
    for dotted in settings.get("sitemap_server.extra_plugins", ()):
        manager.register(importlib.import_module(dotted), name=dotted)
    manager.check_pending()
    return manager


def for_session(session: Session) -> pluggy.PluginManager:
    """The manager a session was made with (see models.get_session_factory)."""
    manager = session.info.get(PLUGIN_MANAGER)
    return manager if manager is not None else default_plugin_manager()


_default: pluggy.PluginManager | None = None


def default_plugin_manager() -> pluggy.PluginManager:
    """The manager for code that has no configuration at hand (a bare session)."""
    global _default
    if _default is None:
        _default = get_plugin_manager()
    return _default
