"""Site settings (S-106)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from ..batches import chunks
from ..content import object_urls, permalinks
from ..errors import Invalid
from ..models import Post, PostType, SiteSettings, post_terms
from ..models.site import MAX_EXCLUDED_POSTS, ExcludedPost, excluded_post_ids, get_settings
from .common import apply, flush, get_or_404, record

# Ids are 32-bit integers (the API's Id); a larger one names no post.
MAX_ID = 2**31 - 1

FIELDS = (
    "site_url",
    "title",
    "language",
    "timezone",
    "private",
    "entries_per_page",
    "front_page",
    "front_page_id",
    "posts_page_id",
    "allowed_image_hosts",
    "author_sitemap",
    "languages",
    "x_default_language",
)


def _check_page(session: Session, field: str, post_id: int | None) -> None:
    if post_id is None:
        return
    post = session.get(Post, post_id)
    if post is None:
        raise Invalid.field(field, f"unknown post {post_id}")
    if post.type != "page":
        raise Invalid.field(field, f"post {post_id} is a {post.type!r}, not a page")


def update_settings(session: Session, data: dict[str, Any]) -> SiteSettings:
    if "excluded_post_ids" in data:
        # Two changes of the list at once run one after the other: each reads what the
        # other stored, instead of both inserting the same id.
        get_or_404(session, SiteSettings, 1, "settings", for_update=True)
    settings = get_settings(session)
    for field in ("front_page_id", "posts_page_id"):
        if field in data:
            _check_page(session, field, data[field])
    if data.get("site_url"):
        data = {**data, "site_url": data["site_url"].rstrip("/")}
    if "allowed_image_hosts" in data:
        # Host names ignore case: "CDN.example.com" and "cdn.example.com" are one host.
        hosts = dict.fromkeys(h.lower() for h in data["allowed_image_hosts"])
        data = {**data, "allowed_image_hosts": list(hosts)}
    excluded = _excluded_ids(data["excluded_post_ids"]) if "excluded_post_ids" in data else None
    apply(settings, data, FIELDS)
    if settings.front_page_id is not None and settings.front_page_id == settings.posts_page_id:
        raise Invalid.field("posts_page_id", "the posts page cannot also be the front page")
    languages = list(settings.languages or [])
    if settings.x_default_language and languages and settings.x_default_language not in languages:
        raise Invalid.field(
            "x_default_language",
            f"{settings.x_default_language!r} is not one of the site's languages "
            f"({', '.join(languages)})",
        )
    altered = _altered_fields(session, settings)
    flush(session, "settings")
    if excluded is not None:
        _exclude_posts(session, excluded)
    moved = "timezone" in altered and _move_dated_permalinks(session)
    # Search engines hear of the whole site again when it stops being private or moves
    # (entries hold paths, so a new site URL changes none of them), or when its dated
    # permalinks move.
    whole_site = not settings.private and (bool({"private", "site_url"} & altered) or moved)
    if altered & ENTRY_FIELDS:
        record(session, everything=True, whole_site=whole_site)
    elif altered:
        record(session, site=True, whole_site=whole_site)  # privacy, title: no entry moves
    return settings


def _move_dated_permalinks(session: Session) -> bool:
    """After the time zone changed: the posts of the types whose permalinks hold a date
    (local to the site's time zone, as WordPress's are) take their new URLs, a 409 on
    ``timezone`` if one is another object's. Whether any type has such permalinks."""
    dated = [
        name
        for name, pattern in session.execute(select(PostType.name, PostType.permalink_pattern))
        if permalinks.dated(pattern)
    ]
    # All at once: one type's new URL may be another's old one, which moves too.
    urls = [u for name in dated for u in object_urls.post_urls(session, post_type=name)]
    object_urls.hold(session, urls, "timezone")
    return bool(dated)


def _excluded_ids(value: Any) -> set[int]:
    """``excluded_post_ids`` as a set (duplicates are one id); the API's schema refuses
    the same with a 400 before this is reached."""
    if not isinstance(value, list) or len(value) > MAX_EXCLUDED_POSTS:
        raise Invalid.field(
            "excluded_post_ids", f"must be a list of at most {MAX_EXCLUDED_POSTS} post ids"
        )
    for position, post_id in enumerate(value):
        if type(post_id) is not int or not 1 <= post_id <= MAX_ID:
            raise Invalid.field(
                f"excluded_post_ids/{position}", f"{post_id!r} is not a post id (1 to {MAX_ID})"
            )
    return set(value)


def _exclude_posts(session: Session, wanted: set[int]) -> None:
    """Store ``wanted`` as the excluded posts, and record the posts that came in or went
    out of the list as changed, with their authors and terms, as a write of each post
    would: exactly what they affect is refreshed (their entries, their authors' and
    terms' dates, the home page's), not every sitemap. Ids with no post are stored and
    change nothing."""
    stored = set(excluded_post_ids(session))
    added, removed = wanted - stored, stored - wanted
    for batch in chunks(sorted(removed)):
        session.execute(delete(ExcludedPost).where(ExcludedPost.post_id.in_(batch)))
    for batch in chunks(sorted(added)):
        session.execute(insert(ExcludedPost), [{"post_id": post_id} for post_id in batch])
    posts: set[int] = set()
    authors: set[int | None] = set()
    terms: set[int] = set()
    for batch in chunks(sorted(added | removed)):
        rows = session.execute(select(Post.id, Post.author_id).where(Post.id.in_(batch)))
        for post_id, author_id in rows:
            posts.add(post_id)
            authors.add(author_id)
        linked = select(post_terms.c.term_id).where(post_terms.c.post_id.in_(batch))
        terms.update(session.scalars(linked))
    if posts:
        record(session, posts=posts, authors=authors, terms=terms)


# Settings that change what the entries say (URLs, images, the home page, page size, and
# the offset of every date in their stored fragments), or which sitemaps there are.
ENTRY_FIELDS = {
    "site_url",
    "timezone",
    "allowed_image_hosts",
    "front_page",
    "front_page_id",
    "posts_page_id",
    "entries_per_page",
    "author_sitemap",
    # Which member of each translation group is its x-default (the site's language when
    # none is named).
    "x_default_language",
    "language",
}


def _altered_fields(session: Session, settings: SiteSettings) -> set[str]:
    from sqlalchemy import inspect

    state = inspect(settings)
    return {name for name in FIELDS if state.attrs[name].history.has_changes()}
