"""news: the news plugin's settings and the news fields of posts and terms

Revision ID: news_0001
Revises:

The plugin's own stream (version table ``alembic_version_news``), applied after the
core's migrations, so ``posts`` and ``terms`` exist.
"""

import sqlalchemy as sa
from alembic import op

revision = "news_0001"
down_revision = None
branch_labels = ("sitemap_server_news",)
depends_on = None


def upgrade() -> None:
    settings = op.create_table(
        "news_settings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("post_types", sa.JSON(), nullable=False),
        sa.Column("publication_name", sa.String(length=255), nullable=True),
        sa.Column("language", sa.String(length=5), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_news_settings")),
    )
    op.bulk_insert(settings, [{"id": 1, "post_types": ["post"]}])
    op.create_table(
        "news_posts",
        sa.Column("post_id", sa.Integer(), nullable=False),
        sa.Column("language", sa.String(length=5), nullable=True),
        sa.Column("not_news", sa.Boolean(), nullable=False),
        sa.Column("keywords", sa.String(length=1000), nullable=True),
        sa.Column("genres", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["post_id"], ["posts.id"], name=op.f("fk_news_posts_post_id_posts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("post_id", name=op.f("pk_news_posts")),
    )
    op.create_table(
        "news_terms",
        sa.Column("term_id", sa.Integer(), nullable=False),
        sa.Column("exclude", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["term_id"], ["terms.id"], name=op.f("fk_news_terms_term_id_terms"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("term_id", name=op.f("pk_news_terms")),
    )


def downgrade() -> None:
    op.drop_table("news_terms")
    op.drop_table("news_posts")
    op.drop_table("news_settings")
