"""Schema migrations: Alembic is the only way the schema is created or changed (S-801).

The core's versions live in ``alembic/versions`` beside the ini files. Plugins that own
tables bring their own version directories; ``version_locations`` collects them so that
``alembic upgrade heads`` (``sitemap-server migrate``) applies every installed branch.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from alembic.config import Config

from alembic import command

if TYPE_CHECKING:
    import pluggy


def alembic_config(
    config_file: str | Path, connection: Any = None, plugins: pluggy.PluginManager | None = None
) -> Config:
    """An Alembic config reading ``config_file`` (the same ini file pserve reads).

    :param plugins: whose ``sitemap_migrations`` to apply; the installed plugins by default.
    """
    config = Config(str(config_file))
    script_location = config.get_main_option("script_location")
    if not script_location:
        here = Path(__file__).resolve().parent.parent
        config.set_main_option("script_location", str(here / "alembic"))
        script_location = str(here / "alembic")
    locations = [str(Path(script_location) / "versions"), *plugin_version_locations(plugins)]
    # Alembic splits version_locations on the path separator given here.
    config.set_main_option("path_separator", "newline")
    config.set_main_option("version_locations", "\n".join(locations))
    config.attributes["configure_logging"] = False
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def plugin_version_locations(plugins: pluggy.PluginManager | None = None) -> list[str]:
    """The version directories the plugins return from ``sitemap_migrations``.

    :param plugins: a plugin manager; by default the installed plugins
        (``plugins.default_plugin_manager()``).
    """
    from .plugins import default_plugin_manager

    manager = plugins if plugins is not None else default_plugin_manager()
    found = (str(Path(d).resolve()) for result in manager.hook.sitemap_migrations() for d in result)
    return list(dict.fromkeys(found))


def upgrade(
    config_file: str | Path,
    connection: Any = None,
    revision: str = "heads",
    plugins: pluggy.PluginManager | None = None,
) -> None:
    command.upgrade(alembic_config(config_file, connection, plugins), revision)


def current_heads(
    config_file: str | Path, plugins: pluggy.PluginManager | None = None
) -> list[str]:
    from alembic.script import ScriptDirectory

    config = alembic_config(config_file, plugins=plugins)
    return list(ScriptDirectory.from_config(config).get_heads())
