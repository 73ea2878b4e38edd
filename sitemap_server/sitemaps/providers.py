"""What a sitemap provider is: a named source of entries, refreshed after each change."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pluggy
from sqlalchemy.orm import Session

from ..content.links import Links
from ..models import SiteSettings
from .changes import ContentChanges
from .entries import Entry

MAIN_XSL = "/main-sitemap.xsl"


@dataclass
class BuildContext:
    """What every provider needs while computing entries during one refresh."""

    session: Session
    plugins: pluggy.PluginManager
    settings: SiteSettings
    site_url: str
    now: datetime
    links: Links
    # Names of the post-type providers (authors and terms count only their entries).
    post_providers: list[str] = field(default_factory=list)


class Provider:
    """Subclass and register instances through ``sitemap_providers``.

    ``name`` is the URL name (``{name}-sitemap.xml``); ``kind`` names the content kind for
    the exclusion hooks; providers are refreshed, and listed in the index, by ``order``
    then name; ``xsl`` is the stylesheet its documents point at; ``template`` renders a
    page of its entries (a Chameleon asset spec).
    """

    name: str
    kind: str
    order: int = 50
    xsl: str = MAIN_XSL
    template: str = "sitemap_server:templates/urlset.pt"

    def affected_keys(self, ctx: BuildContext, changes: ContentChanges) -> set[int]:
        """Keys whose entries may have changed; the engine recomputes exactly those."""
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

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def chunks(values: Iterable[Any], size: int = 500) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for value in values:
        batch.append(value)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
