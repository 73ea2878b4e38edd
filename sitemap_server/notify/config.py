"""The worker's settings and the channels it sends through, read once from the settings."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.orm import Session

from ..context import CONTEXT_KEY, AppContext
from ..settings import SettingsError, setting_value
from .channels import MAX_NAME_LENGTH, Channel


@dataclass(frozen=True)
class NotifyConfig:
    # Every channel of the loaded plugins (the core's ping and IndexNow among them),
    # configured or not.
    channels: tuple[Channel, ...]
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
        """Anyone to tell about changes: without such a channel no change is recorded."""
        return any(channel.enabled and channel.announces for channel in self.channels)

    def channel(self, name: str) -> Channel | None:
        return next((channel for channel in self.channels if channel.name == name), None)

    @classmethod
    def from_settings(cls, settings: MutableMapping[str, Any]) -> NotifyConfig:
        def get(name: str) -> Any:
            return setting_value(settings, f"sitemap_server.{name}")

        context = AppContext.from_settings(settings)
        return cls(
            channels=channels_of(context),
            quiet=timedelta(seconds=get("notify.quiet_seconds")),
            max_delay=timedelta(seconds=get("notify.max_delay_seconds")),
            timeout=get("notify.timeout_seconds"),
            retry_seconds=get("notify.retry_seconds"),
            max_attempts=get("notify.max_attempts"),
            lease=timedelta(seconds=get("notify.lease_seconds")),
            poll_seconds=get("notify.poll_seconds"),
            keep=timedelta(days=get("notify.keep_days")),
            site_url=context.site_url,
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


def channels_of(context: AppContext) -> tuple[Channel, ...]:
    """The channels of ``context``'s plugins (``sitemap_channels``), checked."""
    found: dict[str, Channel] = {}
    settings: Mapping[str, Any] = context.settings
    for result in context.plugins.hook.sitemap_channels(settings=settings):
        for channel in result:
            name = channel.name
            if not name or len(name) > MAX_NAME_LENGTH:
                raise SettingsError(
                    f"notification channel {name!r}: a name is 1 to {MAX_NAME_LENGTH} characters"
                )
            if name in found:
                raise SettingsError(f"notification channel {name!r} is contributed twice")
            found[name] = channel
    return tuple(found.values())


CONFIG_KEY = "sitemap_server.notify.config"
