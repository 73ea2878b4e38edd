"""One sitemap per public taxonomy (``category-sitemap.xml``, ``post_tag-sitemap.xml`` …)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from ..content import eligibility
from ..hookspecs import hookimpl
from ..models import SitemapEntry, Taxonomy, Term, post_terms
from ..sitemaps.changes import ContentChanges
from ..sitemaps.entries import Entry
from ..sitemaps.providers import BuildContext, Provider, chunks

log = logging.getLogger(__name__)


@hookimpl
def sitemap_providers(session: Session) -> list[Provider]:
    listed = eligibility.criteria(eligibility.taxonomy_rules())
    taxonomies = session.scalars(select(Taxonomy).where(listed).order_by(Taxonomy.name))
    return [TaxonomyProvider(t) for t in taxonomies]


class TaxonomyProvider(Provider):
    """S-203: a term is listed when it has a listed post, its descendants' included in a
    hierarchical taxonomy; its lastmod is the newest of those posts."""

    kind = "term"
    order = 30

    def __init__(self, taxonomy: Taxonomy) -> None:
        self.name = taxonomy.name
        self.hierarchical = taxonomy.hierarchical

    def affected_keys(self, ctx: BuildContext, changes: ContentChanges) -> set[int]:
        keys = set(changes.terms)
        if not keys or not self.hierarchical:
            return keys
        # A term's date depends on its descendants, and its URL on its ancestors: both
        # found by the database (recursive queries over ``terms.parent_id``), so a change
        # to a few terms reads a few rows, not the whole taxonomy.
        for batch in chunks(sorted(keys)):
            mine = self._of_taxonomy(batch)
            keys.update(ctx.session.scalars(_ancestors(mine)))
            keys.update(ctx.session.scalars(select(_subtrees(mine).c.id)))
        return keys

    def _of_taxonomy(self, ids: list[int]) -> Select[Any]:
        return select(Term.id).where(Term.id.in_(ids), Term.taxonomy == self.name)

    def _own_newest(
        self, ctx: BuildContext, term_ids: list[int] | None
    ) -> dict[int, datetime | None]:
        """The newest listed post of each term (of this taxonomy, when ``term_ids`` is None:
        one pass over the links, rather than a lookup per term)."""
        if not ctx.post_providers or term_ids == []:
            return {}
        query = (
            select(post_terms.c.term_id, func.max(SitemapEntry.lastmod))
            .join(
                SitemapEntry,
                eligibility.listed_post_entry(post_terms.c.post_id, ctx.post_providers),
            )
            .group_by(post_terms.c.term_id)
        )
        if term_ids is None:
            in_taxonomy = select(Term.id).where(Term.taxonomy == self.name)
            rows = ctx.session.execute(query.where(post_terms.c.term_id.in_(in_taxonomy)))
            return {row[0]: row[1] for row in rows}
        found: dict[int, datetime | None] = {}
        for batch in chunks(term_ids):
            rows = ctx.session.execute(query.where(post_terms.c.term_id.in_(batch)))
            found.update({row[0]: row[1] for row in rows})
        return found

    def entries(self, ctx: BuildContext, keys: set[int] | None) -> Iterator[Entry]:
        session = ctx.session
        # A whole build reads the taxonomy's tree once; a batch of keys asks the
        # database for their subtrees.
        children: dict[int | None, list[int]] = {}
        if self.hierarchical and keys is None:
            tree = select(Term.id, Term.parent_id).where(Term.taxonomy == self.name)
            for row in session.execute(tree):
                children.setdefault(row.parent_id, []).append(row.id)
        query = (
            select(Term)
            .where(Term.taxonomy == self.name, eligibility.term_criteria(ctx.plugins))
            .order_by(Term.id)
        )
        batches = [None] if keys is None else list(chunks(sorted(keys)))
        for batch in batches:
            terms = list(
                session.scalars(query if batch is None else query.where(Term.id.in_(batch)))
            )
            if batch is None or not self.hierarchical:
                subtree = {t.id: _subtree(t.id, children) for t in terms}
            else:
                subtree = {t.id: [t.id] for t in terms}
                found = _subtrees(self._of_taxonomy(batch))
                for root, member in session.execute(select(found.c.root, found.c.id)):
                    if member != root and root in subtree:  # not a left-out term
                        subtree[root].append(member)
            if batch is None:
                own = self._own_newest(ctx, None)
            else:
                own = self._own_newest(ctx, sorted({i for ids in subtree.values() for i in ids}))
            for term in terms:
                # S-203: a listed post of its own or, in a hierarchical taxonomy, of a
                # descendant (as WordPress shows them on the term's archive).
                if not any(i in own for i in subtree[term.id]):
                    continue
                dates = [d for i in subtree[term.id] if (d := own.get(i)) is not None]
                url = ctx.links.term(term)
                excluded = next(
                    eligibility.candidate_exclusions(ctx.plugins, "term", term, url), None
                )
                if excluded is not None:
                    if excluded.rule == eligibility.URL_RULE:
                        log.warning("term %s left out of the sitemap: %s", term.id, excluded.reason)
                    continue
                yield Entry(
                    key=term.id,
                    path=url[len(ctx.site_url) :],
                    lastmod=max(dates, default=None),
                    item=term,
                )


def _ancestors(terms: Select[Any]) -> Select[Any]:
    """The ancestors of ``terms`` (a query of term ids). UNION, not UNION ALL: a cycle,
    which the API refuses, would still end."""
    base = terms.subquery()
    up = (
        select(Term.parent_id.label("id"))
        .join(base, Term.id == base.c.id)
        .where(Term.parent_id.is_not(None))
        .cte("up", recursive=True)
    )
    up = up.union(
        select(Term.parent_id).join(up, Term.id == up.c.id).where(Term.parent_id.is_not(None))
    )
    return select(up.c.id)


def _subtrees(terms: Select[Any]) -> Any:
    """(root, id) for each of ``terms`` and each of its descendants, itself included."""
    tree = select(Term.id.label("root"), Term.id.label("id")).where(Term.id.in_(terms))
    tree_cte = tree.cte("tree", recursive=True)
    return tree_cte.union(
        select(tree_cte.c.root, Term.id).join(tree_cte, Term.parent_id == tree_cte.c.id)
    )


def term_subtree(session: Session, taxonomy: str, term_id: int) -> list[int]:
    """The term and all its descendants in ``taxonomy`` (a hierarchical one)."""
    found = _subtrees(select(Term.id).where(Term.id == term_id, Term.taxonomy == taxonomy))
    return list(session.scalars(select(found.c.id)))


def _subtree(term_id: int, children: dict[int | None, list[int]]) -> list[int]:
    """The term and all its descendants."""
    found, frontier = [term_id], [term_id]
    while frontier:
        frontier = [k for t in frontier for k in children.get(t, []) if k not in found]
        found.extend(frontier)
    return found
