"""Purges: each pass of the maintainer that changed documents tells the caches in front
to forget exactly those (S-314), through the outbox like every notification.

``sitemap_documents_changed`` runs in the maintainer's transaction: the purge messages
are stored with the change they follow, so a rolled-back change purges nothing and a
committed one is purged whatever happens to the process next. They are due at once (no
quiet period: a cache must not serve the old document longer than the worker takes to
send), sent after commit, retried with backoff, and sent while the site is private too
(its documents changed). A message the same as one still waiting is not stored twice.

The Varnish channel sends ``PURGE /`` with the tags in ``xkey-purge`` to each server of
``sitemap_server.purge.varnish``; ``deploy/varnish/sitemaps.vcl`` purges them with the
xkey module.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from ..hookspecs import hookimpl
from ..models import Notification
from ..models.meta import utcnow
from ..models.notifications import PENDING
from ..settings import Setting, http_url
from .channels import Channel, Message, OutgoingRequest
from .config import NotifyConfig

VARNISH = "sitemap_server.purge.varnish"
# Tags in one PURGE: Varnish reads request headers up to 8 KB by default (http_req_hdr_len),
# and a tag is at most a few dozen bytes.
VARNISH_TAGS_PER_REQUEST = 100
# The header the VCL hands to xkey.purge.
PURGE_HEADER = "xkey-purge"


@hookimpl
def sitemap_documents_changed(session: Session, tags: list[str]) -> None:
    config = NotifyConfig.from_session(session)
    if config is None:
        return
    now = utcnow()
    for channel in config.channels:
        if not (channel.purges and channel.enabled):
            continue
        for message in channel.purge_messages(tags):
            if _waiting(session, channel.name, message):
                continue
            session.execute(
                insert(Notification),
                [
                    {
                        "created_at": now,
                        "channel": channel.name,
                        "url": message.url,
                        "payload": message.payload,
                        "changes": len(tags),
                        "sitemaps": [],
                        "status": PENDING,
                        "attempts": 0,
                        "due_at": now,
                    }
                ],
            )


def _waiting(session: Session, channel: str, message: Message) -> bool:
    """Whether the same purge waits already, not yet claimed by a worker."""
    rows = session.execute(
        select(Notification.payload).where(
            Notification.channel == channel,
            Notification.url == message.url,
            Notification.status == PENDING,
            Notification.lease_until.is_(None),
            Notification.attempts == 0,
        )
    ).scalars()
    return any(payload == message.payload for payload in rows)


def batches(tags: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(tags), size):
        yield tags[start : start + size]


class VarnishPurge(Channel):
    """``PURGE /`` with ``xkey-purge: TAG …`` to each Varnish server configured: 2xx
    purged, 5xx and 429 again later, anything else (a 403: the VCL's ACL refuses this
    host) given up."""

    name = "varnish"
    announces = False
    purges = True

    def __init__(self, servers: tuple[str, ...]) -> None:
        self.servers = servers

    @property
    def enabled(self) -> bool:
        return bool(self.servers)

    def purge_messages(self, tags: list[str]) -> Iterator[Message]:
        for server in self.servers:
            for some in batches(tags, VARNISH_TAGS_PER_REQUEST):
                yield Message(server + "/", {"tags": some})

    def request(self, message: Message, site_url: str) -> OutgoingRequest:
        tags = (message.payload or {}).get("tags", [])
        return OutgoingRequest(message.url, method="PURGE", headers={PURGE_HEADER: " ".join(tags)})

    def describe(self, number: int, message: Message) -> str:
        tags = (message.payload or {}).get("tags", [])
        return f"varnish purge {number} of {len(tags)} tag(s) to {message.url}"

    def targets(self, site_url: str) -> Any:
        return list(self.servers)


def varnish_servers(value: str) -> tuple[str, ...]:
    """Base URLs of Varnish servers (``http://127.0.0.1:6081``), blank-separated."""
    return tuple(dict.fromkeys(http_url(item).rstrip("/") for item in value.split()))


@hookimpl
def sitemap_settings() -> list[Setting]:
    return [
        Setting(
            VARNISH,
            "",
            varnish_servers,
            env="SITEMAP_SERVER_PURGE_VARNISH",
            doc="Varnish servers in front of this site (base URLs, blank-separated) to send "
            "a purge of the cache tags of the documents each applied change touched "
            "(PURGE / with xkey-purge; deploy/varnish/sitemaps.vcl). Empty: none.",
        )
    ]


@hookimpl
def sitemap_channels(settings: Mapping[str, Any]) -> list[Channel]:
    return [VarnishPurge(settings[VARNISH])]
