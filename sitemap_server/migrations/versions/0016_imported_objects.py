"""imported_objects: where an imported post, term or author came from (issue 32)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27

A WordPress import records each object's source (the exported site's URL), its id there
and a digest of what was imported, so the same export imported again changes nothing and
a newer one changes what changed (``wordpress/importer.py``).
"""

import sqlalchemy as sa
from alembic import op

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'imported_objects',
        sa.Column('source', sa.String(length=2047), nullable=False),
        sa.Column('kind', sa.String(length=8), nullable=False),
        sa.Column('source_id', sa.String(length=255), nullable=False),
        sa.Column('object_id', sa.Integer(), nullable=False),
        sa.Column('guid', sa.String(length=2047), nullable=True),
        sa.Column('digest', sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint('source', 'kind', 'source_id', name=op.f('pk_imported_objects')),
    )
    op.create_index('ix_imported_objects_object', 'imported_objects', ['kind', 'object_id'])


def downgrade() -> None:
    op.drop_index('ix_imported_objects_object', table_name='imported_objects')
    op.drop_table('imported_objects')
