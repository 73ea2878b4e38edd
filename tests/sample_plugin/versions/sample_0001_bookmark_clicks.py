"""The sample plugin's own table: its own Alembic branch, applied by ``upgrade heads``.

Revision ID: sample_0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "sample_0001"
down_revision = None
branch_labels = ("sample_plugin",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sample_bookmark_clicks",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("path", sa.String(2047), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("sample_bookmark_clicks")
