"""The site's content as newline-delimited JSON that ``import`` reads back (S-704), so a
site is never locked in: ``sitemap-server export``.

One import object per line, in an order the import can apply: the site's time zone (the
dates of permalinks are local to it), the post types and
taxonomies (the built-in ones' settings as ``post_type_settings`` and
``taxonomy_settings``: their permalink pattern, their archive), the authors, the terms (a
parent before its children), the posts (a parent before its children), each with its id
so that references hold, and last the site's settings (they may name posts). Posts are
read a thousand at a time: memory does not grow with the site.

What is not exported: tokens, notifications, the stored sitemaps (built again from the
content) and the plugins' own tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from ..models import Author, Post, PostType, Taxonomy, Term
from ..models.site import excluded_post_ids, get_settings
from . import posts, site, terms, types

BATCH = 1000
# The fields of each kind of object an import takes: those its create (or settings
# change) stores, with what names it.
POST_FIELDS = ("id", "type", "slug", *posts.FIELDS)
TERM_FIELDS = ("id", "taxonomy", "slug", *terms.FIELDS)
POST_TYPE_FIELDS = ("name", *types.POST_TYPE_FIELDS, "permalink_pattern")
TAXONOMY_FIELDS = ("name", *types.TAXONOMY_FIELDS)


def export(session: Session) -> Iterator[dict[str, Any]]:
    """The content, as import objects (``{"post": {...}}``), in an order ``import`` can
    apply."""
    # First the time zone: dated permalinks are local to it, so posts imported before it
    # would all move when it came (every URL held again, at once).
    settings = get_settings(session)
    yield {"settings": {"timezone": settings.timezone}}
    # A built-in type or taxonomy exists in every site: its settings are changed.
    for post_type in session.scalars(select(PostType).order_by(PostType.name)):
        kind = "post_type_settings" if post_type.builtin else "post_type"
        yield {kind: _fields(post_type, POST_TYPE_FIELDS, keep_none=True)}
    for taxonomy in session.scalars(select(Taxonomy).order_by(Taxonomy.name)):
        kind = "taxonomy_settings" if taxonomy.builtin else "taxonomy"
        yield {kind: _fields(taxonomy, TAXONOMY_FIELDS)}
    for author in session.scalars(select(Author).order_by(Author.id)):
        yield {
            "author": {
                "id": author.id,
                "slug": author.slug,
                "name": author.name,
                "noindex": author.noindex,
            }
        }
    terms = list(session.scalars(select(Term).order_by(Term.id)))
    for term in _parents_first(terms):
        data = _fields(term, TERM_FIELDS)
        if term.parent_id is not None:
            data["parent"] = term.parent_id
        yield {"term": data}
    yield from _posts(session)
    # Last: they may name posts (the front page, the posts page, excluded posts).
    data = _fields(settings, site.FIELDS, keep_none=True)
    data["allowed_image_hosts"] = list(settings.allowed_image_hosts or [])
    data["languages"] = list(settings.languages or [])
    data["excluded_post_ids"] = excluded_post_ids(session)
    yield {"settings": data}


def _posts(session: Session) -> Iterator[dict[str, Any]]:
    """The posts without a parent in id order, read in batches; then those with one,
    parents first (the pages of a site: few)."""
    top = (
        select(Post)
        .where(Post.parent_id.is_(None))
        .order_by(Post.id)
        .options(selectinload(Post.terms))
        .execution_options(yield_per=BATCH)
    )
    for post in session.scalars(top):
        yield {"post": _post(post)}
    children = session.scalars(
        select(Post).where(Post.parent_id.is_not(None)).order_by(Post.id)
    ).all()
    for post in _parents_first(list(children)):
        yield {"post": _post(post)}


def _post(post: Post) -> dict[str, Any]:
    data = _fields(post, POST_FIELDS)
    data["author"] = post.author_id
    data["parent"] = post.parent_id
    data["published_at"] = post.published_at.isoformat() if post.published_at else None
    data["modified_at"] = post.modified_at.isoformat()
    data["terms"] = sorted(term.id for term in post.terms)
    return data


def _fields(obj: Any, names: tuple[str, ...], keep_none: bool = False) -> dict[str, Any]:
    """The fields of ``obj`` that are set (an import leaves the others at their default);
    with ``keep_none``, all of them (a null that changes a default: a type's archive)."""
    return {name: value for name in names if (value := getattr(obj, name)) is not None or keep_none}


def _parents_first(objects: list[Any]) -> list[Any]:
    """``objects`` (with ``id`` and ``parent_id``) ordered so that a parent among them
    comes before its children; a loop of parents (which no write makes) in id order."""
    waiting = {obj.id: obj for obj in objects}
    ordered: list[Any] = []
    while waiting:
        ready = [
            obj for obj in waiting.values() if obj.parent_id is None or obj.parent_id not in waiting
        ]
        if not ready:
            ready = [waiting[min(waiting)]]
        for obj in ready:
            ordered.append(obj)
            del waiting[obj.id]
    return ordered
