"""The plugin manager: built-in plugins, then installed ones, minus the disabled ones."""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
from collections.abc import Iterable
from typing import Any, Literal, TypedDict

import pluggy

from . import hookspecs
from .hookspecs import CALLED_ONE_BY_ONE, PROJECT
from .settings import SETTINGS, Setting, SettingsError

log = logging.getLogger(__name__)

# The core's distribution: the built-in plugins come with it, and share its version.
DISTRIBUTION = "sitemap-server"

# Built-in features register through the same hooks as external plugins.
BUILTIN_PLUGINS = (
    "sitemap_server.providers.posts",
    "sitemap_server.providers.authors",
    "sitemap_server.providers.taxonomies",
    "sitemap_server.notify.outbox",
    "sitemap_server.notify.ping",
    "sitemap_server.notify.indexnow",
    "sitemap_server.notify.purge",
    "sitemap_server.sitemaps.finished",
)


def refuse_wrappers(manager: pluggy.PluginManager) -> None:
    """Fail at start-up, naming the plugin, if a wrapper implements one of
    ``CALLED_ONE_BY_ONE`` (it would otherwise be called as a plain function)."""
    for hook in CALLED_ONE_BY_ONE:
        for impl in getattr(manager.hook, hook).get_hookimpls():
            if impl.wrapper or impl.hookwrapper:
                raise pluggy.PluginValidationError(
                    impl.plugin,
                    f"plugin {impl.plugin_name!r}: {hook} cannot be a wrapper (the core "
                    "calls its implementations one at a time; see docs/hooks.md)",
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
    disabled = list(disabled)
    if disabled:
        installed = {ep.name for ep in importlib.metadata.entry_points(group=PROJECT)}
        for name in disabled:
            if name not in installed:
                # A misspelt name would leave the plugin on without a word.
                log.warning(
                    "sitemap_server.disabled_plugins: no installed plugin is named %r", name
                )
            manager.set_blocked(name)
    if load_entrypoints:
        manager.load_setuptools_entrypoints(PROJECT)
    # A misspelt hook in any plugin fails here, at start-up, not silently never runs.
    manager.check_pending()
    refuse_wrappers(manager)
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
    refuse_wrappers(manager)
    return manager


def declared_settings(manager: pluggy.PluginManager) -> tuple[Setting, ...]:
    """The settings ``manager``'s plugins declare (``sitemap_settings``), each name once and
    none the core's own."""
    declared: dict[str, Setting] = {setting.name: setting for setting in SETTINGS}
    found = []
    for result in manager.hook.sitemap_settings():
        for setting in result:
            if setting.name in declared:
                raise SettingsError(f"setting {setting.name} is declared twice (by two plugins)")
            declared[setting.name] = setting
            found.append(setting)
    return tuple(found)


class PluginDescription(TypedDict):
    """One plugin as ``sitemap-server plugins`` and ``GET /api/plugins`` show it."""

    name: str
    module: str
    kind: Literal["installed", "extra", "built-in"]
    distribution: str | None
    version: str | None
    disabled: bool
    hooks: list[str]


def describe_plugins(manager: pluggy.PluginManager) -> list[PluginDescription]:
    """The plugins ``manager`` loaded or was told to leave out: installed ones by
    entry-point name, then those of ``sitemap_server.extra_plugins``, then the built-in
    ones. Installed plugins are left out altogether when entry points are not loaded
    (``sitemap_server.load_entrypoints = false``), unless they are disabled.

    A disabled plugin is never imported (disabling one that fails to import must work),
    so it implements no hook here.
    """

    def describe(
        name: str,
        module: str,
        kind: Literal["installed", "extra", "built-in"],
        distribution: importlib.metadata.Distribution | None,
    ) -> PluginDescription:
        plugin = manager.get_plugin(name)
        callers = manager.get_hookcallers(plugin) if plugin is not None else None
        return {
            "name": name,
            "module": module,
            "kind": kind,
            "distribution": distribution.name if distribution is not None else None,
            "version": distribution.version if distribution is not None else None,
            "disabled": manager.is_blocked(name),
            "hooks": sorted(caller.name for caller in callers or ()),
        }

    installed = sorted(
        (
            entry_point
            for entry_point in importlib.metadata.entry_points(group=PROJECT)
            if manager.has_plugin(entry_point.name) or manager.is_blocked(entry_point.name)
        ),
        key=lambda entry_point: entry_point.name,
    )
    installed_or_built_in = {entry_point.name for entry_point in installed} | set(BUILTIN_PLUGINS)
    extra = [
        name
        for name, plugin in manager.list_name_plugin()
        if plugin is not None and name not in installed_or_built_in
    ]
    core = importlib.metadata.distribution(DISTRIBUTION)
    return [
        *(describe(ep.name, ep.module, "installed", ep.dist) for ep in installed),
        *(describe(name, name, "extra", None) for name in extra),
        *(describe(name, name, "built-in", core) for name in BUILTIN_PLUGINS),
    ]
