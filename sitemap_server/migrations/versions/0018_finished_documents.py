"""finished_documents: each document's bytes, stored when a change made them (issue 34)

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29

Empty at first: the maintainer stores a document when a change touches it, and the read
path renders the others as before (``sitemaps/finished.py``).
"""

import sqlalchemy as sa
from alembic import op

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'finished_documents',
        sa.Column('key', sa.String(length=64), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('provider', sa.String(length=64), nullable=True),
        sa.Column('etag', sa.String(length=255), nullable=False),
        sa.Column('last_modified', sa.DateTime(timezone=True), nullable=True),
        sa.Column('size', sa.BigInteger(), nullable=False),
        sa.Column('gzipped', sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint('key', name=op.f('pk_finished_documents')),
    )
    op.create_index(
        op.f('ix_finished_documents_name'), 'finished_documents', ['name'], unique=False
    )
    op.create_index(
        op.f('ix_finished_documents_provider'), 'finished_documents', ['provider'], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f('ix_finished_documents_provider'), table_name='finished_documents')
    op.drop_index(op.f('ix_finished_documents_name'), table_name='finished_documents')
    op.drop_table('finished_documents')
