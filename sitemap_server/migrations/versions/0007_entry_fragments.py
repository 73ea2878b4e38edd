"""sitemap_entries.xml, sitemap_versions.rendered_with: each entry rendered once

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26

The maintainer stores each entry's <url> element when it stores the entry, and a page is
served from them. Existing entries have none yet: their providers' ``rendered_with`` is
empty, so each is rebuilt whole (by the worker, or before the first request for it).
"""

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('sitemap_entries') as batch:
        batch.add_column(sa.Column('xml', sa.Text(), nullable=True))
    with op.batch_alter_table('sitemap_versions') as batch:
        batch.add_column(sa.Column('rendered_with', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('sitemap_versions') as batch:
        batch.drop_column('rendered_with')
    with op.batch_alter_table('sitemap_entries') as batch:
        batch.drop_column('xml')
