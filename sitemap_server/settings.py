"""Every ``sitemap_server.*`` setting: its default, its environment override, its validation.

Settings come from the ini file that ``pserve`` and ``sitemap-server`` both read. An
environment variable, where one is named, wins over the ini file, so one ``production.ini``
serves every deployment. ``normalize`` is called once at start-up; code reads the typed
values it leaves in the registry settings and never parses a raw string again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pyramid.settings import asbool


class SettingsError(ValueError):
    """A setting is missing or invalid; the message names it."""


def _site_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an absolute http(s) URL such as https://example.com")
    if parts.query or parts.fragment:
        raise ValueError("must not carry a query string or fragment")
    return value.rstrip("/")


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError("must be a positive integer")
    return number


def _names(value: str) -> tuple[str, ...]:
    return tuple(name for name in value.replace(",", " ").split() if name)


def _bool(value: str) -> bool:
    return asbool(value)


@dataclass(frozen=True)
class Setting:
    name: str
    default: str | None
    parse: Callable[[str], Any]
    env: str | None = None
    doc: str = ""


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "sqlalchemy.url",
        None,
        str,
        env="SITEMAP_SERVER_DATABASE_URL",
        doc="Database URL: sqlite:///path or postgresql+psycopg://user@host/db.",
    ),
    Setting(
        "sitemap_server.site_url",
        None,
        _site_url,
        env="SITEMAP_SERVER_SITE_URL",
        doc="Public URL of the site (scheme, host, optional path). The site settings "
        "stored in the database override it once set through the admin API.",
    ),
    Setting(
        "sitemap_server.api.max_body_bytes",
        str(2 * 1024 * 1024),
        _positive_int,
        doc="Largest admin API request body (bytes); larger ones get 413.",
    ),
    Setting(
        "sitemap_server.api.max_import_bytes",
        str(1024 * 1024 * 1024),
        _positive_int,
        doc="Largest body of POST /api/import (bytes); larger ones get 413.",
    ),
    Setting(
        "sitemap_server.api.validate_responses",
        "false",
        _bool,
        doc="Check every admin API response against the OpenAPI document (tests turn it on).",
    ),
    Setting(
        "sitemap_server.sqlite.busy_timeout_ms",
        "5000",
        _positive_int,
        doc="How long a SQLite writer waits for the lock before failing.",
    ),
    Setting(
        "sitemap_server.cache_control",
        "public, no-cache",
        str,
        doc="Cache-Control of sitemap and XSL responses. The default lets caches keep a copy "
        "but revalidate it (a cheap 304) on every use, so nobody is served a stale sitemap.",
    ),
    Setting(
        "sitemap_server.render_cache_bytes",
        str(64 * 1024 * 1024),
        _positive_int,
        doc="Memory per process for rendered sitemaps, reused while their content version holds.",
    ),
    Setting(
        "sitemap_server.max_page_bytes",
        str(50 * 1024 * 1024),
        _positive_int,
        doc="Largest sitemap page (bytes, uncompressed). A page that would pass it holds fewer "
        "entries than the page size (S-310: 50 MiB, the protocol's limit; lower only to test).",
    ),
    Setting(
        "sitemap_server.disabled_plugins",
        "",
        _names,
        doc="Entry-point names of installed plugins to leave out (space or comma separated).",
    ),
    Setting(
        "sitemap_server.extra_plugins",
        "",
        _names,
        doc="Dotted names of modules to register as plugins without packaging them.",
    ),
    Setting(
        "sitemap_server.load_entrypoints",
        "true",
        _bool,
        doc="Load the plugins installed under the sitemap_server entry-point group.",
    ),
    Setting(
        "sitemap_server.sql_echo",
        "false",
        _bool,
        doc="Log every SQL statement (debugging only).",
    ),
)


def normalize(
    settings: MutableMapping[str, Any], environ: Mapping[str, str] | None = None
) -> MutableMapping[str, Any]:
    """Apply environment overrides and defaults, parse every value, fail on a bad one."""
    environ = os.environ if environ is None else environ
    for setting in SETTINGS:
        raw = settings.get(setting.name)
        if setting.env and environ.get(setting.env):
            raw = environ[setting.env]
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            raw = setting.default
        if raw is None:
            where = f" (or the environment variable {setting.env})" if setting.env else ""
            raise SettingsError(f"setting {setting.name}{where} is required")
        if not isinstance(raw, str):
            settings[setting.name] = raw  # already parsed (normalize called twice)
            continue
        try:
            settings[setting.name] = setting.parse(raw.strip())
        except ValueError as exc:
            raise SettingsError(f"setting {setting.name}={raw!r}: {exc}") from exc
    return settings
