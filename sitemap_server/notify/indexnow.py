"""The IndexNow channel: the changed URLs of a burst POSTed to an IndexNow endpoint, in
batches, with the site's key; and the key file, ``/{key}.txt``, that proves the site owns
the key (S-601). Everything about IndexNow is here."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit

from pyramid.config import Configurator
from pyramid.request import Request
from pyramid.response import Response

from ..batches import chunks
from ..hookspecs import hookimpl
from ..models.notifications import FAILED, SENT
from ..settings import Setting, http_url, positive_int
from .channels import Burst, Channel, Message, OutgoingRequest, Result

NAME = "indexnow"
KEY = "sitemap_server.indexnow.key"
ENDPOINT = "sitemap_server.indexnow.endpoint"
BATCH = "sitemap_server.indexnow.batch_size"

# IndexNow's documented answers (https://www.indexnow.org/documentation#response).
INDEXNOW_REFUSALS = {
    400: "bad request: the submission's format is invalid",
    403: "forbidden: the key is not valid (the key file was not found or does not match)",
    422: "unprocessable: URLs do not belong to the host, or the key does not match the schema",
}


def indexnow_key(value: str) -> str:
    if value and not (
        8 <= len(value) <= 128 and all(c.isascii() and (c.isalnum() or c == "-") for c in value)
    ):
        raise ValueError("must be 8 to 128 characters: letters a-z, A-Z, digits 0-9 and '-'")
    return value


def batch_size(value: str) -> int:
    number = positive_int(value)
    if number > 10_000:
        raise ValueError("must be at most 10000 (IndexNow's limit)")
    return number


def authority(address: SplitResult) -> str:
    """The host IndexNow is told, as its URLs carry it: with the port where the site URL
    has one (``127.0.0.1:6611``), never a user's name or password."""
    return address.netloc.rpartition("@")[2]


class IndexNow(Channel):
    name = NAME

    def __init__(self, key: str, endpoint: str, batch: int) -> None:
        self.key = key
        self.endpoint = endpoint
        self.batch = batch

    @property
    def enabled(self) -> bool:
        return bool(self.key)

    def key_location(self, site_url: str) -> str:
        return f"{site_url}/{self.key}.txt"

    def messages(self, burst: Burst) -> Iterator[Message]:
        address = urlsplit(burst.site_url)
        # IndexNow refuses (422) URLs of another host: those of an earlier site URL.
        own = (url for url in burst.urls if urlsplit(url).netloc == address.netloc)
        for batch in chunks(own, self.batch):
            yield Message(self.endpoint, {"host": authority(address), "urlList": batch})

    def request(self, message: Message, site_url: str) -> OutgoingRequest:
        # The key as configured now, not when the burst was made.
        body = {**(message.payload or {}), "key": self.key}
        return OutgoingRequest(message.url, {**body, "keyLocation": self.key_location(site_url)})

    def judge(self, status: int, reason: str | None = None) -> Result:
        if status in (200, 202):
            return Result(SENT, status)
        if status in INDEXNOW_REFUSALS:
            return Result(FAILED, status, f"HTTP {status}: {INDEXNOW_REFUSALS[status]}")
        if 200 <= status < 300:
            return Result(FAILED, status, f"HTTP {status} {reason or ''}".rstrip())
        return super().judge(status, reason)

    def describe(self, number: int, message: Message) -> str:
        count = len((message.payload or {}).get("urlList", ()))
        return f"IndexNow submission {number} ({count} URLs) to {message.url}"

    def targets(self, site_url: str) -> dict[str, str] | None:
        if not self.key:
            return None
        return {"endpoint": self.endpoint, "key_location": self.key_location(site_url)}

    def target_lines(self, site_url: str) -> list[str]:
        if not self.key:
            return []
        return [f"IndexNow {self.endpoint} (key at {self.key_location(site_url)})"]


@hookimpl
def sitemap_settings() -> list[Setting]:
    return [
        Setting(
            KEY,
            "",
            indexnow_key,
            env="SITEMAP_SERVER_INDEXNOW_KEY",
            doc="IndexNow key (8 to 128 letters, digits or dashes). Set, it is served at "
            "/{key}.txt and changed URLs are submitted to the endpoint below. Empty: no "
            "IndexNow.",
        ),
        Setting(
            ENDPOINT,
            "https://api.indexnow.org/indexnow",
            http_url,
            doc="Where IndexNow submissions are POSTed (any participating engine shares them).",
        ),
        Setting(
            BATCH,
            "10000",
            batch_size,
            doc="Most URLs in one IndexNow submission (at most 10,000, the protocol's limit).",
        ),
    ]


@hookimpl
def sitemap_channels(settings: Mapping[str, Any]) -> list[Channel]:
    return [IndexNow(settings[KEY], settings[ENDPOINT], settings[BATCH])]


@hookimpl
def sitemap_configure(config: Configurator) -> None:
    """The key file, when a key is configured."""
    key = config.get_settings()[KEY]
    if not key:
        return

    def key_file(request: Request) -> Response:
        return Response(key, content_type="text/plain", charset="utf-8")

    config.add_route("indexnow.key", f"/{key}.txt")
    config.add_view(key_file, route_name="indexnow.key", request_method=("GET", "HEAD"))
