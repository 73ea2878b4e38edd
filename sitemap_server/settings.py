"""Every setting: its default, its environment override, its validation.

Settings come from the ini file that ``pserve`` and ``sitemap-server`` both read. An
environment variable, where one is named, wins over the ini file, so one ``production.ini``
serves every deployment. ``normalize`` is called once at start-up, for the core's
``SETTINGS`` and then for those each plugin declares (the ``sitemap_settings`` hook,
``plugins.declared_settings``); code reads the typed values it leaves in the settings and
never parses a raw string again. The parsers here (``positive_int``, ``http_url`` …) are
part of the plugin API (``sitemap_server.plugin``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pyramid.settings import asbool

# S-310: a sitemap file holds at most 50 MiB, uncompressed.
MAX_PAGE_BYTES = 50 * 1024 * 1024


class SettingsError(ValueError):
    """A setting is missing or invalid; the message names it."""


def _site_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an absolute http(s) URL such as https://example.com")
    if parts.query or parts.fragment:
        raise ValueError("must not carry a query string or fragment")
    return value.rstrip("/")


def positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError("must be a positive integer")
    return number


def non_negative_int(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError("must be 0 or a positive integer")
    return number


def header_names(value: str) -> tuple[str, ...]:
    """HTTP header names (RFC 9110's tokens), separated by blanks or commas; ``none``:
    none."""
    if value.strip().lower() == "none":
        return ()
    found = names(value)
    for name in found:
        if not _HEADER_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not an HTTP header name")
    return found


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def bounded_int(largest: int) -> Callable[[str], int]:
    """A positive integer of at most ``largest``."""

    def parse(value: str) -> int:
        number = positive_int(value)
        if number > largest:
            raise ValueError(f"must be at most {largest}")
        return number

    return parse


def names(value: str) -> tuple[str, ...]:
    return tuple(name for name in value.replace(",", " ").split() if name)


def boolean(value: str) -> bool:
    return asbool(value)


def positive_float(value: str) -> float:
    number = float(value)
    if not number > 0:
        raise ValueError("must be a positive number")
    return number


def auto_or_positive_float(value: str) -> float | None:
    """None for ``auto`` (the code that reads it picks), else a positive number."""
    return None if value.strip().lower() == "auto" else positive_float(value)


def auto_or_boolean(value: str) -> bool | None:
    """None for ``auto`` (the code that reads it picks), else a boolean."""
    return None if value.strip().lower() == "auto" else boolean(value)


def seconds(value: str) -> float:
    number = float(value)
    if not number >= 0:
        raise ValueError("must be a number of seconds, 0 or more")
    return number


def http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an absolute http(s) URL")
    return value


def optional(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` for a setting that may be left empty: "" stays "" (not set)."""

    def parse_optional(value: str) -> Any:
        return parse(value) if value else ""

    return parse_optional


@dataclass(frozen=True)
class Setting:
    """One setting: ``parse`` turns the ini file's text into its value, or raises
    ``ValueError`` with what is wrong ("must be a positive integer"); ``default`` is text
    too (None: required); ``env`` names an environment variable that wins over the file;
    ``doc`` is the line the documentation shows; ``documents``: its value changes what
    the stored sitemaps hold, so a start with another value rebuilds them (the core's
    site URL and page size are such; a plugin's may be)."""

    name: str
    default: str | None
    parse: Callable[[str], Any]
    env: str | None = None
    doc: str = ""
    documents: bool = False


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
        positive_int,
        doc="Largest admin API request body (bytes); larger ones get 413.",
    ),
    Setting(
        "sitemap_server.api.max_import_bytes",
        str(64 * 1024 * 1024),
        positive_int,
        doc="Largest body of POST /api/import (bytes); larger ones get 413.",
    ),
    Setting(
        "sitemap_server.api.attempts",
        "3",
        positive_int,
        doc="How many times an admin API request runs when the database stops it for a "
        "conflict with another request (a deadlock, a serialization failure) before it "
        "answers 409.",
    ),
    Setting(
        "sitemap_server.api.validate_responses",
        "false",
        boolean,
        doc="Check every admin API response against the OpenAPI document (tests turn it on).",
    ),
    Setting(
        "sitemap_server.sqlite.busy_timeout_ms",
        "5000",
        positive_int,
        doc="How long a SQLite writer waits for the lock before failing.",
    ),
    Setting(
        "sitemap_server.cache_control",
        "",
        str,
        doc="Cache-Control of every document (sitemaps, indexes, feed, robots.txt, "
        "stylesheets, pages for people) as written here; empty: made from the "
        "sitemap_server.cache.* settings.",
    ),
    Setting(
        "sitemap_server.cache.s_maxage",
        "0",
        non_negative_int,
        doc="Seconds a shared cache (a CDN, Varnish) may serve a document without asking "
        "(s-maxage; browsers always revalidate: max-age=0). 0, the default, has it "
        "revalidate every use (a cheap 304), so nobody is served a stale sitemap; raise it "
        "only where purges reach the cache (the documents' tags name what to purge).",
    ),
    Setting(
        "sitemap_server.cache.stale_while_revalidate",
        "0",
        non_negative_int,
        doc="Seconds a shared cache may serve a document past its s-maxage while it "
        "revalidates it in the background (stale-while-revalidate; 0: left out).",
    ),
    Setting(
        "sitemap_server.cache.stale_if_error",
        "86400",
        non_negative_int,
        doc="Seconds a shared cache may serve its copy of a document while this server "
        "answers errors or not at all (stale-if-error; 0: left out).",
    ),
    Setting(
        "sitemap_server.cache.tag_headers",
        "Surrogate-Key",
        header_names,
        doc="The headers that carry each document's cache tags, for the cache in front: "
        "Surrogate-Key (Fastly; Varnish's xkey through deploy/varnish), Cache-Tag "
        "(Cloudflare), xkey (Varnish), Edge-Cache-Tag (Akamai); several may be named; "
        "none: no tags.",
    ),
    Setting(
        "sitemap_server.feed.entries",
        "100",
        bounded_int(50_000),
        doc="How many of the most recently changed URLs the Atom feed (/sitemap.atom) lists, "
        "the newest first (at most 50,000, a sitemap's limit: search engines read it as one).",
    ),
    Setting(
        "sitemap_server.feed.in_robots",
        "false",
        boolean,
        doc="Whether robots.txt names the Atom feed as a sitemap too (it always names the index).",
    ),
    Setting(
        "sitemap_server.xsl_instruction",
        "true",
        boolean,
        env="SITEMAP_SERVER_XSL_INSTRUCTION",
        doc="Whether each sitemap document leads with the instruction naming its XSL "
        "stylesheet (S-308, as Yoast's do): a browser with XSLT shows it as a table, under "
        "the deprecation banner Chromium now shows for XSLT. False: documents name only "
        "their CSS, which lays the XML out and names its page for people (/sitemaps/, the "
        "same XSL applied on the server); no banner.",
    ),
    Setting(
        "sitemap_server.robots.text",
        "false",
        boolean,
        doc="Whether robots.txt names each sitemap page's text form (/post-sitemap.txt …) "
        "too; by default the text forms are linked from nowhere.",
    ),
    Setting(
        "sitemap_server.changes.keep_days",
        "30",
        positive_int,
        doc="How long the change feed (GET /api/changes) keeps a removed URL's tombstone; a "
        "reader whose cursor is older is told to read the feed again from 0.",
    ),
    Setting(
        "sitemap_server.render_cache_bytes",
        str(64 * 1024 * 1024),
        positive_int,
        doc="Memory per process for rendered sitemaps, reused while their content version "
        "holds; and as much again, on PostgreSQL, for the finished documents its versions "
        "watch keeps (sitemaps/finished.py).",
    ),
    Setting(
        "sitemap_server.max_page_bytes",
        str(MAX_PAGE_BYTES),
        positive_int,
        doc="Largest sitemap page (bytes, uncompressed). A page that would pass it holds fewer "
        "entries than the page size (S-310: 50 MiB, the protocol's limit; lower only to test).",
    ),
    Setting(
        "sitemap_server.max_staleness",
        "1",
        seconds,
        doc="Seconds a recorded change may wait for the maintainer (the worker applies it "
        "within maintainer.poll_seconds). A sitemap request that finds one waiting longer "
        "applies the log before it answers, so a site without a worker still converges; 0: "
        "every request does (each answer is exact, reads wait for the writes before them).",
    ),
    Setting(
        "sitemap_server.finished_documents",
        "auto",
        auto_or_boolean,
        doc="Whether the maintainer stores the bytes of each sitemap page and index part a "
        "change made (sitemaps/finished.py), for server processes that have not rendered "
        "them to read instead of rendering them. auto: on PostgreSQL, where several "
        "processes and hosts share the database; off on SQLite, where one host's "
        "processes gain little and the maintainer's passes would cost more.",
    ),
    Setting(
        "sitemap_server.server_timing",
        "false",
        boolean,
        doc="Whether every answer says how long the application took to make it "
        "(Server-Timing: app;dur=MILLISECONDS; server_timing.py): for the benchmarks and a "
        "browser's developer tools. Off: it tells anyone how busy the origin is.",
    ),
    Setting(
        "sitemap_server.versions_watch",
        "true",
        boolean,
        doc="Whether a process keeps the sitemap versions between requests and reads them "
        "again when the database says they changed (sitemaps/watch.py): SQLite's commit "
        "count, exact; PostgreSQL's notifications, when max_staleness is above 0 (one more "
        "connection per process; LISTEN needs a session, so turn this off behind a "
        "transaction-pooling proxy such as PgBouncer's transaction mode). false: every "
        "request reads them.",
    ),
    Setting(
        "sitemap_server.maintainer.poll_seconds",
        "auto",
        auto_or_positive_float,
        doc="How often the worker looks for recorded changes to apply to the sitemaps. "
        "auto: 0.1 on PostgreSQL; 0.5 on SQLite, where each pass holds the one write lock "
        "and writers waiting for it oversleep (fewer, larger passes keep PATCH p95 low).",
    ),
    Setting(
        "sitemap_server.wordpress.url",
        "",
        optional(http_url),
        env="SITEMAP_SERVER_WORDPRESS_URL",
        doc="The WordPress `sitemap-server worker` follows (its address): a sync-wordpress "
        "run every wordpress.poll_seconds, as SITEMAP_SERVER_WORDPRESS_USER with "
        "SITEMAP_SERVER_WORDPRESS_PASSWORD (an application password) from the environment, "
        "else anonymously. Empty: none.",
    ),
    Setting(
        "sitemap_server.wordpress.permalinks",
        "",
        str,
        doc="The posts' permalink structure of that WordPress, as its settings write it "
        "(/%year%/%monthnum%/%postname%/); empty: found from the links it gives, as "
        "import-wordpress finds it.",
    ),
    Setting(
        "sitemap_server.wordpress.poll_seconds",
        "5",
        positive_float,
        doc="How often the worker reads what changed in that WordPress (from the start of "
        "one run to the start of the next).",
    ),
    Setting(
        "sitemap_server.disabled_plugins",
        "",
        names,
        doc="Entry-point names of installed plugins to leave out (space or comma separated).",
    ),
    Setting(
        "sitemap_server.extra_plugins",
        "",
        names,
        doc="Dotted names of modules to register as plugins without packaging them.",
    ),
    Setting(
        "sitemap_server.load_entrypoints",
        "true",
        boolean,
        doc="Load the plugins installed under the sitemap_server entry-point group.",
    ),
    Setting(
        "sitemap_server.notify.quiet_seconds",
        "60",
        seconds,
        doc="A burst of changes is sent (one ping per target) once nothing has changed for "
        "this long, or once its first change is max_delay_seconds old.",
    ),
    Setting(
        "sitemap_server.notify.max_delay_seconds",
        "900",
        seconds,
        doc="The longest a change waits for its burst to end, however busy the site.",
    ),
    Setting(
        "sitemap_server.notify.timeout_seconds",
        "10",
        positive_float,
        doc="Connect and read timeout of each request to a search engine.",
    ),
    Setting(
        "sitemap_server.notify.retry_seconds",
        "60",
        positive_float,
        doc="Wait before the first retry (connection error, 429, 5xx); doubled after each "
        "failure, at most 6 hours.",
    ),
    Setting(
        "sitemap_server.notify.max_attempts",
        "8",
        positive_int,
        doc="Tries before a notification is given up.",
    ),
    Setting(
        "sitemap_server.notify.lease_seconds",
        "300",
        positive_float,
        doc="How long a worker holds a notification it is sending; one whose worker died "
        "is sent by another after this.",
    ),
    Setting(
        "sitemap_server.notify.poll_seconds",
        "5",
        positive_float,
        doc="How often the worker looks for notifications to send.",
    ),
    Setting(
        "sitemap_server.notify.keep_days",
        "30",
        positive_int,
        doc="How long sent and given-up notifications are kept for GET /api/notifications.",
    ),
    Setting(
        "sitemap_server.notify.worker_thread",
        "false",
        boolean,
        doc="Run the notification worker in a thread of the web process (the single-process "
        "default); otherwise run `sitemap-server worker` beside it.",
    ),
    Setting(
        "sitemap_server.sql_echo",
        "false",
        boolean,
        doc="Log every SQL statement (debugging only).",
    ),
)


def normalize(
    settings: MutableMapping[str, Any],
    environ: Mapping[str, str] | None = None,
    declared: Iterable[Setting] | None = None,
) -> MutableMapping[str, Any]:
    """Apply environment overrides and defaults, parse every value, fail on a bad one.

    ``declared``: the settings to read (the core's ``SETTINGS`` if not given)."""
    environ = os.environ if environ is None else environ
    for setting in SETTINGS if declared is None else declared:
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
    if declared is None:
        lease, timeout = settings[LEASE], settings[TIMEOUT]
        if lease <= 2 * timeout:
            # A worker still waiting for an answer must not lose its claim to another one.
            raise SettingsError(
                f"setting {LEASE}={lease:g} must be more than twice {TIMEOUT}={timeout:g}"
            )
    return settings


LEASE = "sitemap_server.notify.lease_seconds"
TIMEOUT = "sitemap_server.notify.timeout_seconds"


def setting_value(settings: Mapping[str, Any], name: str) -> Any:
    """A setting's parsed value, or its parsed default if ``settings`` lacks it."""
    if name in settings and not isinstance(settings[name], str):
        return settings[name]
    setting = next(s for s in SETTINGS if s.name == name)
    raw = settings.get(name)
    if raw is None or not str(raw).strip():
        raw = setting.default
    return setting.parse(str(raw).strip())
