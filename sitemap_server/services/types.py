"""Post types (S-101) and taxonomies (S-105)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import exists, func, select
from sqlalchemy.orm import Session

from ..content import object_urls
from ..content.permalinks import pattern_problem
from ..errors import Conflict, Invalid
from ..models import Post, PostType, Taxonomy, Term
from .common import apply, ensure_free, flush, get_or_404, normal_site_path, record

POST_TYPE_FIELDS = ("label", "public", "noindex", "hierarchical", "archive_path")
TAXONOMY_FIELDS = ("label", "public", "noindex", "hierarchical", "archive_base")


def get_post_type(
    session: Session, name: str, for_update: bool = False, for_delete: bool = False
) -> PostType:
    return get_or_404(session, PostType, name, "post type", for_update, for_delete)


def _check_pattern(pattern: str) -> None:
    problem = pattern_problem(pattern)
    if problem:
        raise Invalid.field("permalink_pattern", problem)


def create_post_type(session: Session, data: dict[str, Any]) -> PostType:
    ensure_free(session, PostType.name, data["name"], "name")
    hierarchical = data.get("hierarchical", False)
    default = "/{type}/{path}/" if hierarchical else "/{type}/{slug}/"
    pattern = data.get("permalink_pattern", default)
    _check_pattern(pattern)
    archive = _free_archive(session, data.get("archive_path"), data["name"])
    post_type = PostType(
        name=data["name"],
        label=data["label"],
        public=data.get("public", True),
        noindex=data.get("noindex", False),
        hierarchical=hierarchical,
        archive_path=archive,
        permalink_pattern=pattern,
        builtin=False,
    )
    session.add(post_type)
    flush(session, "post type")
    # A new type has no posts: its own sitemap (its archive, if any) is all that changes.
    record(session, providers={post_type.name}, site=True)
    return post_type


def update_post_type(session: Session, post_type: PostType, data: dict[str, Any]) -> PostType:
    if data.get("archive_path") is not None and data["archive_path"] != post_type.archive_path:
        archive = _free_archive(session, data["archive_path"], post_type.name)
        data = {**data, "archive_path": archive}
    altered = _altered(post_type, data, (*POST_TYPE_FIELDS, "permalink_pattern"))
    if "permalink_pattern" in data:
        _check_pattern(data["permalink_pattern"])
        post_type.permalink_pattern = data["permalink_pattern"]
    if data.get("hierarchical") is False and post_type.hierarchical:
        has_children = session.scalar(
            select(exists().where(Post.type == post_type.name, Post.parent_id.is_not(None)))
        )
        if has_children:
            raise Invalid.field("hierarchical", "some posts of this type have a parent")
    apply(post_type, data, POST_TYPE_FIELDS)
    flush(session, "post type")
    if "permalink_pattern" in altered:  # every post of the type moves
        urls = object_urls.post_urls(session, post_type=post_type.name)
        object_urls.hold(session, urls, "permalink_pattern")
    _changed_type(session, post_type.name, altered, own={"archive_path"})
    return post_type


def delete_post_type(session: Session, post_type: PostType) -> None:
    if post_type.builtin:
        raise Conflict(f"post type {post_type.name!r} is built in and cannot be deleted")
    count = session.scalar(select(func.count()).where(Post.type == post_type.name))
    if count:
        raise Conflict(f"post type {post_type.name!r} still has {count} posts")
    session.delete(post_type)
    flush(session, "post type")
    record(session, providers={post_type.name}, site=True)  # it had no posts


def get_taxonomy(
    session: Session, name: str, for_update: bool = False, for_delete: bool = False
) -> Taxonomy:
    return get_or_404(session, Taxonomy, name, "taxonomy", for_update, for_delete)


def create_taxonomy(session: Session, data: dict[str, Any]) -> Taxonomy:
    ensure_free(session, Taxonomy.name, data["name"], "name")
    taxonomy = Taxonomy(
        name=data["name"],
        label=data["label"],
        public=data.get("public", True),
        noindex=data.get("noindex", False),
        hierarchical=data.get("hierarchical", False),
        archive_base=data.get("archive_base", data["name"]).strip("/"),
        builtin=False,
    )
    session.add(taxonomy)
    flush(session, "taxonomy")
    record(session, providers={taxonomy.name}, site=True)  # no terms yet
    return taxonomy


def update_taxonomy(session: Session, taxonomy: Taxonomy, data: dict[str, Any]) -> Taxonomy:
    if data.get("hierarchical") is False and taxonomy.hierarchical:
        has_children = session.scalar(
            select(exists().where(Term.taxonomy == taxonomy.name, Term.parent_id.is_not(None)))
        )
        if has_children:
            raise Invalid.field("hierarchical", "some terms of this taxonomy have a parent")
    if "archive_base" in data:
        data = {**data, "archive_base": data["archive_base"].strip("/")}
    altered = _altered(taxonomy, data, TAXONOMY_FIELDS)
    apply(taxonomy, data, TAXONOMY_FIELDS)
    flush(session, "taxonomy")
    if "archive_base" in altered:  # every term of the taxonomy moves
        urls = object_urls.term_urls(session, taxonomy=taxonomy.name)
        object_urls.hold(session, urls, "archive_base")
    _changed_type(session, taxonomy.name, altered, own={"archive_base"})
    return taxonomy


def delete_taxonomy(session: Session, taxonomy: Taxonomy) -> None:
    if taxonomy.builtin:
        raise Conflict(f"taxonomy {taxonomy.name!r} is built in and cannot be deleted")
    count = session.scalar(select(func.count()).where(Term.taxonomy == taxonomy.name))
    if count:
        raise Conflict(f"taxonomy {taxonomy.name!r} still has {count} terms")
    session.delete(taxonomy)
    flush(session, "taxonomy")
    record(session, providers={taxonomy.name}, site=True)  # it had no terms


def _free_archive(session: Session, path: str | None, own_type: str) -> str | None:
    """A type's archive path in normal form, once it is known to be no one else's URL
    (S-107): a 409 when it is taken."""
    normal = normal_site_path(path, "archive_path")
    if normal is None:
        return None
    problem = object_urls.archive_problem(session, normal, own_type)
    if problem is not None:
        raise Conflict.field("archive_path", f"{normal} {problem}")
    return normal


def _altered(row: Any, data: dict[str, Any], fields: Iterable[str]) -> set[str]:
    """The fields of ``data`` whose value differs from ``row``'s."""
    return {name for name in fields if name in data and data[name] != getattr(row, name)}


def _changed_type(
    session: Session, name: str, altered: set[str], own: frozenset[str] | set[str] = frozenset()
) -> None:
    """Record what a change of the post type or taxonomy ``name`` changes, and no more
    (a write costs what it changes): a label is in no document (the site's version moves,
    for the processes' cached list of sitemaps); ``own`` fields (an archive's path or a
    taxonomy's base) change only its own sitemap; anything else (what is listed, the
    URLs the plugins' sitemaps carry) every sitemap."""
    if not altered:
        return
    if altered <= {"label"}:
        record(session, site=True)
    elif altered <= {"label", *own}:
        record(session, providers={name}, site=True)
    else:
        record(session, everything=True)
