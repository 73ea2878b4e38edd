"""Telling search engines that sitemaps changed (S-601, S-602).

- ``outbox``: the ``sitemap_changed`` hook writes each changed URL to the outbox, in the
  transaction of the change; a burst of them is given to each channel.
- ``channels``: what a channel is (the messages a burst becomes, the request, how an
  answer is judged); plugins add theirs through the ``sitemap_channels`` hook.
- ``ping``, ``indexnow``: the core's two channels, each with its settings (and
  IndexNow's key file, ``/{key}.txt``), registered as built-in plugins.
- ``senders``: sending a channel's request; no answer at all means retry later.
- ``worker``: claims due notifications (safe with several workers on PostgreSQL), sends
  them after commit, records each attempt; ``sitemap-server worker`` or a thread.
- ``config``: the ``notify.*`` settings and the loaded channels.
"""

from __future__ import annotations

from pyramid.config import Configurator


def includeme(config: Configurator) -> None:
    config.include(".worker")
