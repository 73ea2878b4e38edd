"""sitemap entries, pages and versions

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

The read path's tables: the listed entries of every provider, their pages, and the
content versions caches derive from (S-301, S-304, S-803).
"""

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('sitemap_entries',
    sa.Column('provider', sa.String(length=64), nullable=False),
    sa.Column('key', sa.BigInteger(), nullable=False),
    sa.Column('part', sa.Integer(), nullable=False),
    sa.Column('path', sa.String(length=2047), nullable=False),
    sa.Column('lastmod', sa.DateTime(timezone=True), nullable=True),
    sa.Column('images', sa.JSON(), nullable=False),
    sa.Column('extra', sa.JSON(), nullable=True),
    sa.PrimaryKeyConstraint('provider', 'key', 'part', name=op.f('pk_sitemap_entries')),
    sqlite_with_rowid=False,
    )
    op.create_index('ix_sitemap_entries_provider_lastmod', 'sitemap_entries', ['provider', 'lastmod'])
    op.create_table('sitemap_pages',
    sa.Column('provider', sa.String(length=64), nullable=False),
    sa.Column('page', sa.Integer(), nullable=False),
    sa.Column('first_key', sa.BigInteger(), nullable=False),
    sa.Column('first_part', sa.Integer(), nullable=False),
    sa.Column('last_key', sa.BigInteger(), nullable=False),
    sa.Column('last_part', sa.Integer(), nullable=False),
    sa.Column('entries', sa.Integer(), nullable=False),
    sa.Column('lastmod', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('provider', 'page', name=op.f('pk_sitemap_pages')),
    )
    op.create_table('sitemap_versions',
    sa.Column('provider', sa.String(length=64), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('changed_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('provider', name=op.f('pk_sitemap_versions')),
    )


def downgrade() -> None:
    op.drop_table('sitemap_versions')
    op.drop_table('sitemap_pages')
    op.drop_index('ix_sitemap_entries_provider_lastmod', table_name='sitemap_entries')
    op.drop_table('sitemap_entries')
