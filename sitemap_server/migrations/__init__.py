"""Schema migrations: Alembic is the only way the schema is created or changed (S-801).

The core's scripts live in this package (``env.py``, ``versions/``), so an installed wheel
migrates with nothing but an ini file: ``script_location = sitemap_server:migrations``, the
default when the ini file has no ``[alembic]`` section. A plugin that owns
tables returns its own version directories from ``sitemap_migrations``; each plugin is a
separate stream with its own version table (``alembic_version_{plugin}``), applied after
the core's. So a plugin can be installed, disabled or uninstalled without the others
noticing: the core's ``alembic_version`` never names a revision it cannot find.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from alembic.util import coerce_resource_to_filename

from ..hookspecs import implementations

if TYPE_CHECKING:
    import pluggy

CORE_VERSION_TABLE = "alembic_version"
# Alembic's ``package:path`` form: found inside the installed package, wherever it is.
SCRIPT_LOCATION = "sitemap_server:migrations"


def is_version_table(name: str | None) -> bool:
    """Alembic's bookkeeping (the core's table and each plugin's), not part of any model."""
    return bool(name) and str(name).startswith(CORE_VERSION_TABLE)


@dataclass(frozen=True)
class Stream:
    """One independent line of migrations: the core's, or one plugin's."""

    name: str
    version_table: str
    locations: tuple[str, ...] = ()  # empty: the core's versions directory


CORE = Stream("sitemap_server", CORE_VERSION_TABLE)


def alembic_config(
    config_file: str | Path, connection: Any = None, stream: Stream = CORE
) -> Config:
    """An Alembic config reading ``config_file`` (the same ini file pserve reads), for the
    core's migrations or, with ``stream``, one plugin's."""
    config = Config(str(config_file))
    # An ini file needs no [alembic] section (Alembic would refuse to read a missing one).
    has_section = config.file_config.has_section(config.config_ini_section)
    script_location = (has_section and config.get_main_option("script_location")) or (
        SCRIPT_LOCATION
    )
    config.set_main_option("script_location", script_location)
    core_versions = Path(coerce_resource_to_filename(script_location)) / "versions"
    locations = stream.locations or (str(core_versions),)
    # Alembic splits version_locations on the path separator given here.
    config.set_main_option("path_separator", "newline")
    config.set_main_option("version_locations", "\n".join(locations))
    config.attributes["version_table"] = stream.version_table
    config.attributes["configure_logging"] = False
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def plugin_streams(plugins: pluggy.PluginManager) -> list[Stream]:
    """The migrations of the plugins ``plugins`` loaded (``sitemap_migrations``), one
    stream per plugin (a site's: ``Site.plugins``)."""
    found = []
    for plugin, call in implementations(plugins, "sitemap_migrations"):
        directories = tuple(dict.fromkeys(str(Path(d).resolve()) for d in call()))
        if directories:
            table = "alembic_version_" + re.sub(r"[^a-z0-9]+", "_", plugin.lower())
            found.append(Stream(plugin, table, directories))
    return found


def plugin_version_locations(plugins: pluggy.PluginManager) -> list[str]:
    """Every version directory the plugins bring."""
    return [location for stream in plugin_streams(plugins) for location in stream.locations]


def upgrade(
    config_file: str | Path,
    plugins: pluggy.PluginManager,
    connection: Any = None,
    revision: str = "heads",
) -> None:
    """The core to ``revision`` (its latest by default), then each plugin of ``plugins``
    to its latest."""
    command.upgrade(alembic_config(config_file, connection), revision)
    for stream in plugin_streams(plugins):
        command.upgrade(alembic_config(config_file, connection, stream), "heads")


def downgrade_all(
    config_file: str | Path, plugins: pluggy.PluginManager, connection: Any = None
) -> None:
    """Every plugin's tables, then the core's, removed (their rows reference the core's)."""
    for stream in reversed(plugin_streams(plugins)):
        command.downgrade(alembic_config(config_file, connection, stream), "base")
    command.downgrade(alembic_config(config_file, connection), "base")


def current_heads(config_file: str | Path, plugins: pluggy.PluginManager) -> list[str]:
    """The latest revision of the core and of each plugin's stream."""
    heads: list[str] = []
    for stream in (CORE, *plugin_streams(plugins)):
        config = alembic_config(config_file, stream=stream)
        heads += ScriptDirectory.from_config(config).get_heads()
    return heads
