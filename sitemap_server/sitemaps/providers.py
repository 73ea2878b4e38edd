"""What a sitemap provider is: a named source of entries, refreshed after each change."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any

import pluggy
from sqlalchemy.orm import Session

from ..content.links import Links
from ..models import SiteSettings
from ..settings import MAX_PAGE_BYTES
from .changes import ContentChanges
from .entries import Entry, StoredEntry

if TYPE_CHECKING:
    from ..site import Site

MAIN_XSL = "/main-sitemap.xsl"


# What a page holds besides its entries: the XML declaration, the stylesheet, the root
# element with its namespaces.
PAGE_FRAME_BYTES = 4096


@dataclass
class BuildContext:
    """What every provider needs while computing entries during one refresh."""

    session: Session
    # The site whose sitemaps these are (its plugins, settings and engine).
    site: Site
    settings: SiteSettings
    site_url: str
    now: datetime
    links: Links
    # Names of the post-type providers (authors and terms count only their entries).
    post_providers: list[str] = field(default_factory=list)
    # The bytes a page's entries may take (S-310: 50 MiB, less the page's frame).
    page_bytes: int = MAX_PAGE_BYTES - PAGE_FRAME_BYTES
    # The site's time zone: the dates of the entries' fragments carry its offset.
    zone: tzinfo = UTC
    # What could not be computed in this refresh (an entry, a sitemap), in words: the
    # maintainer leaves it as stored, logs it, and ``check`` reports it.
    failures: list[str] = field(default_factory=list)
    # What a provider read once in this refresh and needs again (nothing writes content
    # while a refresh runs): keyed by whatever names it, the provider's name in it.
    memo: dict[Any, Any] = field(default_factory=dict)
    # The settings from outside the database the documents depend on
    # (``Site.output_settings``), and their name in ``rendering.render_key``.
    output: dict[str, Any] = field(default_factory=dict)
    output_key: str = ""

    @property
    def plugins(self) -> pluggy.PluginManager:
        """The site's plugin manager."""
        return self.site.plugins


class Provider:
    """Subclass and register instances through ``sitemap_providers``.

    ``name`` is the URL name (``{name}-sitemap.xml``); ``kind`` names the content kind for
    the exclusion hooks; providers are listed in the index by ``order`` then name;
    ``depends_on`` names the kinds of sitemaps whose stored entries it reads (``"post"``:
    every post type's, ``listed.ListedPosts``), after which it is refreshed and asked
    which keys a change reaches (``affected_keys`` then reads them as crawlers will be
    served them); ``xsl`` is
    the URL of the stylesheet its documents point at, and ``xsl_asset`` the file served
    there (a Pyramid asset spec; None: the core's, at ``MAIN_XSL``); ``template`` renders
    one of its entries, the ``<url>`` element (a Chameleon asset spec).

    The maintainer renders an entry when it stores it (``rendering.py``), and a page is
    the core's frame around the stored fragments. A template receives ``entry`` (``loc``,
    ``lastmod``, ``images``, ``extra``; write ``loc`` and images as
    ``${structure: entry.loc}``, they are escaped already), ``provider`` and ``local`` (a
    W3C date-time of ``extra`` in the site's time zone: ``${local(v['publication_date'])}``).
    The XSL is applied by browsers and, for ``/sitemaps/{name}.html``, by the server with
    the parameters ``view`` (``'html'``), ``xml-url`` and ``html-base``.
    """

    name: str
    kind: str
    order: int = 50
    # 404 rather than an empty urlset while it lists nothing (S-306 is for types that
    # have a sitemap; a noindexed post type has one only while it lists something).
    absent_when_empty: bool = False
    depends_on: tuple[str, ...] = ()
    xsl: str = MAIN_XSL
    xsl_asset: str | None = None
    template: str = "sitemap_server:templates/url.pt"

    def affected_keys(self, ctx: BuildContext, changes: ContentChanges) -> set[int] | None:
        """Keys whose entries may have changed; the engine recomputes exactly those
        (None: all of them, for a provider whose keys are not stable, such as an order)."""
        raise NotImplementedError

    def entries(self, ctx: BuildContext, keys: set[int] | None) -> Iterable[Entry]:
        """The current entries for ``keys`` (all when None), in key order."""
        raise NotImplementedError

    def next_due(self, ctx: BuildContext) -> datetime | None:
        """When the entries next change by the passing of time alone (None: never).

        The engine stores it after each refresh; the first request after that moment
        brings the entries up to date (``maintenance.catch_up``) before answering.
        """
        return None

    def due_changes(self, ctx: BuildContext, due_at: datetime) -> ContentChanges | None:
        """What became due since ``due_at``, refreshed like a write (so authors and terms
        follow a post going live); None refreshes all of this provider's entries."""
        return None

    def special_entries(self, ctx: BuildContext) -> Iterator[Entry]:
        """Entries computed from the others (home page, archive); key 0. None by default."""
        return iter(())

    def explain_lastmod(self, ctx: BuildContext, entry: StoredEntry) -> str:
        """Where the stored ``entry``'s lastmod comes from, in words (S-402): the rule, and
        what it picked where that can be named (``: post 12``). ``sitemap-server explain``
        prints it after the date; a provider whose dates follow a rule of its own says it
        here."""
        return f"computed by the {self.name} sitemap's provider"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def in_refresh_order(providers: list[Provider]) -> list[Provider]:
    """``providers`` (in index order) in the order they are refreshed: each after those
    of the kinds it ``depends_on``, otherwise in index order. Providers that depend on
    each other in a circle keep their index order among themselves."""
    waiting = list(providers)
    ordered: list[Provider] = []
    while waiting:
        ready = next(
            (p for p in waiting if not any(q.kind in p.depends_on for q in waiting if q is not p)),
            waiting[0],  # a circle: broken at the first
        )
        ordered.append(ready)
        waiting.remove(ready)
    return ordered
