"""finished_documents.versions: a stored document serves every later version that did
not change it (issue 34)

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29

A row was named by the versions of the sitemaps it shows, so an edit on one page of a
sitemap left every other page's row unused (a new version of the sitemap). Now it
records them and serves every later version until a change replaces it. Rows stored
before are dropped (they are rendered again on request, or stored by the next change).
"""

import sqlalchemy as sa
from alembic import op

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(sa.text('DELETE FROM finished_documents'))
    op.add_column(
        'finished_documents',
        sa.Column('versions', sa.JSON(), server_default='{}', nullable=False),
    )


def downgrade() -> None:
    op.execute(sa.text('DELETE FROM finished_documents'))
    with op.batch_alter_table('finished_documents') as batch:
        batch.drop_column('versions')
