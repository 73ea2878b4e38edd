"""PostgreSQL: a change of sitemap_versions notifies 'sitemap_versions'

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26

Each serving process listens (``sitemaps/watch.py``) and reads the versions again when
told, instead of asking for them on every request. The notification is sent when the
transaction that changed the table commits, once per transaction. SQLite needs nothing:
a process asks it how many commits other connections have made (``PRAGMA data_version``).
"""

from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute(
        """
        CREATE OR REPLACE FUNCTION sitemap_versions_notify() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('sitemap_versions', '');
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE TRIGGER sitemap_versions_notify
        AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON sitemap_versions
        FOR EACH STATEMENT EXECUTE FUNCTION sitemap_versions_notify()
        """
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute('DROP TRIGGER sitemap_versions_notify ON sitemap_versions')
    op.execute('DROP FUNCTION sitemap_versions_notify()')
