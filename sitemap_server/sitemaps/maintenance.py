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
from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Table, bindparam, delete, func, insert, select, text
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as SATimeoutError
from sqlalchemy.orm import Session, sessionmaker

from ..batches import chunks
from ..content.links import Links
from ..content.translations import group_members
from ..hookspecs import implementations
from ..models import (
    SITE,
    Post,
    SitemapEntry,
    SitemapPage,
    SitemapVersion,
    Term,
    site_of,
    take_write_lock,
)
from ..models.meta import utcnow
from ..models.notifications import ADDED, REMOVED, UPDATED
from ..models.site import configured_site_url, effective_site_url, get_settings
from . import changes as change_log
from . import newest
from .changes import ContentChanges, UrlChange
from .entries import Entry
from .pages import overfull_pages, recut_pages, refresh_page_dates
from .providers import PAGE_FRAME_BYTES, BuildContext, Provider
from .rendering import EntryRenderer, render_key, settings_key
from .versions import StoredState, bump, set_due, set_rendered, stored_state
from .xml import EntryRules, site_zone

if TYPE_CHECKING:
    from ..site import Site

log = logging.getLogger(__name__)

# Changes at least this large (objects), and rebuilds of sites at least this large (posts),
# are followed by fresh planner statistics.
BULK_CHANGE = 1000
# A sitemap rebuilt as a whole is compared with what it held, URL by URL, up to this many
# entries (one IndexNow submission); a larger one is announced as rebuilt, without URLs.
COMPARED_REBUILD = 10_000
# A log line about an entry names this many of its problems, then counts the others.
MAX_LOGGED_PROBLEMS = 3
# Characters of an error's text that a log line or ``check`` repeats.
MAX_ERROR_TEXT = 300


# Change-log rows one maintainer transaction applies at most: large enough that an import
# is applied in few passes, small enough that a pass stays short.
APPLY_BATCH = 20_000
# A full batch applied and at least one change per this many stored entries still waiting:
# the maintainer rebuilds every sitemap instead. Applying a change costs about twice
# what rebuilding an entry does (a 100,000-post import on SQLite: 25 s applied batch by
# batch, 12 s rebuilt), so this is where the two cost the same.
REBUILD_SHARE = 2
MAINTAINER = "maintainer"
# An entry's key and part as the database stores them (BIGINT, INTEGER): a provider that
# computes one outside these has that entry left out, not the whole refresh failed.
KEY_RANGE = range(-(2**63), 2**63)
PART_RANGE = range(1, 2**31)
# The database unavailable, or a lock or statement timeout: never contained (the worker
# waits and tries again, a request answers 503). Any other error while one sitemap or one
# entry is computed is contained: that entry (or sitemap) is left as stored, logged, and
# reported by ``check``, and everything else is applied.
OUTAGE = (OperationalError, InterfaceError, SATimeoutError)
LEFT_OUT = "is left out"
# ``BuildContext.memo``: the providers refreshed with a change a crawler would see, and
# the failures and warnings already logged in this refresh.
CHANGED = "changed"
LOGGED = "logged"
WHOLE = "the whole sitemap is refreshed"


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


def apply_all(sessions: sessionmaker[Session]) -> int:
    """Apply the change log batch after batch, each in a transaction of its own, until
    none is left or another maintainer is at work; how many were applied."""
    applied = 0
    while count := apply_some(sessions, APPLY_BATCH, may_rebuild=True):
        applied += count
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
    return BuildContext(
        session=session,
        site=site,
        settings=settings,
        site_url=site_url,
        now=utcnow(),
        links=Links(session, site_url),
        page_bytes=site.max_page_bytes - PAGE_FRAME_BYTES,
        post_providers=[p.name for p in providers if p.kind == "post"],
        zone=site_zone(settings.timezone),
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
    if changes.everything or changes.site or changes.whole_site:
        bump(session, SITE)
    if changes.whole_site:
        site.plugins.hook.sitemap_changed(session=session, sitemap=SITE, urls=None, site=site)
    names = [p.name for p in providers]
    # The sitemaps of a type or taxonomy that is gone (or, rebuilding all, of anything
    # no provider makes any more) leave the database.
    gone = set(changes.providers) - {*names, SITE}
    if changes.everything or gone:
        for table in (SitemapEntry, SitemapPage, SitemapVersion):
            if changes.everything:
                session.execute(delete(table).where(table.provider.not_in([*names, SITE])))
            else:
                session.execute(delete(table).where(table.provider.in_(sorted(gone))))
    work: list[tuple[Provider, set[int] | None]] = []
    for provider in providers:
        # A provider the database has no version of was never built here (a plugin just
        # installed, or enabled again after a rebuild without it): build all of it.
        whole = (
            changes.everything
            or provider.name not in stored
            or provider.name in overdue
            or provider.name in changes.providers
            or provider.name in stale
        )
        if whole:
            keys = None
        else:
            try:
                keys = provider.affected_keys(ctx, changes)
            except OUTAGE:
                raise
            except Exception as error:
                # Which of its entries the change reaches is unknown: all of them.
                _failed(
                    ctx, f"the keys a change reaches in the {provider.name} sitemap", error, WHOLE
                )
                keys = None
        if keys is None or keys:
            work.append((provider, keys))
    update_all(ctx, work, stored, bulk)
    return ctx.failures


def update_all(
    ctx: BuildContext,
    work: list[tuple[Provider, set[int] | None]],
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
            for provider, keys in work:
                update_provider(ctx, provider, keys, stored)
                if bulk:  # later providers join the entries just stored
                    update_planner_statistics(ctx.session, SitemapEntry.__tablename__)
            _bump_changed(ctx)
        return
    except OUTAGE:
        raise
    except Exception:
        # Undone: what was reported and stored meanwhile is found again, one by one.
        ctx.memo.pop(CHANGED, None)
        del ctx.failures[failures:]
        stored.clear()
        stored.update(dues)
    for provider, keys in work:
        contained_update(ctx, provider, keys, stored)
        if bulk:
            update_planner_statistics(ctx.session, SitemapEntry.__tablename__)


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
            _bump_changed(ctx)
    except OUTAGE:
        raise
    except Exception as error:
        ctx.memo.pop(CHANGED, None)
        newest.forget(ctx)  # what it noted of its posts' dates was undone
        if keys is None or len(keys) == 1:
            what = (
                f"the {provider.name} sitemap"
                if keys is None
                else f"the entry with key {next(iter(keys))} in the {provider.name} sitemap"
            )
            _failed(ctx, what, error)
            return
        ordered = sorted(keys)
        half = len(ordered) // 2
        contained_update(ctx, provider, set(ordered[:half]), stored)
        contained_update(ctx, provider, set(ordered[half:]), stored)


def _changed(ctx: BuildContext, provider: Provider) -> None:
    """``provider`` has a new version: bumped with the others, in one call, when the
    savepoint it was refreshed in is done (``_bump_changed``)."""
    ctx.memo.setdefault(CHANGED, set()).add(provider.name)


def _bump_changed(ctx: BuildContext) -> None:
    bump(ctx.session, *ctx.memo.pop(CHANGED, ()))


def _failed(
    ctx: BuildContext, what: str, error: BaseException, outcome: str = "is left as stored"
) -> None:
    """Log and keep a failure to compute ``what``. The traceback goes to the log: it is a
    provider's or a plugin's bug, and names the line."""
    message = f"{what} could not be computed and {outcome}: {_described(error)}"
    ctx.failures.append(message)
    if _first_time(ctx, message):
        log.error("%s", message, exc_info=error)


def _first_time(ctx: BuildContext, message: str) -> bool:
    """Whether ``message`` is new to this refresh's log: a failure undoes the pass's
    savepoint and the providers are done again (``update_all``), finding the same."""
    logged: set[str] = ctx.memo.setdefault(LOGGED, set())
    if message in logged:
        return False
    logged.add(message)
    return True


def _described(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= MAX_ERROR_TEXT else text[: MAX_ERROR_TEXT - 1] + "…"


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


def update_planner_statistics(session: Session, table: str | None = None) -> None:
    """After a bulk change (an import, a rebuild): fresh statistics for the query planner.

    SQLite has none until ``ANALYZE`` runs, and without them it may answer "the newest
    listed post of this author" by scanning every stored entry instead of the author's
    posts (170 ms instead of 0.4 ms at a million posts). PostgreSQL analyzes by itself,
    but only some time after a bulk load.
    """
    if session.get_bind().dialect.name == "sqlite":
        session.execute(text("PRAGMA analysis_limit = 1000"))  # sample, don't read it all
    session.execute(text(f"ANALYZE {table}" if table else "ANALYZE"))


def catch_up(session: Session, wait: bool = True) -> bool:
    """Bring the stored sitemaps up to date now: apply the whole change log (waiting for
    a maintainer at work to finish), the providers whose ``due_at`` has passed (scheduled
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
    while count := apply_pending(session):
        applied += count
    now = utcnow()
    state = stored_state(session)
    stored = state.due
    due = {name: due_at for name, due_at in stored.items() if due_at is not None and due_at <= now}
    providers = all_providers(session, site)
    stale = unrendered(output_of(session), providers, state)
    missing = [p for p in providers if p.name not in stored or p.name in stale]
    if not due and not missing:
        return bool(applied)
    ctx = build_context(session, site, providers)
    update_all(ctx, [(provider, None) for provider in missing], stored)
    refresh(session, ContentChanges())  # it brings in what is due
    # Whatever ``refresh`` did not look at is still due at a time that has passed.
    for provider in providers:
        if provider.name in due:
            set_due(session, provider.name, provider.next_due(ctx))
    return True


def update_provider(
    ctx: BuildContext,
    provider: Provider,
    keys: set[int] | None,
    stored: dict[str, datetime | None] | None = None,
) -> None:
    """Refresh ``provider`` (``keys``, or all when None) and store when it is next due;
    ``stored`` (dues, from ``stored_state``) spares that write when the moment has not moved."""
    refresh_provider(ctx, provider, keys)
    due_at = provider.next_due(ctx)
    if stored is None or provider.name not in stored or stored[provider.name] != due_at:
        set_due(ctx.session, provider.name, due_at)
        if stored is not None:
            stored[provider.name] = due_at


def _stored_form(
    ctx: BuildContext, provider: Provider, entries: Iterable[Entry]
) -> Iterator[Entry]:
    """What is stored of ``entries``: each through the plugins' ``sitemap_entry`` chain,
    then made fit for a document by the core (``EntryRules``: valid text, URLs in normal
    form or left out, each with a log line naming the entry), so that no provider or
    plugin, however careless, can store what would break a document."""
    rules = EntryRules.of(ctx.site_url, ctx.settings.allowed_image_hosts or [])
    for entry in _filtered(ctx, provider, entries):
        try:
            safe, problems = rules.apply(entry)
        except OUTAGE:
            raise
        except Exception as error:
            _failed(
                ctx, f"{_subject(provider, entry)} in the {provider.name} sitemap", error, LEFT_OUT
            )
            continue
        if entry.key not in KEY_RANGE or entry.part not in PART_RANGE:
            safe, problems = None, [f"its key {entry.key} or part {entry.part} cannot be stored"]
        if problems:
            what = "left out" if safe is None else "listed without what follows"
            message = (
                f"{_subject(provider, entry)} in the {provider.name} sitemap {what}: "
                + "; ".join(problems[:MAX_LOGGED_PROBLEMS])
                + (
                    f"; and {len(problems) - MAX_LOGGED_PROBLEMS} more"
                    if len(problems) > MAX_LOGGED_PROBLEMS
                    else ""
                )
            )
            if _first_time(ctx, message):
                log.warning("%s", message)
        if safe is not None:
            yield safe


def _subject(provider: Provider, entry: Entry) -> str:
    """``post 12``, ``term 3``: what a log line about ``entry`` names."""
    item = entry.item
    if item is not None and isinstance(getattr(item, "id", None), int):
        return f"{type(item).__name__.lower()} {item.id}"
    return f"the entry with key {entry.key}"


def _filtered(ctx: BuildContext, provider: Provider, entries: Iterable[Entry]) -> Iterable[Entry]:
    """Each entry through the ``sitemap_entry`` chain (``filter_entry``)."""
    for entry in entries:
        try:
            current, _changed_by = filter_entry(ctx.site, provider.kind, entry)
        except OUTAGE:
            raise
        except Exception as error:
            what = f"{_subject(provider, entry)} in the {provider.name} sitemap (sitemap_entry)"
            _failed(ctx, what, error, LEFT_OUT)
            continue
        if current is not None:
            yield current


def filter_entry(site: Site, kind: str, entry: Entry) -> tuple[Entry | None, list[str]]:
    """``entry`` through the ``sitemap_entry`` chain, in the order pluggy calls a hook
    (``tryfirst`` ones, then the last registered first, ``trylast`` ones last): what is
    left of it (None: dropped), and the plugins that changed or dropped it. Wrappers are
    refused at start-up (``plugins.refuse_wrappers``)."""
    current: Entry | None = entry
    changed_by: list[str] = []
    for name, call in implementations(site.plugins, "sitemap_entry"):
        result: Any = call(kind=kind, entry=current, item=entry.item, site=site)
        if result is not current and result != current:
            changed_by.append(name)
        current = result
        if current is None:
            break
    return current, changed_by


def lock(session: Session, name: str) -> None:
    """Hold ``name`` to the end of the transaction, waiting for whoever holds it
    (PostgreSQL; SQLite has one writer anyway)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), _lock_key(name))


def _lock_key(name: str) -> dict[str, int]:
    """The PostgreSQL advisory lock that stands for ``name``."""
    return {"key": zlib.crc32(name.encode())}


# The statements of a refresh, built once with bound parameters: building a statement
# costs the maintainer more than running it (``bench/maintainer_bench.py --profile``).
_ENTRIES = cast(Table, SitemapEntry.__table__)
_COMPARED = (
    _ENTRIES.c.key,
    _ENTRIES.c.part,
    _ENTRIES.c.path,
    _ENTRIES.c.lastmod,
    _ENTRIES.c.images,
    _ENTRIES.c.extra,
    _ENTRIES.c.alternates,
)
_OF_KEYS = (
    _ENTRIES.c.provider == bindparam("provider"),
    _ENTRIES.c.key.in_(bindparam("keys", expanding=True)),
)
STORED_OF_KEYS = select(*_COMPARED).where(*_OF_KEYS)
DELETE_OF_KEYS = delete(_ENTRIES).where(*_OF_KEYS)
INSERT_ENTRIES = insert(_ENTRIES)


def refresh_provider(ctx: BuildContext, provider: Provider, keys: set[int] | None) -> None:
    """Recompute ``provider``'s entries for ``keys`` (all when None) and store what
    changed. Every caller holds the maintainer's lock (``apply_pending``, ``rebuild``,
    ``catch_up``, and ``check`` through it), so no two refreshes of one provider overlap."""
    session = ctx.session
    if keys is None:
        if provider.name in ctx.post_providers:
            newest.forget(ctx)
        where_provider = _ENTRIES.c.provider == provider.name
        _changed(ctx, provider)
        # Small sitemaps are compared, so search engines hear of exactly what changed.
        query = select(*_COMPARED).where(where_provider).limit(COMPARED_REBUILD + 1)
        old = {(r.key, r.part): tuple(r)[2:] for r in session.execute(query)}
        session.execute(delete(_ENTRIES).where(where_provider))
        _insert(ctx, provider, _stored_form(ctx, provider, provider.entries(ctx, None)))
        _insert(ctx, provider, _stored_form(ctx, provider, provider.special_entries(ctx)))
        recut_pages(ctx, provider.name, from_key=None)
        set_rendered(
            session, provider.name, render_key(provider.template, ctx.output_key), ctx.output
        )
        new = {(r.key, r.part): tuple(r)[2:] for r in session.execute(query)}
        if len(old) > COMPARED_REBUILD or len(new) > COMPARED_REBUILD:
            _announce(ctx, provider, None)
        else:
            _announce(ctx, provider, _url_changes(ctx, old, new))
        return

    before: dict[tuple[int, int], Any] = {}
    for batch in chunks(sorted(keys)):
        rows = session.execute(STORED_OF_KEYS, {"provider": provider.name, "keys": batch})
        before.update({(r.key, r.part): tuple(r)[2:] for r in rows})
    newest.note_stored(ctx, provider.name, before)  # authors and terms start from them
    content_keys = {k for k in keys if k != 0}
    # Rendered before they are compared: an entry that cannot be rendered is not stored.
    fresh = _rendered(
        ctx, provider, _stored_form(ctx, provider, provider.entries(ctx, content_keys))
    )
    special: list[tuple[Entry, dict[str, Any]]] = []
    if 0 in keys:
        # The home page and archive are dated from the stored entries (``special_entries``
        # reads them), so the fresh ones must be stored before those are computed.
        _replace(ctx, provider, content_keys, fresh)
        special = _rendered(
            ctx, provider, _stored_form(ctx, provider, provider.special_entries(ctx))
        )
    candidates = fresh + special
    after = {
        (e.key, e.part): (e.path, e.lastmod, e.images, e.extra, e.alternates)
        for e, _row in candidates
    }
    if provider.name in ctx.post_providers:  # their authors' and terms' dates follow
        newest.note(ctx, keys, before, after)
    if after == before:
        return  # nothing a crawler would see has changed: no new version
    _changed(ctx, provider)
    _announce(ctx, provider, _url_changes(ctx, before, after))
    if 0 in keys:
        _replace(ctx, provider, {0}, special)
    else:
        _replace(ctx, provider, keys, candidates)
    kept = set(before) & set(after)
    dated = [
        (key, before[key, part][1], after[key, part][1])
        for key, part in kept
        if after[key, part][1] != before[key, part][1]
    ]
    recut_from: int | None = None
    membership = set(before) ^ set(after)
    if membership:
        recut_from = min(key for key, _ in membership)
    else:
        # The same entries: pages keep their cut unless one grew past the byte limit.
        resized = {k for k in after if _sized(after[k]) != _sized(before[k])}
        overfull = overfull_pages(ctx, provider.name, {key for key, _ in resized})
        recut_from = overfull[0].first_key if overfull else None
    if recut_from is not None:
        recut_pages(ctx, provider.name, from_key=recut_from)
        # The pages before the recut keep their entries, not always their dates: a new
        # newest post dates the home page (key 0), on page 1, too.
        dated = [change for change in dated if change[0] < recut_from]
    refresh_page_dates(ctx, provider.name, dated)


def _url_changes(
    ctx: BuildContext,
    before: dict[tuple[int, int], tuple[Any, ...]],
    after: dict[tuple[int, int], tuple[Any, ...]],
) -> list[UrlChange]:
    """The URLs whose entries appeared, changed or went between ``before`` and ``after``
    (both map (key, part) to (path, lastmod, images, extra, alternates))."""
    found: dict[str, str] = {}
    for position, values in before.items():
        if position not in after:
            found[values[0]] = REMOVED
    for position, values in after.items():
        previous = before.get(position)
        if previous is None:
            found[values[0]] = ADDED
        elif previous[0] != values[0]:  # a new URL (slug, parent): the old one is gone
            found[previous[0]] = REMOVED
            found[values[0]] = ADDED
        elif previous != values:
            found[values[0]] = UPDATED
    return [UrlChange(ctx.site_url + path, change) for path, change in found.items()]


def _announce(ctx: BuildContext, provider: Provider, urls: list[UrlChange] | None) -> None:
    """``sitemap_changed``, unless a comparison found nothing a crawler would see."""
    if urls is None or urls:
        ctx.plugins.hook.sitemap_changed(
            session=ctx.session, sitemap=provider.name, urls=urls, site=ctx.site
        )


def _sized(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """What an entry's size depends on: all but its date."""
    path, _lastmod, images, extra, alternates = values
    return path, images, extra, alternates


def _replace(
    ctx: BuildContext,
    provider: Provider,
    keys: set[int],
    rendered: list[tuple[Entry, dict[str, Any]]],
) -> None:
    """Store the ``rendered`` entries in place of the provider's stored ones for ``keys``."""
    for batch in chunks(sorted(keys)):
        ctx.session.execute(DELETE_OF_KEYS, {"provider": provider.name, "keys": batch})
    for rows in chunks(row for _entry, row in rendered):
        ctx.session.execute(INSERT_ENTRIES, rows)


def _insert(ctx: BuildContext, provider: Provider, entries: Iterable[Entry]) -> None:
    """Store ``entries``, each with its rendered fragment and the bytes it takes."""
    for batch in chunks(row for _entry, row in _rendered_rows(ctx, provider, entries)):
        ctx.session.execute(INSERT_ENTRIES, batch)


def _rendered(
    ctx: BuildContext, provider: Provider, entries: Iterable[Entry]
) -> list[tuple[Entry, dict[str, Any]]]:
    return list(_rendered_rows(ctx, provider, entries))


def _rendered_rows(
    ctx: BuildContext, provider: Provider, entries: Iterable[Entry]
) -> Iterator[tuple[Entry, dict[str, Any]]]:
    """Each of ``entries`` with its row, fragment included; an entry that cannot be
    rendered (its template raised) is left out, logged."""
    renderer = EntryRenderer(provider, ctx.site_url, ctx.zone)
    for entry in entries:
        try:
            yield entry, entry.row(provider.name, *renderer.render(entry))
        except OUTAGE:
            raise
        except Exception as error:
            _failed(
                ctx, f"{_subject(provider, entry)} in the {provider.name} sitemap", error, LEFT_OUT
            )
