"""The ping channel: a GET of each configured URL, with the sitemap index's URL in it, once
per burst of changes (S-601). Everything about pings is here: its setting, the messages a
burst becomes, what a target looks like."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ..documents import index_url
from ..hookspecs import hookimpl
from ..settings import Setting, http_url
from .channels import Burst, Channel, Message

NAME = "ping"
TARGETS = "sitemap_server.ping.targets"
# Ping endpoints known by name. Google's answers 404 since 2023 and is kept for sites that
# want exactly what the specification asks; nothing is pinged unless configured.
PING_PRESETS = {"google": "https://www.google.com/ping?sitemap={sitemap}"}


def ping_targets(value: str) -> tuple[str, ...]:
    targets = []
    for item in value.split():
        template = PING_PRESETS.get(item.lower(), item)
        if "{sitemap}" not in template:
            raise ValueError(
                f"{item!r} is neither a preset ({', '.join(PING_PRESETS)}) "
                "nor a URL template with a {sitemap} placeholder"
            )
        http_url(template.replace("{sitemap}", "x"))
        targets.append(template)
    return tuple(dict.fromkeys(targets))


class Ping(Channel):
    name = NAME

    def __init__(self, templates: tuple[str, ...]) -> None:
        self.templates = templates

    @property
    def enabled(self) -> bool:
        return bool(self.templates)

    def url(self, template: str, site_url: str) -> str:
        return template.replace("{sitemap}", quote(index_url(site_url), safe=""))

    def messages(self, burst: Burst) -> list[Message]:
        return [Message(self.url(template, burst.site_url)) for template in self.templates]

    def describe(self, number: int, message: Message) -> str:
        return f"ping {number} {message.url}"

    def targets(self, site_url: str) -> list[str]:
        return [self.url(template, site_url) for template in self.templates]


@hookimpl
def sitemap_settings() -> list[Setting]:
    return [
        Setting(
            TARGETS,
            "",
            ping_targets,
            env="SITEMAP_SERVER_PING_TARGETS",
            doc="Where to ping when a sitemap changes: URL templates with a {sitemap} "
            "placeholder (filled with the URL-encoded sitemap index URL), or preset names ("
            + ", ".join(PING_PRESETS)
            + "), space separated. Empty: no pings. Google retired its ping endpoint in 2023.",
        )
    ]


@hookimpl
def sitemap_channels(settings: Mapping[str, Any]) -> list[Channel]:
    return [Ping(settings[TARGETS])]
