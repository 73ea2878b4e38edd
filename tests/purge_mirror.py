"""A cache in front that is purged by tag, as Varnish or a CDN is (S-314): the purges the
maintainer stores must leave it holding only what the server serves now.

``test_purges.py`` and the model-based test (``model.py``) read every document a crawler
reads, before and after changes, and check the purges stored meanwhile: every document
whose bytes changed is reached by one (none served stale), and, for the changes of
``test_purges.py``, no page or index part that did not change is. The model counts
the needless purges it meets (a sitemap rebuilt whole after a plugin's setting changed
may purge a page whose bytes stayed: an entry's ``extra`` changed that its template
does not show); each costs the cache a miss, never a stale answer.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from sitemap_server.models import Notification
from sitemap_server.models.notifications import PENDING, SENT
from sitemap_server.testing import index_locs

FEED, ROBOTS = "doc:sitemap.atom", "doc:robots.txt"
CHANNEL = "varnish"


def documents(app: Any, site_url: str, known: set[str]) -> dict[str, bytes | None]:
    """Each document's bytes as a crawler gets them, by its tag: the index, every page it
    lists and every one in ``known`` (None: it answers 404 now), the feed, robots.txt."""
    found: dict[str, bytes | None] = {"doc:sitemap_index": app.get("/sitemap_index.xml").body}
    names = {loc.removeprefix(site_url + "/").removesuffix(".xml") for loc in index_locs(app)}
    for name in names | known:
        response = app.get(f"/{name}.xml", status=(200, 404))
        found[f"doc:{name}"] = response.body if response.status_int == 200 else None
    found[FEED] = app.get("/sitemap.atom").body
    found[ROBOTS] = app.get("/robots.txt").body
    return found


def reached(tags: set[str], every: set[str]) -> set[str]:
    """The documents (of ``every``) a purge of ``tags`` reaches."""
    if "sitemaps" in tags:
        return set(every)
    found = {tag for tag in tags if tag.startswith("doc:")}
    for tag in tags:
        if tag == "index":
            found |= {doc for doc in every if doc.startswith("doc:sitemap_index")}
        elif tag.startswith("provider:"):
            name = tag.removeprefix("provider:")
            found |= {doc for doc in every if doc.startswith(f"doc:{name}-sitemap")}
    return found & every


def take_purges(engine: Any) -> set[str]:
    """The tags of every purge stored and not sent yet, marked sent (as a worker would
    send them: a purge the same as one still waiting is not stored again)."""
    with Session(engine) as session, session.begin():
        rows = session.execute(
            select(Notification.id, Notification.payload).where(
                Notification.channel == CHANNEL, Notification.status == PENDING
            )
        ).all()
        if rows:
            session.execute(
                update(Notification)
                .where(Notification.id.in_([row.id for row in rows]))
                .values(status=SENT)
            )
    return {tag for _, payload in rows for tag in payload["tags"]}


class PurgedCache:
    """What a cache purged by tag holds: the documents as last read, less what the purges
    stored since reached."""

    def __init__(self) -> None:
        self.held: dict[str, bytes | None] | None = None

    def check(self, app: Any, site_url: str, engine: Any) -> tuple[list[str], list[str]]:
        """Apply the purges stored since the last check and read every document: what the
        cache would serve stale (nothing, when all is well), and the pages and index
        parts purged though they did not change (each costs the cache a miss)."""
        tags = take_purges(engine)
        known = {tag.removeprefix("doc:") for tag in self.held or {} if "-sitemap" in tag}
        now = documents(app, site_url, known)
        if self.held is None:
            self.held = now
            return [], []
        every = set(self.held) | set(now)
        changed = {doc for doc in every if self.held.get(doc) != now.get(doc)}
        purged = reached(tags, every)
        stale = sorted(changed - purged)
        exact = {doc for doc in every if doc not in (FEED, ROBOTS)}
        needless = [] if "sitemaps" in tags else sorted((purged - changed) & exact)
        self.held = now
        return stale, needless
