"""The site: the one object the application is, built once from its settings.

``Site(settings)`` (or ``Site.from_ini(path)``) is the only place that reads the settings,
loads the plugins, and makes the database engine and its sessions. ``main()`` builds one
and hands it to Pyramid under one registry key (``request.site``); every command of
``sitemap-server`` builds one from the ini file; the worker, the test fixtures and the
benchmarks are given one. Everything else is reached through it:

- ``settings`` (every setting, parsed, the plugins' own among them), ``plugins`` (the
  plugin manager), ``site_url``, ``max_page_bytes``;
- ``database`` (the SQLAlchemy engine) and ``sessions`` (its session factory: each
  session carries the site, ``models.site_of``);
- ``engine``: the sitemap engine, the one door to the stored sitemaps;
- ``notify``: the notification channels and the worker's settings;
- ``reader`` and ``render_cache`` (the read path), ``namespaces``, ``xsl_files`` and
  ``stylesheets`` (the documents and their pages for people), ``openapi`` and
  ``import_validator`` (the admin API): made on first use, so a command that never
  serves a sitemap or an API request never pays for them;
- ``worker_thread``: the notification worker of the web process, when one runs.

Nothing here is kept anywhere else: no setting dict caches a part of the site, and
nothing is built twice (in the manner of devpi's ``XOM``, where the command line and the
web application share one object).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy
from pyramid.paster import get_appsettings
from sqlalchemy.engine import Engine as DatabaseEngine
from sqlalchemy.orm import Session, sessionmaker

from .api.openapi import OpenAPI
from .api.schema import build_spec, import_line_validator
from .models import get_engine, get_session_factory
from .notify.config import NotifyConfig
from .plugins import declared_settings, from_settings
from .settings import MAX_PAGE_BYTES, normalize
from .sitemaps import finished
from .sitemaps.engine import Engine
from .sitemaps.html import Stylesheets
from .sitemaps.providers import MAIN_XSL
from .sitemaps.reader import Reader, ReadState
from .sitemaps.responses import RenderCache, cache_policy
from .sitemaps.xml import IMAGE_NS, XHTML_NS

if TYPE_CHECKING:
    from .notify.worker import WorkerThread

DEFAULT_SITE_URL = "http://localhost"
BUSY_TIMEOUT = "sitemap_server.sqlite.busy_timeout_ms"
# A command waits this long for SQLite's write lock (a server's worker may hold it for a
# large pass; a request gives up after the setting's 5 s, a command is not in a hurry).
COMMAND_BUSY_TIMEOUT_MS = 60_000


class Site:
    """One application: its settings, plugins, database and sitemap engine."""

    def __init__(
        self,
        settings: Mapping[str, Any],
        environ: Mapping[str, str] | None = None,
        *,
        command: bool = False,
    ) -> None:
        """Read ``settings`` (an ini file's ``[app:main]``, unparsed or parsed), with the
        ``SITEMAP_SERVER_*`` overrides of ``environ`` (``os.environ``); fail with a
        ``SettingsError`` that names a bad one. ``command``: for a command of the command
        line, which waits longer for SQLite's write lock than a request does."""
        environ = os.environ if environ is None else environ
        parsed: dict[str, Any] = dict(settings)
        normalize(parsed, environ)
        self.plugins: pluggy.PluginManager = from_settings(parsed)
        # The plugins' own settings (the core's are read before its plugins are known).
        declared = declared_settings(self.plugins)
        normalize(parsed, environ, declared=declared)
        if command:
            parsed[BUSY_TIMEOUT] = max(parsed[BUSY_TIMEOUT], COMMAND_BUSY_TIMEOUT_MS)
        self.settings: Mapping[str, Any] = parsed
        # The ini file's ``sitemap_server.site_url`` (one stored through the API wins
        # over it: ``models.site.site_url_of``).
        self.site_url = str(parsed.get("sitemap_server.site_url") or DEFAULT_SITE_URL)
        # The largest page, in bytes (``sitemap_server.max_page_bytes``).
        self.max_page_bytes = int(parsed.get("sitemap_server.max_page_bytes") or MAX_PAGE_BYTES)
        # The plugins' settings that change documents (``Setting.documents``), by name.
        self.document_settings: Mapping[str, Any] = {
            s.name: parsed.get(s.name) for s in declared if s.documents
        }
        self.database: DatabaseEngine = get_engine(parsed)
        self.sessions: sessionmaker[Session] = get_session_factory(self.database, self)
        self.engine = Engine(self)
        # Last: the plugins' channels are given the site, whole but for them.
        self.notify = NotifyConfig.of_site(self)
        # The worker thread of the web process, when ``notify.worker_thread`` starts one.
        self.worker_thread: WorkerThread | None = None
        # A site dropped without ``close`` closes its idle connections when it is
        # collected, rather than leaving them to the garbage collector one by one (a
        # ResourceWarning from psycopg, in whatever runs then).
        weakref.finalize(self, self.database.dispose)

    @classmethod
    def from_ini(cls, path: str | Path, *, command: bool = False) -> Site:
        """The site an ini file's ``[app:main]`` describes, as ``pserve`` reads it."""
        return cls(get_appsettings(str(path)), command=command)

    def output_settings(self, site_url: str) -> dict[str, Any]:
        """What the stored documents were built with besides the content and the stored
        settings: the site URL in effect (``site_url``: the stored one, else the ini
        file's), the page size and the plugins' document settings. Rebuilt when a start
        finds them changed (``sitemaps.rendering.render_key``)."""
        return {
            "site_url": site_url,
            "max_page_bytes": self.max_page_bytes,
            **{name: _plain(value) for name, value in sorted(self.document_settings.items())},
        }

    # The read path and the documents ----------------------------------------------------

    @cached_property
    def reader(self) -> Reader:
        """The read path's queries and its snapshot of the site (``sitemaps.reader``)."""
        return Reader(self)

    @cached_property
    def render_cache(self) -> RenderCache:
        """Rendered documents, kept between requests (``sitemaps.responses``)."""
        return RenderCache(self.settings["sitemap_server.render_cache_bytes"])

    @cached_property
    def finishes_documents(self) -> bool:
        """Whether the maintainer stores finished documents and the read path reads them
        (``sitemap_server.finished_documents``; auto: on PostgreSQL)."""
        chosen = self.settings["sitemap_server.finished_documents"]
        if chosen is None:
            return bool(self.database.dialect.name == "postgresql")
        return bool(chosen)

    @cached_property
    def recent_documents(self) -> finished.Recent | None:
        """The finished documents this process keeps, read by its versions watch after each
        change (``sitemaps.finished.Recent``; PostgreSQL's watch reads them, SQLite's does
        not). As many bytes at most as the cache of rendered documents."""
        if not self.finishes_documents:
            return None
        return finished.Recent(self.settings["sitemap_server.render_cache_bytes"])

    def finished(
        self, state: ReadState, what: tuple[Any, ...], names: list[str]
    ) -> tuple[bytes, int] | None:
        """The document ``what`` (of the sitemaps ``names``) as of ``state`` as the
        maintainer stored it, gzipped, and its plain size, if it did
        (``sitemaps.finished``)."""
        return finished.load(self, state, what, names) if self.finishes_documents else None

    @cached_property
    def cache_policy(self) -> str:
        """The ``Cache-Control`` of every document (``sitemaps.responses.cache_policy``)."""
        return cache_policy(self.settings)

    @cached_property
    def namespaces(self) -> dict[str, str]:
        """The XML namespaces of a ``urlset``: the core's and the plugins'
        (``sitemap_namespaces``), as attributes."""
        namespaces = {"xmlns:image": IMAGE_NS, "xmlns:xhtml": XHTML_NS}
        for extra in self.plugins.hook.sitemap_namespaces(site=self):
            namespaces.update({f"xmlns:{prefix}": uri for prefix, uri in extra.items()})
        return namespaces

    @cached_property
    def xsl_files(self) -> dict[str, str]:
        """The path of each stylesheet → its asset: the core's and the plugins'
        (``sitemap_xsl``)."""
        files = {MAIN_XSL: "sitemap_server:static/main-sitemap.xsl"}
        for extra in self.plugins.hook.sitemap_xsl(site=self):
            files.update(extra)
        return files

    @cached_property
    def stylesheets(self) -> Stylesheets:
        """The stylesheets, compiled once per thread, for the pages for people."""
        return Stylesheets()

    # The admin API ------------------------------------------------------------------------

    @cached_property
    def openapi(self) -> OpenAPI:
        """The admin API's OpenAPI document, the plugins' paths (``sitemap_openapi``) in it,
        and the validator of requests and responses against it."""
        return OpenAPI(build_spec(self.plugins.hook.sitemap_openapi(site=self)))

    @cached_property
    def import_validator(self) -> Any:
        """The validator of a line of a bulk import (``import_line_validator``)."""
        return import_line_validator(self.openapi.spec)

    def close(self) -> None:
        """Stop the worker thread, if one runs, and close the database's connections."""
        if self.worker_thread is not None:
            self.worker_thread.stop()
        self.database.dispose()


def _plain(value: Any) -> Any:
    """A setting's value as JSON keeps it (a tuple of names becomes a list)."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
