"""The Alembic migrations and the models describe the same schema, both ways (S-801)."""

import uuid
from contextlib import contextmanager

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, select, text

from alembic import command
from sitemap_server import migrations
from sitemap_server.models import PostType, metadata


def differences(connection):
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return compare_metadata(context, metadata)


def test_migrated_database_matches_the_models(engine):
    with engine.connect() as connection:
        assert differences(connection) == []


@contextmanager
def scratch_database(engine, tmp_path):
    """An empty database beside the test one: a file on SQLite, a schema on PostgreSQL."""
    if engine.dialect.name == "sqlite":
        scratch = create_engine(f"sqlite:///{tmp_path / 'scratch.sqlite'}")
        try:
            yield scratch
        finally:
            scratch.dispose()
        return
    schema = f"scratch_{uuid.uuid4().hex[:12]}"
    with engine.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    # The search path is set as the connection opens, so it is also the dialect's default
    # schema: reflection and the migrations see only the scratch schema.
    scratch = create_engine(engine.url, connect_args={"options": f"-csearch_path={schema}"})
    try:
        yield scratch
    finally:
        scratch.dispose()
        with engine.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture
def scratch(engine, tmp_path):
    with scratch_database(engine, tmp_path) as scratch:
        yield scratch


def revisions(ini_file):
    """Every revision, oldest first, with the one it follows."""
    script = ScriptDirectory.from_config(migrations.alembic_config(ini_file))
    return [(rev.revision, rev.down_revision or "base") for rev in script.walk_revisions()][::-1]


def tables(connection):
    return set(inspect(connection).get_table_names()) - {"alembic_version"}


def test_downgrade_to_base_then_upgrade_to_heads(scratch, ini_file):
    with scratch.begin() as connection:
        config = migrations.alembic_config(ini_file, connection=connection)
        command.upgrade(config, "heads")
        assert tables(connection) == set(metadata.tables)

        command.downgrade(config, "base")
        assert tables(connection) == set()
        assert connection.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 0

        command.upgrade(config, "heads")
        assert differences(connection) == []
        heads = set(migrations.current_heads(ini_file))
        assert (
            set(connection.execute(text("SELECT version_num FROM alembic_version")).scalars())
            == heads
        )
        # The rows the migrations make come back too.
        builtin = set(connection.execute(select(PostType.name).where(PostType.builtin)).scalars())
        assert {"post", "page"} <= builtin


def test_every_revision_downgrades_and_upgrades_again(scratch, ini_file):
    """The stairway: each step up, down one, and up again, so every downgrade is exercised."""
    steps = revisions(ini_file)
    assert steps
    with scratch.begin() as connection:
        config = migrations.alembic_config(ini_file, connection=connection)
        for revision, previous in steps:
            command.upgrade(config, revision)
            command.downgrade(config, previous)
            command.upgrade(config, revision)
        assert differences(connection) == []


def test_the_test_database_was_left_alone(engine):
    """The scratch databases above never touch the session's migrated database."""
    with engine.connect() as connection:
        assert tables(connection) == set(metadata.tables)
        assert differences(connection) == []
