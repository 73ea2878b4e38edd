"""Telling search engines that sitemaps changed (S-601, S-602).

- ``outbox``: the ``sitemap_changed`` hook writes each changed URL to the outbox, in the
  transaction of the change; a burst of them becomes one ping per target and IndexNow
  submissions of the changed URLs.
- ``senders``: the HTTP requests, and what each answer means (sent, retry, give up).
- ``worker``: claims due notifications (safe with several workers on PostgreSQL), sends
  them after commit, records each attempt; ``sitemap-server worker`` or a thread.
- ``config``: the ``sitemap_server.ping.*``, ``indexnow.*`` and ``notify.*`` settings.
- ``views``: the IndexNow key file, ``/{key}.txt``.
"""

from __future__ import annotations

from pyramid.config import Configurator


def includeme(config: Configurator) -> None:
    config.include(".views")
    config.include(".worker")
