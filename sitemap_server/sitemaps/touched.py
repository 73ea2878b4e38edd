"""Which documents a pass of the maintainer changed, named by their cache tags (S-314).

A cache in front (Varnish, a CDN) keeps each answer with its tags (``documents.py``); a
purge of exactly the documents a change touched keeps every other one cached. The
maintainer notes them as it stores (``note``), and at the end of the pass
(``record``) the plugins hear them (``sitemap_documents_changed``), in its transaction:

- a setting the documents show (the site's URL, title, privacy, time zone), or one from
  outside the database that made stored fragments stale (the ini file's site URL, the
  page's byte limit, a plugin's document setting): every document, ``sitemaps``;
- a sitemap rebuilt whole: its pages, ``provider:NAME``, unless it was small enough to
  compare (``store.COMPARED_REBUILD``): then as below;
- entries that changed: the pages holding them, after any recut (``store.py``);
- a recut: each page whose bounds or count differ from before, and those that went
  (``pages.py``);
- a page that changed its date or count, appeared or went: the index, ``index``; the
  number of index files with it, or any page that came or went when robots.txt names
  each page's text form: robots.txt;
- any listed entry that changed: the feed (it lists the newest; whether the change
  reaches its first ``feed.entries`` is not asked).

A private site's documents show none of its content: while it is private only a change
of every document is told.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..documents import (
    ALL_TAG,
    FEED_TAG,
    INDEX_TAG,
    ROBOTS_TAG,
    document_tag,
    provider_tag,
    sitemap_name,
)
from .providers import BuildContext

# ``BuildContext.memo``: the tags noted in this pass.
TOUCHED = "touched"
# ``BuildContext.memo``, then ``Session.info`` while the plugins hear the tags: each
# sitemap's fragments that a pass replaced in place (``replaced``), or None for all.
REPLACED = "sitemap_server.replaced_fragments"


def note(ctx: BuildContext, *tags: str) -> None:
    ctx.memo.setdefault(TOUCHED, set()).update(tags)


def everything(ctx: BuildContext) -> None:
    note(ctx, ALL_TAG)


def pages(ctx: BuildContext, provider: str, numbers: Iterable[int]) -> None:
    """The pages ``numbers`` of ``provider`` changed, and so did the feed (if any did)."""
    tags = [document_tag(sitemap_name(provider, n)) for n in numbers]
    if tags:
        note(ctx, FEED_TAG, *tags)


def provider(ctx: BuildContext, name: str) -> None:
    """Every page of ``name`` changed (rebuilt whole), and the index and feed with them."""
    note(ctx, provider_tag(name), INDEX_TAG, FEED_TAG)


def index(ctx: BuildContext, robots: bool = False) -> None:
    """The index changed; ``robots``: the number of its files too."""
    note(ctx, INDEX_TAG, *([ROBOTS_TAG] if robots else []))


def replaced(ctx: BuildContext, provider: str, fragments: dict[str, str] | None) -> None:
    """The entries of ``provider`` that changed kept their places (no page was recut):
    each old fragment with the one that replaced it. None: it was recut, or is not
    known. Finished documents are then edited rather than rendered (``finished.py``); a
    sitemap refreshed twice in one pass, or a pass undone in part, edits none."""
    memo = ctx.memo.setdefault(REPLACED, {})
    if memo is None:
        return
    memo[provider] = None if provider in memo else fragments


def unknown(ctx: BuildContext) -> None:
    """What was replaced is not known (part of the pass was undone)."""
    ctx.memo[REPLACED] = None


def record(ctx: BuildContext) -> list[str]:
    """Tell the plugins what this pass changed (nothing when nothing did): the tags noted,
    ``sitemaps`` alone when it is among them, no page of a provider that is named whole.
    Returns them."""
    tags: set[str] = ctx.memo.pop(TOUCHED, set())
    replaced_fragments = ctx.memo.pop(REPLACED, None)
    if not tags:
        return []
    if ALL_TAG in tags:
        tags = {ALL_TAG}
    elif ctx.settings.private:
        return []  # a private site's documents show none of its content: none changed
    whole = {tag.removeprefix("provider:") for tag in tags if tag.startswith("provider:")}
    if whole:
        tags = {tag for tag in tags if not _page_of(tag, whole)}
    told = sorted(tags)
    ctx.session.info[REPLACED] = replaced_fragments
    try:
        ctx.plugins.hook.sitemap_documents_changed(session=ctx.session, tags=told, site=ctx.site)
    finally:
        ctx.session.info.pop(REPLACED, None)
    return told


def _page_of(tag: str, providers: set[str]) -> bool:
    """Whether ``tag`` names a page of one of ``providers``."""
    name, _, _number = tag.removeprefix("doc:").rpartition("-sitemap")
    return tag.startswith("doc:") and name in providers
