"""news: languages are BCP 47 tags as given (pt-BR, zh-Hant, sr-Latn-RS), up to 35 characters

Revision ID: news_0002
Revises: news_0001

The news settings' language and each post's were ISO 639 codes (``String(5)``); they now
hold the tag the site owner gives, as long as the core's site language, and the sitemap
reduces it to what news:language takes. Stored codes are valid tags: nothing to rewrite.
"""

import sqlalchemy as sa
from alembic import op

from sitemap_server_news.provider import news_language

revision = "news_0002"
down_revision = "news_0001"
branch_labels = None
depends_on = None

TABLES = ("news_settings", "news_posts")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.alter_column(
                "language",
                existing_type=sa.String(length=5),
                type_=sa.String(length=35),
                existing_nullable=True,
            )


def downgrade() -> None:
    # A tag longer than the old column is written as the sitemap shows it (zh-Hant-TW:
    # zh-tw, sr-Latn-RS: sr), so the news sitemap says the same after the downgrade.
    connection = op.get_bind()
    for name in TABLES:
        table = sa.table(name, sa.column("language", sa.String()))
        long_tags = sa.select(table.c.language).where(sa.func.length(table.c.language) > 5)
        for tag in set(connection.scalars(long_tags.distinct())):
            connection.execute(
                table.update().where(table.c.language == tag).values(language=news_language(tag))
            )
        with op.batch_alter_table(name) as batch:
            batch.alter_column(
                "language",
                existing_type=sa.String(length=35),
                type_=sa.String(length=5),
                existing_nullable=True,
            )
