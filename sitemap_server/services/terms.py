"""Terms of taxonomies (S-105)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ..batches import chunks
from ..content import object_urls
from ..content.links import Links
from ..content.slugs import slugify, unique_slug
from ..content.translations import group_members
from ..content.trees import term_subtree
from ..errors import Conflict, Invalid
from ..models import Post, SiteSettings, Taxonomy, Term, post_terms
from ..sitemaps.changes import note
from .common import (
    add_with_free_slug,
    among_ancestors,
    apply,
    check_translation,
    ensure_free,
    existing,
    flush,
    get_or_404,
    lock_parents,
    lock_slugs,
    record,
    with_normal_slug,
)
from .ids import insert_with_ids, use_explicit_id

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


class TermLookups:
    """Reference checks of new terms for one transaction, cached so that an import's
    batches do not repeat them (``create_term`` makes one for its one term).

    Everything is answered from the database on first use; ``remember`` records what the
    transaction created, so that later terms of an import can refer to it."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._taxonomies: dict[str, Taxonomy | None] = {}
        self._terms: dict[int, str] = {}  # term id -> its taxonomy
        self._no_terms: set[int] = set()  # ids known to be no term's
        self._slugs: dict[str, set[str]] = {}  # taxonomy -> slugs known to be taken
        self._free_slugs: dict[str, set[str]] = {}  # … and known to be free
        self._translations: dict[tuple[str, str, str], int | None] = {}
        self._languages: list[str] | None = None

    def forget(self) -> None:
        """Forget what the database can tell again (``Lookups.forget``)."""
        for by_key in (self._terms, self._slugs, self._free_slugs, self._translations):
            by_key.clear()
        self._no_terms.clear()

    def taxonomy(self, name: str) -> Taxonomy | None:
        if name not in self._taxonomies:
            self._taxonomies[name] = self.session.get(Taxonomy, name)
        return self._taxonomies[name]

    def taxonomy_of_term(self, term_id: int) -> str | None:
        if term_id not in self._terms and term_id not in self._no_terms:
            self.prefetch_terms([term_id])
        return self._terms.get(term_id)

    def prefetch_terms(self, term_ids: Iterable[int]) -> None:
        """Learn in one query a batch which of ``term_ids`` are terms, and of which
        taxonomy."""
        wanted = {i for i in term_ids if i not in self._terms and i not in self._no_terms}
        for batch in chunks(sorted(wanted)):
            query = select(Term.id, Term.taxonomy).where(Term.id.in_(batch))
            found = {i: t for i, t in self.session.execute(query)}
            self._terms.update(found)
            self._no_terms.update(i for i in batch if i not in found)

    def slug_taken(self, taxonomy: str, slug: str) -> bool:
        if slug in self._slugs.setdefault(taxonomy, set()):
            return True
        if slug not in self._free_slugs.get(taxonomy, ()):
            self.prefetch_slugs(taxonomy, [slug])
        return slug in self._slugs[taxonomy]

    def prefetch_slugs(self, taxonomy: str, slugs: Iterable[str]) -> None:
        """Learn in one query a batch which of ``slugs`` are taken in ``taxonomy``."""
        free = self._free_slugs.setdefault(taxonomy, set())
        wanted = set(slugs) - self._slugs.setdefault(taxonomy, set()) - free
        taken = existing(self.session, Term.slug, wanted, Term.taxonomy == taxonomy)
        self._slugs[taxonomy] |= taken
        free.update(wanted - taken)

    def translation_of(self, taxonomy: str, group: str, language: str) -> int | None:
        """The term of ``taxonomy`` that is the ``language`` member of ``group``, if any."""
        key = (taxonomy, group, language)
        if key not in self._translations:
            self._translations[key] = self.session.scalar(
                select(Term.id).where(
                    Term.taxonomy == taxonomy,
                    Term.translation_group == group,
                    Term.language == language,
                )
            )
        return self._translations[key]

    def site_languages(self) -> list[str]:
        if self._languages is None:
            settings = self.session.get(SiteSettings, 1)
            self._languages = list(settings.languages or []) if settings is not None else []
        return self._languages

    def remember(self, row: dict[str, Any]) -> None:
        """A term of ``row`` (``prepare_term``'s) is being created."""
        taxonomy = row["taxonomy"]
        self._slugs.setdefault(taxonomy, set()).add(row["slug"])
        self._free_slugs.get(taxonomy, set()).discard(row["slug"])
        if "id" in row:
            self._terms[row["id"]] = taxonomy
            self._no_terms.discard(row["id"])
        if row["translation_group"] is not None and row["language"] is not None:
            # Any number but a real id says "taken" (a new term's id is not known yet).
            key = (taxonomy, row["translation_group"], row["language"])
            self._translations[key] = row.get("id", 0)


def base_slug(data: dict[str, Any]) -> str:
    """The slug a new term gets from its name when the client gives none."""
    return slugify(data["name"], fallback=f"{data['taxonomy'].replace('_', '-')}-term")


def prepare_term(lookups: TermLookups, data: dict[str, Any]) -> dict[str, Any]:
    """Check a new term and return its row (nothing is written): the rules of
    ``create_term`` and of the importer's batches."""
    data = with_normal_slug(data)
    taxonomy = lookups.taxonomy(data["taxonomy"])
    if taxonomy is None:
        raise Invalid.field("taxonomy", f"unknown taxonomy {data['taxonomy']!r}")
    if "id" in data and lookups.taxonomy_of_term(data["id"]) is not None:
        raise Conflict.field("id", f"{data['id']} is already taken")
    if "slug" in data:
        if lookups.slug_taken(taxonomy.name, data["slug"]):
            raise Conflict.field("slug", f"{data['slug']!r} is already taken")
        slug = data["slug"]
    else:
        slug = unique_slug(base_slug(data), lambda s: lookups.slug_taken(taxonomy.name, s))
    parent = data.get("parent")
    if parent is not None:
        _check_parent_of(taxonomy, parent, lookups.taxonomy_of_term(parent))
    group, language = data.get("translation_group"), data.get("language")

    def member(group: str, language: str) -> int | None:
        return lookups.translation_of(taxonomy.name, group, language)

    check_translation(
        lookups.site_languages(), group, language, member, None, "term", taxonomy.name
    )
    row: dict[str, Any] = {
        "taxonomy": taxonomy.name,
        "slug": slug,
        "name": data["name"],
        "parent_id": parent,
        "description": data.get("description", ""),
        "noindex": data.get("noindex", False),
        "canonical": data.get("canonical"),
        "language": language,
        "translation_group": group,
    }
    if "id" in data:
        row["id"] = data["id"]
    lookups.remember(row)
    return row


def _check_parent_of(taxonomy: Taxonomy, parent_id: int, parent_taxonomy: str | None) -> None:
    """A term of ``taxonomy`` may have the term ``parent_id`` (of ``parent_taxonomy``,
    None: no term) as its parent."""
    if not taxonomy.hierarchical:
        raise Invalid.field("parent", f"taxonomy {taxonomy.name!r} is not hierarchical")
    if parent_taxonomy is None:
        raise Invalid.field("parent", f"unknown term {parent_id}")
    if parent_taxonomy != taxonomy.name:
        raise Invalid.field("parent", f"term {parent_id} belongs to taxonomy {parent_taxonomy!r}")


def _check_parent(session: Session, term: Term, taxonomy: Taxonomy, parent_id: int | None) -> None:
    if parent_id is None:
        return
    parent = session.get(Term, parent_id)
    _check_parent_of(taxonomy, parent_id, parent.taxonomy if parent is not None else None)
    # The new parent, or one of its ancestors, being the term itself would make a cycle.
    if among_ancestors(session, Term, parent_id, term.id):
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
    if "slug" not in data:
        lock_slugs(session, "terms", data["taxonomy"])
    row = prepare_term(TermLookups(session), data)
    term = Term()
    use_explicit_id(session, Term, term, row)
    apply(term, row, row.keys() - {"id"})
    if "slug" in data:
        session.add(term)
        flush(session, "term")
    else:
        add_with_free_slug(
            session, term, "term", base_slug(data), _slug_taken(session, term.taxonomy)
        )
    url = object_urls.url_of("term", term.id, Links(session, "").term_path(term))
    object_urls.hold(session, [url], "slug", written={("term", term.id)})
    record(session, terms={term.id})
    return term


def insert_prepared(session: Session, rows: list[dict[str, Any]]) -> None:
    """Insert prepared terms (``prepare_term``) in one statement (the bulk importer),
    each row given its id; their URLs and changes are the caller's."""
    insert_with_ids(session, Term, rows, "term")


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
        posts = _posts_in_category_urls(session, term.taxonomy, moved)
        urls += object_urls.post_urls(session, ids=posts)
        object_urls.hold(session, urls, field, written={("term", term.id)})
        note(session, posts=posts)
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
    # Its descendants' URLs lose its slug, and so do those of posts that hold it.
    subtree = set(term_subtree(session, term.taxonomy, term.id))
    moved = subtree - {term.id} if children else set()
    posts = _posts_in_category_urls(session, term.taxonomy, subtree)
    session.execute(update(Term).where(Term.parent_id == term.id).values(parent_id=term.parent_id))
    session.delete(term)
    flush(session, "term")
    object_urls.release(session, "term", {term.id})
    urls = object_urls.term_urls(session, ids=moved) if moved else []
    urls += object_urls.post_urls(session, ids=posts) if posts else []
    if urls:
        object_urls.hold(session, urls)
    record(session, posts=posts)


def _posts_in_category_urls(session: Session, taxonomy: str, term_ids: Iterable[int]) -> set[int]:
    """The posts of ``term_ids`` (categories) whose URLs hold their category
    (``{category}``): they move with its slug or its parent."""
    if taxonomy != object_urls.CATEGORY:
        return set()
    found: set[int] = set()
    for batch in chunks(sorted(set(term_ids))):
        linked = select(post_terms.c.post_id).where(post_terms.c.term_id.in_(batch))
        found |= object_urls.posts_using(session, "category", Post.id.in_(linked))
    return found
