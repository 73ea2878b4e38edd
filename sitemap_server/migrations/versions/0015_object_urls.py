"""object_urls: the URL of every post, term and author, one object per URL (issue 30)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27

One URL, one object (S-107) held by a primary key: each write that moves a URL keeps the
table (``content.object_urls``). Filled here from the content, with the same code (it
reads only columns every revision since 0013 has). Where two objects already have one URL,
the first (posts, then terms, then authors, in id order) keeps it and the others are named
in a warning: ``sitemap-server check`` reports them until one is changed.
"""

import logging

import sqlalchemy as sa
from alembic import op

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None

log = logging.getLogger('alembic.runtime.migration')


def upgrade() -> None:
    op.create_table(
        'object_urls',
        sa.Column('path', sa.String(length=2047), nullable=False),
        sa.Column('kind', sa.String(length=8), nullable=False),
        sa.Column('object_id', sa.Integer(), nullable=False),
        sa.Column('part', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('path', name=op.f('pk_object_urls')),
    )
    op.create_index('ix_object_urls_owner', 'object_urls', ['kind', 'object_id'])
    from sitemap_server.content.object_urls import rebuild

    for url in rebuild(op.get_bind()):
        log.warning(
            '%s is the URL of two objects; %s %s does not hold it: change its slug or path',
            url.path,
            url.kind,
            url.object_id,
        )


def downgrade() -> None:
    op.drop_index('ix_object_urls_owner', table_name='object_urls')
    op.drop_table('object_urls')
