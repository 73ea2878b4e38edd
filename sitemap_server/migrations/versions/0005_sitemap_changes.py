"""sitemap_changes: the change log that writes record and the maintainer applies

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25

A write no longer refreshes the sitemaps in its own transaction: it inserts what it
changed here, and the maintainer applies the rows in batches (docs/architecture.md).
"""

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('sitemap_changes',
    sa.Column('id', BigId, autoincrement=True, nullable=False),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('object_id', sa.BigInteger(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sitemap_changes')),
    sqlite_autoincrement=True,
    )


def downgrade() -> None:
    op.drop_table('sitemap_changes')
