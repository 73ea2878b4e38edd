"""Alembic environment: the database comes from the same ini file that pserve reads.

``sitemap-server migrate`` is the usual entry point; ``alembic -c development.ini upgrade
heads`` works too. Plugins add their own version directories (see sitemap_server.migrations).
"""

from alembic import context
from pyramid.paster import setup_logging

from sitemap_server.migrations import is_version_table
from sitemap_server.models import metadata
from sitemap_server.models.meta import UTCDateTime
from sitemap_server.site import Site

config = context.config
connection = config.attributes.get("connection")


def include_name(name, type_, parent_names):
    """Autogenerate leaves Alembic's version tables (the core's and plugins') alone."""
    return not (type_ == "table" and is_version_table(name))


def render_item(type_, obj, autogen_context):
    """Migrations stand alone: our column types are rendered as plain SQLAlchemy types."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


# The core's migrations, or one plugin's: each has its own version table.
version_table = config.attributes.get("version_table", "alembic_version")


def run_migrations_offline() -> None:
    site = Site.from_ini(str(config.config_file_name), command=True)
    site.close()
    context.configure(
        url=site.settings["sqlalchemy.url"], target_metadata=metadata, version_table=version_table
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations(connection) -> None:
    if connection.dialect.name != "sqlite":
        _run_migrations(connection)
        return
    # Batch mode copies a table and drops the old one; with foreign keys on, SQLite
    # applies the drop's ON DELETE actions first (0011 lost every post's terms that way).
    # They are off for the migration and checked after it. The pragma only takes effect
    # outside a transaction: committed at the driver (a caller's ``engine.begin()`` has
    # done nothing yet; it commits the migration itself at the end anyway).
    driver = connection.connection.dbapi_connection
    driver.commit()
    driver.execute("PRAGMA foreign_keys=OFF")
    try:
        _run_migrations(connection)
        broken = driver.execute("PRAGMA foreign_key_check").fetchall()
        if broken:
            raise RuntimeError(f"the migration would leave rows with broken references: {broken}")
        driver.commit()
    except BaseException:
        driver.rollback()
        raise
    finally:
        driver.execute("PRAGMA foreign_keys=ON")


def _run_migrations(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_item=render_item,
        include_name=include_name,
        version_table=version_table,
        # SQLite cannot ALTER most things; batch mode recreates the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    if connection is not None:
        run_migrations(connection)
        return
    if config.attributes.get("configure_logging", True):
        setup_logging(config.config_file_name)
    # Alembic's own command line (``alembic -c development.ini upgrade heads``): the
    # database of the site the ini file describes. ``sitemap-server migrate`` hands in a
    # connection of its site instead.
    site = Site.from_ini(str(config.config_file_name), command=True)
    try:
        with site.database.connect() as conn:
            run_migrations(conn)
    finally:
        site.close()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
