"""news: entries keyed for post ids up to 2^31 - 1, and dates past 2106

Revision ID: news_0003
Revises: news_0002

A news entry's key orders the news newest first and names its post:
``(2^32 - seconds) * 10^9 + post id`` could not tell apart post ids of 10^9 and more (the
API takes ids up to 2^31 - 1) and overflowed 64 bits for dates past 2106. The key is now
``(2^32 - seconds) * 2^31 + post id`` with the seconds held in [1, 2^32). The stored news
sitemap is forgotten, so the engine builds it again, whole, with the new keys before it
is next served (as it does for a provider never built).
"""

import sqlalchemy as sa
from alembic import op

revision = "news_0003"
down_revision = "news_0002"
branch_labels = None
depends_on = None

TABLES = ("sitemap_entries", "sitemap_pages", "sitemap_versions")


def _forget_news() -> None:
    for name in TABLES:
        table = sa.table(name, sa.column("provider", sa.String()))
        op.execute(table.delete().where(table.c.provider == "news"))


def upgrade() -> None:
    _forget_news()


def downgrade() -> None:
    _forget_news()
