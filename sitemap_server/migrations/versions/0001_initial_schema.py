"""initial schema

Revision ID: 0001
Revises: 
Create Date: 2026-11-22

The content model (SPEC S-101 … S-106), API tokens, and the built-in post types
(post, page), taxonomies (category, post_tag) and the single site-settings row.
"""

import sqlalchemy as sa
from alembic import op


revision = '0001'
down_revision = None
branch_labels = ('sitemap_server',)
depends_on = None


def upgrade() -> None:
    op.create_table('api_tokens',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_tokens')),
    sa.UniqueConstraint('name', name=op.f('uq_api_tokens_name')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_tokens_token_hash'))
    )
    op.create_table('authors',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('slug', sa.String(length=200), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('noindex', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_authors')),
    sa.UniqueConstraint('slug', name=op.f('uq_authors_slug'))
    )
    op.create_table('post_types',
    sa.Column('name', sa.String(length=20), nullable=False),
    sa.Column('label', sa.String(length=200), nullable=False),
    sa.Column('public', sa.Boolean(), nullable=False),
    sa.Column('noindex', sa.Boolean(), nullable=False),
    sa.Column('hierarchical', sa.Boolean(), nullable=False),
    sa.Column('archive_path', sa.String(length=2047), nullable=True),
    sa.Column('permalink_pattern', sa.String(length=255), nullable=False),
    sa.Column('builtin', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_post_types'))
    )
    op.create_table('taxonomies',
    sa.Column('name', sa.String(length=32), nullable=False),
    sa.Column('label', sa.String(length=200), nullable=False),
    sa.Column('public', sa.Boolean(), nullable=False),
    sa.Column('noindex', sa.Boolean(), nullable=False),
    sa.Column('hierarchical', sa.Boolean(), nullable=False),
    sa.Column('archive_base', sa.String(length=200), nullable=False),
    sa.Column('builtin', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_taxonomies'))
    )
    op.create_table('posts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('type', sa.String(length=20), nullable=False),
    sa.Column('title', sa.String(length=1000), nullable=False),
    sa.Column('slug', sa.String(length=200), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('password', sa.String(length=255), nullable=True),
    sa.Column('author_id', sa.Integer(), nullable=True),
    sa.Column('parent_id', sa.Integer(), nullable=True),
    sa.Column('content', sa.Text(), nullable=False),
    sa.Column('featured_image', sa.String(length=2047), nullable=True),
    sa.Column('images', sa.JSON(), nullable=False),
    sa.Column('published_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('modified_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('robots', sa.String(length=8), nullable=False),
    sa.Column('canonical', sa.String(length=2047), nullable=True),
    sa.Column('exclude_from_sitemap', sa.Boolean(), nullable=False),
    sa.Column('parts', sa.Integer(), nullable=False),
    sa.Column('path', sa.String(length=2047), nullable=True),
    sa.CheckConstraint("robots IN ('default', 'noindex', 'index')", name=op.f('ck_posts_robots')),
    sa.CheckConstraint("status IN ('publish', 'draft', 'pending', 'private', 'future', 'trash')", name=op.f('ck_posts_status')),
    sa.CheckConstraint('parts >= 1', name=op.f('ck_posts_parts')),
    sa.ForeignKeyConstraint(['author_id'], ['authors.id'], name=op.f('fk_posts_author_id_authors')),
    sa.ForeignKeyConstraint(['parent_id'], ['posts.id'], name=op.f('fk_posts_parent_id_posts')),
    sa.ForeignKeyConstraint(['type'], ['post_types.name'], name=op.f('fk_posts_type_post_types')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_posts')),
    sa.UniqueConstraint('type', 'slug', name='uq_posts_type_slug')
    )
    op.create_index(op.f('ix_posts_author_id'), 'posts', ['author_id'])
    op.create_index(op.f('ix_posts_modified_at'), 'posts', ['modified_at'])
    op.create_index(op.f('ix_posts_parent_id'), 'posts', ['parent_id'])
    op.create_index(op.f('ix_posts_type_status_id'), 'posts', ['type', 'status', 'id'])

    op.create_table('terms',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('taxonomy', sa.String(length=32), nullable=False),
    sa.Column('slug', sa.String(length=200), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('parent_id', sa.Integer(), nullable=True),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('noindex', sa.Boolean(), nullable=False),
    sa.Column('canonical', sa.String(length=2047), nullable=True),
    sa.ForeignKeyConstraint(['parent_id'], ['terms.id'], name=op.f('fk_terms_parent_id_terms')),
    sa.ForeignKeyConstraint(['taxonomy'], ['taxonomies.name'], name=op.f('fk_terms_taxonomy_taxonomies')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_terms')),
    sa.UniqueConstraint('taxonomy', 'slug', name='uq_terms_taxonomy_slug')
    )
    op.create_index(op.f('ix_terms_parent_id'), 'terms', ['parent_id'])

    op.create_table('post_terms',
    sa.Column('post_id', sa.Integer(), nullable=False),
    sa.Column('term_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['post_id'], ['posts.id'], name=op.f('fk_post_terms_post_id_posts'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['term_id'], ['terms.id'], name=op.f('fk_post_terms_term_id_terms'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('post_id', 'term_id', name=op.f('pk_post_terms'))
    )
    op.create_index(op.f('ix_post_terms_term_id_post_id'), 'post_terms', ['term_id', 'post_id'])

    op.create_table('site_settings',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('site_url', sa.String(length=2047), nullable=True),
    sa.Column('title', sa.String(length=255), nullable=False),
    sa.Column('language', sa.String(length=35), nullable=False),
    sa.Column('timezone', sa.String(length=64), nullable=False),
    sa.Column('private', sa.Boolean(), nullable=False),
    sa.Column('entries_per_page', sa.Integer(), nullable=False),
    sa.Column('front_page', sa.String(length=8), nullable=False),
    sa.Column('front_page_id', sa.Integer(), nullable=True),
    sa.Column('posts_page_id', sa.Integer(), nullable=True),
    sa.Column('allowed_image_hosts', sa.JSON(), nullable=False),
    sa.CheckConstraint("front_page IN ('posts', 'page')", name=op.f('ck_site_settings_front_page')),
    sa.CheckConstraint('entries_per_page BETWEEN 1 AND 50000', name=op.f('ck_site_settings_entries_per_page')),
    sa.CheckConstraint('id = 1', name=op.f('ck_site_settings_single_row')),
    sa.ForeignKeyConstraint(['front_page_id'], ['posts.id'], name=op.f('fk_site_settings_front_page_id_posts'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['posts_page_id'], ['posts.id'], name=op.f('fk_site_settings_posts_page_id_posts'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_site_settings'))
    )

    post_types = sa.table(
        'post_types', sa.column('name'), sa.column('label'), sa.column('public'),
        sa.column('noindex'), sa.column('hierarchical'), sa.column('archive_path'),
        sa.column('permalink_pattern'), sa.column('builtin'),
    )
    op.bulk_insert(post_types, [
        {'name': 'post', 'label': 'Posts', 'public': True, 'noindex': False,
         'hierarchical': False, 'archive_path': None,
         'permalink_pattern': '/{year}/{month}/{slug}/', 'builtin': True},
        {'name': 'page', 'label': 'Pages', 'public': True, 'noindex': False,
         'hierarchical': True, 'archive_path': None,
         'permalink_pattern': '/{path}/', 'builtin': True},
    ])
    taxonomies = sa.table(
        'taxonomies', sa.column('name'), sa.column('label'), sa.column('public'),
        sa.column('noindex'), sa.column('hierarchical'), sa.column('archive_base'),
        sa.column('builtin'),
    )
    op.bulk_insert(taxonomies, [
        {'name': 'category', 'label': 'Categories', 'public': True, 'noindex': False,
         'hierarchical': True, 'archive_base': 'category', 'builtin': True},
        {'name': 'post_tag', 'label': 'Tags', 'public': True, 'noindex': False,
         'hierarchical': False, 'archive_base': 'tag', 'builtin': True},
    ])
    site_settings = sa.table(
        'site_settings', sa.column('id'), sa.column('site_url'), sa.column('title'),
        sa.column('language'), sa.column('timezone'), sa.column('private'),
        sa.column('entries_per_page'), sa.column('front_page'),
        sa.column('allowed_image_hosts', sa.JSON),
    )
    op.bulk_insert(site_settings, [
        {'id': 1, 'site_url': None, 'title': 'My Site', 'language': 'en', 'timezone': 'UTC',
         'private': False, 'entries_per_page': 1000, 'front_page': 'posts',
         'allowed_image_hosts': []},
    ])


def downgrade() -> None:
    op.drop_table('site_settings')
    op.drop_index(op.f('ix_post_terms_term_id_post_id'), table_name='post_terms')

    op.drop_table('post_terms')
    op.drop_index(op.f('ix_terms_parent_id'), table_name='terms')

    op.drop_table('terms')
    op.drop_index(op.f('ix_posts_type_status_id'), table_name='posts')
    op.drop_index(op.f('ix_posts_parent_id'), table_name='posts')
    op.drop_index(op.f('ix_posts_modified_at'), table_name='posts')
    op.drop_index(op.f('ix_posts_author_id'), table_name='posts')

    op.drop_table('posts')
    op.drop_table('taxonomies')
    op.drop_table('post_types')
    op.drop_table('authors')
    op.drop_table('api_tokens')
