"""Which content is listed in the sitemaps (S-201 … S-208): the one place that decides.

The rules are named, each with its requirement, its SQL criterion and the words that say
why a row fails it. The engine lists the rows that meet all of a kind's rules at once
(``and_`` of their criteria), so counts and pages are exact; ``sitemap-server explain``
evaluates the very same criteria one by one on a single row and names each that fails
(S-406). Then come the checks that need the URL itself (a canonical must equal the
permalink; S-208's limits on a ``loc``) and the plugins' vetoes, in ``candidate_exclusions``.

Plugins add rules through ``sitemap_exclusion_criteria`` and vetoes through
``sitemap_exclude``; each implementation is asked on its own, so a rule or veto carries the
name of the plugin it comes from. Every provider, core or plugin, lists posts, authors and
terms through these functions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import BindParameter, ColumnElement, and_, or_, select

from ..hookspecs import implementations
from ..models import Author, Post, PostType, Robots, SitemapEntry, Taxonomy, Term
from ..models.content import LISTED_STATUSES, MAX_URL_LENGTH
from ..models.site import ExcludedPost, SiteSettings

if TYPE_CHECKING:
    from ..site import Site

log = logging.getLogger(__name__)

# Rules checked on the URL rather than in SQL.
CANONICAL_RULE = "canonical"
URL_RULE = "url"
# What a plugin's rules and vetoes are named: "plugin:video".
PLUGIN_RULE = "plugin:{}"
PLUGIN_REQUIREMENT = "S-502"
REQUIREMENTS = {"post": "S-201", "author": "S-202", "term": "S-203"}


@dataclass(frozen=True)
class Exclusion:
    """Why one row or URL is left out: the rule it fails, in the spec's words."""

    rule: str
    requirement: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "requirement": self.requirement, "reason": self.reason}


@dataclass(frozen=True)
class Rule:
    """One rule a row must meet to be listed.

    ``criterion`` is true for the rows it lets through (the engine's SQL); ``reason``
    says, for a row that fails it, why.
    """

    name: str
    requirement: str
    criterion: ColumnElement[bool]
    reason: Callable[[Any], str]

    def exclusion(self, item: Any) -> Exclusion:
        return Exclusion(self.name, self.requirement, self.reason(item))


def _plugin_rules(site: Site, kind: str) -> list[Rule]:
    """One rule per plugin whose ``sitemap_exclusion_criteria`` has criteria for ``kind``,
    asked in the order pluggy calls them."""
    rules = []
    for name, call in implementations(site.plugins, "sitemap_exclusion_criteria"):
        found = call(kind=kind, site=site)
        if found:
            rules.append(
                Rule(PLUGIN_RULE.format(name), PLUGIN_REQUIREMENT, and_(*found), _left_out_by(name))
            )
    return rules


def _left_out_by(plugin: str) -> Callable[[Any], str]:
    return lambda item: f"the plugin {plugin} leaves it out (its sitemap_exclusion_criteria)"


def plugin_exclusion(plugin: str, what: str) -> Exclusion:
    """A plugin's rule or veto, named after the plugin: ``what`` it does, in words."""
    return Exclusion(PLUGIN_RULE.format(plugin), PLUGIN_REQUIREMENT, f"the plugin {plugin} {what}")


def criteria(rules: list[Rule]) -> ColumnElement[bool]:
    """What the engine lists: the rows that meet every rule."""
    return and_(*(rule.criterion for rule in rules))


def _scheduled(post: Post) -> str:
    if post.published_at is None:
        return "it has no publication date"
    return f"it is dated in the future: scheduled until {post.published_at.isoformat()}"


def post_rules(site: Site, post_type: PostType, now: datetime) -> list[Rule]:
    """S-201: what a post of ``post_type`` must be to be listed (before the URL checks)."""
    rules = [
        Rule(
            "status",
            "S-201",
            Post.status.in_(LISTED_STATUSES),
            lambda post: (
                f"its status is {post.status}; only published and scheduled (future) posts "
                "are listed"
            ),
        ),
        Rule(
            "password",
            "S-201",
            or_(Post.password.is_(None), Post.password == ""),
            lambda post: "it is protected by a password",
        ),
        Rule(
            "noindex",
            "S-201",
            Post.robots != Robots.NOINDEX,
            lambda post: "it is set to noindex",
        ),
    ]
    if post_type.noindex:
        # A noindexed type lists only the posts explicitly set to "index".
        rules.append(
            Rule(
                "type_noindex",
                "S-201",
                Post.robots != Robots.DEFAULT,
                lambda post: (
                    f"its type {post.type!r} is noindexed and the post is not set to index"
                ),
            )
        )
    rules += [
        Rule(
            "exclude_from_sitemap",
            "S-201",
            Post.exclude_from_sitemap.is_(False),
            lambda post: 'it is flagged "exclude from sitemap"',
        ),
        Rule(
            "excluded_post_ids",
            "S-201",
            Post.id.not_in(select(ExcludedPost.post_id)),
            lambda post: "its id is in the site's excluded posts (settings: excluded_post_ids)",
        ),
        Rule("scheduled", "S-201", Post.published_at <= now, _scheduled),
        *_plugin_rules(site, "post"),
    ]
    return rules


def post_criteria(site: Site, post_type: PostType, now: datetime) -> ColumnElement[bool]:
    """S-201: the posts of ``post_type`` that may be listed (before the URL checks)."""
    return and_(Post.type == post_type.name, criteria(post_rules(site, post_type, now)))


def post_type_rules() -> list[Rule]:
    """S-101: non-public types get no sitemap. A noindexed type has one only while one of
    its posts is explicitly set to "index" (S-201); it answers 404 otherwise."""
    return [
        Rule(
            "type_public",
            "S-201",
            PostType.public.is_(True),
            lambda post_type: f"its type {post_type.name!r} is not public",
        )
    ]


def taxonomy_rules() -> list[Rule]:
    """S-203: the taxonomies that have a sitemap."""
    return [
        Rule(
            "taxonomy_public",
            "S-203",
            Taxonomy.public.is_(True),
            lambda taxonomy: f"its taxonomy {taxonomy.name!r} is not public",
        ),
        Rule(
            "taxonomy_noindex",
            "S-203",
            Taxonomy.noindex.is_(False),
            lambda taxonomy: f"its taxonomy {taxonomy.name!r} is noindexed",
        ),
    ]


# The name of the authors' sitemap (``providers.authors``), which a setting turns off.
AUTHOR_SITEMAP = "author"


def author_sitemap_exclusion(settings: SiteSettings) -> Exclusion | None:
    """Why no author is listed at all: the site settings turn the author sitemap off
    (``author_sitemap``; its provider is then not registered, as a post type without a
    sitemap), or None."""
    if settings.author_sitemap:
        return None
    return Exclusion(
        "author_sitemap",
        "S-202",
        "the site settings turn the author sitemap off (author_sitemap): no author is listed",
    )


def author_rules(site: Site) -> list[Rule]:
    """S-202 (the part about the author; the listed-post part is ``listed_post_entry``)."""
    return [
        Rule(
            "author_noindex",
            "S-202",
            Author.noindex.is_(False),
            lambda author: "its author archive is noindexed",
        ),
        *_plugin_rules(site, "author"),
    ]


def author_criteria(site: Site) -> ColumnElement[bool]:
    return criteria(author_rules(site))


def term_rules(site: Site) -> list[Rule]:
    """S-203 (the term's own flags; the listed-post part is ``listed_post_entry``)."""
    return [
        Rule("term_noindex", "S-203", Term.noindex.is_(False), lambda term: "it is noindexed"),
        *_plugin_rules(site, "term"),
    ]


def term_criteria(site: Site) -> ColumnElement[bool]:
    return criteria(term_rules(site))


def listed_post_entry(
    post_id: Any, post_providers: list[str] | BindParameter[Any]
) -> ColumnElement[bool]:
    """S-202, S-203: the stored entry of a listed post, which authors and terms need one
    of (what the post sitemaps list is what counts). ``post_providers``: their names, or
    an expanding bound parameter that will hold them."""
    return and_(
        SitemapEntry.key == post_id,
        SitemapEntry.part == 1,
        SitemapEntry.provider.in_(post_providers),
    )


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


def vetoing_plugin(site: Site, kind: str, item: Any) -> str | None:
    """The plugin whose ``sitemap_exclude`` leaves ``item`` out, or None.

    The implementations are asked as pluggy asks them (``firstresult``: the first answer
    that is not None decides), one by one so that the answer can name its plugin.
    """
    for name, call in implementations(site.plugins, "sitemap_exclude"):
        result = call(kind=kind, item=item, site=site)
        if result is not None:
            return name if result else None
    return None


def excluded_by_plugins(site: Site, kind: str, item: Any) -> bool:
    """The slow path: a plugin's ``sitemap_exclude`` said so."""
    return vetoing_plugin(site, kind, item) is not None


def candidate_exclusions(site: Site, kind: str, item: Any, url: str | None) -> Iterator[Exclusion]:
    """What leaves out a row that met the SQL rules, checked on its ``url`` (None: no URL
    checks, as for authors) and by the plugins' vetoes, in this order and lazily: a
    provider stops at the first, ``explain`` takes them all."""
    if url is not None:
        canonical = item.canonical
        if not canonical_allows(canonical, url):
            yield Exclusion(
                CANONICAL_RULE,
                REQUIREMENTS[kind],
                f"its canonical URL is {canonical}, not its own URL",
            )
        problem = url_problem(url)
        if problem:
            yield Exclusion(URL_RULE, "S-208", f"its URL is {problem}")
    plugin = vetoing_plugin(site, kind, item)
    if plugin is not None:
        yield plugin_exclusion(plugin, "leaves it out (its sitemap_exclude)")
