"""finished_documents.stored and finished_sequence: each process keeps the documents
stored since it last looked (issue 34)

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29

Every write of finished documents takes the next number from ``finished_sequence`` and
stores it in the rows it inserts; the row says too which write last deleted rows without
replacing them. A server process's versions watch reads the rows stored since it last
looked (``finished.Recent``), so the first request of a document a change stored is
answered from memory rather than by a query.
"""

import sqlalchemy as sa
from alembic import op

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        'finished_documents',
        sa.Column('stored', sa.BigInteger(), server_default='0', nullable=False),
    )
    op.create_index(
        op.f('ix_finished_documents_stored'), 'finished_documents', ['stored'], unique=False
    )
    sequence = op.create_table(
        'finished_sequence',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('stored', sa.BigInteger(), nullable=False),
        sa.Column('dropped', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_finished_sequence')),
    )
    op.bulk_insert(sequence, [{'id': 1, 'stored': 0, 'dropped': 0}])


def downgrade() -> None:
    op.drop_table('finished_sequence')
    op.drop_index(op.f('ix_finished_documents_stored'), table_name='finished_documents')
    with op.batch_alter_table('finished_documents') as batch:
        batch.drop_column('stored')
