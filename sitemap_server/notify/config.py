"""The worker's settings and the channels it sends through, read once by the site."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from ..models import SITE_KEY
from ..settings import SettingsError, setting_value
from .channels import MAX_NAME_LENGTH, Channel

if TYPE_CHECKING:
    from ..site import Site


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

    @property
    def purging(self) -> bool:
        """Any cache to purge after each applied change."""
        return any(channel.enabled and channel.purges for channel in self.channels)

    def channel(self, name: str) -> Channel | None:
        return next((channel for channel in self.channels if channel.name == name), None)

    @classmethod
    def of_site(cls, site: Site) -> NotifyConfig:
        """The configuration ``site``'s settings and plugins describe (``Site`` reads it
        once, at start)."""

        def get(name: str) -> Any:
            return setting_value(site.settings, f"sitemap_server.{name}")

        return cls(
            channels=channels_of(site),
            quiet=timedelta(seconds=get("notify.quiet_seconds")),
            max_delay=timedelta(seconds=get("notify.max_delay_seconds")),
            timeout=get("notify.timeout_seconds"),
            retry_seconds=get("notify.retry_seconds"),
            max_attempts=get("notify.max_attempts"),
            lease=timedelta(seconds=get("notify.lease_seconds")),
            poll_seconds=get("notify.poll_seconds"),
            keep=timedelta(days=get("notify.keep_days")),
            site_url=site.site_url,
        )

    @classmethod
    def from_session(cls, session: Session) -> NotifyConfig | None:
        """The configuration of the site that made ``session`` (None: a bare one)."""
        site: Site | None = session.info.get(SITE_KEY)
        return None if site is None else site.notify


def channels_of(site: Site) -> tuple[Channel, ...]:
    """The channels of ``site``'s plugins (``sitemap_channels``), checked."""
    found: dict[str, Channel] = {}
    for result in site.plugins.hook.sitemap_channels(settings=site.settings, site=site):
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
