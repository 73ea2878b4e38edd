"""The Alembic migrations and the models describe the same schema, both ways (S-801)."""

import uuid
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, select, text

from sitemap_server import migrations
from sitemap_server.models import Post, PostType, metadata
from sitemap_server.plugins import get_plugin_manager

CORE_ONLY = get_plugin_manager(load_entrypoints=False)
# Every installed plugin: the tables of each.
INSTALLED = get_plugin_manager()


def differences(connection):
    def include_name(name, type_, parent_names):
        return not (type_ == "table" and migrations.is_version_table(name))

    context = MigrationContext.configure(
        connection, opts={"compare_type": True, "include_name": include_name}
    )
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


def tables(connection):
    names = inspect(connection).get_table_names()
    return {name for name in names if not migrations.is_version_table(name)}


def versions(connection):
    """Every revision the version tables (the core's and each plugin's) record."""
    found = set()
    for name in inspect(connection).get_table_names():
        if migrations.is_version_table(name):
            found |= set(connection.execute(text(f"SELECT version_num FROM {name}")).scalars())
    return found


def test_downgrade_to_base_then_upgrade_to_heads(scratch, ini_file):
    """The core's migrations and every installed plugin's (each its own stream)."""
    with scratch.begin() as connection:
        migrations.upgrade(ini_file, INSTALLED, connection=connection)
        assert tables(connection) == set(metadata.tables)

        migrations.downgrade_all(ini_file, INSTALLED, connection=connection)
        assert tables(connection) == set()
        assert versions(connection) == set()

        migrations.upgrade(ini_file, INSTALLED, connection=connection)
        assert differences(connection) == []
        assert versions(connection) == set(migrations.current_heads(ini_file, INSTALLED))
        # The rows the migrations make come back too.
        builtin = set(connection.execute(select(PostType.name).where(PostType.builtin)).scalars())
        assert {"post", "page"} <= builtin


def stairway(config):
    """Each revision of one stream: up, down one, and up again, so every downgrade runs."""
    script = ScriptDirectory.from_config(config)
    steps = [(rev.revision, rev.down_revision or "base") for rev in script.walk_revisions()]
    assert steps
    for revision, previous in steps[::-1]:
        command.upgrade(config, revision)
        command.downgrade(config, previous)
        command.upgrade(config, revision)


def test_every_revision_downgrades_and_upgrades_again(scratch, ini_file):
    with scratch.begin() as connection:
        stairway(migrations.alembic_config(ini_file, connection=connection))
        for stream in migrations.plugin_streams(INSTALLED):
            stairway(migrations.alembic_config(ini_file, connection, stream))
        assert differences(connection) == []


def test_a_plugins_migrations_keep_to_their_own_version_table(scratch, ini_file):
    """Its revisions never enter the core's table: uninstalled, the core still migrates."""
    with scratch.begin() as connection:
        migrations.upgrade(ini_file, INSTALLED, connection=connection)
        core = set(connection.execute(text("SELECT version_num FROM alembic_version")).scalars())
        assert core == set(migrations.current_heads(ini_file, CORE_ONLY))
        migrations.upgrade(ini_file, CORE_ONLY, connection=connection)  # no error


def test_the_test_database_was_left_alone(engine):
    """The scratch databases above never touch the session's migrated database."""
    with engine.connect() as connection:
        assert tables(connection) == set(metadata.tables)
        assert differences(connection) == []


def old_post(post_id, post_type, slug, status, published, modified=None, **columns):
    """A post's row as every revision since 0010 stores it (``old_site`` writes it)."""
    return {
        "id": post_id,
        "type": post_type,
        "title": slug.title(),
        "slug": slug,
        "status": status,
        "author_id": 1,
        "content": "",
        "images": "[]",
        "published_at": published,
        "modified_at": modified or published,
        "robots": "default",
        "exclude_from_sitemap": False,
        "parts": 1,
        "parent_id": None,
        "path": None,
        **columns,
    }


def old_site(connection, posts, terms):
    """One author (1) and ``posts`` and ``terms`` (dicts of their columns), written with
    plain SQL at an older revision than the models describe."""

    def insert(table, rows):
        columns = list(rows[0])
        names, values = ", ".join(columns), ", ".join(f":{c}" for c in columns)
        connection.execute(text(f"INSERT INTO {table} ({names}) VALUES ({values})"), rows)

    insert("authors", [{"id": 1, "slug": "ada", "name": "A", "noindex": False}])
    insert("posts", posts)
    insert("terms", [{"description": "", "noindex": False, **term} for term in terms])


def test_0010_keeps_an_existing_site_as_it_was(scratch, ini_file):
    """A site migrated from 0009 keeps its author sitemap and excludes no post; going
    back to 0009 removes both settings."""
    with scratch.begin() as connection:
        config = migrations.alembic_config(ini_file, connection=connection)
        command.upgrade(config, "0009")
        connection.execute(text("UPDATE site_settings SET title = 'Existing'"))

        command.upgrade(config, "0010")
        row = connection.execute(text("SELECT title, author_sitemap FROM site_settings")).one()
        assert (row.title, bool(row.author_sitemap)) == ("Existing", True)
        assert connection.execute(text("SELECT count(*) FROM excluded_posts")).scalar() == 0

        command.downgrade(config, "0009")
        columns = {c["name"] for c in inspect(connection).get_columns("site_settings")}
        assert "author_sitemap" not in columns
        assert "excluded_posts" not in tables(connection)
        assert connection.execute(text("SELECT title FROM site_settings")).scalar() == "Existing"


def test_migrating_a_site_keeps_its_links_and_dates_its_future_modifications_now(scratch, ini_file):
    """SQLite's batch mode copies and drops tables: with foreign keys on, the drop of
    ``posts`` in 0011 deleted every post's term links (ON DELETE CASCADE) and cleared the
    front page. And 0012 dates a modification written in the future now, then rebuilds."""
    with scratch.begin() as connection:
        config = migrations.alembic_config(ini_file, connection=connection)
        command.upgrade(config, "0010")
        past, future = datetime(2024, 1, 1, tzinfo=UTC), datetime(2031, 1, 1, tzinfo=UTC)
        old_site(
            connection,
            posts=[
                old_post(1, "page", "home", "publish", past),
                old_post(2, "post", "later", "publish", past, future),
            ],
            terms=[{"id": 5, "taxonomy": "category", "slug": "c", "name": "C"}],
        )
        connection.execute(text("INSERT INTO post_terms (post_id, term_id) VALUES (1, 5), (2, 5)"))
        connection.execute(text("UPDATE site_settings SET front_page = 'page', front_page_id = 1"))

        command.upgrade(config, "heads")

        links = connection.execute(text("SELECT count(*) FROM post_terms")).scalar()
        assert links == 2
        assert connection.execute(text("SELECT front_page_id FROM site_settings")).scalar() == 1
        modified = connection.execute(select(Post.modified_at).where(Post.id == 2)).scalar_one()
        assert modified < datetime(2030, 1, 1, tzinfo=UTC)
        kinds = connection.execute(text("SELECT kind FROM sitemap_changes")).scalars().all()
        assert kinds == ["everything"]


def test_0015_gives_every_object_its_url_and_the_first_keeps_a_shared_one(scratch, ini_file):
    """An existing site's posts, parts, terms and authors get their rows in
    ``object_urls``; where two already share a URL (the rule is new), the post keeps it
    and the other is left out for ``check`` to report."""
    with scratch.begin() as connection:
        config = migrations.alembic_config(ini_file, connection=connection)
        command.upgrade(config, "0014")
        at = datetime(2024, 5, 1, tzinfo=UTC)
        old_site(
            connection,
            posts=[
                old_post(1, "page", "about", "publish", at),
                old_post(2, "page", "über", "draft", at, parent_id=1, parts=2),
                old_post(3, "post", "squat", "publish", at, path="/category/news/"),
            ],
            terms=[{"id": 5, "taxonomy": "category", "slug": "news", "name": "News"}],
        )

        command.upgrade(config, "heads")

        rows = connection.execute(
            text("SELECT path, kind, object_id, part FROM object_urls ORDER BY path")
        ).all()
        assert [tuple(r) for r in rows] == [
            ("/about/", "post", 1, 1),
            ("/about/%C3%BCber/", "post", 2, 1),
            ("/about/%C3%BCber/2/", "post", 2, 2),
            ("/author/ada/", "author", 1, 1),
            ("/category/news/", "post", 3, 1),
        ]
