"""Schema migrations: Alembic is the only way the schema is created or changed (S-801).

The core's versions live in ``alembic/versions`` beside the ini files. Plugins that own
tables bring their own version directories; ``version_locations`` collects them so that
``alembic upgrade heads`` (``sitemap-server migrate``) applies every installed branch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic.config import Config

from alembic import command


def alembic_config(config_file: str | Path, connection: Any = None) -> Config:
    """An Alembic config reading ``config_file`` (the same ini file pserve reads)."""
    config = Config(str(config_file))
    script_location = config.get_main_option("script_location")
    if not script_location:
        here = Path(__file__).resolve().parent.parent
        config.set_main_option("script_location", str(here / "alembic"))
        script_location = str(here / "alembic")
    locations = [str(Path(script_location) / "versions"), *plugin_version_locations()]
    # Alembic splits version_locations on the path separator given here.
    config.set_main_option("path_separator", "newline")
    config.set_main_option("version_locations", "\n".join(locations))
    config.attributes["configure_logging"] = False
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def plugin_version_locations() -> list[str]:
    """Version directories of installed plugins (none until a plugin brings tables)."""
    return []


def upgrade(config_file: str | Path, connection: Any = None, revision: str = "heads") -> None:
    command.upgrade(alembic_config(config_file, connection), revision)


def current_heads(config_file: str | Path) -> list[str]:
    from alembic.script import ScriptDirectory

    return list(ScriptDirectory.from_config(alembic_config(config_file)).get_heads())
