"""listed_urls and change_feed: the change feed's journal (issue 33, S-705)

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29

Every URL the sitemaps list has a row in ``listed_urls`` at the number of its last change,
and so has a URL they listed and no longer do (a tombstone); ``change_feed`` names the
feed and holds its last number (``sitemaps/journal.py``). A site migrated with sitemaps
already built starts its feed with every URL they list, numbered in path order; a
private site, with none. ``sitemap_entries`` gets an index on ``path``: whether a URL is
listed by any sitemap is what the journal asks of it.
"""

import secrets
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_sitemap_entries_path', 'sitemap_entries', ['path'])
    listed = op.create_table(
        'listed_urls',
        sa.Column('path', sa.String(length=2047), nullable=False),
        sa.Column('seq', sa.BigInteger(), nullable=False),
        sa.Column('added_seq', sa.BigInteger(), nullable=False),
        sa.Column('lastmod', sa.DateTime(timezone=True), nullable=True),
        sa.Column('changed_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('removed', sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint('path', name=op.f('pk_listed_urls')),
        sa.UniqueConstraint('seq', name=op.f('uq_listed_urls_seq')),
    )
    op.create_index(
        'ix_listed_urls_removed_changed_at', 'listed_urls', ['removed', 'changed_at']
    )
    feed = op.create_table(
        'change_feed',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('feed_id', sa.String(length=32), nullable=False),
        sa.Column('last_seq', sa.BigInteger(), nullable=False),
        sa.Column('horizon', sa.BigInteger(), nullable=False),
        sa.Column('private', sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_change_feed')),
    )
    bind = op.get_bind()
    private = bool(bind.scalar(sa.text("SELECT private FROM site_settings WHERE id = 1")))
    count = 0
    if not private:
        # The URLs listed now, each with its newest date, numbered in path order: the
        # column types of the tables (UTCDateTime's text on SQLite) are copied as stored.
        now = datetime.now(UTC)
        if bind.dialect.name == "sqlite":  # as UTCDateTime stores it there
            now = now.replace(tzinfo=None)
        bind.execute(
            sa.text(
                "INSERT INTO listed_urls (path, seq, added_seq, lastmod, changed_at, removed) "
                "SELECT path, ROW_NUMBER() OVER (ORDER BY path), ROW_NUMBER() OVER "
                "(ORDER BY path), MAX(lastmod), :now, :no FROM sitemap_entries GROUP BY path"
            ).bindparams(
                sa.bindparam("now", type_=sa.DateTime(timezone=True)),
                sa.bindparam("no", type_=sa.Boolean()),
            ),
            {"now": now, "no": False},
        )
        count = bind.scalar(sa.select(sa.func.count()).select_from(listed)) or 0
    op.bulk_insert(
        feed,
        [
            {
                "id": 1,
                "feed_id": secrets.token_hex(8),
                "last_seq": count,
                "horizon": 0,
                "private": private,
            }
        ],
    )


def downgrade() -> None:
    op.drop_table('change_feed')
    op.drop_index('ix_listed_urls_removed_changed_at', table_name='listed_urls')
    op.drop_table('listed_urls')
    op.drop_index('ix_sitemap_entries_path', table_name='sitemap_entries')
