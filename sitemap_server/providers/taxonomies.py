"""One sitemap per public taxonomy (``category-sitemap.xml``, ``post_tag-sitemap.xml`` …)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime
from typing import cast

from sqlalchemy import Table, bindparam, func, select
from sqlalchemy.orm import Session

from ..batches import chunks
from ..content import eligibility, trees
from ..content.images import post_images
from ..content.translations import group_members
from ..hookspecs import hookimpl
from ..models import SitemapEntry, Taxonomy, Term, post_terms
from ..sitemaps import newest
from ..sitemaps.changes import ContentChanges
from ..sitemaps.entries import Entry, StoredEntry, alternate_links
from ..sitemaps.providers import BuildContext, Provider

log = logging.getLogger(__name__)

# The statements a refresh of a few terms sends, built once with bound parameters
# (building one costs the maintainer more than running it).
_terms = cast(Table, Term.__table__)
PARENTS = select(_terms.c.id, _terms.c.parent_id).where(_terms.c.taxonomy == bindparam("taxonomy"))
LISTED_TAXONOMIES = (
    select(Taxonomy)
    .where(eligibility.criteria(eligibility.taxonomy_rules()))
    .order_by(Taxonomy.name)
)
# The newest listed post of each of some terms.
NEWEST_OF = (
    select(post_terms.c.term_id, func.max(SitemapEntry.__table__.c.lastmod))
    .join(
        SitemapEntry.__table__,
        eligibility.listed_post_entry(post_terms.c.post_id, bindparam("providers", expanding=True)),
    )
    .where(post_terms.c.term_id.in_(bindparam("terms", expanding=True)))
    .group_by(post_terms.c.term_id)
)

# The terms of some posts, and the ``BuildContext.memo`` key that keeps them.
TERM_LINKS = select(post_terms.c.post_id, post_terms.c.term_id).where(
    post_terms.c.post_id.in_(bindparam("posts", expanding=True))
)
TERMS_OF = "taxonomies.terms_of_refreshed_posts"
# ``BuildContext.memo`` key (with the taxonomy): the terms the refresh's changes name.
CHANGED_TERMS = "taxonomies.changed_terms"


@hookimpl
def sitemap_providers(session: Session) -> list[Provider]:
    return [TaxonomyProvider(t) for t in session.scalars(LISTED_TAXONOMIES)]


class TaxonomyProvider(Provider):
    """S-203: a term is listed when it has a listed post, its descendants' included in a
    hierarchical taxonomy; its lastmod is the newest of those posts. Its images are those
    of its description (a category banner), found as a post's are in its content."""

    kind = "term"
    order = 30
    depends_on = ("post",)  # dated by their listed posts (``newest.py``)

    def __init__(self, taxonomy: Taxonomy) -> None:
        self.name = taxonomy.name
        self.hierarchical = taxonomy.hierarchical

    def _parents(self, ctx: BuildContext) -> dict[int, int | None]:
        """Each term's parent, read once a refresh (the keys a change reaches, then the
        entries, ask for it)."""
        key = ("parents", self.name)
        if key not in ctx.memo:
            rows = ctx.session.execute(PARENTS, {"taxonomy": self.name})
            ctx.memo[key] = {row.id: row.parent_id for row in rows}
        return ctx.memo[key]

    def affected_keys(self, ctx: BuildContext, changes: ContentChanges) -> set[int]:
        keys = self._affected_terms(ctx, changes)
        # Ancestors and descendants (their dates and URLs) change too, and so do the
        # members of their translation groups (``maintenance.with_translations`` added
        # those of the changed terms).
        return keys | group_members(ctx.session, Term.taxonomy, keys - changes.terms)

    def _affected_terms(self, ctx: BuildContext, changes: ContentChanges) -> set[int]:
        ctx.memo[CHANGED_TERMS, self.name] = set(changes.terms)  # for ``_kept_up``
        keys = set(changes.terms)
        if not keys or not self.hierarchical:
            return keys
        # A term's date depends on its descendants, and its URL on its ancestors.
        parents = self._parents(ctx)
        for term in list(keys):
            node, seen = parents.get(term), {term}
            while node is not None and node not in seen:
                keys.add(node)
                seen.add(node)
                node = parents.get(node)
        children: dict[int, list[int]] = {}
        for term, parent in parents.items():
            if parent is not None:
                children.setdefault(parent, []).append(term)
        frontier = list(changes.terms)
        while frontier:
            kids = [k for t in frontier for k in children.get(t, []) if k not in keys]
            keys.update(kids)
            frontier = kids
        # A deleted term is no longer in ``parents`` but may still be listed here.
        return {k for k in keys if k in parents} | set(changes.terms)

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
            parameters = {"providers": ctx.post_providers, "terms": batch}
            found.update({row[0]: row[1] for row in ctx.session.execute(NEWEST_OF, parameters)})
        return found

    def entries(self, ctx: BuildContext, keys: set[int] | None) -> Iterator[Entry]:
        session = ctx.session
        parents = self._parents(ctx) if self.hierarchical else {}
        children: dict[int | None, list[int]] = {}
        for term_id, parent in parents.items():
            children.setdefault(parent, []).append(term_id)
        query = (
            select(Term)
            .where(Term.taxonomy == self.name, eligibility.term_criteria(ctx.site))
            .order_by(Term.id)
        )
        batches = [None] if keys is None else list(chunks(sorted(keys)))
        # Dates kept up from the posts refreshed, for the few terms of a write.
        dates = newest.changed_dates(ctx) if keys is not None and len(batches) == 1 else None
        for batch in batches:
            terms = list(
                session.scalars(query if batch is None else query.where(Term.id.in_(batch)))
            )
            # The other members of their translation groups: whether they are listed
            # decides the alternates (S-405).
            groups = sorted({t.translation_group for t in terms if t.translation_group})
            known = {t.id for t in terms}
            members = [
                member
                for some in chunks(groups)
                for member in session.scalars(query.where(Term.translation_group.in_(some)))
                if member.id not in known
            ]
            everyone = terms + members
            subtree = {t.id: trees.subtree(t.id, children) for t in everyone}
            kept = {} if dates is None else self._kept_up(ctx, dates, everyone, subtree)
            dated = self._newest(ctx, [t for t in everyone if t.id not in kept], subtree, batch)
            dated.update(kept)
            urls = {t.id: ctx.links.term(t) for t in everyone if t.id in dated}
            listed = {
                term.id: (urls[term.id][len(ctx.site_url) :], dated[term.id])
                for term in everyone
                if term.id in dated and self._allowed(ctx, term, urls[term.id], term.id in known)
            }
            alternates = translations(ctx, everyone, listed)
            for term in terms:
                if term.id not in listed:
                    continue
                path, lastmod = listed[term.id]
                yield Entry(
                    key=term.id,
                    path=path,
                    lastmod=lastmod,
                    images=self._images(ctx, term, ctx.site_url + path),
                    alternates=alternates.get(term.translation_group or ""),
                    item=term,
                )

    def _newest(
        self,
        ctx: BuildContext,
        terms: list[Term],
        subtree: dict[int, list[int]],
        batch: list[int] | None,
    ) -> dict[int, datetime | None]:
        """The newest listed post of each of ``terms`` that has one (S-203: of its own or,
        in a hierarchical taxonomy, of a descendant, as WordPress shows them on the
        term's archive), read from the stored post entries."""
        if not terms:
            return {}
        if batch is None:
            own = self._own_newest(ctx, None)
        else:
            own = self._own_newest(ctx, sorted({i for t in terms for i in subtree[t.id]}))
        found: dict[int, datetime | None] = {}
        for term in terms:
            if any(i in own for i in subtree[term.id]):
                dates = [d for i in subtree[term.id] if (d := own.get(i)) is not None]
                found[term.id] = max(dates, default=None)
        return found

    def _kept_up(
        self,
        ctx: BuildContext,
        dates: dict[int, tuple[datetime | None, datetime | None]],
        terms: list[Term],
        subtree: dict[int, list[int]],
    ) -> dict[int, datetime]:
        """The newest listed post of those of ``terms`` whose date follows from their
        stored entries and the dates of the posts refreshed (``sitemaps.newest``)."""
        posts_of: dict[int, set[int]] = {}
        for post, of in _terms_of(ctx, dates).items():
            for term_id in of:
                posts_of.setdefault(term_id, set()).add(post)
        if self.hierarchical:
            # A term changed by a write of its own (moved, deleted, noindexed), not only as
            # a term of a refreshed post, may have moved posts between subtrees.
            written = ctx.memo.get((CHANGED_TERMS, self.name))
            if written is None or not written <= posts_of.keys():
                return {}
        stored = newest.stored(ctx, self.name, [t.id for t in terms])
        members = {
            term.id: set().union(*(posts_of.get(i, ()) for i in subtree[term.id])) for term in terms
        }
        return newest.kept_up(dates, stored, members)

    def explain_lastmod(self, ctx: BuildContext, entry: StoredEntry) -> str:
        """The newest listed post in the term, or in its subtree (``_newest``)."""
        terms = trees.term_subtree(ctx.session, self.name, entry.key) if self.hierarchical else []
        in_terms = select(post_terms.c.post_id).where(
            post_terms.c.term_id.in_(terms or [entry.key])
        )
        post = newest.dating_post(ctx.session, entry.lastmod, ctx.post_providers, in_terms)
        below = " and in the terms below it" if self.hierarchical else ""
        return f"the newest lastmod of the listed posts in it{below}{post}"

    def _allowed(self, ctx: BuildContext, term: Term, url: str, warn: bool) -> bool:
        """Whether ``term``, which has a listed post, is listed (no exclusion leaves it
        out)."""
        excluded = next(eligibility.candidate_exclusions(ctx.site, "term", term, url), None)
        if excluded is not None:
            if excluded.rule == eligibility.URL_RULE and warn:
                log.warning("term %s left out of the sitemap: %s", term.id, excluded.reason)
            return False
        return True

    def _images(self, ctx: BuildContext, term: Term, url: str) -> list[str]:
        return post_images(
            None,
            term.description or "",
            [],
            ctx.site_url,
            url,
            list(ctx.settings.allowed_image_hosts or []),
        )


def translations(
    ctx: BuildContext, terms: list[Term], listed: dict[int, tuple[str, datetime | None]]
) -> dict[str, list[list[str]]]:
    """The alternates of each translation group among ``terms`` with two listed members
    or more (``listed``: the path of each listed one), as for posts."""
    members: dict[str, dict[str, str]] = {}
    for term in terms:
        if term.id in listed and term.translation_group and term.language:
            members.setdefault(term.translation_group, {})[term.language] = listed[term.id][0]
    return alternate_links(members, ctx.settings.x_default_language or ctx.settings.language)


def _terms_of(
    ctx: BuildContext, dates: dict[int, tuple[datetime | None, datetime | None]]
) -> dict[int, set[int]]:
    """The terms (of any taxonomy) of the posts refreshed: read once a refresh."""
    if TERMS_OF not in ctx.memo:
        found: dict[int, set[int]] = {}
        for batch in chunks(sorted(dates)):
            for post_id, term_id in ctx.session.execute(TERM_LINKS, {"posts": batch}):
                found.setdefault(post_id, set()).add(term_id)
        ctx.memo[TERMS_OF] = found
    return cast(dict[int, set[int]], ctx.memo[TERMS_OF])
