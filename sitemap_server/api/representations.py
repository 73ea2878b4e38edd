"""JSON shapes of stored objects, as the OpenAPI document describes them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import object_session

from ..content.links import Links
from ..models import Author, Post, PostType, SiteSettings, Taxonomy, Term
from ..models.site import excluded_post_ids


def w3c(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def post_type_dict(post_type: PostType) -> dict[str, Any]:
    return {
        "name": post_type.name,
        "label": post_type.label,
        "public": post_type.public,
        "noindex": post_type.noindex,
        "hierarchical": post_type.hierarchical,
        "archive_path": post_type.archive_path,
        "permalink_pattern": post_type.permalink_pattern,
        "builtin": post_type.builtin,
    }


def taxonomy_dict(taxonomy: Taxonomy) -> dict[str, Any]:
    return {
        "name": taxonomy.name,
        "label": taxonomy.label,
        "public": taxonomy.public,
        "noindex": taxonomy.noindex,
        "hierarchical": taxonomy.hierarchical,
        "archive_base": taxonomy.archive_base,
        "builtin": taxonomy.builtin,
    }


def author_dict(author: Author, links: Links) -> dict[str, Any]:
    return {
        "id": author.id,
        "slug": author.slug,
        "name": author.name,
        "noindex": author.noindex,
        "url": links.author(author),
    }


def term_dict(term: Term, links: Links) -> dict[str, Any]:
    return {
        "id": term.id,
        "taxonomy": term.taxonomy,
        "slug": term.slug,
        "name": term.name,
        "parent": term.parent_id,
        "description": term.description,
        "noindex": term.noindex,
        "canonical": term.canonical,
        "language": term.language,
        "translation_group": term.translation_group,
        "url": links.term(term),
    }


def post_dict(post: Post, links: Links) -> dict[str, Any]:
    return {
        "id": post.id,
        "type": post.type,
        "title": post.title,
        "slug": post.slug,
        "status": post.status,
        "password": post.password,
        "author": post.author_id,
        "parent": post.parent_id,
        "content": post.content,
        "featured_image": post.featured_image,
        "images": list(post.images or []),
        "published_at": w3c(post.published_at),
        "modified_at": w3c(post.modified_at),
        "robots": post.robots,
        "canonical": post.canonical,
        "exclude_from_sitemap": post.exclude_from_sitemap,
        "parts": post.parts,
        "path": post.path,
        "language": post.language,
        "translation_group": post.translation_group,
        "terms": [t.id for t in post.terms],
        "permalink": links.post(post),
    }


def settings_dict(settings: SiteSettings, site_url: str) -> dict[str, Any]:
    session = object_session(settings)
    return {
        "site_url": site_url,
        "title": settings.title,
        "language": settings.language,
        "timezone": settings.timezone,
        "private": settings.private,
        "entries_per_page": settings.entries_per_page,
        "front_page": settings.front_page,
        "front_page_id": settings.front_page_id,
        "posts_page_id": settings.posts_page_id,
        "allowed_image_hosts": list(settings.allowed_image_hosts or []),
        "author_sitemap": settings.author_sitemap,
        "languages": list(settings.languages or []),
        "x_default_language": settings.x_default_language,
        # Stored beside the settings row (models/site.py: ExcludedPost), read in its session.
        "excluded_post_ids": excluded_post_ids(session) if session is not None else [],
    }
