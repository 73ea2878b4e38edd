"""A post's slug is unique among its siblings, as in WordPress (issue 30)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27

``/about/team/`` and ``/services/team/`` are two pages with the slug ``team``: the unique
constraint on (type, slug) becomes unique indexes on (type, parent, slug) and, for the
posts at the top, on (type, slug) where there is no parent. A type that is not hierarchical has no parents, so its slugs stay
unique in it. Every existing site satisfies the new rule (it is weaker).

Going back fails while two posts of one type share a slug.
"""

import sqlalchemy as sa
from alembic import op

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


TOP = sa.text('parent_id IS NULL')


# SQLite's batch mode copies the table from what it reflects, which does not include
# AUTOINCREMENT (0012): said again, or ids would be given twice once more.
KEEP = {'sqlite_autoincrement': True}


def upgrade() -> None:
    with op.batch_alter_table('posts', table_kwargs=KEEP) as batch:
        batch.drop_constraint('uq_posts_type_slug', type_='unique')
    op.create_index(
        'uq_posts_type_parent_slug', 'posts', ['type', 'parent_id', 'slug'], unique=True
    )
    op.create_index(
        'uq_posts_type_slug_top',
        'posts',
        ['type', 'slug'],
        unique=True,
        sqlite_where=TOP,
        postgresql_where=TOP,
    )


def downgrade() -> None:
    op.drop_index('uq_posts_type_slug_top', table_name='posts')
    op.drop_index('uq_posts_type_parent_slug', table_name='posts')
    with op.batch_alter_table('posts', table_kwargs=KEEP) as batch:
        batch.create_unique_constraint('uq_posts_type_slug', ['type', 'slug'])
