"""sitemap_versions.built_with: the settings from outside the database each provider's
stored documents were made with (issue 30)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27

The site URL in effect, the page size and the plugins' document settings come from the
ini file or the environment as well as the database. ``rendered_with`` now names them
with the templates, so a start with others rebuilds what they change; ``built_with``
keeps them as they read, for the log line that says what changed. Existing providers
have none: their ``rendered_with`` no longer matches, so they are rebuilt once.
"""

import sqlalchemy as sa
from alembic import op

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('sitemap_versions') as batch:
        batch.add_column(sa.Column('built_with', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('sitemap_versions') as batch:
        batch.drop_column('built_with')
