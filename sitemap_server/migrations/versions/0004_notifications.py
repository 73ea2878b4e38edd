"""notifications: the outbox of changed URLs, what is sent to search engines, each try

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22

``notification_changes`` is written in the transaction of each change (S-602); the worker
turns a burst of them into ``notifications`` (pings, IndexNow batches) and logs each try
in ``notification_attempts``.
"""

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('notification_changes',
    sa.Column('id', BigId, autoincrement=True, nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('sitemap', sa.String(length=64), nullable=False),
    sa.Column('url', sa.Text(), nullable=True),
    sa.Column('change', sa.String(length=16), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_notification_changes')),
    )
    op.create_table('notifications',
    sa.Column('id', BigId, autoincrement=True, nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('channel', sa.String(length=16), nullable=False),
    sa.Column('url', sa.Text(), nullable=False),
    sa.Column('payload', sa.JSON(), nullable=True),
    sa.Column('changes', sa.Integer(), nullable=False),
    sa.Column('sitemaps', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('due_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('claimed_by', sa.String(length=128), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('http_status', sa.Integer(), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_notifications')),
    )
    op.create_index('ix_notifications_status_due_at', 'notifications', ['status', 'due_at'])
    op.create_table('notification_attempts',
    sa.Column('id', BigId, autoincrement=True, nullable=False),
    sa.Column('notification_id', BigId, nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('outcome', sa.String(length=16), nullable=False),
    sa.Column('http_status', sa.Integer(), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('duration_ms', sa.Integer(), nullable=False),
    sa.Column('worker', sa.String(length=128), nullable=True),
    sa.ForeignKeyConstraint(['notification_id'], ['notifications.id'], name=op.f('fk_notification_attempts_notification_id_notifications'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_notification_attempts')),
    )
    op.create_index(op.f('ix_notification_attempts_notification_id'), 'notification_attempts', ['notification_id'])
    op.create_index(op.f('ix_notification_attempts_at'), 'notification_attempts', ['at'])


def downgrade() -> None:
    op.drop_table('notification_attempts')
    op.drop_index('ix_notifications_status_due_at', table_name='notifications')
    op.drop_table('notifications')
    op.drop_table('notification_changes')
