"""Terms of taxonomies (S-105)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ..content import object_urls
from ..content.links import Links
from ..content.slugs import slugify, unique_slug
from ..content.translations import group_members
from ..content.trees import term_subtree
from ..errors import Invalid
from ..models import SiteSettings, Taxonomy, Term, post_terms
from ..sitemaps.changes import note
from .common import (
    add_with_free_slug,
    among_ancestors,
    apply,
    check_translation,
    ensure_free,
    flush,
    get_or_404,
    lock_parents,
    lock_slugs,
    record,
    require_reference,
    with_normal_slug,
)
from .ids import use_explicit_id

FIELDS = ("name", "description", "noindex", "canonical", "language", "translation_group")


def get_term(
    session: Session, term_id: int, for_update: bool = False, for_delete: bool = False
) -> Term:
    return get_or_404(session, Term, term_id, "term", for_update, for_delete)


def _slug_taken(session: Session, taxonomy: str):
    def taken(slug: str) -> bool:
        return (
            session.scalar(
                select(Term.id).where(Term.taxonomy == taxonomy, Term.slug == slug).limit(1)
            )
            is not None
        )

    return taken


def _check_parent(session: Session, term: Term, taxonomy: Taxonomy, parent_id: int | None) -> None:
    if parent_id is None:
        return
    if not taxonomy.hierarchical:
        raise Invalid.field("parent", f"taxonomy {taxonomy.name!r} is not hierarchical")
    parent = require_reference(session, Term, parent_id, "parent", "term")
    if parent.taxonomy != taxonomy.name:
        raise Invalid.field("parent", f"term {parent_id} belongs to taxonomy {parent.taxonomy!r}")
    # The new parent, or one of its ancestors, being the term itself would make a cycle.
    if term.id is not None and among_ancestors(session, Term, parent.id, term.id):
        raise Invalid.field("parent", "a term cannot be its own ancestor")


def _check_translation(
    session: Session, taxonomy: str, group: str | None, language: str | None, term_id: int | None
) -> None:
    def member(group: str, language: str) -> int | None:
        return session.scalar(
            select(Term.id).where(
                Term.taxonomy == taxonomy,
                Term.translation_group == group,
                Term.language == language,
            )
        )

    settings = session.get(SiteSettings, 1)
    languages = list(settings.languages or []) if settings is not None else []
    check_translation(languages, group, language, member, term_id, "term", taxonomy)


def create_term(session: Session, data: dict[str, Any]) -> Term:
    data = with_normal_slug(data)
    taxonomy = require_reference(session, Taxonomy, data["taxonomy"], "taxonomy", "taxonomy")
    term = Term(taxonomy=taxonomy.name, description="", noindex=False)
    use_explicit_id(session, Term, term, data)
    base = None
    if "slug" in data:
        ensure_free(session, Term.slug, data["slug"], "slug", Term.taxonomy == taxonomy.name)
        term.slug = data["slug"]
    else:
        lock_slugs(session, "terms", taxonomy.name)
        base = slugify(data["name"], fallback=f"{taxonomy.name.replace('_', '-')}-term")
        term.slug = unique_slug(base, _slug_taken(session, taxonomy.name))
    _check_parent(session, term, taxonomy, data.get("parent"))
    _check_translation(
        session, taxonomy.name, data.get("translation_group"), data.get("language"), None
    )
    term.parent_id = data.get("parent")
    apply(term, data, FIELDS)
    if base is None:
        session.add(term)
        flush(session, "term")
    else:
        add_with_free_slug(session, term, "term", base, _slug_taken(session, taxonomy.name))
    url = object_urls.url_of("term", term.id, Links(session, "").term_path(term))
    object_urls.hold(session, [url], "slug", written={("term", term.id)})
    record(session, terms={term.id})
    return term


def update_term(session: Session, term: Term, data: dict[str, Any]) -> Term:
    data = with_normal_slug(data)
    if data.get("parent") is not None:
        # Before this request flushes anything: a flushed change of its slug would lock
        # its row against requests pointing a row at it, such as the one holding this
        # lock, and each would wait for the other.
        lock_parents(session, "terms", term.taxonomy)
    # The translations that named it change too (S-405).
    note(
        session,
        terms={term.id, term.parent_id} | group_members(session, Term.taxonomy, {term.id}),
    )
    if "translation_group" in data or "language" in data:  # as update_post
        _check_translation(
            session,
            term.taxonomy,
            data.get("translation_group", term.translation_group),
            data.get("language", term.language),
            term.id,
        )
    if "slug" in data and data["slug"] != term.slug:
        ensure_free(session, Term.slug, data["slug"], "slug", Term.taxonomy == term.taxonomy)
        term.slug = data["slug"]
    if "parent" in data:
        taxonomy = session.get_one(Taxonomy, term.taxonomy)
        _check_parent(session, term, taxonomy, data["parent"])
        term.parent_id = data["parent"]
    apply(term, data, FIELDS)
    flush(session, "term")
    if "slug" in data or "parent" in data:  # its URL and its descendants' move
        hierarchical = session.get_one(Taxonomy, term.taxonomy).hierarchical
        moved = term_subtree(session, term.taxonomy, term.id) if hierarchical else [term.id]
        field = "slug" if "slug" in data else "parent"
        urls = object_urls.term_urls(session, ids=moved)
        object_urls.hold(session, urls, field, written={("term", term.id)})
    record(session, terms={term.id, term.parent_id} if term.parent_id else {term.id})
    return term


def delete_term(session: Session, term: Term) -> None:
    """Children move up to the term's parent (as WordPress does); post links go with it."""
    children = set(session.scalars(select(Term.id).where(Term.parent_id == term.id)))
    # Its posts change too (a video's tags, a term excluded from news): once the links are
    # gone, nothing else finds them.
    linked = set(
        session.scalars(select(post_terms.c.post_id).where(post_terms.c.term_id == term.id))
    )
    note(
        session,
        terms={term.id, term.parent_id, *children}
        | group_members(session, Term.taxonomy, {term.id}),
        posts=linked,
    )
    # Its descendants' URLs lose its slug.
    moved = set(term_subtree(session, term.taxonomy, term.id)) - {term.id} if children else set()
    session.execute(update(Term).where(Term.parent_id == term.id).values(parent_id=term.parent_id))
    session.delete(term)
    flush(session, "term")
    object_urls.release(session, "term", {term.id})
    if moved:
        object_urls.hold(session, object_urls.term_urls(session, ids=moved))
    record(session)
