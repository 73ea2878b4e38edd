"""sitemap_pages.xml: each index entry rendered once, when its page changes

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26

The maintainer stores each page's <sitemap> element (the index's entry for it) when it
cuts the page or moves its date, and the index is served from them. Existing pages have
none yet: the render key now names the index entry's template too, so every provider is
rebuilt whole (by the worker, or before the first request for it).
"""

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('sitemap_pages') as batch:
        batch.add_column(sa.Column('xml', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('sitemap_pages') as batch:
        batch.drop_column('xml')
