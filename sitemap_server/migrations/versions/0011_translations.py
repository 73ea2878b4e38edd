"""Translations: a language and a translation group for posts and terms (S-405)

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26

``posts.language``/``translation_group`` and the same on ``terms``: the listed members of a
group name each other in their ``<url>`` (hreflang), one member per language and post type
(or taxonomy). ``sitemap_entries.alternates`` keeps those links with the entry, so a change
of them alone is a change of the entry. ``site_settings.languages`` names the languages in
use and ``x_default_language`` the one whose member is a group's x-default. A migrated
site has no translations: nothing it lists changes.
"""

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('posts') as batch:
        batch.add_column(sa.Column('language', sa.String(length=35), nullable=True))
        batch.add_column(sa.Column('translation_group', sa.String(length=64), nullable=True))
        batch.create_unique_constraint(
            'uq_posts_type_translation_group', ['type', 'translation_group', 'language']
        )
    with op.batch_alter_table('terms') as batch:
        batch.add_column(sa.Column('language', sa.String(length=35), nullable=True))
        batch.add_column(sa.Column('translation_group', sa.String(length=64), nullable=True))
        batch.create_unique_constraint(
            'uq_terms_taxonomy_translation_group', ['taxonomy', 'translation_group', 'language']
        )
    with op.batch_alter_table('sitemap_entries') as batch:
        batch.add_column(sa.Column('alternates', sa.JSON(), nullable=True))
    with op.batch_alter_table('site_settings') as batch:
        batch.add_column(
            sa.Column('languages', sa.JSON(), nullable=False, server_default=sa.text("'[]'"))
        )
        batch.add_column(sa.Column('x_default_language', sa.String(length=35), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('site_settings') as batch:
        batch.drop_column('x_default_language')
        batch.drop_column('languages')
    with op.batch_alter_table('sitemap_entries') as batch:
        batch.drop_column('alternates')
    with op.batch_alter_table('terms') as batch:
        batch.drop_constraint('uq_terms_taxonomy_translation_group', type_='unique')
        batch.drop_column('translation_group')
        batch.drop_column('language')
    with op.batch_alter_table('posts') as batch:
        batch.drop_constraint('uq_posts_type_translation_group', type_='unique')
        batch.drop_column('translation_group')
        batch.drop_column('language')
