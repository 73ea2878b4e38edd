"""``sitemap-server explain`` and ``GET /api/explain``: why a URL is listed or not (S-406).

Whether a URL is listed, where and with which ``lastmod`` is read from the stored
entries and pages, which are what the sitemaps serve. Why a URL is not listed is found by
the engine's own rules (``content/eligibility.py``): each of the SQL criteria the
providers combine is evaluated on its own on the one row, then the URL checks and the
plugins' vetoes, so every rule that leaves it out is named, not only the first, and the
answer cannot disagree with the sitemaps. When it does (stored state that a write left
behind), the answer says so: ``sitemap-server check`` then finds what differs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, case, select, tuple_
from sqlalchemy.orm import Session

from ..content import eligibility, permalinks
from ..content.eligibility import Exclusion, Rule
from ..content.permalinks import is_static_front_page
from ..content.sanitize import clean_url
from ..content.trees import term_subtree
from ..documents import INDEX, INDEX_PATH, MAX_PAGES, PAGE_PATH, index_url, sitemap_url
from ..errors import NotFound
from ..models import (
    Author,
    ObjectUrl,
    Post,
    PostType,
    SitemapEntry,
    SitemapPage,
    Taxonomy,
    Term,
    post_terms,
    site_of,
)
from ..models.site import site_zone
from .chain import filter_entry
from .entries import StoredEntry
from .failures import OUTAGE
from .maintenance import all_providers, build_context, catch_up
from .newest import newest_listed
from .providers import Provider
from .rendering import EntryRenderer
from .store import STORED
from .xml import w3c

KINDS = ("post", "term", "author")
# Ids are 32-bit integers; a larger number names nothing (and PostgreSQL refuses it).
MAX_ID = 2**31 - 1


@dataclass(frozen=True)
class Listing:
    """Where a URL is listed: a sitemap (provider), its page and the page's URL."""

    sitemap: str
    document: str
    page: int
    lastmod: str | None  # as the document writes it
    lastmod_source: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "sitemap": self.sitemap,
            "document": self.document,
            "page": self.page,
            "lastmod": self.lastmod,
            "lastmod_source": self.lastmod_source,
        }


@dataclass
class Explanation:
    url: str
    subject: dict[str, Any]  # what the URL is: {"kind": "post", "id": 12, …}
    listed: bool = False
    sitemaps: list[Listing] = field(default_factory=list)
    reasons: list[Exclusion] = field(default_factory=list)
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "subject": self.subject,
            "listed": self.listed,
            "sitemaps": [s.as_dict() for s in self.sitemaps],
            "reasons": [r.as_dict() for r in self.reasons],
            "note": self.note,
        }


def explain_url(session: Session, url: str) -> Explanation:
    """What ``url`` (absolute, or a path on the site) is and why it is listed or not.

    :raises NotFound: no content, archive or sitemap of the site has this URL.
    """
    return Explainer(session).url(url)


def explain_object(session: Session, kind: str, object_id: int) -> Explanation:
    """The same for the post, term or author ``object_id`` (its URL: part 1 of a post).

    :raises NotFound: there is no such object.
    """
    return Explainer(session).object(kind, object_id)


class Explainer:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.site = site_of(session)
        # As the next request would: whatever has come due is in the stored state.
        catch_up(session)
        self.providers = all_providers(session, self.site)
        self.by_name = {p.name: p for p in self.providers}
        self.ctx = build_context(session, self.site, self.providers)
        self.settings = self.ctx.settings
        self.site_url = self.ctx.site_url
        self.zone = site_zone(self.settings.timezone)

    # Entry points ------------------------------------------------------------------------

    def url(self, given: str) -> Explanation:
        url = self.site_url + given if given.startswith("/") else given
        # In the form the documents write it: an IRI, escapes in lower case, NFD text.
        url = clean_url(url) or url
        path = self._path(url)
        if path is None:
            raise NotFound(f"{given} is not on this site ({self.site_url}/)")
        document = PAGE_PATH.match(path)
        if INDEX_PATH.match(path) or document:
            return self._document(url, document)
        stored = self._stored(path)
        core = [row for row in stored if self._kind(row.provider) in KINDS]
        if core:
            row = core[0]
            kind = str(self._kind(row.provider))
            if row.key == 0:
                return self._special(url, path, stored, row.provider)
            return self._explain(kind, self._get(kind, row.key), url, stored, part=row.part)
        found = self._resolve(url, path)
        if found is not None:
            kind, item, part = found
            return self._explain(kind, item, url, stored, part=part)
        if path == permalinks.home_path() or self._archive_type(path) is not None:
            return self._special(url, path, stored)
        if stored:  # a plugin's own entry, made from no post, term or author
            row = stored[0]
            explanation = Explanation(
                url, {"kind": "entry", "sitemap": row.provider, "id": row.key}
            )
            return self._finish(explanation, stored, [])
        raise NotFound(
            f"{url}: no post, page, term, author, archive or sitemap of this site has this URL"
        )

    def object(self, kind: str, object_id: int) -> Explanation:
        item = self._get(kind, object_id) if 1 <= object_id <= MAX_ID else None
        if item is None:
            raise NotFound(f"there is no {kind} {object_id}")
        url = self._object_url(kind, item)
        return self._explain(kind, item, url, self._stored(url[len(self.site_url) :]), part=1)

    # Content -----------------------------------------------------------------------------

    def _explain(
        self, kind: str, item: Any, url: str, stored: list[StoredEntry], part: int
    ) -> Explanation:
        if item is None:  # a stored entry whose row is gone: only check can say more
            raise NotFound(f"{url}: its {kind} no longer exists")
        # Entries of the core's providers belong to this row only if their key is its id;
        # plugins' providers (video, news) list the core's URLs under keys of their own.
        stored = [
            row
            for row in stored
            if self._kind(row.provider) not in KINDS
            or (self._kind(row.provider) == kind and row.key == item.id)
        ]
        subject: dict[str, Any] = {"kind": kind, "id": item.id}
        if kind == "post":
            subject.update(type=item.type, title=item.title, part=part)
            reasons = self._post_reasons(item)
        elif kind == "term":
            subject.update(taxonomy=item.taxonomy, name=item.name)
            reasons = self._term_reasons(item)
        else:
            subject.update(name=item.name)
            reasons = self._author_reasons(item)
        if not stored and not reasons:
            reasons = self._entry_filters(kind, item, part)
        return self._finish(Explanation(url, subject), stored, reasons)

    def _post_reasons(self, post: Post) -> list[Exclusion]:
        post_type = self.session.get_one(PostType, post.type)
        reasons = self._failing(
            eligibility.post_type_rules(), PostType.name == post.type, post_type
        )
        rules = eligibility.post_rules(self.site, post_type, self.ctx.now)
        reasons += self._failing(rules, Post.id == post.id, post)
        if is_static_front_page(self.settings, post.id):
            reasons.append(
                Exclusion(
                    "front_page",
                    "S-206",
                    "it is the static front page: it is listed as the home page, "
                    f"{self.site_url}{permalinks.home_path()}",
                )
            )
        url = self.ctx.links.post(post)
        reasons += eligibility.candidate_exclusions(self.site, "post", post, url)
        return reasons

    def _term_reasons(self, term: Term) -> list[Exclusion]:
        taxonomy = self.session.get_one(Taxonomy, term.taxonomy)
        rules = eligibility.taxonomy_rules()
        reasons = self._failing(rules, Taxonomy.name == taxonomy.name, taxonomy)
        reasons += self._failing(eligibility.term_rules(self.site), Term.id == term.id, term)
        url = self.ctx.links.term(term)
        reasons += eligibility.candidate_exclusions(self.site, "term", term, url)
        terms = term_subtree(self.session, taxonomy.name, term.id) if taxonomy.hierarchical else []
        if self._listed_in_terms(terms or [term.id]) is None:
            below = " nor in the terms below it" if taxonomy.hierarchical else ""
            reasons.append(Exclusion("listed_posts", "S-203", f"no listed post is in it{below}"))
        return reasons

    def _author_reasons(self, author: Author) -> list[Exclusion]:
        off = eligibility.author_sitemap_exclusion(self.settings)
        rules = eligibility.author_rules(self.site)
        reasons = [off] if off is not None else []
        reasons += self._failing(rules, Author.id == author.id, author)
        reasons += eligibility.candidate_exclusions(self.site, "author", author, None)
        if self._listed_of_author(author.id) is None:
            reasons.append(Exclusion("listed_posts", "S-202", "none of its posts is listed"))
        return reasons

    def _failing(self, rules: list[Rule], where: ColumnElement[bool], item: Any) -> list[Exclusion]:
        """The rules ``item`` fails: each rule's criterion, as the engine's WHERE would
        take it (NULL fails), evaluated on its own, in one query."""
        if not rules:
            return []
        passes = [case((rule.criterion, 1), else_=0) for rule in rules]
        row = self.session.execute(select(*passes).where(where)).one()
        return [rule.exclusion(item) for rule, ok in zip(rules, row, strict=True) if not ok]

    def _entry_filters(self, kind: str, item: Any, part: int) -> list[Exclusion]:
        """Why a row that every rule lets through is not stored: a plugin's
        ``sitemap_entry`` dropped or moved its entry (computed again here)."""
        providers = [p for p in self.providers if p.kind == kind]
        if kind == "post":
            providers = [p for p in providers if p.name == item.type]
        for provider in providers:
            try:
                found = self._entry_filter(provider, item, part)
            except OUTAGE:
                raise
            except Exception as error:
                # What the maintainer met too: it logged the failure and left the entry
                # out (or as stored), and ``check`` lists it.
                return [
                    Exclusion(
                        "computation",
                        # What cannot be rendered is left out: no document ever breaks.
                        "S-404",
                        f"its entry in the {provider.name} sitemap could not be computed "
                        f"({type(error).__name__}: {str(error)[:200]}); the maintainer "
                        "leaves it out and logs why",
                    )
                ]
            if found:
                return found
        return []

    def _entry_filter(self, provider: Provider, item: Any, part: int) -> list[Exclusion]:
        renderer = EntryRenderer(provider, self.site_url, self.zone)
        for entry in provider.entries(self.ctx, {item.id}):
            if entry.part != part:
                continue
            result, changed_by = filter_entry(self.site, provider.kind, entry)
            if result is None:
                what = "drops its entry (its sitemap_entry)"
                return [eligibility.plugin_exclusion(changed_by[-1], what)]
            if result.path != entry.path:
                what = f"lists it as {self.site_url}{result.path} (its sitemap_entry)"
                return [eligibility.plugin_exclusion(changed_by[0], what)]
            renderer.render(result)  # as the maintainer stores it: it may fail too
        return []

    # The home page, archives and sitemap documents ----------------------------------------

    def _special(
        self, url: str, path: str, stored: list[StoredEntry], provider: str | None = None
    ) -> Explanation:
        """The home page (S-206) or a type's archive, listed under key 0 of a post type's
        sitemap (``provider``, when it is stored)."""
        if path == permalinks.home_path():
            subject: dict[str, Any] = {"kind": "home"}
            static = self.settings.front_page == "page" and self.settings.front_page_id
            host, dated_by = ("page" if static else "post"), "post"
        else:
            post_type = self._archive_type(path)
            host = dated_by = post_type.name if post_type is not None else str(provider)
            subject = {"kind": "archive", "type": host}
        stored = [row for row in stored if row.key == 0 or self._kind(row.provider) not in KINDS]
        reasons: list[Exclusion] = []
        if not stored:
            host_type = self.session.get(PostType, host)
            if host_type is not None:
                rules = eligibility.post_type_rules()
                reasons += self._failing(rules, PostType.name == host, host_type)
                if subject["kind"] == "archive" and host_type.noindex:
                    reasons.append(
                        Exclusion(
                            "type_noindex",
                            "S-201",
                            f"its type {host!r} is noindexed: only its posts set to index "
                            "are listed, not its archive",
                        )
                    )
            if newest_listed(self.session, dated_by) is None:
                reasons.append(
                    Exclusion(
                        "listed_posts",
                        "S-206" if subject["kind"] == "home" else "S-402",
                        f"it is dated by the newest listed {dated_by!r} post, and none is listed",
                    )
                )
        return self._finish(Explanation(url, subject), stored, reasons)

    def _archive_type(self, path: str) -> PostType | None:
        return self.session.scalars(
            select(PostType).where(PostType.archive_path == path).order_by(PostType.name)
        ).first()

    def _document(self, url: str, document: re.Match[str] | None) -> Explanation:
        index = index_url(self.site_url)
        if document is None:
            return Explanation(
                url,
                {"kind": "index"},
                reasons=[
                    Exclusion(
                        "index",
                        "S-309",
                        "it is the sitemap index (or a part of it, past 50,000 sitemaps):"
                        " robots.txt names it, no sitemap lists it",
                    )
                ],
            )
        name, number = document.group(1), document.group(2)
        page = int(number) if number else 1
        provider = next((p for p in self.providers if p.name == name), None)
        subject = {"kind": "sitemap", "sitemap": name, "page": page}
        if name == eligibility.AUTHOR_SITEMAP:
            off = eligibility.author_sitemap_exclusion(self.settings)
            if off is not None:  # it answers 404 until it is turned on again
                return Explanation(url, subject, reasons=[off])
        if provider is None:
            raise NotFound(f"{url}: there is no sitemap named {name!r}")
        explanation = Explanation(url, subject)
        if self.settings.private:
            explanation.reasons.append(_private())
            return explanation
        row = self.session.get(SitemapPage, (name, page)) if 1 <= page <= MAX_PAGES else None
        if row is None:
            pages = self.session.scalar(
                select(SitemapPage.page)
                .where(SitemapPage.provider == name)
                .order_by(SitemapPage.page.desc())
                .limit(1)
            )
            if pages:
                reason = Exclusion("pages", "S-304", f"the {name} sitemap has {pages} page(s)")
            else:
                reason = Exclusion(
                    "empty", "S-306", f"the {name} sitemap lists nothing: the index leaves it out"
                )
            explanation.reasons.append(reason)
            return explanation
        explanation.listed = True
        explanation.sitemaps.append(
            Listing(
                INDEX,
                index,
                1,
                w3c(row.lastmod, self.zone),
                f"the newest lastmod of its {row.entries} entries (S-301)",
            )
        )
        return explanation

    # Where it is listed ------------------------------------------------------------------

    def _finish(
        self, explanation: Explanation, stored: list[StoredEntry], reasons: list[Exclusion]
    ) -> Explanation:
        if self.settings.private:
            explanation.reasons = [_private(), *reasons]
            return explanation
        explanation.reasons = reasons
        explanation.sitemaps = [
            listing for row in stored if (listing := self._listing(row)) is not None
        ]
        explanation.listed = bool(explanation.sitemaps)
        if explanation.listed and reasons:
            explanation.note = (
                "the stored sitemaps list it although the rules leave it out; "
                "`sitemap-server check` shows what differs"
            )
        elif not explanation.listed and not reasons:
            explanation.note = (
                "no rule leaves it out, yet the stored sitemaps do not list it; "
                "`sitemap-server check` shows what differs"
            )
        return explanation

    def _stored(self, path: str) -> list[StoredEntry]:
        query = STORED.where(SitemapEntry.path == path).order_by(
            SitemapEntry.provider, SitemapEntry.key, SitemapEntry.part
        )
        order = {p.name: i for i, p in enumerate(self.providers)}
        rows = [
            StoredEntry._make(row) for row in self.session.execute(query) if row.provider in order
        ]
        return sorted(rows, key=lambda row: order[row.provider])

    def _listing(self, row: StoredEntry) -> Listing | None:
        position = tuple_(row.key, row.part)
        page = self.session.scalar(
            select(SitemapPage.page).where(
                SitemapPage.provider == row.provider,
                tuple_(SitemapPage.first_key, SitemapPage.first_part) <= position,
                tuple_(SitemapPage.last_key, SitemapPage.last_part) >= position,
            )
        )
        if page is None:
            return None
        return Listing(
            row.provider,
            sitemap_url(self.site_url, row.provider, page),
            page,
            w3c(row.lastmod, self.zone),
            self._lastmod_source(row),
        )

    def _lastmod_source(self, entry: StoredEntry) -> str:
        """Where the stored ``lastmod`` comes from, as the provider that lists it says
        (S-402). Its code failing leaves the date unexplained, not the answer."""
        provider = self.by_name[entry.provider]
        try:
            return provider.explain_lastmod(self.ctx, entry)
        except OUTAGE:
            raise
        except Exception as error:
            return (
                f"the {provider.name} sitemap's provider could not say "
                f"({type(error).__name__}: {str(error)[:200]})"
            )

    def _listed_in_terms(self, terms: list[int]) -> Any:
        listed = eligibility.listed_post_entry(post_terms.c.post_id, self.ctx.post_providers)
        return self.session.scalar(
            select(SitemapEntry.key)
            .select_from(post_terms)
            .join(SitemapEntry, listed)
            .where(post_terms.c.term_id.in_(terms))
            .limit(1)
        )

    def _listed_of_author(self, author_id: int) -> Any:
        listed = eligibility.listed_post_entry(Post.id, self.ctx.post_providers)
        return self.session.scalar(
            select(SitemapEntry.key)
            .select_from(Post)
            .join(SitemapEntry, listed)
            .where(Post.author_id == author_id)
            .limit(1)
        )

    # Finding what a URL is ---------------------------------------------------------------

    def _path(self, url: str) -> str | None:
        """The site-relative path of ``url``, or None for a URL elsewhere."""
        if url == self.site_url:
            return permalinks.home_path()
        if not url.startswith(self.site_url + "/"):
            return None
        return url[len(self.site_url) :]

    def _resolve(self, url: str, path: str) -> tuple[str, Any, int] | None:
        """The post (and part), term or author whose URL is ``url``: the one that holds
        its path (``content.object_urls``: one URL, one object)."""
        held = self.session.execute(
            select(ObjectUrl.kind, ObjectUrl.object_id, ObjectUrl.part).where(
                ObjectUrl.path == path
            )
        ).first()
        if held is None:
            return None
        item = self._get(held.kind, held.object_id)
        return None if item is None else (held.kind, item, held.part)

    def _object_url(self, kind: str, item: Any) -> str:
        if kind == "post":
            return self.ctx.links.post(item)
        if kind == "term":
            return self.ctx.links.term(item)
        return self.ctx.links.author(item)

    def _get(self, kind: str, object_id: int) -> Any:
        model = {"post": Post, "term": Term, "author": Author}[kind]
        return self.session.get(model, object_id)

    def _kind(self, provider: str) -> str | None:
        found = self.by_name.get(provider)
        return found.kind if found is not None else None


def _private() -> Exclusion:
    return Exclusion(
        "private",
        "S-205",
        'the site is private ("discourage search engines"): every sitemap is empty',
    )
