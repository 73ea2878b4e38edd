"""sitemap_changes.provider: a change that asks for one provider's sitemap to be rebuilt

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26

A plugin whose own settings changed (the news plugin's publication name) records
``kind = "provider"`` with the provider's name, and the maintainer rebuilds that sitemap
alone, instead of a site-wide change that gives every sitemap a new version.
"""

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('sitemap_changes') as batch:
        batch.add_column(sa.Column('provider', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('sitemap_changes') as batch:
        batch.drop_column('provider')
