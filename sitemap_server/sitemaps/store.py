"""Storing a provider's entries: recompute, compare with what is stored, store the difference.

``refresh_provider`` recomputes the entries of some keys (all: a sitemap rebuilt whole),
each through the entry chain (``chain.py``), and compares them with the stored ones
(``StoredEntry``, by key and part). If nothing a crawler would see changed, nothing is
written. Otherwise the entries are replaced, the sitemap gets a new version
(``versions.py``), its pages are recut from the first that changed or only redated
(``pages.py``), and the plugins hear which URLs changed (``sitemap_changed``). Every
caller holds the maintainer's lock (``maintenance.py``), so no two refreshes of one
provider overlap.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, func, insert, select

from ..batches import chunks
from ..models import SitemapEntry
from ..models.notifications import ADDED, REMOVED, UPDATED
from . import journal, newest, touched
from .chain import StoredFragment, prepared
from .changes import UrlChange
from .entries import Entry, StoredEntry
from .pages import overfull_pages, page_numbers_holding, recut_pages, refresh_page_dates
from .providers import BuildContext, Provider
from .rendering import render_key
from .versions import bump, set_due, set_rendered

# A sitemap rebuilt as a whole is compared with what it held, URL by URL, up to this many
# entries (one IndexNow submission); a larger one is announced as rebuilt, without URLs.
COMPARED_REBUILD = 10_000
# Rows a rebuild inserts in one executemany: an executemany binds each row on its own, so
# no limit of bound parameters applies, and fewer statements cost less.
INSERT_BATCH = 5000
# ``BuildContext.memo``: the providers refreshed with a change a crawler would see.
CHANGED = "changed"

# The statements of a refresh, built once with bound parameters: building a statement
# costs the maintainer more than running it (``bench/maintainer_bench.py --profile``).
_ENTRIES = cast(Table, SitemapEntry.__table__)
# A provider's stored entries, as ``StoredEntry`` rows.
STORED = select(*(_ENTRIES.c[name] for name in StoredEntry._fields))
_OF_KEYS = (
    _ENTRIES.c.provider == bindparam("provider"),
    _ENTRIES.c.key.in_(bindparam("keys", expanding=True)),
)
# The same with each entry's fragment and size last: what an entry stored as it was keeps
# (``chain.rendered``), and what finished documents are edited with.
STORED_WITH_XML_OF_KEYS = STORED.add_columns(_ENTRIES.c.xml, _ENTRIES.c.size).where(*_OF_KEYS)
STORED_OF_PROVIDER = STORED.where(_ENTRIES.c.provider == bindparam("provider"))
# A provider's stored entries, counted up to one more than a rebuild compares.
COUNT_UP_TO_COMPARED = select(func.count()).select_from(
    select(_ENTRIES.c.key)
    .where(_ENTRIES.c.provider == bindparam("provider"))
    .limit(COMPARED_REBUILD + 1)
    .subquery()
)
DELETE_OF_KEYS = delete(_ENTRIES).where(*_OF_KEYS)
INSERT_ENTRIES = insert(_ENTRIES)

Stored = dict[tuple[int, int], StoredEntry]


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


def refresh_provider(ctx: BuildContext, provider: Provider, keys: set[int] | None) -> None:
    """Recompute ``provider``'s entries for ``keys`` (all when None) and store what
    changed."""
    if keys is None:
        _rebuild_provider(ctx, provider)
        return
    session = ctx.session
    before: Stored = {}
    fragments: dict[tuple[int, int], StoredFragment] = {}
    for batch in chunks(sorted(keys)):
        parameters = {"provider": provider.name, "keys": batch}
        for row in session.execute(STORED_WITH_XML_OF_KEYS, parameters):
            entry = StoredEntry._make(row[:-2])
            before[row.key, row.part] = entry
            fragments[row.key, row.part] = StoredFragment(entry, row.xml, row.size)
    newest.note_stored(ctx, provider.name, before)  # authors and terms start from them
    content_keys = {k for k in keys if k != 0}
    # Rendered before they are compared (an entry that cannot be rendered is not stored),
    # those stored as they are with the fragments they have.
    fresh = list(prepared(ctx, provider, provider.entries(ctx, content_keys), fragments))
    after = _stored(provider, fresh)
    special: list[tuple[Entry, dict[str, Any]]] = []
    if 0 in keys:
        # The home page and archive are dated from the stored entries (``special_entries``
        # reads them), so the fresh ones must be stored before those are computed.
        _replace(ctx, provider, content_keys, fresh, before, after)
        special = list(prepared(ctx, provider, provider.special_entries(ctx), fragments))
        after |= _stored(provider, special)
    candidates = fresh + special
    if provider.name in ctx.post_providers:  # their authors' and terms' dates follow
        newest.note(ctx, keys, before, after)
    if after == before:
        return  # nothing a crawler would see has changed: no new version
    changed(ctx, provider)
    _tell(ctx, provider, before, after)
    if 0 in keys:
        _replace(ctx, provider, {0}, special, before, after)
    else:
        _replace(ctx, provider, keys, candidates, before, after)
    kept = set(before) & set(after)
    dated = [
        (key, before[key, part].lastmod, after[key, part].lastmod)
        for key, part in kept
        if after[key, part].lastmod != before[key, part].lastmod
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
    if ctx.site.finishes_documents:
        _note_replaced(ctx, provider, candidates, fragments, recut_from is None)
    if recut_from is not None:
        recut_pages(ctx, provider.name, from_key=recut_from)
        # The pages before the recut keep their entries, not always their dates: a new
        # newest post dates the home page (key 0), on page 1, too.
        dated = [change for change in dated if change[0] < recut_from]
    refresh_page_dates(ctx, provider.name, dated)
    _touched(ctx, provider, before, after)


def _note_replaced(
    ctx: BuildContext,
    provider: Provider,
    candidates: list[tuple[Entry, dict[str, Any]]],
    fragments: dict[tuple[int, int], StoredFragment],
    in_place: bool,
) -> None:
    """Each stored fragment that changed in place with the one that replaced it; none
    when the pages are recut (``in_place`` false)."""
    if not in_place:
        touched.replaced(ctx, provider.name, None)
        return
    replaced = {}
    for entry, row in candidates:
        old = fragments.get((entry.key, entry.part))
        if old is not None and old.xml != row["xml"]:
            replaced[old.xml] = row["xml"]
    touched.replaced(ctx, provider.name, replaced)


def _touched(ctx: BuildContext, provider: Provider, before: Stored, after: Stored) -> None:
    """Note the pages holding an entry that differs between ``before`` and ``after`` (a
    recut noted those it moved)."""
    different = {
        key
        for key, part in set(before) | set(after)
        if before.get((key, part)) != after.get((key, part))
    }
    touched.pages(ctx, provider.name, page_numbers_holding(ctx, provider.name, different))


def _rebuild_provider(ctx: BuildContext, provider: Provider) -> None:
    """Replace all of ``provider``'s entries and pages."""
    session = ctx.session
    if provider.name in ctx.post_providers:
        newest.forget(ctx)
    changed(ctx, provider)
    # Small sitemaps are compared, so search engines hear of exactly what changed.
    old = _compared(ctx, provider)
    session.execute(delete(_ENTRIES).where(_ENTRIES.c.provider == provider.name))
    _insert(ctx, provider, provider.entries(ctx, None))
    _insert(ctx, provider, provider.special_entries(ctx))
    recut_pages(ctx, provider.name, from_key=None)
    set_rendered(session, provider.name, render_key(provider.template, ctx.output_key), ctx.output)
    new = None if old is None else _compared(ctx, provider)
    if old is None or new is None:
        touched.provider(ctx, provider.name)
        journal.everything(ctx)
        _announce(ctx, provider, None)
    else:
        _touched(ctx, provider, old, new)
        _tell(ctx, provider, old, new)


def _compared(ctx: BuildContext, provider: Provider) -> Stored | None:
    """The stored entries of ``provider``, or None when it has more than
    ``COMPARED_REBUILD`` (counted first: reading them costs more than counting)."""
    of_provider = {"provider": provider.name}
    if (ctx.session.scalar(COUNT_UP_TO_COMPARED, of_provider) or 0) > COMPARED_REBUILD:
        return None
    rows = ctx.session.execute(STORED_OF_PROVIDER, of_provider)
    return {(r.key, r.part): StoredEntry._make(r) for r in rows}


def changed(ctx: BuildContext, provider: Provider) -> None:
    """``provider`` has a new version: bumped with the others, in one call, when the
    savepoint it was refreshed in is done (``bump_changed``)."""
    ctx.memo.setdefault(CHANGED, set()).add(provider.name)


def bump_changed(ctx: BuildContext) -> None:
    bump(ctx.session, *ctx.memo.pop(CHANGED, ()))


def path_changes(before: Stored, after: Stored) -> dict[str, str]:
    """The paths whose entries appeared, changed or went between ``before`` and ``after``,
    each with what happened to it (both paths of an entry that moved)."""
    found: dict[str, str] = {}
    for position, entry in before.items():
        if position not in after:
            found[entry.path] = REMOVED
    for position, entry in after.items():
        previous = before.get(position)
        if previous is None:
            found[entry.path] = ADDED
        elif previous.path != entry.path:  # a new URL (slug, parent): the old one is gone
            found[previous.path] = REMOVED
            found[entry.path] = ADDED
        elif previous != entry:
            found[entry.path] = UPDATED
    return found


def _tell(ctx: BuildContext, provider: Provider, before: Stored, after: Stored) -> None:
    """What changed between ``before`` and ``after``, compared once: its paths to the
    change feed's journal, its URLs to the plugins (``sitemap_changed``)."""
    found = path_changes(before, after)
    journal.touched(ctx, found)
    _announce(ctx, provider, [UrlChange(ctx.site_url + p, change) for p, change in found.items()])


def _announce(ctx: BuildContext, provider: Provider, urls: list[UrlChange] | None) -> None:
    """``sitemap_changed``, unless a comparison found nothing a crawler would see."""
    if urls is None or urls:
        ctx.plugins.hook.sitemap_changed(
            session=ctx.session, sitemap=provider.name, urls=urls, site=ctx.site
        )


def _sized(entry: StoredEntry) -> StoredEntry:
    """What an entry's size depends on: all but its date."""
    return entry._replace(lastmod=None)


def _replace(
    ctx: BuildContext,
    provider: Provider,
    keys: set[int],
    rows: list[tuple[Entry, dict[str, Any]]],
    before: Stored,
    after: Stored,
) -> None:
    """Store the rendered entries ``rows`` in place of the provider's stored ones for
    ``keys`` (``before``, and maybe more; ``after``: what each row stores): only the keys
    whose entries differ are written, so a sitemap recomputed whole for one change
    rewrites that one's rows."""
    differ = {e.key for e, _ in rows if before.get((e.key, e.part)) != after[e.key, e.part]}
    differ.update(key for key, part in before if key in keys and (key, part) not in after)
    for batch in chunks(sorted(differ)):
        ctx.session.execute(DELETE_OF_KEYS, {"provider": provider.name, "keys": batch})
    for some in chunks(row for entry, row in rows if entry.key in differ):
        ctx.session.execute(INSERT_ENTRIES, some)


def _stored(provider: Provider, rows: list[tuple[Entry, dict[str, Any]]]) -> Stored:
    """What ``rows`` store, by key and part."""
    return {(entry.key, entry.part): StoredEntry.of(provider.name, entry) for entry, _ in rows}


def _insert(ctx: BuildContext, provider: Provider, entries: Iterable[Entry]) -> None:
    """Store what the chain makes of ``entries``, each with its rendered fragment and
    the bytes it takes."""
    for batch in chunks((row for _entry, row in prepared(ctx, provider, entries)), INSERT_BATCH):
        ctx.session.execute(INSERT_ENTRIES, batch)
