"""The notification settings, read once from the application's settings."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import quote

from sqlalchemy.orm import Session

from ..context import CONTEXT_KEY
from ..settings import setting_value


@dataclass(frozen=True)
class NotifyConfig:
    ping_targets: tuple[str, ...]
    indexnow_key: str
    indexnow_endpoint: str
    indexnow_batch: int
    quiet: timedelta
    max_delay: timedelta
    timeout: float
    retry_seconds: float
    max_attempts: int
    lease: timedelta
    poll_seconds: float
    keep: timedelta
    # The ini file's site URL; the one stored through the API wins (effective_site_url).
    site_url: str

    @property
    def enabled(self) -> bool:
        """Anything to tell anyone: without targets nothing is recorded at all."""
        return bool(self.ping_targets or self.indexnow_key)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> NotifyConfig:
        def get(name: str) -> Any:
            return setting_value(settings, f"sitemap_server.{name}")

        return cls(
            ping_targets=tuple(get("ping.targets")),
            indexnow_key=get("indexnow.key"),
            indexnow_endpoint=get("indexnow.endpoint"),
            indexnow_batch=get("indexnow.batch_size"),
            quiet=timedelta(seconds=get("notify.quiet_seconds")),
            max_delay=timedelta(seconds=get("notify.max_delay_seconds")),
            timeout=get("notify.timeout_seconds"),
            retry_seconds=get("notify.retry_seconds"),
            max_attempts=get("notify.max_attempts"),
            lease=timedelta(seconds=get("notify.lease_seconds")),
            poll_seconds=get("notify.poll_seconds"),
            keep=timedelta(days=get("notify.keep_days")),
            site_url=str(settings.get("sitemap_server.site_url") or "http://localhost"),
        )

    @classmethod
    def of(cls, settings: MutableMapping[str, Any]) -> NotifyConfig:
        """The configuration of an application's ``settings``, read once and kept there."""
        cached = settings.get(CONFIG_KEY)
        if not isinstance(cached, NotifyConfig):
            cached = settings[CONFIG_KEY] = cls.from_settings(settings)
        return cached

    @classmethod
    def from_session(cls, session: Session) -> NotifyConfig | None:
        """The configuration of the application that made ``session`` (None: a bare one)."""
        context = session.info.get(CONTEXT_KEY)
        return None if context is None else cls.of(context.settings)

    def ping_url(self, template: str, site_url: str) -> str:
        return template.replace("{sitemap}", quote(index_url(site_url), safe=""))

    def key_location(self, site_url: str) -> str:
        return f"{site_url}/{self.indexnow_key}.txt"


CONFIG_KEY = "sitemap_server.notify.config"


def index_url(site_url: str) -> str:
    return f"{site_url}/sitemap_index.xml"
