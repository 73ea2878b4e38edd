"""wordpress_syncs: what sync-wordpress knows of each WordPress it follows (issue 35)

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29

One row per WordPress (its home URL, as imported_objects names it): the last ``modified``
read of each post type (the cursors a run starts from), what its last id listing of each
type found (``listings``), how the last run went, and until when a run holds it.
"""

import sqlalchemy as sa
from alembic import op

revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'wordpress_syncs',
        sa.Column('source', sa.String(length=2047), nullable=False),
        sa.Column('cursors', sa.JSON(), nullable=False),
        sa.Column('listings', sa.JSON(), nullable=False),
        sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('succeeded_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('counts', sa.JSON(), nullable=False),
        sa.Column('requests', sa.Integer(), nullable=False),
        sa.Column('error', sa.Text(), nullable=True),
        sa.Column('running_until', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('source', name=op.f('pk_wordpress_syncs')),
    )


def downgrade() -> None:
    op.drop_table('wordpress_syncs')
