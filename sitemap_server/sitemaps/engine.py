"""The sitemap engine: every operation on the stored sitemaps, as the methods of one object.

Each ``Site`` has one (``site.engine``); a request, a command, the worker or a plugin
reaches it as ``request.site.engine`` or ``engine_of(session)``, and nothing outside this
package calls the modules behind it. The work is done by the modules named in each
method (one idea each); this is the list of what can be done, and the one door to it:

- a write: ``record`` what it changed (the change log; nothing is rebuilt in the
  writer's transaction), ``refresh_provider`` for a sitemap whose content depends on
  something else that changed (a plugin's own settings);
- the maintainer: ``apply`` the change log, ``apply_some`` of it (a request that found
  changes waiting too long), ``catch_up`` with time (scheduled posts going live),
  ``rebuild`` everything; ``finish`` the documents left to render on request;
- answers: ``providers`` (the sitemaps there are), ``check`` (stored against a rebuild),
  ``explain_url`` / ``explain_object`` (why a URL is listed or not).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from ..models import site_of
from . import changes, check, explain, finished, maintenance

if TYPE_CHECKING:
    from ..site import Site
    from .providers import Provider


class Engine:
    """The sitemap engine of one site."""

    def __init__(self, site: Site) -> None:
        self.site = site

    # A write -------------------------------------------------------------------------

    def record(self, session: Session, **what: Any) -> None:
        """Record what a write changed, in its transaction (``changes.record``): ``posts``,
        ``authors``, ``terms`` (ids), ``providers`` (names of sitemaps to rebuild whole),
        ``site`` (site-wide answers changed), ``everything``. The maintainer applies it
        after commit; ``sitemap_content_changed`` runs now."""
        changes.record(session, **what)

    def refresh_provider(self, session: Session, name: str) -> None:
        """Have the sitemap of provider ``name`` rebuilt whole (and only it): what it
        lists depends on something else that changed, such as the plugin's settings."""
        self.record(session, providers={name})

    # The maintainer ----------------------------------------------------------------------

    def apply(self, progress: Callable[[int], object] | None = None) -> int:
        """Apply the change log as it is now, batch after batch (each in a transaction of
        its own), unless another maintainer is at work; how many changes were applied
        (``maintenance.apply_all``: what is written meanwhile is left to the next call;
        ``progress`` hears each batch's count)."""
        return maintenance.apply_all(self.site.sessions, progress)

    def apply_some(self, limit: int, wait: bool = True) -> int | None:
        """Apply at most ``limit`` changes, never by a rebuild (``maintenance.apply_some``);
        with ``wait`` false, none (None) if another maintainer holds the lock."""
        return maintenance.apply_some(self.site.sessions, limit, wait=wait)

    def catch_up(self, session: Session, wait: bool = True) -> bool:
        """Bring in what time alone changed (a scheduled post went live) and build the
        sitemaps never built; whether anything was done (``maintenance.catch_up``).
        Without ``wait``, nothing while a maintainer is at work."""
        return maintenance.catch_up(session, wait=wait)

    def finish(self) -> int | None:
        """Store, for a moment, finished documents that have no row for the versions now
        (``finished.fill``): how many, or None while another maintainer is at work."""
        return finished.fill(self.site)

    def rebuild(self, session: Session) -> list[str]:
        """Rebuild every sitemap from the content (``maintenance.rebuild``); what could
        not be computed, in words."""
        return maintenance.rebuild(session)

    # Answers -----------------------------------------------------------------------------

    def providers(self, session: Session) -> list[Provider]:
        """The sitemaps of the loaded plugins (``sitemap_providers``)."""
        return maintenance.all_providers(session, self.site)

    def check(self, session: Session, repair: bool = False) -> check.Report:
        """Compare the stored sitemaps with a rebuild (``check.check``); ``repair``
        stores the rebuild."""
        return check.check(session, repair=repair)

    def explain_url(self, session: Session, url: str) -> explain.Explanation:
        """Why ``url`` is listed or not, rule by rule (``explain``)."""
        return explain.explain_url(session, url)

    def explain_object(self, session: Session, kind: str, object_id: int) -> explain.Explanation:
        """Why a post, term or author (``kind``) is listed or not (``explain``)."""
        return explain.explain_object(session, kind, object_id)


def engine_of(session: Session) -> Engine:
    """The engine of the site that made ``session``."""
    return site_of(session).engine
