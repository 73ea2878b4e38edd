"""scheduled posts and the byte limit: when each sitemap next changes by time alone,
and how many bytes each entry takes

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22

``sitemap_versions.due_at`` holds the moment a provider's entries next change with no
write (a scheduled post going live), and an index finds a type's next scheduled post.
``sitemap_entries.size`` bounds the bytes of each rendered entry, so pages can be cut
before they pass 50 MiB (S-310); rows stored before it count 0 until
``sitemap-server rebuild-sitemaps``.
"""

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('sitemap_versions', sa.Column('due_at', sa.DateTime(timezone=True), nullable=True))
    op.add_column('sitemap_entries', sa.Column('size', sa.Integer(), server_default='0', nullable=False))
    op.create_index(
        'ix_posts_type_status_published_at', 'posts', ['type', 'status', 'published_at']
    )


def downgrade() -> None:
    op.drop_index('ix_posts_type_status_published_at', table_name='posts')
    with op.batch_alter_table('sitemap_versions') as batch:
        batch.drop_column('due_at')
    with op.batch_alter_table('sitemap_entries') as batch:
        batch.drop_column('size')
