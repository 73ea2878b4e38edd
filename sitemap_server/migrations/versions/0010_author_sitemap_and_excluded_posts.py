"""site_settings.author_sitemap and excluded_posts: two of Yoast's site settings

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

``author_sitemap`` (on by default, as before) turns the author sitemap off as a whole;
``excluded_posts`` holds the ids of the posts never listed (``excluded_post_ids`` in the
API; no foreign key: ids of posts that do not exist are kept). Neither changes what a
migrated site lists, so the stored sitemaps stay as they are.
"""

import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('site_settings') as batch:
        batch.add_column(
            sa.Column('author_sitemap', sa.Boolean(), nullable=False, server_default=sa.true())
        )
    op.create_table('excluded_posts',
    sa.Column('post_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint('post_id', name=op.f('pk_excluded_posts')),
    )


def downgrade() -> None:
    op.drop_table('excluded_posts')
    with op.batch_alter_table('site_settings') as batch:
        batch.drop_column('author_sitemap')
