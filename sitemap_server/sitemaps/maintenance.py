"""Keeping ``sitemap_entries``, ``sitemap_pages`` and ``sitemap_versions`` current.

A write only records what it changed (``changes.record`` → the change log). The
maintainer (``apply_pending``: the worker, continuously, or a sitemap request that finds
a change waiting too long) claims the log in batches and applies each batch here with
``refresh``, in one short transaction: a crawler never waits for a recomputation, and a
writer never waits for a sitemap.

Per provider: the entries of the affected keys are recomputed and replaced. If the set of
listed (key, part) pairs changed, pages are recut from the first page that changed (new
posts only ever touch the last page); if only dates changed, the newest ``lastmod`` of the
pages concerned is recomputed (both in ``pages.py``); the provider's version is bumped
(``versions.py``). A full rebuild is the same ``refresh`` with every key.
"""

from __future__ import annotations

import copy
import logging
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select, text
from sqlalchemy.orm import Session, sessionmaker

from ..content.links import Links
from ..content.translations import group_members
from ..models import (
    SITE,
    Post,
    SitemapEntry,
    SitemapPage,
    SitemapVersion,
    Term,
    site_of,
    take_write_lock,
    update_planner_statistics,
)
from ..models.meta import utcnow
from ..models.site import configured_site_url, effective_site_url, get_settings, site_zone
from . import changes as change_log
from . import journal, newest, touched
from .changes import ContentChanges
from .failures import OUTAGE, WHOLE, failed
from .providers import PAGE_FRAME_BYTES, BuildContext, Provider, in_refresh_order
from .rendering import render_key, settings_key
from .store import CHANGED, bump_changed, update_provider
from .versions import StoredState, bump, set_due, stored_state

if TYPE_CHECKING:
    from ..site import Site

log = logging.getLogger(__name__)

# Changes at least this large (objects), and rebuilds of sites at least this large (posts),
# are followed by fresh planner statistics.
BULK_CHANGE = 1000
# Change-log rows one maintainer transaction applies at most: large enough that an import
# is applied in few passes, small enough that a pass stays short.
APPLY_BATCH = 20_000
# A full batch applied and at least one change per this many stored entries still waiting:
# the maintainer rebuilds every sitemap instead. Applying a change costs about twice
# what rebuilding an entry does (a 100,000-post import on SQLite: 25 s applied batch by
# batch, 12 s rebuilt), so this is where the two cost the same.
REBUILD_SHARE = 2
MAINTAINER = "maintainer"


def apply_pending(
    session: Session, limit: int = APPLY_BATCH, may_rebuild: bool = True, wait: bool = True
) -> int | None:
    """Apply up to ``limit`` rows of the change log in ``session``'s transaction: the
    number applied (0: none waiting), or None when another maintainer is at work (it
    will apply them). The rows are deleted in this transaction, so a crash loses none.
    With ``may_rebuild``, a full batch that leaves many more waiting for the size of the
    site turns into a rebuild of every sitemap (``_cheaper_to_rebuild``). Without
    ``wait``, None also when SQLite's write lock is taken (``try_lock``)."""
    if not try_lock(session, MAINTAINER, wait):
        return None
    changes, count = change_log.claim(session, limit)
    if may_rebuild and count == limit and _cheaper_to_rebuild(session):
        # An import's worth of changes: rebuilding every sitemap costs less than applying
        # them batch by batch (each batch would recompute the same authors and terms).
        count += change_log.clear(session)
        changes = ContentChanges(everything=True)
    if count:
        refresh(session, changes)
    return count


def _cheaper_to_rebuild(session: Session) -> bool:
    """Whether the changes still waiting are many for the size of the site."""
    stored = session.scalar(select(func.count()).select_from(SitemapEntry)) or 0
    return change_log.holds_at_least(session, max(1, stored // REBUILD_SHARE))


def apply_all(
    sessions: sessionmaker[Session], progress: Callable[[int], object] | None = None
) -> int:
    """Apply the change log batch after batch, each in a transaction of its own, while
    each batch is full (``APPLY_BATCH``) and no other maintainer is at work; how many were
    applied. A batch that was not full took all that waited when it began: what was
    written meanwhile is left to the next call, so that under a steady stream of writes
    the changes are applied in batches a poll apart rather than a few at a time, back to
    back (a pass costs much the same for one change as for ten). ``progress`` hears how
    many each batch applied (a rebuild: all that waited)."""
    applied = 0
    while count := apply_some(sessions, APPLY_BATCH, may_rebuild=True):
        applied += count
        if progress is not None:
            progress(count)
        if count < APPLY_BATCH:
            break
    return applied


def apply_some(
    sessions: sessionmaker[Session], limit: int, may_rebuild: bool = False, wait: bool = True
) -> int | None:
    """``apply_pending`` in a transaction of its own. By default never a rebuild: what a
    request that found changes waiting too long can afford before it answers (the rest
    is left to the next request or to a maintainer)."""
    with sessions.begin() as session:
        return apply_pending(session, limit, may_rebuild, wait)


def rebuild(session: Session) -> list[str]:
    """Rebuild every sitemap from the content: the change log is emptied first (a
    rebuild is every key changed), so what it held is in the rebuild's reads. What could
    not be computed (``refresh``)."""
    lock(session, MAINTAINER)
    change_log.clear(session)
    return refresh(session, ContentChanges(everything=True))


def try_lock(session: Session, name: str, wait: bool = True) -> bool:
    """Hold ``name`` to the end of the transaction, unless someone else does (PostgreSQL);
    on SQLite, take the database's write lock (one writer: waiting is the lock), or,
    without ``wait``, only if no one holds it now."""
    if session.get_bind().dialect.name == "postgresql":
        return bool(session.scalar(text("SELECT pg_try_advisory_xact_lock(:key)"), _lock_key(name)))
    return take_write_lock(session, wait)


def all_providers(session: Session, site: Site) -> list[Provider]:
    """The sitemaps of ``site``'s plugins (``sitemap_providers``), in index order."""
    hook = site.plugins.hook.sitemap_providers
    found = [p for result in hook(session=session, site=site) for p in result]
    return sorted(found, key=lambda p: (p.order, p.name))


def build_context(session: Session, site: Site, providers: list[Provider]) -> BuildContext:
    settings = get_settings(session)
    site_url = effective_site_url(settings, configured_site_url(session))
    output = site.output_settings(site_url)
    zone = site_zone(settings.timezone)
    return BuildContext(
        session=session,
        site=site,
        settings=settings,
        site_url=site_url,
        now=utcnow(),
        links=Links(session, site_url, zone),
        page_bytes=site.max_page_bytes - PAGE_FRAME_BYTES,
        post_providers=[p.name for p in providers if p.kind == "post"],
        zone=zone,
        output=output,
        output_key=settings_key(output),
    )


def output_of(session: Session) -> dict[str, Any]:
    """``Site.output_settings`` for the site URL in effect (``build_context``'s)."""
    settings = get_settings(session)
    site_url = effective_site_url(settings, configured_site_url(session))
    return site_of(session).output_settings(site_url)


def unrendered(output: dict[str, Any], providers: list[Provider], state: StoredState) -> set[str]:
    """The providers whose stored fragments are not all from their current template and
    output settings (never built, built before fragments were stored, the template
    changed, or a start with another site URL, page size or plugin document setting:
    said in the log, once per pass that rebuilds)."""
    key = settings_key(output)
    stale = {p.name for p in providers if state.rendered.get(p.name) != render_key(p.template, key)}
    moved: dict[str, tuple[Any, Any]] = {}
    for name in sorted(stale):
        built = state.built.get(name)
        if built is not None and built != output:
            for setting in sorted(built.keys() | output.keys()):
                if built.get(setting) != output.get(setting):
                    moved.setdefault(setting, (built.get(setting), output.get(setting)))
    if moved:
        log.warning(
            "the stored sitemaps (%s) were built with other settings: %s; rebuilding them",
            ", ".join(sorted(stale)),
            "; ".join(f"{name} {old!r} -> {new!r}" for name, (old, new) in moved.items()),
        )
    return stale


def refresh(session: Session, changes: ContentChanges) -> list[str]:
    """Apply ``changes`` to every provider's stored entries, pages and versions; what
    could not be computed (left as stored, logged), in words."""
    site = site_of(session)
    providers = all_providers(session, site)
    ctx = build_context(session, site, providers)
    state = stored_state(session)
    stored = state.due
    stale = unrendered(ctx.output, providers, state)
    overdue: set[str] = set()
    if not changes.everything:
        changes, overdue = _with_due_changes(ctx, providers, stored, changes)
        changes = with_translations(session, changes)
    bulk = len(changes.posts) + len(changes.terms) >= BULK_CHANGE or (
        changes.everything and _is_large(session)
    )
    if bulk:  # the rows just loaded, before the queries that join them
        update_planner_statistics(session)
    site_wide = changes.everything or changes.site or changes.whole_site
    if site_wide:
        bump(session, SITE)
    if site_wide or stale:
        # Every document shows the site's settings, and the output settings (the site URL
        # from the ini file …) that made a provider's fragments stale.
        touched.everything(ctx)
    if changes.whole_site:
        site.plugins.hook.sitemap_changed(session=session, sitemap=SITE, urls=None, site=site)
    names = [p.name for p in providers]
    # The sitemaps of a type or taxonomy that is gone (or, rebuilding all, of anything
    # no provider makes any more) leave the database.
    gone = set(changes.providers) - {*names, SITE}
    if changes.everything or gone:
        journal.everything(ctx)  # what the sitemaps gone listed leaves the feed
        for name in gone:
            touched.provider(ctx, name)
        for table in (SitemapEntry, SitemapPage, SitemapVersion):
            if changes.everything:
                session.execute(delete(table).where(table.provider.not_in([*names, SITE])))
            else:
                session.execute(delete(table).where(table.provider.in_(sorted(gone))))
    work: list[tuple[Provider, Keys]] = []
    for provider in in_refresh_order(providers):
        # A provider the database has no version of was never built here (a plugin just
        # installed, or enabled again after a rebuild without it): build all of it.
        whole = (
            changes.everything
            or provider.name not in stored
            or provider.name in overdue
            or provider.name in changes.providers
            or provider.name in stale
        )
        keys: Keys
        if whole:
            keys = None
        elif provider.depends_on:
            keys = AskedLater(changes)
        else:
            keys = affected_keys(ctx, provider, changes)
        work.append((provider, keys))
    update_all(ctx, work, stored, bulk)
    return ctx.failures


@dataclass(frozen=True)
class AskedLater:
    """The keys of a provider that reads other sitemaps (``depends_on``): asked of it
    (``affected_keys``) when its turn comes, once those are refreshed, so that it sees
    what crawlers will be served (the news sitemap's keys hold the dates of the posts
    listed there)."""

    changes: ContentChanges


Keys = set[int] | None | AskedLater


def affected_keys(
    ctx: BuildContext, provider: Provider, changes: ContentChanges
) -> set[int] | None:
    """``provider.affected_keys``; None (all of them) when it fails, logged."""
    try:
        return provider.affected_keys(ctx, changes)
    except OUTAGE:
        raise
    except Exception as error:
        # Which of its entries the change reaches is unknown: all of them.
        failed(ctx, f"the keys a change reaches in the {provider.name} sitemap", error, WHOLE)
        return None


def update_all(
    ctx: BuildContext,
    work: list[tuple[Provider, Keys]],
    stored: dict[str, datetime | None],
    bulk: bool = False,
) -> None:
    """``update_provider`` for each (provider, keys) of ``work``, in order, all in one
    savepoint; if one fails, that is undone and each is done again in a savepoint of its
    own (``contained_update``). A failure is rare, and a savepoint a provider costs two
    statements: on PostgreSQL two round trips each."""
    failures = len(ctx.failures)
    dues = dict(stored)
    try:
        with ctx.session.begin_nested():
            for provider, keys in _asked(ctx, work):
                update_provider(ctx, provider, keys, stored)
                if bulk:  # later providers join the entries just stored
                    update_planner_statistics(ctx.session, SitemapEntry.__tablename__)
            bump_changed(ctx)
        journal.record(ctx)
        touched.record(ctx)
        return
    except OUTAGE:
        raise
    except Exception:
        # Undone: what was reported and stored meanwhile is found again, one by one.
        ctx.memo.pop(CHANGED, None)
        touched.unknown(ctx)
        del ctx.failures[failures:]
        stored.clear()
        stored.update(dues)
    for provider, keys in _asked(ctx, work):
        contained_update(ctx, provider, keys, stored)
        if bulk:
            update_planner_statistics(ctx.session, SitemapEntry.__tablename__)
    # The paths noted by what was undone are compared too: the journal follows what is
    # stored, whatever was noted; a purge of what was undone costs a cache a miss.
    journal.record(ctx)
    touched.record(ctx)


def _asked(
    ctx: BuildContext, work: list[tuple[Provider, Keys]]
) -> Iterator[tuple[Provider, set[int] | None]]:
    """Each (provider, keys) of ``work``, the keys left for later asked as its turn comes;
    a provider the change does not reach is left out."""
    for provider, keys in work:
        if isinstance(keys, AskedLater):
            keys = affected_keys(ctx, provider, keys.changes)
        if keys is None or keys:
            yield provider, keys


def contained_update(
    ctx: BuildContext,
    provider: Provider,
    keys: set[int] | None,
    stored: dict[str, datetime | None] | None = None,
) -> None:
    """``update_provider`` in a savepoint. If it fails (a provider's or plugin's code
    raised, or a query of theirs failed), it is undone and tried again on each half of
    the keys, down to the single key that fails: that entry stays as stored and the
    failure is logged and kept in ``ctx.failures``; every other key is applied. A whole
    rebuild that fails leaves the sitemap as stored."""
    try:
        with ctx.session.begin_nested():
            update_provider(ctx, provider, keys, stored)
            bump_changed(ctx)
    except OUTAGE:
        raise
    except Exception as error:
        ctx.memo.pop(CHANGED, None)
        touched.unknown(ctx)
        newest.forget(ctx)  # what it noted of its posts' dates was undone
        if keys is None or len(keys) == 1:
            what = (
                f"the {provider.name} sitemap"
                if keys is None
                else f"the entry with key {next(iter(keys))} in the {provider.name} sitemap"
            )
            failed(ctx, what, error)
            return
        ordered = sorted(keys)
        half = len(ordered) // 2
        contained_update(ctx, provider, set(ordered[:half]), stored)
        contained_update(ctx, provider, set(ordered[half:]), stored)


def with_translations(session: Session, changes: ContentChanges) -> ContentChanges:
    """``changes`` and the other members of the translation groups of its posts and terms:
    each member names the others (S-405), so a change of one (listed or not, a new URL)
    is a change of every one, for every provider, the plugins' included."""
    posts = group_members(session, Post.type, changes.posts)
    terms = group_members(session, Term.taxonomy, changes.terms)
    if posts <= changes.posts and terms <= changes.terms:
        return changes
    return replace(changes, posts=changes.posts | posts, terms=changes.terms | terms)


def _with_due_changes(
    ctx: BuildContext,
    providers: list[Provider],
    stored: dict[str, datetime | None],
    changes: ContentChanges,
) -> tuple[ContentChanges, set[str]]:
    """``changes`` and what became due in providers whose time has come (a scheduled post
    went live) but that no request has caught up yet; and those to rebuild whole for it.

    Every refresh brings these in, a write's as well as ``catch_up``'s: refreshed without
    them, a provider's next due time would move past the change, never to be made.
    """
    found = copy.deepcopy(changes)  # the caller's record stays as it was
    whole: set[str] = set()
    for provider in providers:
        due_at = stored.get(provider.name)
        if due_at is not None and due_at <= ctx.now:
            due = provider.due_changes(ctx, due_at)
            if due is None:
                whole.add(provider.name)
            else:
                found.merge(due)
    return found, whole


def _is_large(session: Session) -> bool:
    """Whether the site has at least ``BULK_CHANGE`` posts (counting no further)."""
    some = select(Post.id).limit(BULK_CHANGE).subquery()
    return session.scalar(select(func.count()).select_from(some)) == BULK_CHANGE


def catch_up(session: Session, wait: bool = True) -> bool:
    """Bring the stored sitemaps up to date now: apply the change log as it is (waiting
    for a maintainer at work to finish), the providers whose ``due_at`` has passed (scheduled
    posts going live), and build those never built. Safe to run from several processes
    at once: the second finds nothing left to do. Whether anything was done. Without
    ``wait``, nothing when a maintainer is at work (it, or a later call, does it)."""
    site = site_of(session)
    if wait:
        lock(session, MAINTAINER)
    elif not try_lock(session, MAINTAINER, wait=False):
        return False
    applied = 0
    # Held already: the try-lock of apply_pending takes it again (advisory locks nest).
    # What waits now, not what is written meanwhile (as ``apply_all``): under a steady
    # stream of writes this transaction would never end, and none of it be served.
    while count := apply_pending(session):
        applied += count
        if count < APPLY_BATCH:
            break
    now = utcnow()
    state = stored_state(session)
    stored = state.due
    due = {name: due_at for name, due_at in stored.items() if due_at is not None and due_at <= now}
    providers = all_providers(session, site)
    stale = unrendered(output_of(session), providers, state)
    missing = [p for p in in_refresh_order(providers) if p.name not in stored or p.name in stale]
    if not due and not missing:
        return bool(applied)
    ctx = build_context(session, site, providers)
    if stale:  # made with other output settings (the ini file's site URL …): every document
        touched.everything(ctx)
    update_all(ctx, [(provider, None) for provider in missing], stored)
    refresh(session, ContentChanges())  # it brings in what is due
    # Whatever ``refresh`` did not look at is still due at a time that has passed.
    for provider in providers:
        if provider.name in due:
            set_due(session, provider.name, provider.next_due(ctx))
    return True


def lock(session: Session, name: str) -> None:
    """Hold ``name`` to the end of the transaction, waiting for whoever holds it
    (PostgreSQL; SQLite has one writer anyway)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), _lock_key(name))


def _lock_key(name: str) -> dict[str, int]:
    """The PostgreSQL advisory lock that stands for ``name``."""
    return {"key": zlib.crc32(name.encode())}
