"""The one module a plugin imports from the core: everything here is the plugin API.

A plugin (a distribution with a ``sitemap_server`` entry point, see docs/hooks.md)
imports from ``sitemap_server.plugin`` and from SQLAlchemy, Pyramid and its own code,
nothing else of ours: the rest of the core may change between versions, this module
changes only with a note in docs/hooks.md. ``tests/unit/test_plugin_door.py`` holds both
plugins that ship with the core to it.

What it holds:

- hooks: ``hookimpl`` marks an implementation of a hook in ``sitemap_server.hookspecs``;
- sitemaps: ``Provider`` (one sitemap: its entries, the keys a change affects, its
  stylesheet, the sitemaps it reads, where an entry's date comes from), ``Entry``,
  ``StoredEntry`` (an entry as stored, which ``Provider.explain_lastmod`` is given),
  ``BuildContext`` (what a provider is given), ``ContentChanges`` (what a write changed,
  which plugins record for their own rows), ``UrlChange`` (a URL ``sitemap_changed``
  names), ``chunks`` (ids in batches a database takes in one ``IN``), ``w3c`` (a W3C
  date) and ``valid_chars`` (text XML 1.0 can hold);
- what the sitemaps list: ``ListedPosts`` (the posts the post types' sitemaps list, as
  crawlers are served them, and the home page's entry: for a sitemap that lists some of
  them again), ``reached_posts`` (the posts whose entries there a change of some posts
  may reach: those, their descendants and the descendants' translations),
  ``stored_keys`` and ``oldest_lastmod`` (of a provider's own entries);
- content: the models a plugin reads or joins (``Post``, ``PostType``, ``Term``,
  ``post_terms``), ``Base`` and ``UTCDateTime`` for its own tables,
  the length limits of titles and URLs, the shape of a language tag (``LANGUAGE_TAG``,
  ``MAX_LANGUAGE_TAG``), ``utcnow``, ``Links`` (permalinks of posts),
  ``home_path``, ``page_descendants``, ``site_url_of``;
- the engine: ``engine_of(session)`` is the ``Engine`` of the site that made a
  session: ``record`` what a write changed (the one way to: ``record(session,
  posts={12})``; in the writing transaction, for the maintainer and the other plugins),
  ``refresh_provider`` (rebuild one sitemap whole, when what it lists depends on the
  plugin's own settings), ``apply``, ``catch_up``, ``check``, ``explain_url`` …;
- the application: ``site_of(session)`` is the ``Site`` that made a session (its plugin
  manager, the ini file's site URL, every setting: a plugin reads its own there, typed;
  its ``engine``); in a view, ``request.site``;
- settings: ``Setting`` (what ``sitemap_settings`` returns) and the parsers
  ``positive_int``, ``positive_float``, ``seconds``, ``boolean``, ``names``, ``http_url``,
  and ``optional(parse)`` for a setting that may be left empty;
- notification channels: ``Channel`` (what ``sitemap_channels`` returns), ``Burst``,
  ``Message``, ``OutgoingRequest`` (the HTTP request a channel sends), ``Result`` and
  the outcomes ``SENT``, ``RETRY``, ``FAILED``; ``send_later`` queues a message of the
  plugin's own channel in the writing transaction (a durable background job: the worker
  sends it after commit and retries it);
- the sanitizer: ``clean_text``, ``clean_url``, ``host_of``, ``normal_host``;
- the admin API: ``api_view`` (a view checked against the OpenAPI document the plugin
  contributes), ``body``, ``path_param``, ``created``, ``no_content``, and the services'
  helpers and errors (``flush``, ``get_or_404``, ``parse_datetime``, ``Invalid``,
  ``NotFound``);
- former names, kept for plugins written against them: ``context_of`` and
  ``AppContext`` (now ``site_of`` and ``Site``), ``changed(session, …)`` (now
  ``engine_of(session).record(session, …)``), ``Request`` (now ``OutgoingRequest``: it
  shadowed Pyramid's); ``SitemapEntry``, the core's storage table (``ListedPosts``
  reads it for a plugin).
"""

from __future__ import annotations

from .api.views import api_view, body, created, no_content, path_param
from .batches import chunks
from .content.links import Links
from .content.permalinks import home_path
from .content.sanitize import clean_text, clean_url, host_of, normal_host
from .content.trees import descendants as page_descendants
from .errors import Invalid, NotFound
from .hookspecs import hookimpl
from .models import Post, PostType, SitemapEntry, Term, post_terms, site_of
from .models.content import LANGUAGE_TAG, MAX_LANGUAGE_TAG, MAX_TITLE_LENGTH, MAX_URL_LENGTH
from .models.meta import Base, UTCDateTime, utcnow
from .models.notifications import FAILED, SENT
from .models.site import site_url_of
from .notify.channels import (
    RETRY,
    Burst,
    Channel,
    Message,
    OutgoingRequest,
    Result,
    send_later,
)
from .services.common import flush, get_or_404, parse_datetime
from .settings import (
    Setting,
    boolean,
    http_url,
    names,
    optional,
    positive_float,
    positive_int,
    seconds,
)
from .site import Site
from .sitemaps.changes import ContentChanges, UrlChange, record
from .sitemaps.engine import Engine, engine_of
from .sitemaps.entries import Entry, StoredEntry
from .sitemaps.listed import ListedPosts, oldest_lastmod, reached_posts, stored_keys
from .sitemaps.providers import BuildContext, Provider
from .sitemaps.xml import valid_chars, w3c

# Former names, kept for plugins written against them.
context_of = site_of
AppContext = Site
changed = record
Request = OutgoingRequest

__all__ = [
    "FAILED",
    "LANGUAGE_TAG",
    "MAX_LANGUAGE_TAG",
    "MAX_TITLE_LENGTH",
    "MAX_URL_LENGTH",
    "RETRY",
    "SENT",
    "AppContext",
    "Base",
    "BuildContext",
    "Burst",
    "Channel",
    "ContentChanges",
    "Engine",
    "Entry",
    "Invalid",
    "Links",
    "ListedPosts",
    "Message",
    "NotFound",
    "OutgoingRequest",
    "Post",
    "PostType",
    "Provider",
    "Request",
    "Result",
    "Setting",
    "Site",
    "SitemapEntry",
    "StoredEntry",
    "Term",
    "UTCDateTime",
    "UrlChange",
    "api_view",
    "body",
    "boolean",
    "changed",
    "chunks",
    "clean_text",
    "clean_url",
    "context_of",
    "created",
    "engine_of",
    "flush",
    "get_or_404",
    "home_path",
    "hookimpl",
    "host_of",
    "http_url",
    "names",
    "no_content",
    "normal_host",
    "oldest_lastmod",
    "optional",
    "page_descendants",
    "parse_datetime",
    "path_param",
    "positive_float",
    "positive_int",
    "post_terms",
    "reached_posts",
    "seconds",
    "send_later",
    "site_of",
    "site_url_of",
    "stored_keys",
    "utcnow",
    "valid_chars",
    "w3c",
]
