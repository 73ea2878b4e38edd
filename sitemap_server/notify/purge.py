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
xkey module. The Fastly and Cloudflare channels POST them to the CDN's API, by surrogate
key and by Cache-Tag: their API tokens are read from the environment only, and added to
each request when it is sent, so no token is written to the outbox, shown by
``GET /api/notifications`` or kept in a backup of the database.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from ..hookspecs import hookimpl
from ..models import Notification
from ..models.meta import utcnow
from ..models.notifications import FAILED, PENDING
from ..settings import Setting, SettingsError, boolean, http_url, optional
from .channels import Channel, Message, OutgoingRequest, Result
from .config import NotifyConfig

VARNISH = "sitemap_server.purge.varnish"
# Tags in one PURGE: Varnish reads request headers up to 8 KB by default (http_req_hdr_len),
# and a tag is at most a few dozen bytes.
VARNISH_TAGS_PER_REQUEST = 100
# The header the VCL hands to xkey.purge.
PURGE_HEADER = "xkey-purge"

FASTLY_SERVICE = "sitemap_server.purge.fastly.service_id"
FASTLY_API = "sitemap_server.purge.fastly.api"
FASTLY_SOFT = "sitemap_server.purge.fastly.soft"
FASTLY_TOKEN = "SITEMAP_SERVER_PURGE_FASTLY_TOKEN"
# Fastly's batch purge takes "up to 256 surrogate keys in one batch request" (the API
# reference of POST /service/{service_id}/purge).
FASTLY_KEYS_PER_REQUEST = 256

CLOUDFLARE_ZONE = "sitemap_server.purge.cloudflare.zone_id"
CLOUDFLARE_API = "sitemap_server.purge.cloudflare.api"
CLOUDFLARE_TOKEN = "SITEMAP_SERVER_PURGE_CLOUDFLARE_TOKEN"
# Cloudflare's purge by tag takes "up to 100 operations per request" on every plan
# (developers.cloudflare.com/cache/how-to/purge-cache, "Purge limits"; its older
# documentation said 30 tags per call).
CLOUDFLARE_TAGS_PER_REQUEST = 100
# Cloudflare's answer, read to tell a refusal from a purge: a few hundred bytes, more
# with many errors.
CLOUDFLARE_ANSWER_BYTES = 64 * 1024
# The most of Cloudflare's error messages kept with a message given up.
CLOUDFLARE_ERROR_CHARS = 500


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
            if not _joined(session, channel, message):
                session.execute(
                    insert(Notification),
                    [
                        {
                            "created_at": now,
                            "channel": channel.name,
                            "url": message.url,
                            "payload": message.payload,
                            "changes": len(_tags(message.payload)),
                            "sitemaps": [],
                            "status": PENDING,
                            "attempts": 0,
                            "due_at": now,
                        }
                    ],
                )


def _tags(payload: Any) -> list[str]:
    return list((payload or {}).get("tags", []))


def _joined(session: Session, channel: Channel, message: Message) -> bool:
    """Whether ``message``'s tags could join a purge to the same place that waits, not yet
    tried nor claimed by a worker, while they fit in one request: passes that come faster
    than the worker sends (or than a CDN takes purges) make one purge, not one each."""
    waiting = session.execute(
        select(Notification.id, Notification.payload).where(
            Notification.channel == channel.name,
            Notification.url == message.url,
            Notification.status == PENDING,
            Notification.lease_until.is_(None),
            Notification.attempts == 0,
        )
    ).all()
    tags = set(_tags(message.payload))
    for row in waiting:
        held = set(_tags(row.payload))
        if tags <= held:
            return True
        joined = sorted(held | tags)
        if len(joined) > channel.tags_per_request:
            continue
        # Unless a worker claimed it in the meantime.
        updated = session.execute(
            update(Notification)
            .where(
                Notification.id == row.id,
                Notification.status == PENDING,
                Notification.lease_until.is_(None),
            )
            .values(payload={**(row.payload or {}), "tags": joined}, changes=len(joined))
        )
        if updated.rowcount == 1:  # type: ignore[attr-defined]
            return True
    return False


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
    tags_per_request = VARNISH_TAGS_PER_REQUEST

    def __init__(self, servers: tuple[str, ...]) -> None:
        self.servers = servers

    @property
    def enabled(self) -> bool:
        return bool(self.servers)

    def purge_messages(self, tags: list[str]) -> Iterator[Message]:
        for server in self.servers:
            for some in batches(tags, self.tags_per_request):
                yield Message(server + "/", {"tags": some})

    def request(self, message: Message, site_url: str) -> OutgoingRequest:
        tags = _tags(message.payload)
        return OutgoingRequest(message.url, method="PURGE", headers={PURGE_HEADER: " ".join(tags)})

    def describe(self, number: int, message: Message) -> str:
        tags = _tags(message.payload)
        return f"varnish purge {number} of {len(tags)} tag(s) to {message.url}"

    def targets(self, site_url: str) -> Any:
        return list(self.servers)


class TokenPurge(Channel):
    """A purge by tag through a CDN's API: a POST to ``url`` per batch of at most
    ``tags_per_request`` tags, with a token read from the environment variable
    ``token_variable`` and added when the request is made. 2xx purged, 5xx and 429 again
    later, a refused token (401, 403) or anything else given up."""

    announces = False
    purges = True
    tags_per_request = 1
    # The CDN and what its token needs, for the messages of a refusal.
    cdn = ""
    token_variable = ""
    token_needs = ""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token

    @property
    def enabled(self) -> bool:
        return bool(self.url and self.token)

    def purge_messages(self, tags: list[str]) -> Iterator[Message]:
        for some in batches(tags, self.tags_per_request):
            yield Message(self.url, {"tags": some})

    def judge(self, status: int, reason: str | None = None) -> Result:
        if status in (401, 403):
            return Result(
                FAILED,
                status,
                f"HTTP {status}: {self.cdn} refused the token of {self.token_variable} "
                f"(it must be valid and have {self.token_needs})",
            )
        return super().judge(status, reason)

    def describe(self, number: int, message: Message) -> str:
        tags = _tags(message.payload)
        return f"{self.name} purge {number} of {len(tags)} tag(s) to {message.url}"

    def targets(self, site_url: str) -> Any:
        return [self.url] if self.enabled else None


class FastlyPurge(TokenPurge):
    """``POST {api}/service/{id}/purge`` with ``{"surrogate_keys": [...]}`` and the token
    in ``Fastly-Key``; ``soft``: ``Fastly-Soft-Purge: 1``, which marks the copies stale
    instead of dropping them."""

    name = "fastly"
    tags_per_request = FASTLY_KEYS_PER_REQUEST
    cdn = "Fastly"
    token_variable = FASTLY_TOKEN
    token_needs = "the purge_select scope on this service"

    def __init__(self, service_id: str, api: str, token: str, soft: bool = False) -> None:
        super().__init__(
            f"{api.rstrip('/')}/service/{service_id}/purge" if service_id else "", token
        )
        self.soft = soft

    def request(self, message: Message, site_url: str) -> OutgoingRequest:
        # The token and the kind of purge as configured now, not when the purge was stored.
        headers = {"Fastly-Key": self.token, "Accept": "application/json"}
        if self.soft:
            headers["Fastly-Soft-Purge"] = "1"
        keys = _tags(message.payload)
        return OutgoingRequest(message.url, {"surrogate_keys": keys}, headers=headers)


class CloudflarePurge(TokenPurge):
    """``POST {api}/client/v4/zones/{id}/purge_cache`` with ``{"tags": [...]}`` and the
    token as a bearer. Cloudflare may refuse a purge in a 200 (``"success": false``): the
    answer is read, and such a refusal given up with Cloudflare's errors."""

    name = "cloudflare"
    tags_per_request = CLOUDFLARE_TAGS_PER_REQUEST
    cdn = "Cloudflare"
    token_variable = CLOUDFLARE_TOKEN
    token_needs = "the Cache Purge permission on this zone"

    def __init__(self, zone_id: str, api: str, token: str) -> None:
        url = f"{api.rstrip('/')}/client/v4/zones/{zone_id}/purge_cache" if zone_id else ""
        super().__init__(url, token)

    def request(self, message: Message, site_url: str) -> OutgoingRequest:
        tags = _tags(message.payload)
        return OutgoingRequest(
            message.url,
            {"tags": tags},
            headers={"Authorization": f"Bearer {self.token}"},
            answer_bytes=CLOUDFLARE_ANSWER_BYTES,
        )

    def received(self, session: Session, message: Message, answer: bytes) -> None:
        try:
            body = json.loads(answer)
        except ValueError:
            raise ValueError("Cloudflare's answer is not JSON") from None
        if not isinstance(body, dict) or body.get("success") is not True:
            errors = body.get("errors") if isinstance(body, dict) else None
            raise ValueError(f"Cloudflare did not purge: {cloudflare_errors(errors)}")


def cloudflare_errors(errors: Any) -> str:
    """Cloudflare's ``errors`` (``[{"code": 1234, "message": "…"}]``) in a line."""
    said = []
    for error in errors if isinstance(errors, list) else []:
        if isinstance(error, dict):
            error = " ".join(str(error[part]) for part in ("code", "message") if error.get(part))
        if error:
            said.append(str(error))
    line = "; ".join(said) or "no error given"
    if len(line) > CLOUDFLARE_ERROR_CHARS:
        return line[: CLOUDFLARE_ERROR_CHARS - 1] + "…"
    return line


def varnish_servers(value: str) -> tuple[str, ...]:
    """Base URLs of Varnish servers (``http://127.0.0.1:6081``), blank-separated."""
    return tuple(dict.fromkeys(http_url(item).rstrip("/") for item in value.split()))


def api_id(longest: int) -> Callable[[str], str]:
    """An id the API takes in its path (a Fastly service's, a Cloudflare zone's): letters
    and digits, at most ``longest``."""

    def parse(value: str) -> str:
        if not (len(value) <= longest and value.isascii() and value.isalnum()):
            raise ValueError(f"must be letters and digits only, at most {longest}")
        return value

    return parse


def environment_token(variable: str, id_setting: str, id_value: str, needs: str) -> str:
    """The API token in the environment variable ``variable``; required once the setting
    ``id_setting`` is set (``id_value``). Never in the ini file: the file is often kept in
    version control or shown to others, and a token given there would be ignored."""
    token = os.environ.get(variable, "").strip()
    if id_value and not token:
        raise SettingsError(
            f"setting {id_setting} is set but the environment variable {variable} is not: "
            f"give it an API token with {needs} (tokens are read from the environment only), "
            f"or leave {id_setting} empty"
        )
    if not all(33 <= ord(char) < 127 for char in token):
        # Its value is not shown: it is a secret.
        raise SettingsError(
            f"the environment variable {variable} must hold the token alone (printable "
            "ASCII characters, no blanks)"
        )
    return token


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
        ),
        Setting(
            FASTLY_SERVICE,
            "",
            optional(api_id(64)),
            env="SITEMAP_SERVER_PURGE_FASTLY_SERVICE_ID",
            doc="The Fastly service in front of this site: the cache tags of the documents "
            "each applied change touched are purged by surrogate key, with the API token in "
            f"the environment variable {FASTLY_TOKEN} (required then). Empty: none.",
        ),
        Setting(
            FASTLY_API,
            "https://api.fastly.com",
            http_url,
            doc="Fastly's API, where the purges are POSTed.",
        ),
        Setting(
            FASTLY_SOFT,
            "false",
            boolean,
            doc="Fastly soft purges (Fastly-Soft-Purge: 1): the copies are marked stale, "
            "not dropped.",
        ),
        Setting(
            CLOUDFLARE_ZONE,
            "",
            optional(api_id(32)),
            env="SITEMAP_SERVER_PURGE_CLOUDFLARE_ZONE_ID",
            doc="The Cloudflare zone in front of this site: the cache tags of the documents "
            "each applied change touched are purged by Cache-Tag, with the API token in the "
            f"environment variable {CLOUDFLARE_TOKEN} (required then). Empty: none.",
        ),
        Setting(
            CLOUDFLARE_API,
            "https://api.cloudflare.com",
            http_url,
            doc="Cloudflare's API, where the purges are POSTed.",
        ),
    ]


@hookimpl
def sitemap_channels(settings: Mapping[str, Any]) -> list[Channel]:
    fastly, cloudflare = settings[FASTLY_SERVICE], settings[CLOUDFLARE_ZONE]
    return [
        VarnishPurge(settings[VARNISH]),
        FastlyPurge(
            fastly,
            settings[FASTLY_API],
            environment_token(FASTLY_TOKEN, FASTLY_SERVICE, fastly, FastlyPurge.token_needs),
            soft=settings[FASTLY_SOFT],
        ),
        CloudflarePurge(
            cloudflare,
            settings[CLOUDFLARE_API],
            environment_token(
                CLOUDFLARE_TOKEN, CLOUDFLARE_ZONE, cloudflare, CloudflarePurge.token_needs
            ),
        ),
    ]
