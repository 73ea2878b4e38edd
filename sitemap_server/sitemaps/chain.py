"""What is stored of an entry a provider computed: the chain every entry goes through.

1. the plugins' ``sitemap_entry`` hooks, one after the other (``filter_entry``): each
   may change the entry or drop it;
2. the core's rules (``xml.EntryRules``): valid text, URLs in normal form or left out,
   a key and part the database can store, each problem in a log line naming the entry;
3. its fragment, rendered by the provider's template (``rendering.EntryRenderer``), or
   the one stored for it when the entry is stored as it is (a fragment is made of what
   ``StoredEntry`` holds; the template and output settings that render it are the
   stored ones, else the provider is rebuilt: ``maintenance.unrendered``).

An entry that fails at any step is left out and logged (``failures``), so that no
provider or plugin, however careless, can store what would break a document.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..hookspecs import implementations
from .entries import Entry, StoredEntry
from .failures import LEFT_OUT, OUTAGE, failed, first_time, of_entry
from .providers import BuildContext, Provider
from .rendering import EntryRenderer
from .xml import EntryRules

if TYPE_CHECKING:
    from ..site import Site

log = logging.getLogger(__name__)

# An entry's key and part as the database stores them (BIGINT, INTEGER): a provider that
# computes one outside these has that entry left out, not the whole refresh failed.
KEY_RANGE = range(-(2**63), 2**63)
PART_RANGE = range(1, 2**31)
# A log line about an entry names this many of its problems, then counts the others.
MAX_LOGGED_PROBLEMS = 3


class StoredFragment(NamedTuple):
    """An entry as stored, with its fragment and the bytes it takes in a page."""

    entry: StoredEntry
    xml: str
    size: int


def prepared(
    ctx: BuildContext,
    provider: Provider,
    entries: Iterable[Entry],
    stored: Mapping[tuple[int, int], StoredFragment] | None = None,
) -> Iterator[tuple[Entry, dict[str, Any]]]:
    """Each of ``entries`` that is stored, as it is stored, with its ``sitemap_entries``
    row: the whole chain. ``stored``: what is stored of some (by key and part), whose
    fragments an entry stored as it was takes instead of being rendered again."""
    return rendered(ctx, provider, stored_form(ctx, provider, entries), stored)


def stored_form(ctx: BuildContext, provider: Provider, entries: Iterable[Entry]) -> Iterator[Entry]:
    """What is stored of ``entries``: each through the plugins' ``sitemap_entry`` chain,
    then made fit for a document by the core (``EntryRules``)."""
    rules = EntryRules.of(ctx.site_url, ctx.settings.allowed_image_hosts or [])
    for entry in filtered(ctx, provider, entries):
        try:
            safe, problems = rules.apply(entry)
        except OUTAGE:
            raise
        except Exception as error:
            failed(ctx, of_entry(provider, entry), error, LEFT_OUT)
            continue
        if entry.key not in KEY_RANGE or entry.part not in PART_RANGE:
            safe, problems = None, [f"its key {entry.key} or part {entry.part} cannot be stored"]
        if problems:
            what = "left out" if safe is None else "listed without what follows"
            message = (
                f"{of_entry(provider, entry)} {what}: "
                + "; ".join(problems[:MAX_LOGGED_PROBLEMS])
                + (
                    f"; and {len(problems) - MAX_LOGGED_PROBLEMS} more"
                    if len(problems) > MAX_LOGGED_PROBLEMS
                    else ""
                )
            )
            if first_time(ctx, message):
                log.warning("%s", message)
        if safe is not None:
            yield safe


def filtered(ctx: BuildContext, provider: Provider, entries: Iterable[Entry]) -> Iterator[Entry]:
    """Each entry through the ``sitemap_entry`` chain (``filter_entry``); the entries as
    they are when no plugin implements it (the implementations are looked up once)."""
    chain = list(implementations(ctx.site.plugins, "sitemap_entry"))
    if not chain:
        yield from entries
        return
    for entry in entries:
        try:
            current, _changed_by = _through(chain, ctx.site, provider.kind, entry)
        except OUTAGE:
            raise
        except Exception as error:
            failed(ctx, f"{of_entry(provider, entry)} (sitemap_entry)", error, LEFT_OUT)
            continue
        if current is not None:
            yield current


def filter_entry(site: Site, kind: str, entry: Entry) -> tuple[Entry | None, list[str]]:
    """``entry`` through the ``sitemap_entry`` chain, in the order pluggy calls a hook
    (``tryfirst`` ones, then the last registered first, ``trylast`` ones last): what is
    left of it (None: dropped), and the plugins that changed or dropped it. Wrappers are
    refused at start-up (``plugins.refuse_wrappers``)."""
    return _through(list(implementations(site.plugins, "sitemap_entry")), site, kind, entry)


def _through(
    chain: list[tuple[str, Callable[..., Any]]], site: Site, kind: str, entry: Entry
) -> tuple[Entry | None, list[str]]:
    """``filter_entry`` with the implementations ``chain`` (``implementations``)."""
    current: Entry | None = entry
    changed_by: list[str] = []
    for name, call in chain:
        result: Any = call(kind=kind, entry=current, item=entry.item, site=site)
        if result is not current and result != current:
            changed_by.append(name)
        current = result
        if current is None:
            break
    return current, changed_by


def rendered(
    ctx: BuildContext,
    provider: Provider,
    entries: Iterable[Entry],
    stored: Mapping[tuple[int, int], StoredFragment] | None = None,
) -> Iterator[tuple[Entry, dict[str, Any]]]:
    """Each of ``entries`` with its ``sitemap_entries`` row, fragment included (the
    stored one when ``stored`` holds the entry as it is); an entry that cannot be
    rendered (its template raised) is left out, logged."""
    renderer = EntryRenderer(provider, ctx.site_url, ctx.zone)
    stored = stored or {}
    for entry in entries:
        old = stored.get((entry.key, entry.part))
        if old is not None and old.entry == StoredEntry.of(provider.name, entry):
            yield entry, entry.row(provider.name, old.xml, old.size)
            continue
        try:
            yield entry, entry.row(provider.name, *renderer.render(entry))
        except OUTAGE:
            raise
        except Exception as error:
            failed(ctx, of_entry(provider, entry), error, LEFT_OUT)
