"""Which content is listed in the sitemaps (S-201 … S-205): the one place that decides.

The rules are SQL criteria, so counts and pages are exact, plus the two checks that need
the URL itself (a canonical must equal the permalink; S-208's limits on a ``loc``), and
whatever plugins add through ``sitemap_exclusion_criteria`` and ``sitemap_exclude``.
Every provider, core or plugin, lists posts, authors and terms through these functions.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import pluggy
from sqlalchemy import ColumnElement, and_, or_

from ..models import Author, Post, PostStatus, PostType, Robots, Taxonomy, Term
from ..models.content import MAX_URL_LENGTH

log = logging.getLogger(__name__)


def _plugin_criteria(plugins: pluggy.PluginManager, kind: str) -> list[ColumnElement[bool]]:
    return [c for result in plugins.hook.sitemap_exclusion_criteria(kind=kind) for c in result]


def post_criteria(
    plugins: pluggy.PluginManager, post_type: PostType, now: datetime
) -> ColumnElement[bool]:
    """S-201: the posts of ``post_type`` that may be listed (before the URL checks)."""
    # A noindexed type lists only the posts explicitly set to "index".
    robots = Post.robots == Robots.INDEX if post_type.noindex else Post.robots != Robots.NOINDEX
    return and_(
        Post.type == post_type.name,
        Post.status == PostStatus.PUBLISH,
        or_(Post.password.is_(None), Post.password == ""),
        Post.exclude_from_sitemap.is_(False),
        robots,
        Post.published_at <= now,
        *_plugin_criteria(plugins, "post"),
    )


def type_has_sitemap(post_type: PostType) -> bool:
    """S-101: non-public types get no sitemap. A noindexed type has one only while one of
    its posts is explicitly set to "index" (S-201); it answers 404 otherwise."""
    return post_type.public


def taxonomy_is_listed(taxonomy: Taxonomy) -> bool:
    return taxonomy.public and not taxonomy.noindex


def author_criteria(plugins: pluggy.PluginManager) -> ColumnElement[bool]:
    """S-202 (the part about the author; the listed-post part is the provider's join)."""
    return and_(Author.noindex.is_(False), *_plugin_criteria(plugins, "author"))


def term_criteria(plugins: pluggy.PluginManager) -> ColumnElement[bool]:
    """S-203 (the term's own flags; the listed-post part is the provider's join)."""
    return and_(Term.noindex.is_(False), *_plugin_criteria(plugins, "term"))


def canonical_allows(canonical: str | None, url: str) -> bool:
    """A manual canonical lets a URL be listed only when it is the URL itself."""
    return not canonical or canonical == url


def url_problem(url: str) -> str | None:
    """S-208: why ``url`` cannot be a ``<loc>``, or None."""
    if len(url) > MAX_URL_LENGTH:
        return f"longer than {MAX_URL_LENGTH} characters"
    if "#" in url:
        return "has a fragment"
    return None


def excluded_by_plugins(plugins: pluggy.PluginManager, kind: str, item: Any) -> bool:
    """The slow path: a plugin's ``sitemap_exclude`` said so."""
    return bool(plugins.hook.sitemap_exclude(kind=kind, item=item))
