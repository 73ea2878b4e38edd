"""Ids are never given twice, and no modification is dated in the future (issue 30)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27

SQLite gave a new row the largest id in use plus one, so deleting the newest post and
creating another gave the new one the deleted one's id (and whatever still named it).
``posts``, ``terms`` and ``authors`` become AUTOINCREMENT tables there: ids continue after
the largest ever given (``sqlite_sequence``), as PostgreSQL's sequences always did.

A post modified "in the future" (written before such dates were refused) put that date
in its sitemap's ``lastmod``: it is dated now instead, and every sitemap is rebuilt once
if there was one.
"""

import sqlalchemy as sa
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None

TABLES = ('authors', 'terms', 'posts')


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == 'sqlite':
        for table in TABLES:
            with op.batch_alter_table(
                table, recreate='always', table_kwargs={'sqlite_autoincrement': True}
            ):
                pass
    now = sa.func.current_timestamp()
    posts = sa.table('posts', sa.column('modified_at', sa.DateTime(timezone=True)))
    future = bind.execute(
        sa.select(sa.func.count()).select_from(posts).where(posts.c.modified_at > now)
    ).scalar()
    if future:
        op.execute(posts.update().where(posts.c.modified_at > now).values(modified_at=now))
        changes = sa.table(
            'sitemap_changes',
            sa.column('recorded_at', sa.DateTime(timezone=True)),
            sa.column('kind', sa.String),
        )
        op.execute(changes.insert().values(recorded_at=now, kind='everything'))


def downgrade() -> None:
    if op.get_bind().dialect.name == 'sqlite':
        for table in TABLES:
            with op.batch_alter_table(
                table, recreate='always', table_kwargs={'sqlite_autoincrement': False}
            ):
                pass
