"""videos: the video plugin's table

Revision ID: video_0001
Revises:

The plugin's own stream (version table ``alembic_version_video``), applied after the
core's migrations, so ``posts`` exists.
"""

import sqlalchemy as sa
from alembic import op

revision = "video_0001"
down_revision = None
branch_labels = ("sitemap_server_video",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "videos",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("post_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=10), nullable=False),
        sa.Column("embed_key", sa.String(length=2047), nullable=True),
        sa.Column("title", sa.String(length=1000), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("caption", sa.Text(), nullable=True),
        sa.Column("host_description", sa.Text(), nullable=True),
        sa.Column("content_url", sa.String(length=2047), nullable=True),
        sa.Column("player_url", sa.String(length=2047), nullable=True),
        sa.Column("thumbnail_url", sa.String(length=2047), nullable=True),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("duration", sa.Integer(), nullable=True),
        sa.Column("view_count", sa.BigInteger(), nullable=True),
        sa.Column("width", sa.Integer(), nullable=True),
        sa.Column("height", sa.Integer(), nullable=True),
        sa.Column("family_friendly", sa.Boolean(), nullable=False),
        sa.Column("uploader", sa.String(length=255), nullable=True),
        sa.Column("uploader_url", sa.String(length=2047), nullable=True),
        sa.Column("page_url", sa.String(length=2047), nullable=True),
        sa.Column("modified_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("fetch_error", sa.String(length=500), nullable=True),
        sa.ForeignKeyConstraint(
            ["post_id"], ["posts.id"], name=op.f("fk_videos_post_id_posts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_videos")),
    )
    op.create_index("ix_videos_post_id_id", "videos", ["post_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_videos_post_id_id", table_name="videos")
    op.drop_table("videos")
